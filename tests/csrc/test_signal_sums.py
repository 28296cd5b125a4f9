"""The signal-sums kernel of the audio signal metrics: the C core and the torch reference against
plain two-pass float64 torch on every float dtype, strided / transposed / broadcast rows,
lengths across the chunk size, groups, large DC offsets and near-perfect predictions (where the
one-pass identities would cancel), NaN / inf and empty inputs; every SIMD level gives the same
bits; bad input raises naming the argument, with out untouched."""

import pytest
import torch
from support.kernel_inputs import generator, same_bits

_F64 = torch.float64
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _expected(preds, target, zero_mean, group, residual, eps=0.0):
    """Written out from the definitions, one row at a time, in float64."""
    p, t = preds.double(), target.double()
    if zero_mean and p.shape[-1]:
        p, t = p - p.mean(-1, keepdim=True), t - t.mean(-1, keepdim=True)
    rows = []
    for first in range(0, p.shape[0], group):
        tt = sum(float(t[r] @ t[r]) for r in range(first, first + group))
        tp = sum(float(t[r] @ p[r]) for r in range(first, first + group))
        gain = (tp + eps) / (tt + eps) if tt + eps > 0 else 0.0
        for r in range(first, first + group):
            row = [t[r] @ t[r], t[r] @ p[r], (p[r] - t[r]).square().sum()]
            if residual:
                row.append((gain * t[r] - p[r]).square().sum())
            rows.append(torch.stack(row))
    return torch.stack(rows) if rows else torch.zeros(0, 4 if residual else 3, dtype=_F64)


def _pair(seed, rows, n, dtype, offset=0.0, noise=0.3):
    g = generator(seed)
    target = torch.randn(rows, n, generator=g, dtype=_F64)
    preds = 0.8 * target + noise * torch.randn(rows, n, generator=g, dtype=_F64)
    return (preds + offset).to(dtype), (target + offset).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 1024, 1031, 5000])
