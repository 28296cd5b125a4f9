"""The threshold-counts kernel (CriticalSuccessIndex's batch): the C core and the torch reference
against torch's own comparisons for float32 and float64 (also mixed), every layout, lengths
across the chunk and lane sizes, [N] and [N, D]; counts accumulate; thresholds that float32
rounds either way compare as torch compares; NaN / inf inputs and bad arguments raise naming the
argument with counts untouched; every SIMD level gives the same counts."""

import pytest
import torch
from support.kernel_inputs import LAYOUTS, generator, layout

_I64 = torch.int64
_WIDE = (torch.float32, torch.float64)


def _expected(x, y, threshold):
    codes = (x >= threshold).to(torch.uint8) * 2 + (y >= threshold)
    return torch.bincount(codes.reshape(-1), minlength=4)


def _inputs(shape, x_dtype, y_dtype, g):
    return torch.rand(shape, generator=g).to(x_dtype), torch.rand(shape, generator=g).to(y_dtype)


@pytest.mark.parametrize("dtype", _WIDE)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("shape", [(1,), (7,), (9,), (1024,), (1031,), (2500,), (300, 3), (2100, 5)])
def test_matches_torch(impl, dtype, kind, shape):
    g = generator(shape[0])
    x, y = _inputs(shape, dtype, dtype, g)
    x, y = layout(x, kind), layout(y, "sliced" if kind == "contiguous" else "contiguous")
    counts = torch.tensor([5, 0, 7, 1], dtype=_I64)
    impl.threshold_counts(counts, x, y, 0.5)
    assert counts.tolist() == (_expected(x, y, 0.5) + torch.tensor([5, 0, 7, 1])).tolist()


@pytest.mark.parametrize("x_dtype, y_dtype", [(torch.float32, torch.float64), (torch.float64, torch.float32)])
@pytest.mark.parametrize("threshold", [0.7, 0.3, 0.1, 1, -2.0, float("inf"), -float("inf")])
def test_thresholds_compare_in_the_inputs_dtype(impl, x_dtype, y_dtype, threshold):
    """0.7 rounds down in float32, 0.3 up: an element equal to float32(threshold) counts in a
    float32 tensor as torch counts it."""
    x, y = _inputs((2000,), x_dtype, y_dtype, generator(2))
    if abs(threshold) != float("inf"):
        x[::7] = torch.tensor(threshold, dtype=torch.float32).to(x_dtype)
        y[::5] = torch.tensor(threshold, dtype=torch.float32).to(y_dtype)
    counts = torch.zeros(4, dtype=_I64)
    impl.threshold_counts(counts, x, y, threshold)
    assert counts.tolist() == _expected(x, y, threshold).tolist()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["x", "y"])
@pytest.mark.parametrize("dtype", _WIDE)
def test_non_finite_input_raises_naming_it_with_counts_untouched(impl, bad, where, dtype):
    x, y = _inputs((1500, 2), dtype, dtype, generator(4))
    (x if where == "x" else y)[1100, 1] = bad
    (x if where == "x" else y)[1400, 0] = bad  # a later one
    counts = torch.tensor([1, 2, 3, 4], dtype=_I64)
    with pytest.raises(ValueError, match=rf"^{where}: expected finite values, got {bad:g} at flat index 2201"):
        impl.threshold_counts(counts, x, y, 0.5)
    assert counts.tolist() == [1, 2, 3, 4]


def test_huge_finite_values_pass(impl):
    x = torch.full((9,), 3e38, dtype=torch.float32)
    counts = torch.zeros(4, dtype=_I64)
    impl.threshold_counts(counts, x, -x, 0.0)
    assert counts.tolist() == [0, 0, 9, 0]


def test_counts_that_would_overflow_raise(impl):
    counts = torch.tensor([2**63 - 2, 0, 0, 0], dtype=_I64)
    with pytest.raises(ValueError, match="^counts:"):
        impl.threshold_counts(counts, torch.zeros(3), torch.zeros(3), 0.5)
    assert counts.tolist() == [2**63 - 2, 0, 0, 0]


@pytest.mark.parametrize(
    "counts, x, y, threshold, name",
    [
        (torch.zeros(4, dtype=_I64), torch.zeros(3, dtype=torch.float16), torch.zeros(3), 0.5, "x"),
        (torch.zeros(4, dtype=_I64), torch.zeros(3), torch.zeros(3, dtype=torch.int32), 0.5, "y"),
        (torch.zeros(4, dtype=_I64), torch.zeros(3), torch.zeros(4), 0.5, "y"),
        (torch.zeros(4, dtype=_I64), torch.zeros(3, 1, 1), torch.zeros(3, 1, 1), 0.5, "x"),
        (torch.zeros(3, dtype=_I64), torch.zeros(3), torch.zeros(3), 0.5, "counts"),
        (torch.zeros(4, dtype=torch.int32), torch.zeros(3), torch.zeros(3), 0.5, "counts"),
        (torch.zeros(8, dtype=_I64)[::2], torch.zeros(3), torch.zeros(3), 0.5, "counts"),
        (torch.zeros(4, dtype=_I64), torch.zeros(3), torch.zeros(3), float("nan"), "threshold"),
        (torch.zeros(4, dtype=_I64), torch.zeros(3, device="meta"), torch.zeros(3), 0.5, "x"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(impl, counts, x, y, threshold, name):
    before = counts.clone()
    with pytest.raises((TypeError, ValueError)) as info:
        impl.threshold_counts(counts, x, y, threshold)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert torch.equal(counts, before)


def test_every_simd_level_gives_the_same_counts(c_core):
    from support.simd_paths import levels, simd_level

    for dtype in _WIDE:
        x, y = _inputs((3001, 2), dtype, dtype, generator(8))
        runs = []
        for level in levels():
            with simd_level(level) as c:
                for a, b in ((x[:, 0].contiguous(), y[:, 0].contiguous()), (x, y)):
                    counts = torch.zeros(4, dtype=_I64)
                    c.threshold_counts(counts, a, b, 0.5)
                    runs.append(counts.tolist())
        assert all(r == runs[i % 2] for i, r in enumerate(runs)), runs
