"""The rank-pairs kernel (SpearmanCorrCoef's and KendallRankCorrCoef's update): the C core against
the torch reference on random batches of every accepted dtype, shape and memory layout, into
float32 and float64 rows; values not finite in the rows' dtype and bad calls raise the same error
on both paths, naming the argument, with `out` untouched."""

import pytest
import torch
from support.kernel_inputs import LABEL_DTYPES, LAYOUTS, SCORE_DTYPES, dtype_id, generator, kernels, layout

REAL = [d for d in LABEL_DTYPES if d != torch.bool] + list(SCORE_DTYPES)


def _values(shape, dtype, g):
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 100).to(dtype)
    low = 0 if dtype == torch.uint8 else -100
    return torch.randint(low, 100, shape, generator=g).to(dtype)


@pytest.mark.parametrize("store", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("shape", [(0,), (1,), (40,), (2500,), (40, 3), (7, 1)], ids=str)
def test_c_matches_reference(shape, kind, store):
    g = generator(len(shape) * 100 + shape[0])
    for i, p_dtype in enumerate(REAL):
        t_dtype = REAL[(i * 3 + 1) % len(REAL)]
        preds, target = layout(_values(shape, p_dtype, g), kind), layout(_values(shape, t_dtype, g), kind)
        d = shape[1] if len(shape) == 2 else 1
        got = torch.full((shape[0], 2, d), 7.0, dtype=store)
        want = got.clone()
        kernels("c").rank_pairs(got, preds, target)
        kernels("reference").rank_pairs(want, preds, target)
        assert torch.equal(got, want), (p_dtype, t_dtype)
        assert torch.equal(got[:, 0], preds.reshape(-1, d).to(store))
        assert torch.equal(got[:, 1], target.reshape(-1, d).to(store))


NAN, INF = float("nan"), float("inf")
NON_FINITE = [
    (torch.tensor([1.0, NAN, 2.0]), torch.tensor([1.0, INF, 2.0]), torch.float32, r"preds: .*got nan at flat index 1"),
    (
        torch.tensor([1.0, 0.0, 2.0]),
        torch.tensor([1.0, 3.0, -INF]),
        torch.float64,
        r"target: .*got -inf at flat index 2",
    ),
    (
        torch.tensor([1.0, 0.0, 1e39], dtype=torch.float64),
        torch.zeros(3),
        torch.float32,
        r"preds: .*float32 state, got inf",
    ),
    (torch.tensor([1.0, 0.0, 1e39], dtype=torch.float64), torch.zeros(3), torch.float64, None),
]


@pytest.mark.parametrize("preds,target,store,message", NON_FINITE)
def test_values_not_finite_in_the_rows_dtype(preds, target, store, message):
    messages = []
    for impl in (kernels("c"), kernels("reference")):
        out = torch.full((3, 2, 1), 7.0, dtype=store)
        if message is None:  # finite in float64 rows: stored
            impl.rank_pairs(out, preds, target)
            assert out[2, 0, 0] == 1e39
            continue
        with pytest.raises(ValueError, match=message) as info:
            impl.rank_pairs(out, preds, target)
        messages.append(str(info.value))
        assert bool((out == 7.0).all())
    assert len(set(messages)) <= 1


BAD = [
    (1, torch.tensor([True, False, True]), TypeError, "preds"),
    (2, torch.tensor([1.0, 2.0]), ValueError, "target"),
    (2, torch.tensor([[1.0], [2.0], [3.0]]), ValueError, "target"),
    (1, torch.zeros(3, 1, 1), ValueError, "preds"),
    (0, torch.zeros(3, 2, 1, dtype=torch.int64), TypeError, "out"),
    (0, torch.zeros(3, 2, 2), ValueError, "out"),
    (0, torch.zeros(3, 2, 2)[:, :, :1], ValueError, "out"),
]


@pytest.mark.parametrize("position,value,exc,arg", BAD)
def test_bad_calls(impl, position, value, exc, arg):
    args = [torch.full((3, 2, 1), 7.0), torch.tensor([0.5, 0.1, 0.7]), torch.tensor([1, 0, 2])]
    args[position] = value
    before = args[0].clone()
    with pytest.raises(exc, match=arg):
        impl.rank_pairs(*args)
    assert args[0].dtype != before.dtype or args[0].shape != before.shape or torch.equal(args[0], before)
