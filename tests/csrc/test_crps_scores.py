"""The CRPS kernel (ContinuousRankedProbabilityScore's update on the CPU): the C core against the
torch reference and a direct M x M formula on random ensembles of every accepted dtype and memory
layout; NaN / inf and bad calls raise naming the argument with `out` untouched."""

import pytest
import torch
from support.kernel_inputs import LABEL_DTYPES, LAYOUTS, SCORE_DTYPES, dtype_id, generator, kernels, layout

REAL = [d for d in LABEL_DTYPES if d != torch.bool] + list(SCORE_DTYPES)


def _direct(preds, target):
    x, y = preds.double(), target.double()
    m = x.shape[1]
    pairwise = (x[:, :, None] - x[:, None, :]).abs().sum((1, 2))
    return (x - y[:, None]).abs().mean(1) - pairwise / (2 * m * m)


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", REAL, ids=dtype_id)
@pytest.mark.parametrize("n,m", [(0, 2), (1, 2), (40, 5), (2500, 3), (7, 33)])
def test_c_matches_reference_and_the_direct_formula(n, m, dtype, kind):
    g = generator(n * 100 + m)
    if dtype.is_floating_point:
        preds, target = torch.randn(n, m, generator=g).to(dtype), torch.randn(n, generator=g).to(dtype)
    else:
        low = 0 if dtype == torch.uint8 else -50
        preds, target = (
            torch.randint(low, 50, (n, m), generator=g).to(dtype),
            torch.randint(low, 50, (n,), generator=g).to(dtype),
        )
    preds, target = layout(preds, kind), layout(target, kind)
    got, want = torch.full((n,), 7.0, dtype=torch.float64), torch.full((n,), 7.0, dtype=torch.float64)
    kernels("c").crps_scores(got, preds, target)
    kernels("reference").crps_scores(want, preds, target)
    torch.testing.assert_close(got, want, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(got, _direct(preds, target), rtol=1e-12, atol=1e-12)


BAD = [
    (1, torch.tensor([[1.0, float("nan")], [0.0, 1.0], [2.0, 3.0]]), ValueError, r"preds: .*flat index 1"),
    (2, torch.tensor([0.0, 1.0, -float("inf")]), ValueError, r"target: .*flat index 2"),
    (1, torch.tensor([[True, False], [True, True], [False, False]]), TypeError, "preds"),
    (1, torch.zeros(3, 1), ValueError, "preds"),
    (1, torch.zeros(3), ValueError, "preds"),
    (2, torch.zeros(2), ValueError, "target"),
    (0, torch.zeros(3, dtype=torch.float32), TypeError, "out"),
    (0, torch.zeros(4, dtype=torch.float64), ValueError, "out"),
]


@pytest.mark.parametrize("position,value,exc,message", BAD)
def test_bad_input_leaves_out_untouched(impl, position, value, exc, message):
    args = [torch.full((3,), 7.0, dtype=torch.float64), torch.rand(3, 2), torch.rand(3)]
    args[position] = value
    before = args[0].clone()
    with pytest.raises(exc, match=message):
        impl.crps_scores(*args)
    assert args[0].shape != before.shape or args[0].dtype != before.dtype or torch.equal(args[0], before)
