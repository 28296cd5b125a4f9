"""The average-ranks kernel (SpearmanCorrCoef's compute): the C core against the torch reference
and scipy.stats.rankdata on random columns with many ties, every float dtype and memory layout;
NaN and bad calls raise naming the argument with `out` untouched."""

import numpy as np
import pytest
import scipy.stats
import torch
from support.kernel_inputs import LAYOUTS, SCORE_DTYPES, dtype_id, generator, kernels, layout, np_values


def _columns(n, k, dtype, seed):
    g = generator(seed)
    x = torch.randint(-4, max(n // 3, 1) + 2, (n, k), generator=g).to(torch.float64) / 2
    if n > 3 and k:
        x[0, 0], x[1, 0], x[2, k - 1], x[3, k - 1] = -0.0, 0.0, float("inf"), -float("inf")
    return x.to(dtype)


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("n,k", [(0, 2), (1, 1), (5, 0), (40, 3), (2500, 2)])
def test_c_matches_reference_and_scipy(n, k, dtype, kind):
    x = layout(_columns(n, k, dtype, seed=n + k), kind)
    got, want = torch.full((n, k), 7.0, dtype=torch.float64), torch.full((n, k), 7.0, dtype=torch.float64)
    kernels("c").average_ranks(got, x)
    kernels("reference").average_ranks(want, x)
    assert torch.equal(got, want)
    if n and k:
        expected = scipy.stats.rankdata(np_values(x).astype(np.float64), axis=0)
        assert torch.equal(got, torch.from_numpy(expected))


def test_ties_share_their_mean_rank(impl):
    x = torch.tensor([[3.0, 1.0], [1.0, 1.0], [3.0, 1.0], [-0.0, 2.0], [0.0, 1.0]])
    out = torch.empty(5, 2, dtype=torch.float64)
    impl.average_ranks(out, x)
    assert out[:, 0].tolist() == [4.5, 3.0, 4.5, 1.5, 1.5]  # -0.0 ties with 0.0
    assert out[:, 1].tolist() == [2.5, 2.5, 2.5, 5.0, 2.5]


BAD = [
    (1, torch.tensor([[1.0, 2.0], [float("nan"), 0.0], [3.0, float("nan")]]), ValueError, r"x: NaN at \[1, 0\]"),
    (1, torch.tensor([[1, 2], [3, 4], [5, 6]]), TypeError, "x"),
    (1, torch.tensor([1.0, 2.0, 3.0]), ValueError, "x"),
    (0, torch.zeros(3, 2, dtype=torch.float32), TypeError, "out"),
    (0, torch.zeros(2, 2, dtype=torch.float64), ValueError, "out"),
    (0, torch.zeros(2, 3, dtype=torch.float64).t(), ValueError, "out"),
]


@pytest.mark.parametrize("position,value,exc,message", BAD)
def test_bad_input_leaves_out_untouched(impl, position, value, exc, message):
    args = [torch.full((3, 2), 7.0, dtype=torch.float64), torch.rand(3, 2)]
    args[position] = value
    before = args[0].clone()
    with pytest.raises(exc, match=message):
        impl.average_ranks(*args)
    assert args[0].shape != before.shape or args[0].dtype != before.dtype or torch.equal(args[0], before)