@pytest.mark.parametrize("zero_mean", [False, True])
def test_matches_float64_torch(impl, dtype, n, zero_mean):
    preds, target = _pair(n, 6, n, dtype)
    for group, columns in ((1, 3), (1, 4), (3, 4), (6, 4)):
        out = torch.full((6, columns), 7.0, dtype=_F64)
        for eps in (0.0, 1e-3):
            impl.signal_sums(out, preds, target, zero_mean, group, eps)
            want = _expected(preds, target, zero_mean, group, columns == 4, eps)
            torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12 * n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_transposed_and_broadcast_rows(impl, dtype):
    preds, target = _pair(1, 4, 2100, dtype)
    wide = torch.zeros(4, 2 * 2100, dtype=dtype)
    wide[:, 1::2] = preds
    layouts = [
        (wide[:, 1::2], target),  # every other sample
        (preds.T.contiguous().T, target.T.contiguous().T),  # time is the slow axis
        (preds[:1].expand(4, -1), target),  # one prediction against every target (stride 0)
    ]
    for p, t in layouts:
        out = torch.empty(4, 4, dtype=_F64)
        impl.signal_sums(out, p, t, True, 2, 0.0)
        torch.testing.assert_close(out, _expected(p, t, True, 2, True), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("offset", [1e3, 1e6])
def test_large_offsets_and_near_perfect_predictions_lose_no_digits(impl, offset):
    """The centred sums and the residuals are summed directly: an offset 1e6 times the spread, or
    a prediction 1e-9 away from a multiple of its target, keeps the reference's digits (the
    one-pass identities sum t^2 - (sum t)^2 / T and |p|^2 - <p, t>^2 / |t|^2 would lose all)."""
    preds, target = _pair(2, 3, 4000, _F64, offset=offset)
    out = torch.empty(3, 4, dtype=_F64)
    impl.signal_sums(out, preds, target, True, 1, 0.0)
    torch.testing.assert_close(out, _expected(preds, target, True, 1, True), rtol=1e-9, atol=0)
    # near-perfect: the data themselves hold the 1e-9 detail (at 1e6 they would not)
    _, target = _pair(2, 3, 4000, _F64)
    near = 0.5 * target + 1e-9 * torch.randn(3, 4000, generator=generator(3), dtype=_F64)
    impl.signal_sums(out, near, target, True, 1, 0.0)
    torch.testing.assert_close(out, _expected(near, target, True, 1, True), rtol=1e-7, atol=0)
    residual = out[:, 3]
    assert (residual > 0.5 * 4000 * 1e-18).all() and (residual < 2 * 4000 * 1e-18).all()  # |noise|^2


def test_nan_inf_and_empty(impl):
    preds, target = _pair(4, 3, 3000, torch.float32)
    preds[0, 2500], target[1, 7] = float("nan"), float("inf")
    out = torch.zeros(3, 4, dtype=_F64)
    impl.signal_sums(out, preds, target, False, 1, 0.0)
    assert out[0, 1:].isnan().all() and out[0, 0].isfinite()
    assert out[1, 0] == float("inf") and out[1, 2] == float("inf")
    assert out[2].isfinite().all()
    empty = torch.zeros(3, 4, dtype=_F64) + 5
    impl.signal_sums(empty, torch.zeros(3, 0), torch.zeros(3, 0), True, 3, 0.0)
    assert empty.eq(0).all()  # no sample: zeros
    impl.signal_sums(torch.zeros(0, 3, dtype=_F64), torch.zeros(0, 9), torch.zeros(0, 9), True, 1, 0.0)
    silent = torch.zeros(2, 4, dtype=_F64)
    impl.signal_sums(silent, torch.ones(2, 50), torch.zeros(2, 50), False, 1, 0.0)
    assert silent.tolist() == [[0.0, 0.0, 50.0, 50.0]] * 2  # a silent target: gain 0


@pytest.mark.parametrize(
    "change,error,name",
    [
        (lambda a: a.__setitem__(0, torch.zeros(4, 3)), TypeError, "out"),
        (lambda a: a.__setitem__(0, torch.zeros(4, 5, dtype=_F64)), ValueError, "out"),
        (lambda a: a.__setitem__(0, torch.zeros(3, 3, dtype=_F64)), ValueError, "out"),
        (lambda a: a.__setitem__(0, torch.zeros(3, 4, dtype=_F64).T), ValueError, "out"),
        (lambda a: a.__setitem__(1, a[1].long()), TypeError, "preds"),
        (lambda a: a.__setitem__(1, a[1].reshape(-1)), ValueError, "preds"),
        (lambda a: a.__setitem__(2, a[2][:, :-1]), ValueError, "target"),
        (lambda a: a.__setitem__(2, a[2].double()), ValueError, "target"),
        (lambda a: a.__setitem__(4, 3), ValueError, "group"),
        (lambda a: a.__setitem__(4, 0), ValueError, "group"),
        (lambda a: a.__setitem__(5, -1.0), ValueError, "eps"),
        (lambda a: a.__setitem__(5, float("nan")), ValueError, "eps"),
    ],
)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((4, 3), 5.0, dtype=_F64), torch.rand(4, 2048), torch.rand(4, 2048), True, 2, 1e-7]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.signal_sums(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_every_simd_level_gives_the_same_bits(c_core, dtype):
    from support.simd_paths import levels, simd_level

    preds, target = _pair(5, 4, 3003, dtype, offset=2.0)
    results = []
    for level in levels():
        with simd_level(level) as c:
            for zero_mean in (False, True):
                out = torch.empty(4, 4, dtype=_F64)
                c.signal_sums(out, preds, target, zero_mean, 2, 1e-7)
                results.append((zero_mean, out))
    for zero_mean, out in results:
        first = next(o for z, o in results if z == zero_mean)
        assert same_bits(out, first), (zero_mean, out, first)
