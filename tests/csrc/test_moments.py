"""Moments and co-moments (C core and torch reference) against numpy float64 two-pass results.

Inputs of every dtype are converted exactly to float64 for numpy, so the tolerances only cover
summation order (the state is float64 throughout).
"""

import numpy as np
import pytest
import torch
from support.kernel_inputs import (
    LAYOUTS,
    SCORE_DTYPES,
    N,
    dtype_id,
    empty_moments,
    generator,
    layout,
    np_values,
    same_bits,
)

RTOL = 1e-10
SPLITS = (0, 700, 700, 1900, N)  # includes an empty chunk


def np_moments(x: np.ndarray, w=None) -> np.ndarray:
    """Expected state [D, 6] = (n, sum, mean, m2, min, max); min/max over positive weights."""
    x = x.reshape(len(x), -1).astype(np.float64)
    w = np.ones(len(x)) if w is None else w.astype(np.float64)
    n = w.sum()
    mean = (w[:, None] * x).sum(0) / n
    m2 = (w[:, None] * (x - mean) ** 2).sum(0)
    counted = x[w > 0]
    return np.stack([np.full(x.shape[1], n), (w[:, None] * x).sum(0), mean, m2, counted.min(0), counted.max(0)], 1)


def np_comoments(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = x.reshape(len(x), -1).astype(np.float64), y.reshape(len(y), -1).astype(np.float64)
    n = len(x)
    rows = []
    for d in range(x.shape[1]):
        cov = np.cov(x[:, d], y[:, d], bias=True) * n
        rows.append([n, x[:, d].mean(), y[:, d].mean(), cov[0, 0], cov[1, 1], cov[0, 1]])
    return np.array(rows)


def close(state: torch.Tensor, want: np.ndarray, rtol: float = RTOL) -> None:
    np.testing.assert_allclose(state.numpy(), want, rtol=rtol, atol=0)


def updates(kernel, state, *columns, splits=SPLITS):
    """Feed the rows of every array in `columns` in chunks (weights may be None)."""
    for a, b in zip(splits, splits[1:]):
        kernel(state, *(c if c is None else c[a:b] for c in columns))
    return state


# ---- moments_update ----------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_moments_match_numpy(impl, dtype, kind, weighted):
    g = generator(30)
    x = (torch.randn(N, 3, generator=g, dtype=torch.float64) * 3 + 5).to(dtype)
    w = None
    if weighted:
        w = torch.rand(N, generator=g, dtype=torch.float64).to(dtype)
        w[::5] = 0  # zero weights: counted nowhere, not even in min / max
    state = updates(impl.moments_update, empty_moments(3), layout(x, kind), None if w is None else layout(w, kind))
    close(state, np_moments(np_values(x), None if w is None else np_values(w)))


def test_moments_vector_input_and_expanded(impl):
    """x [N] fills a [1, 6] state; a stride-0 x is one repeated value (m2 exactly 0)."""
    g = generator(31)
    x = torch.randn(N, generator=g)
    state = updates(impl.moments_update, empty_moments(1), x, None)
    close(state, np_moments(x.numpy()))
    state = updates(impl.moments_update, empty_moments(4), torch.tensor([[1.5, -2.0, 0.0, 7.0]]).expand(N, 4), None)
    assert torch.equal(state[:, 3], torch.zeros(4))
    close(state, np_moments(np.tile([[1.5, -2.0, 0.0, 7.0]], (N, 1))))


def test_moments_zero_size_leaves_state(impl):
    g = generator(32)
    state = updates(impl.moments_update, empty_moments(2), torch.randn(100, 2, generator=g), None)
    before = state.clone()
    impl.moments_update(state, torch.zeros(0, 2), None)
    impl.moments_update(state, torch.zeros(0, 2), torch.zeros(0))
    assert same_bits(state, before)
    empty = empty_moments(2)
    impl.moments_update(empty, torch.zeros(0, 2), None)
    assert same_bits(empty, empty_moments(2))


def test_moments_merge_equals_one_pass(impl):
    g = generator(33)
    x = torch.randn(N, 5, generator=g, dtype=torch.float64) * torch.arange(1, 6) + torch.arange(5) * 10
    a = updates(impl.moments_update, empty_moments(5), x[:900], None, splits=(0, 300, 900))
    b = updates(impl.moments_update, empty_moments(5), x[900:], None, splits=(0, 1000, N - 900))
    impl.moments_merge(a, b)
    close(a, np_moments(x.numpy()))


def test_moments_merge_with_empty_is_exact(impl):
    g = generator(34)
    full = updates(impl.moments_update, empty_moments(3), torch.randn(500, 3, generator=g), None)
    left = full.clone()
    impl.moments_merge(left, empty_moments(3))
    assert same_bits(left, full)
    right = empty_moments(3)
    impl.moments_merge(right, full)
    assert same_bits(right, full)


def test_moments_merge_accepts_strided_other(impl):
    """`other` is an input: any strides (here every other row of a bigger buffer)."""
    g = generator(35)
    x, y = torch.randn(300, 2, generator=g), torch.randn(200, 2, generator=g) + 3
    a = updates(impl.moments_update, empty_moments(2), x, None, splits=(0, 300))
    b = updates(impl.moments_update, empty_moments(2), y, None, splits=(0, 200))
    big = torch.zeros(4, 6, dtype=torch.float64)
    big[::2] = b
    impl.moments_merge(a, big[::2])
    close(a, np_moments(torch.cat([x, y]).numpy()))


def test_moments_merge_means_far_apart(impl):
    """Chan's merge when the two means differ by 1e9: M2 still matches a float64 two-pass
    over the concatenation (a sum-of-squares formula loses every digit here)."""
    g = generator(36)
    a_x = torch.randn(1000, 2, generator=g, dtype=torch.float64)
    b_x = torch.randn(1500, 2, generator=g, dtype=torch.float64) + 1e9
    a = updates(impl.moments_update, empty_moments(2), a_x, None, splits=(0, 1000))
    b = updates(impl.moments_update, empty_moments(2), b_x, None, splits=(0, 1500))
    impl.moments_merge(a, b)
    close(a, np_moments(torch.cat([a_x, b_x]).numpy()), rtol=1e-12)


def test_moments_large_offset_small_variance(impl):
    """Values 1e9 + U(0, 1) in ten chunks: the variance (about 1/12) survives the offset.
    Each chunk mean carries a rounding error near 1e-6 (the ulp at 1e9 is 1.2e-7), which the
    merge turns into a relative error near 1e-8 in M2; a sum-of-squares formula would be off by
    about 1e3 (its terms are 1e18 with an ulp of 128)."""
    g = generator(37)
    x = torch.rand(N, 1, generator=g, dtype=torch.float64) + 1e9
    state = updates(impl.moments_update, empty_moments(1), x, None, splits=tuple(range(0, N + 1, 250)))
    np.testing.assert_allclose(float(state[0, 3] / state[0, 0]), np.var(x.numpy()), rtol=1e-6)
    close(state, np_moments(x.numpy()), rtol=1e-6)


# ---- comoments ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_comoments_match_numpy(impl, dtype, kind):
    g = generator(40)
    x = torch.randn(N, 3, generator=g, dtype=torch.float64)
    y = 0.5 * x + torch.randn(N, 3, generator=g, dtype=torch.float64) - 2
    x, y = x.to(dtype), y.to(SCORE_DTYPES[(SCORE_DTYPES.index(dtype) + 1) % 4])  # mixed dtypes
    state = updates(impl.comoments_update, torch.zeros(3, 6, dtype=torch.float64), layout(x, kind), layout(y, kind))
    want = np_comoments(np_values(x), np_values(y))
    close(state, want)
    pearson = state[:, 5] / (state[:, 3] * state[:, 4]).sqrt()
    corr = [np.corrcoef(np_values(x)[:, d], np_values(y)[:, d])[0, 1] for d in range(3)]
    np.testing.assert_allclose(pearson.numpy(), corr, rtol=1e-10)


def test_comoments_vector_input_zero_size_and_merge(impl):
    g = generator(41)
    x, y = torch.randn(N, generator=g), torch.randn(N, generator=g)
    state = updates(impl.comoments_update, torch.zeros(1, 6, dtype=torch.float64), x, y)
    close(state, np_comoments(x.numpy(), y.numpy()))
    before = state.clone()
    impl.comoments_update(state, torch.zeros(0), torch.zeros(0))
    assert same_bits(state, before)
    a = updates(impl.comoments_update, torch.zeros(1, 6, dtype=torch.float64), x[:100], y[:100], splits=(0, 100))
    b = updates(impl.comoments_update, torch.zeros(1, 6, dtype=torch.float64), x[100:], y[100:], splits=(0, N - 100))
    impl.comoments_merge(a, b)
    close(a, np_comoments(x.numpy(), y.numpy()))
    empty = torch.zeros(1, 6, dtype=torch.float64)
    impl.comoments_merge(empty, before)
    assert same_bits(empty, before)


def test_comoments_merge_means_far_apart(impl):
    g = generator(42)
    x = torch.randn(N, 2, generator=g, dtype=torch.float64)
    y = -x + torch.randn(N, 2, generator=g, dtype=torch.float64)
    x[1200:] += 1e9
    y[1200:] -= 3e9
    a = updates(impl.comoments_update, torch.zeros(2, 6, dtype=torch.float64), x[:1200], y[:1200], splits=(0, 1200))
    b = updates(impl.comoments_update, torch.zeros(2, 6, dtype=torch.float64), x[1200:], y[1200:], splits=(0, N - 1200))
    impl.comoments_merge(a, b)
    close(a, np_comoments(x.numpy(), y.numpy()), rtol=1e-12)
