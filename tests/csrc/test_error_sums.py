"""The regression error-sums kernel: the C core and the torch reference against plain float64
torch for every kind, float dtype (also mixed), strided inputs, lengths across the chunk size,
[N] and [N, D]; sums and counts accumulate; NaN / inf / out-of-domain inputs and bad arguments
raise naming the argument with sums, count and rows untouched; a sum that overflows on finite
inputs passes."""

import math

import pytest
import torch
from support.kernel_inputs import generator, same_bits

_F64 = torch.float64
_I64 = torch.int64
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
SQUARED, ABSOLUTE, LOG_COSH, ABS_PERCENT, SYM_PERCENT, SQUARED_LOG, MINKOWSKI, WMAPE, COSINE, KL, JS = range(11)
COLUMN_KINDS = (SQUARED, ABSOLUTE, LOG_COSH)
ELEMENT_KINDS = (ABS_PERCENT, SYM_PERCENT, SQUARED_LOG, MINKOWSKI, WMAPE)
ROW_KINDS = (COSINE, KL, JS)


def _expected_terms(kind, x, y, p):
    """Each element's term in plain float64 torch (log cosh through cosh, where it is exact
    enough for errors below 20)."""
    e = (y - x).abs()
    return {
        SQUARED: e**2,
        ABSOLUTE: e,
        LOG_COSH: torch.log(torch.cosh(e)),
        ABS_PERCENT: e / y.abs().clamp(min=1.17e-6),
        SYM_PERCENT: 2 * e / (y.abs() + x.abs()).clamp(min=1.17e-6),
        SQUARED_LOG: (torch.log(1 + x) - torch.log(1 + y)) ** 2,
        MINKOWSKI: e**p,
    }[kind]


def _expected_rows(kind, x, y, log_prob):
    if kind == COSINE:
        return (x * y).sum(1) / (x.norm(dim=1) * y.norm(dim=1))
    if log_prob:  # log-probabilities, taken as they are (not scaled to sum 1)
        m = ((x.exp() + y.exp()) / 2).log()
        if kind == KL:
            return (x.exp() * (x - y)).sum(1)
        return ((x.exp() * (x - m)).sum(1) + (y.exp() * (y - m)).sum(1)) / 2
    pn, qn = x / x.sum(1, keepdim=True), y / y.sum(1, keepdim=True)
    if kind == KL:
        return (pn * (pn / qn).log()).sum(1)
    m = (pn + qn) / 2
    return ((pn * (pn / m).log()).sum(1) + (qn * (qn / m).log()).sum(1)) / 2


def _sizes(kind, x):
    if kind in COLUMN_KINDS:
        return x.shape[1] if x.dim() == 2 else 1
    return 2 if kind == WMAPE else 1


def _expected(kind, x, y, param):
    """(sums, count, rows) of one batch into zero states."""
    x64, y64 = x.double(), y.double()
    if x64.dim() == 1:
        x64, y64 = x64[:, None], y64[:, None]
    if kind in ROW_KINDS:
        rows = _expected_rows(kind, x64, y64, param == 1.0)
        return rows.sum().reshape(1), x64.shape[0], rows
    if kind == WMAPE:
        return torch.stack(((y64 - x64).abs().sum(), y64.abs().sum())), x64.numel(), None
    terms = _expected_terms(kind, x64, y64, param)
    if kind in COLUMN_KINDS:
        return terms.sum(0), x64.shape[0], None
    return terms.sum().reshape(1), x64.numel(), None


def _inputs(kind, shape, dtype, g):
    x = torch.rand(shape, generator=g, dtype=_F64) * 2 + 0.05
    y = torch.rand(shape, generator=g, dtype=_F64) * 2 + 0.05
    if kind == COSINE:
        x, y = x - 1, y - 1
    return x.to(dtype), y.to(dtype)


def _param(kind, variant=0):
    if kind == MINKOWSKI:
        return (3.0, 1.0, 2.0, 2.5)[variant % 4]
    return float(variant % 2) if kind in (KL, JS) else 0.0


