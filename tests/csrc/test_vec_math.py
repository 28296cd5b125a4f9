"""The four-lane float64 log / log1p / expm1 (csrc/kernels/vec_math.h), seen through the
error-sums kinds that use them (log-cosh, MSLE, KL and Jensen-Shannon of probabilities): over
wide ranges of magnitude, each batch's sum equals libm's float64 (torch's) to a relative 1e-13,
in every SIMD level; and the special values keep the verdict (a refused batch, nothing written)."""

import pytest
import torch
from support.kernel_inputs import generator
from support.simd_paths import levels, simd_level

_F64 = torch.float64
LOG_COSH, SQUARED_LOG, KL, JS = 2, 5, 9, 10


def _sum(c, kind, x, y):
    sums = torch.zeros(1, dtype=_F64)
    c.error_sums(sums, None, None, x, y, kind, 0.0)
    return float(sums[0])


def _decade(g, n, low, high):
    """n values spread log-uniformly over [10^low, 10^high]."""
    return torch.pow(10.0, torch.rand(n, generator=g, dtype=_F64) * (high - low) + low)


@pytest.mark.parametrize("low,high", [(-300, -200), (-12, -6), (-3, 0), (0, 3), (5, 300)])
def test_squared_log_errors_match_libm(c_core, low, high):
    g = generator(low + 1000)
    x, y = _decade(g, 4099, low, high), -_decade(g, 4099, low, high).clamp(max=0.999)
    want = float(((torch.log1p(x) - torch.log1p(y)) ** 2).sum())
    for level in levels():
        with simd_level(level) as c:
            assert _sum(c, SQUARED_LOG, x, y) == pytest.approx(want, rel=1e-13, abs=0.0)


@pytest.mark.parametrize("low,high", [(-150, -100), (-9, -4), (-2, 0), (0, 1.3), (1.2, 3)])
def test_log_cosh_matches_libm(c_core, low, high):
    g = generator(int(low * 10) + 2000)
    a = _decade(g, 4099, low, high)
    x = torch.rand(4099, generator=g, dtype=_F64)
    y = x + a * torch.where(torch.rand(4099, generator=g) < 0.5, -1.0, 1.0).double()
    e = (y - x).abs()
    s = e.clamp(max=20.0)
    want = float((torch.log1p(2.0 * torch.sinh(0.5 * s) ** 2) + (e - s)).sum())
    for level in levels():
        with simd_level(level) as c:
            assert _sum(c, LOG_COSH, x, y) == pytest.approx(want, rel=1e-13, abs=0.0)


@pytest.mark.parametrize("kind", [KL, JS])
@pytest.mark.parametrize("low,high", [(-300, -1), (-20, 0), (-1, 0)])
def test_divergences_match_libm(c_core, kind, low, high):
    g = generator(kind * 100 + low)
    x, y = _decade(g, 4096 * 3, low, high).reshape(-1, 3), _decade(g, 4096 * 3, low, high).reshape(-1, 3)
    p, q = x / x.sum(1, keepdim=True), y / y.sum(1, keepdim=True)
    if kind == KL:
        rows = (p * torch.log(p / q)).sum(1)
    else:
        m = (p + q) / 2
        rows = ((p * torch.log(p / m)).sum(1) + (q * torch.log(q / m)).sum(1)) / 2
    for level in levels():
        with simd_level(level) as c:
            got = torch.zeros(x.shape[0], dtype=_F64)
            c.error_sums(None, None, got, x, y, kind, 0.0)
            torch.testing.assert_close(got, rows, rtol=1e-13, atol=1e-300)


def test_squared_log_keeps_the_digits_of_close_values(c_core):
    """x within 1e-9 (relative) of y: the difference of two logs would keep only ~7 digits of
    each term; the kernel's log1p((x - y) / (1 + y)) keeps them all (oracle: 100-bit mpmath)."""
    mpmath = pytest.importorskip("mpmath")
    g = generator(77)
    size = _decade(g, 512, -3, 3)
    y = torch.where(torch.rand(512, generator=g) < 0.2, -size.clamp(max=0.9), size)
    x = y * (1.0 + 1e-9 * (torch.rand(512, generator=g, dtype=_F64) - 0.5))
    with mpmath.workprec(100):
        want = float(
            sum(
                (mpmath.log1p(mpmath.mpf(a)) - mpmath.log1p(mpmath.mpf(b))) ** 2 for a, b in zip(x.tolist(), y.tolist())
            )
        )
    for level in levels():
        with simd_level(level) as c:
            assert _sum(c, SQUARED_LOG, x, y) == pytest.approx(want, rel=1e-12, abs=0.0)


@pytest.mark.parametrize(
    "kind,x,y,name",
    [
        (SQUARED_LOG, [0.5, -1.0, 2.0, 3.0, 4.0], [1.0] * 5, "x"),
        (SQUARED_LOG, [0.5] * 5, [1.0, 2.0, 3.0, 4.0, -2.0], "y"),
        (SQUARED_LOG, [0.5, -3.0, 2.0, 3.0, 4.0], [1.0, -2.0, 1.0, 1.0, 1.0], "x"),  # a finite quotient
        (SQUARED_LOG, [0.5, float("inf"), 1.0, 2.0, 3.0], [1.0] * 5, "x"),
        (LOG_COSH, [0.5, 1.0, 2.0, 3.0, 4.0], [1.0, 2.0, float("nan"), 3.0, 4.0], "y"),
    ],
)
def test_special_values_keep_the_verdict(c_core, kind, x, y, name):
    sums = torch.zeros(1, dtype=_F64)
    with pytest.raises(ValueError) as info:
        c_core.error_sums(sums, None, None, torch.tensor(x, dtype=_F64), torch.tensor(y, dtype=_F64), kind, 0.0)
    assert str(info.value).startswith(f"{name}:")
    assert sums.tolist() == [0.0]


def test_a_zero_probability_and_a_zero_q_give_libms_values(c_core):
    x = torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 2.0]], dtype=_F64)
    y = torch.tensor([[1.0, 1.0, 2.0], [0.0, 1.0, 1.0]], dtype=_F64)
    rows = torch.zeros(2, dtype=_F64)
    c_core.error_sums(None, None, rows, x, y, KL, 0.0)
    p, q = x / x.sum(1, keepdim=True), y / y.sum(1, keepdim=True)
    want = torch.xlogy(p, p).sum(1) - torch.xlogy(p, q).sum(1)
    assert rows[1] == float("inf") and want[1] == float("inf")
    torch.testing.assert_close(rows[:1], want[:1], rtol=1e-14, atol=0.0)
