"""The residual-moments kernel (R2Score's and ExplainedVariance's batch): the C core and the torch
reference against plain float64 torch for every float dtype (also mixed), every layout, lengths
across the chunk size, [N] and [N, D]; a state that already holds samples is merged into (Chan);
NaN / inf inputs and bad arguments raise naming the argument with the state untouched; every
SIMD level gives the same bits."""

import pytest
import torch
from support.kernel_inputs import LAYOUTS, SCORE_DTYPES, empty_moments, generator, layout, same_bits

_F64 = torch.float64


def _moments(v: torch.Tensor) -> torch.Tensor:
    """(n, sum, mean, m2, min, max) per column of float64 [N, D], in plain torch."""
    n = torch.full((v.shape[1],), float(v.shape[0]), dtype=_F64)
    mean = v.mean(0)
    return torch.stack([n, v.sum(0), mean, ((v - mean) ** 2).sum(0), v.amin(0), v.amax(0)], 1)


def _expected(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    d = x.shape[1] if x.dim() == 2 else 1
    x64, y64 = x.double().reshape(-1, d), y.double().reshape(-1, d)
    return torch.cat((_moments(y64 - x64), _moments(y64)))


def _inputs(shape, x_dtype, y_dtype, g, offset=0.0):
    x = torch.rand(shape, generator=g, dtype=_F64) * 3 + offset
    y = x + torch.rand(shape, generator=g, dtype=_F64) - 0.5
    return x.to(x_dtype), y.to(y_dtype)


@pytest.mark.parametrize("dtype", SCORE_DTYPES)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("shape", [(1,), (7,), (1024,), (1031,), (2500,), (9, 1), (300, 3), (2100, 5)])
def test_matches_float64_torch(impl, dtype, kind, shape):
    g = generator(len(shape) * 1000 + shape[0])
    x, y = _inputs(shape, dtype, dtype, g)
    x, y = layout(x, kind), layout(y, "sliced" if kind == "contiguous" else "contiguous")
    d = shape[1] if len(shape) == 2 else 1
    state = empty_moments(2 * d)
    impl.residual_moments(state, x, y)
    torch.testing.assert_close(state, _expected(x, y), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x_dtype, y_dtype", [(torch.float32, torch.float64), (torch.float16, torch.float32)])
def test_mixed_dtypes(impl, x_dtype, y_dtype):
    x, y = _inputs((1500, 2), x_dtype, y_dtype, generator(3))
    state = empty_moments(4)
    impl.residual_moments(state, x, y)
    torch.testing.assert_close(state, _expected(x, y), rtol=1e-12, atol=1e-12)


def test_merges_into_a_state_that_holds_samples(impl):
    """Two batches with far-apart means: the merged state equals the moments of both together
    (Chan's merge keeps the digits a sum of squares would lose)."""
    g = generator(11)
    a, b = _inputs((3000, 2), _F64, _F64, g, offset=1e6), _inputs((1200, 2), _F64, _F64, g, offset=-5.0)
    state = empty_moments(4)
    impl.residual_moments(state, *a)
    impl.residual_moments(state, *b)
    want = _expected(torch.cat((a[0], b[0])), torch.cat((a[1], b[1])))
    torch.testing.assert_close(state, want, rtol=1e-10, atol=1e-6)


def test_empty_batch_leaves_the_state(impl):
    state = empty_moments(2)
    state[0] = torch.tensor([3.0, 1.5, 0.5, 2.0, -1.0, 2.0])
    before = state.clone()
    impl.residual_moments(state, torch.zeros(0), torch.zeros(0))
    assert same_bits(state, before)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["x", "y"])
def test_non_finite_input_raises_naming_it_with_the_state_untouched(impl, bad, where):
    x, y = _inputs((2000, 2), torch.float32, torch.float32, generator(5))
    (x if where == "x" else y)[1500, 1] = bad
    (x if where == "x" else y)[1700, 0] = bad  # a later one: the first is named
    state = empty_moments(4)
    before = state.clone()
    with pytest.raises(ValueError, match=rf"^{where}: expected finite values, got {bad:g} at flat index 3001"):
        impl.residual_moments(state, x, y)
    assert same_bits(state, before)


def test_finite_inputs_whose_sum_overflows_pass(impl):
    x = torch.full((4,), -1.5e308, dtype=_F64)
    state = empty_moments(2)
    impl.residual_moments(state, x, torch.full((4,), 1.5e308, dtype=_F64))
    assert state[0, 1] == float("inf") and state[1, 0] == 4.0  # y - x overflowed: the value


@pytest.mark.parametrize(
    "state, x, y, name",
    [
        (empty_moments(2), torch.zeros(3, dtype=torch.int64), torch.zeros(3), "x"),
        (empty_moments(2), torch.zeros(3), torch.zeros(3, dtype=torch.bool), "y"),
        (empty_moments(2), torch.zeros(3), torch.zeros(4), "y"),
        (empty_moments(2), torch.zeros(3, 1, 1), torch.zeros(3, 1, 1), "x"),
        (empty_moments(4), torch.zeros(3, 2), torch.zeros(3, 1), "y"),
        (empty_moments(4), torch.zeros(3), torch.zeros(3), "state"),
        (empty_moments(2).float(), torch.zeros(3), torch.zeros(3), "state"),
        (empty_moments(4)[::2], torch.zeros(3), torch.zeros(3), "state"),
        (empty_moments(2), torch.zeros(3, device="meta"), torch.zeros(3), "x"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(impl, state, x, y, name):
    before = state.clone()
    with pytest.raises((TypeError, ValueError)) as info:
        impl.residual_moments(state, x, y)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(state, before)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_every_simd_level_gives_the_same_bits(c_core, dtype):
    from support.simd_paths import levels, simd_level

    x, y = _inputs((3001, 2), dtype, dtype, generator(9))
    runs = []
    for level in levels():
        with simd_level(level) as c:
            for a, b in ((x[:, 0], y[:, 0]), (x, y)):
                state = empty_moments(2 * (a.shape[1] if a.dim() == 2 else 1))
                c.residual_moments(state, a, b)
                runs.append((level, state))
    half = len(runs) // len(levels())
    for i, (level, state) in enumerate(runs):
        assert same_bits(state, runs[i % half][1]), level


def test_x_is_searched_before_y(impl):
    x, y = torch.zeros(5), torch.zeros(5)
    x[4], y[0] = float("nan"), float("inf")
    with pytest.raises(ValueError, match="^x: expected finite values, got nan at flat index 4"):
        impl.residual_moments(empty_moments(2), x, y)