def _run(impl, kind, x, y, param, start=0.0):
    sums = torch.full((_sizes(kind, x),), start, dtype=_F64)
    count = torch.tensor(5, dtype=_I64)
    rows = torch.full((x.shape[0],), 9.0, dtype=_F64) if kind in ROW_KINDS else None
    impl.error_sums(sums, count, rows, x, y, kind, param)
    return sums, count, rows


@pytest.mark.parametrize("kind", range(11))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3,), (1029,), (300, 3), (2100, 7)])
def test_matches_float64_torch(impl, kind, dtype, shape):
    if kind in ROW_KINDS and len(shape) == 1:
        return
    g = generator(kind * 100 + len(shape))
    x, y = _inputs(kind, shape, dtype, g)
    if len(shape) == 2:  # strided: a transposed copy read back, and every other column
        x = x.t().contiguous().t()
        wide = torch.zeros(shape[0], 2 * shape[1], dtype=dtype)
        wide[:, 1::2] = y
        y = wide[:, 1::2]
    else:
        wide = torch.zeros(2 * shape[0], dtype=dtype)
        wide[1::2] = y
        y = wide[1::2]
    for variant in range(2):
        param = _param(kind, variant)
        sums, count, rows = _run(impl, kind, x, y, param, start=1.5)
        want, n, want_rows = _expected(kind, x, y, param)
        torch.testing.assert_close(sums, want + 1.5, rtol=1e-12, atol=1e-12)
        assert int(count) == 5 + n
        if rows is not None:
            torch.testing.assert_close(rows, want_rows, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", range(11))
def test_the_c_core_agrees_with_the_reference_on_mixed_dtypes(c_core, kind):
    from torchtally.kernels import reference

    g = generator(7)
    x, _ = _inputs(kind, (500, 4), torch.float32, g)
    _, y = _inputs(kind, (500, 4), torch.float64, g)
    for variant in range(4):
        param = _param(kind, variant)
        a, b = _run(c_core, kind, x, y, param), _run(reference, kind, x, y, param)
        torch.testing.assert_close(a[0], b[0], rtol=1e-13, atol=1e-13)
        assert int(a[1]) == int(b[1])
        if a[2] is not None:
            torch.testing.assert_close(a[2], b[2], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("kind", range(11))
def test_an_empty_batch_adds_nothing(impl, kind):
    shape = (0, 3) if kind in ROW_KINDS else (0,)
    sums, count, rows = _run(impl, kind, torch.empty(shape), torch.empty(shape), _param(kind), start=2.0)
    assert sums.tolist() == [2.0] * sums.numel() and int(count) == 5
    assert rows is None or rows.numel() == 0


def test_large_errors_keep_their_digits_and_overflows_pass(impl):
    x, y = torch.tensor([[0.0, 1e-9, 100.0]], dtype=_F64), torch.tensor([[1e-8, 0.0, -900.0]], dtype=_F64)
    sums, _, _ = _run(impl, LOG_COSH, x, y, 0.0)  # one sum per column
    # log cosh(e) = e^2 / 2 for tiny e (cosh would round to 1), |e| - log 2 for large ones (cosh: inf)
    torch.testing.assert_close(
        sums, torch.tensor([0.5e-16, 0.5e-18, 1000 - math.log(2)], dtype=_F64), rtol=1e-14, atol=0
    )
    big = torch.tensor([1e200, -1e200], dtype=_F64)
    sums, count, _ = _run(impl, SQUARED, big, -big, 0.0)
    assert math.isinf(sums.item()) and int(count) == 7  # finite inputs: an overflow is the value


def _bad_batches():
    """(kind, param, x, y, message start) of batches the kernel must refuse."""
    x, y = torch.rand(40, 3) + 0.1, torch.rand(40, 3) + 0.1
    cases = []
    for kind in range(11):
        param = _param(kind)
        nan_y = y.clone()
        nan_y[7, 1] = float("nan")
        cases.append((kind, param, x, nan_y, "y: expected finite values, got nan at flat index 22"))
        inf_x = x.clone()
        inf_x[39, 2] = float("-inf")
        cases.append((kind, param, inf_x, y, "x: expected finite values, got -inf at flat index 119"))
    below = x.clone()
    below[2, 0] = -1.0
    cases.append((SQUARED_LOG, 0.0, x, below, "y: expected values > -1 (log(1 + x) is taken), got -1 at flat index 6"))
    for kind in (KL, JS):
        negative = x.clone()
        negative[5, 1] = -0.5
        cases.append((kind, 0.0, negative, y, "x: expected probabilities >= 0, got -0.5 at flat index 16"))
        zero = y.clone()
        zero[9] = 0.0
        cases.append((kind, 0.0, x, zero, "y: expected rows with a positive sum, got row 9"))
    return cases


@pytest.mark.parametrize("kind,param,x,y,message", _bad_batches())
def test_a_refused_batch_names_the_first_bad_element_and_writes_nothing(impl, kind, param, x, y, message):
    sums = torch.full((_sizes(kind, x),), 3.0, dtype=_F64)
    count = torch.tensor(4, dtype=_I64)
    rows = torch.full((x.shape[0],), 8.0, dtype=_F64) if kind in ROW_KINDS else None
    before = [t.clone() for t in (sums, count, rows) if t is not None]
    with pytest.raises(ValueError) as info:
        impl.error_sums(sums, count, rows, x, y, kind, param)
    assert str(info.value) == message
    assert all(same_bits(a, b) for a, b in zip([t for t in (sums, count, rows) if t is not None], before))


def test_log_probabilities_take_no_domain_rule(impl):
    x, y = torch.rand(6, 4).log(), torch.rand(6, 4).log()
    x[2, 1] = -50.0  # a tiny probability, not an error
    for kind in (KL, JS):
        sums, _, rows = _run(impl, kind, x, y, 1.0)
        torch.testing.assert_close(rows, _expected_rows(kind, x.double(), y.double(), True), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "change,error,name",
    [
        (lambda a: a.__setitem__(0, torch.zeros(1)), TypeError, "sums"),
        (lambda a: a.__setitem__(0, torch.zeros(2, dtype=_F64)), ValueError, "sums"),
        (lambda a: a.__setitem__(0, torch.zeros(3, 2, dtype=_F64)[:, 0]), ValueError, "sums"),
        (lambda a: a.__setitem__(1, torch.zeros(1, dtype=torch.int32)), TypeError, "count"),
        (lambda a: a.__setitem__(1, torch.zeros(2, dtype=_I64)), ValueError, "count"),
        (lambda a: a.__setitem__(2, torch.zeros(64, dtype=_F64)), ValueError, "rows"),
        (lambda a: a.__setitem__(3, a[3].long()), TypeError, "x"),
        (lambda a: a.__setitem__(3, a[3].reshape(2, 2, 16)), ValueError, "x"),
        (lambda a: a.__setitem__(4, a[4][:-1]), ValueError, "y"),
        (lambda a: a.__setitem__(4, a[4].int()), TypeError, "y"),
        (lambda a: a.__setitem__(5, 11), ValueError, "kind"),
        (lambda a: a.__setitem__(5, -1), ValueError, "kind"),
        (lambda a: (a.__setitem__(5, MINKOWSKI), a.__setitem__(6, 0.5)), ValueError, "param"),
        (lambda a: (a.__setitem__(5, MINKOWSKI), a.__setitem__(6, math.inf)), ValueError, "param"),
    ],
)
def test_bad_arguments_raise_naming_the_argument_with_the_states_untouched(impl, change, error, name):
    args = [torch.full((1,), 5.0, dtype=_F64), torch.tensor(3, dtype=_I64), None, torch.rand(64), torch.rand(64)]
    args += [ABS_PERCENT, 0.0]
    change(args)
    before = [a.clone() for a in args[:2]]
    with pytest.raises(error) as info:
        impl.error_sums(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert all(same_bits(a, b) for a, b in zip(args[:2], before))


@pytest.mark.parametrize(
    "kind,param,x,rows,name",
    [
        (KL, 2.0, torch.rand(4, 3), None, "param"),
        (COSINE, 0.0, torch.rand(12), None, "x"),
        (COSINE, 0.0, torch.rand(4, 3), torch.zeros(5, dtype=_F64), "rows"),
        (COSINE, 0.0, torch.rand(4, 3), torch.zeros(4, dtype=torch.float32), "rows"),
    ],
)
def test_bad_row_arguments_raise_naming_the_argument(impl, kind, param, x, rows, name):
    sums = torch.zeros(1, dtype=_F64)
    with pytest.raises((TypeError, ValueError)) as info:
        impl.error_sums(sums, None, rows, x, x.clone(), kind, param)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert sums.tolist() == [0.0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_every_simd_level_gives_the_same_bits(c_core, dtype):
    from support.simd_paths import levels, simd_level

    results = {}
    for level in levels():
        with simd_level(level) as c:
            for kind in range(11):
                shape = (301, 4) if kind in ROW_KINDS else (3001,)
                x, y = _inputs(kind, shape, dtype, generator(kind))
                for variant in range(4 if kind == MINKOWSKI else 1):  # p = 3, 1, 2, 2.5
                    sums, count, rows = _run(c, kind, x, y, _param(kind, variant))
                    results.setdefault((kind, variant), []).append((level, sums, rows))
    for key, runs in results.items():
        _, first, first_rows = runs[0]
        for level, sums, rows in runs[1:]:
            assert same_bits(sums, first), (key, level)
            assert rows is None or same_bits(rows, first_rows), (key, level)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (3000, 10), (9, 255), (20, 256), (20, 257), (700, 3)])
def test_kl_of_contiguous_rows_matches_float64_torch(impl, dtype, shape):
    """C-contiguous float32 / float64 rows of 8 to 256 values are read in blocks of whole rows
    as one flat run; shorter and wider rows take the column walk."""
    g = generator(shape[1])
    x, y = _inputs(KL, shape, dtype, g)
    if shape[0] > 3 and shape[1] > 1:
        x[1, 0] = 0.0  # a zero probability: a zero term
        x[2] = 0.0
        x[2, -1] = 0.5  # a row with one positive value
    sums, count, rows = _run(impl, KL, x, y, 0.0, start=1.5)
    p, q = x.double() / x.double().sum(1, keepdim=True), y.double() / y.double().sum(1, keepdim=True)
    want_rows = (torch.xlogy(p, p) - torch.xlogy(p, q)).sum(1)  # (0 log 0 = 0)
    torch.testing.assert_close(rows, want_rows, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(sums, want_rows.sum().reshape(1) + 1.5, rtol=1e-12, atol=1e-12)
    assert int(count) == 5 + shape[0]


def test_kl_of_contiguous_rows_gives_inf_for_a_zero_q_and_refuses_bad_rows(impl):
    x, y = torch.rand(50, 4) + 0.1, torch.rand(50, 4) + 0.1
    y[7, 2] = 0.0  # q = 0 where p > 0: that row's divergence is inf, and passes
    sums, _, rows = _run(impl, KL, x, y, 0.0)
    assert float(rows[7]) == float("inf") and float(sums[0]) == float("inf")
    for name, t, value, message in (
        ("x", x, -0.5, "expected probabilities >= 0"),
        ("y", y, float("nan"), "expected finite values"),
    ):
        bad = t.clone()
        bad[30, 1] = value
        args = (bad, y) if name == "x" else (x, bad)
        total = torch.zeros(1, dtype=_F64)
        with pytest.raises(ValueError, match=f"^{name}: {message}"):
            impl.error_sums(total, None, None, *args, KL, 0.0)
        assert float(total) == 0.0
    zero = x.clone()
    zero[11] = 0.0
    with pytest.raises(ValueError, match="^x: expected rows with a positive sum, got row 11"):
        impl.error_sums(torch.zeros(1, dtype=_F64), None, None, zero, y, KL, 0.0)


@pytest.mark.parametrize("kind", [KL, JS])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_flat_rows_give_the_column_walks_bits(c_core, kind, dtype):
    x, y = _inputs(kind, (2500, 10), dtype, generator(kind))
    flat = torch.zeros(2500, dtype=_F64)
    walked = torch.zeros(2500, dtype=_F64)
    c_core.error_sums(None, None, flat, x, y, kind, 0.0)
    c_core.error_sums(None, None, walked, x.t().contiguous().t(), y.t().contiguous().t(), kind, 0.0)
    assert same_bits(flat, walked)
