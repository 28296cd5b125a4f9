"""The perplexity kernel: the C core against the torch reference and torch's cross entropy on
every float dtype, strided logits, ignore_index; NaN / +inf logits, all -inf rows and targets
out of range raise naming the argument, with the states untouched."""

import pytest
import torch
from support.kernel_inputs import generator

from torchtally.kernels import reference

_F64 = torch.float64


def _states():
    return torch.zeros((), dtype=_F64), torch.zeros((), dtype=torch.int64)


def _expected(logits, target, ignore_index):
    flat = logits.double().reshape(-1, logits.shape[-1])
    y = target.reshape(-1)
    keep = y != ignore_index if ignore_index is not None else torch.ones_like(y, dtype=torch.bool)
    return torch.nn.functional.cross_entropy(flat[keep], y[keep], reduction="sum"), int(keep.sum())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("ignore_index", [None, -100, 3])
def test_c_matches_reference(c_core, dtype, ignore_index):
    g = generator(11)
    logits = (torch.randn(3, 7, 50, generator=g) * 4).to(dtype)
    target = torch.randint(0, 50, (3, 7), generator=g)
    if ignore_index == -100:
        target[1, 2:] = -100
    want, n = _expected(logits, target, ignore_index)
    wide = torch.zeros(3, 7, 100, dtype=dtype)
    wide[..., ::2] = logits
    rtol = 1e-6 if dtype in (torch.float32, torch.float16, torch.bfloat16) else 1e-12
    for impl in (c_core, reference):
        for view in (logits, wide[..., ::2], logits.transpose(0, 1).contiguous().transpose(0, 1)):
            total, count = _states()
            total += 1.5  # accumulates into what is there
            impl.perplexity_update(total, count, view, target, ignore_index)
            assert int(count) == n
            torch.testing.assert_close(total - 1.5, want, rtol=rtol, atol=1e-9)


def test_minus_inf_logits_are_probability_zero(impl):
    logits = torch.tensor([[[0.0, float("-inf"), 1.0], [float("-inf"), 2.0, float("-inf")]]])
    total, count = _states()
    impl.perplexity_update(total, count, logits, torch.tensor([[0, 1]]), None)
    assert int(count) == 2
    torch.testing.assert_close(total, torch.logsumexp(torch.tensor([0.0, 1.0], dtype=_F64), 0))
    total, count = _states()
    impl.perplexity_update(total, count, logits, torch.tensor([[1, 1]]), None)
    assert float(total) == float("inf")


@pytest.mark.parametrize(
    "spoil, exc, name",
    [
        (lambda x, y: x[0, 1].__setitem__(2, float("nan")), ValueError, "preds"),
        (lambda x, y: x[1, 0].__setitem__(0, float("inf")), ValueError, "preds"),
        (lambda x, y: x[1, 2].fill_(float("-inf")), ValueError, "preds"),
        (lambda x, y: y[0].__setitem__(3, 5), ValueError, "target"),
        (lambda x, y: y[1].__setitem__(0, -1), ValueError, "target"),
    ],
)
def test_bad_values_raise_and_leave_the_states_untouched(impl, spoil, exc, name):
    x = torch.randn(2, 4, 5)
    y = torch.randint(0, 5, (2, 4))
    spoil(x, y)
    total, count = _states()
    total += 2.0
    with pytest.raises(exc, match=f"^{name}: "):
        impl.perplexity_update(total, count, x, y, None)
    assert float(total) == 2.0 and int(count) == 0


def test_ignored_rows_are_not_read(impl):
    x = torch.randn(1, 3, 4)
    x[0, 1] = float("nan")
    y = torch.tensor([[1, -100, 2]])
    total, count = _states()
    impl.perplexity_update(total, count, x, y, -100)
    assert int(count) == 2 and torch.isfinite(total)


def test_bad_calls_raise_naming_the_argument(impl):
    x, y = torch.randn(2, 3, 4), torch.zeros(2, 3, dtype=torch.int64)
    calls = [
        ((torch.zeros(()), torch.zeros((), dtype=torch.int64), x, y), TypeError, "total"),
        ((torch.zeros((), dtype=_F64), torch.zeros(()), x, y), TypeError, "count"),
        ((*_states(), x.long(), y), TypeError, "preds"),
        ((*_states(), x[0], y), ValueError, "preds"),
        ((*_states(), x, y.int()), TypeError, "target"),
        ((*_states(), x, y[:, :2]), ValueError, "target"),
    ]
    for args, exc, name in calls:
        with pytest.raises(exc, match=f"^{name}: "):
            impl.perplexity_update(*args, None)


def test_reference_in_chunks_of_rows(monkeypatch):
    import torchtally.kernels.reference.perplexity as ref_module

    logits, target = torch.randn(4, 5, 9, dtype=_F64), torch.randint(0, 9, (4, 5))
    target[2, 1] = -7
    whole, whole_count = _states()
    reference.perplexity_update(whole, whole_count, logits, target, -7)
    monkeypatch.setattr(ref_module, "_CHUNK_ELEMENTS", 20)  # 2 rows at a time
    total, count = _states()
    reference.perplexity_update(total, count, logits, target, -7)
    assert int(count) == int(whole_count) == 19
    torch.testing.assert_close(total, whole, rtol=1e-14, atol=0)
    torch.testing.assert_close(total, _expected(logits, target, -7)[0], rtol=1e-12, atol=0)


def test_every_simd_level_agrees(c_core):
    """Contiguous float32 and bfloat16 rows take a vectorised exp (AVX2 where the CPU has it): every level
    gives the float64 value to float32 precision, on rows longer than its 512-element block."""
    g = generator(5)
    logits = torch.randn(3, 4, 1500, generator=g) * 8
    logits[0, 1, 7] = float("-inf")
    target = torch.randint(0, 1500, (3, 4), generator=g)
    previous, widest = c_core._simd_level()
    try:
        for dtype in (torch.float32, torch.bfloat16):
            x = logits.to(dtype)
            want, _ = _expected(x, target, None)
            for level in range(widest + 1):
                c_core._set_simd_level(level)
                total, count = _states()
                c_core.perplexity_update(total, count, x, target, None)
                torch.testing.assert_close(total, want, rtol=2e-7, atol=0)
    finally:
        c_core._set_simd_level(previous)


def _at_every_level(c_core, run):
    """run() at every SIMD level this CPU has (the vector rows: four lanes at the baseline, eight
    with AVX2), the level restored after."""
    previous, widest = c_core._simd_level()
    try:
        for level in range(widest + 1):
            c_core._set_simd_level(level)
            run(level)
    finally:
        c_core._set_simd_level(previous)


# around the vector widths (4, 8 lanes, two vectors per iteration) and a language model's vocabulary
VOCABULARIES = [1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 257, 32000]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_c_matches_reference_over_vocabulary_sizes(c_core, dtype):
    """Every row length on both sides of the vector widths, contiguous and strided, -inf entries
    (one a target), ignore_index, at every SIMD level: the C core equals the float64 reference to
    float32 rounding (float64 logits: to float64 rounding)."""
    g = generator(21)
    rtol = 1e-13 if dtype == torch.float64 else 2e-7  # float64 takes an exp in double
    for v in VOCABULARIES:
        rows = 3 if v > 1000 else 5
        logits = (torch.randn(rows, 4, v, generator=g) * 6).to(dtype)
        target = torch.randint(0, v, (rows, 4), generator=g)
        target[0, 1] = -100
        if v > 2:
            logits[1, 2, torch.randperm(v, generator=g)[: v // 3]] = float("-inf")
            logits[1, 2, target[1, 2]] = 0.5  # the target stays finite
            logits[2, 0, target[2, 0]] = float("-inf")  # an impossible target: total becomes inf
        wide = torch.full((rows, 4, 2 * v), float("nan"), dtype=dtype)
        wide[..., ::2] = logits
        views = (logits, wide[..., ::2], logits[:, :, :].transpose(0, 1).contiguous().transpose(0, 1))
        keep = target != -100
        finite_rows = keep.clone()
        if v > 2:
            finite_rows[2, 0] = False
        want, n = _expected(logits[finite_rows].unsqueeze(0), target[finite_rows].unsqueeze(0), None)

        def run(level, logits=logits, target=target, views=views, want=want, n=n, v=v):
            for view in views:
                total, count = _states()
                c_core.perplexity_update(total, count, view, target, -100)
                assert int(count) == int(keep.sum()), (v, level)
                if v > 2:
                    assert float(total) == float("inf"), (v, level)
                    total, count = _states()
                    rows_ok = target.clone()
                    rows_ok[2, 0] = -100
                    c_core.perplexity_update(total, count, view, rows_ok, -100)
                    assert int(count) == n
                torch.testing.assert_close(total, want, rtol=rtol, atol=1e-9, msg=f"V={v}, level {level}")

        _at_every_level(c_core, run)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_vector_rows_equal_the_reference_on_large_logits(c_core, dtype):
    """Logits far apart (exp of the differences below float's range: the clamp at -87) and rows
    with one dominant logit: float32 rounding of the float64 value at every level."""
    g = generator(8)
    for v in (6, 100, 4099):
        logits = (torch.randn(4, 3, v, generator=g) * 60).to(dtype)
        logits[0, 0] = -30000.0
        logits[0, 0, 2] = 30000.0
        target = torch.randint(0, v, (4, 3), generator=g)
        want, _ = _expected(logits, target, None)

        def run(level, logits=logits, target=target, want=want):
            total, count = _states()
            c_core.perplexity_update(total, count, logits, target, None)
            torch.testing.assert_close(total, want, rtol=2e-7, atol=1e-9, msg=f"level {level}")

        _at_every_level(c_core, run)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("v", [5, 8, 37, 100])
def test_bad_logits_are_named_wherever_they_sit_in_the_row(c_core, dtype, v):
    """A NaN or +inf in a row's first lane, in its vector body or in its padded tail, and a row of
    -inf only, raise naming the element at every level; the states stay untouched."""
    positions = sorted({0, v // 2, v - 1, v - v % 8 if v % 8 else v - 2})

    def run(level):
        for k in positions:
            for bad in (float("nan"), float("inf")):
                wide = torch.randn(2, 3, 2 * v, dtype=dtype)
                for x in (wide[..., :v].contiguous(), wide[..., ::2]):  # read in place, gathered
                    x[1, 2, k] = bad
                    total, count = _states()
                    total += 3.0
                    with pytest.raises(
                        ValueError, match=rf"^preds: expected no NaN or \+inf, got {bad} at \[1, 2, {k}\]"
                    ):
                        c_core.perplexity_update(total, count, x, torch.zeros(2, 3, dtype=torch.int64), None)
                    assert float(total) == 3.0 and int(count) == 0
        x = torch.randn(2, 3, v, dtype=dtype)
        x[0, 1] = float("-inf")
        total, count = _states()
        with pytest.raises(ValueError, match=r"^preds: row \[0, 1\] is -inf everywhere"):
            c_core.perplexity_update(total, count, x, torch.zeros(2, 3, dtype=torch.int64), None)
        assert float(total) == 0.0 and int(count) == 0

    _at_every_level(c_core, run)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_long_strided_rows_across_blocks(c_core, dtype):
    """Strided rows longer than the kernel's gather block (4,096): a row whose first block is -inf
    only, one whose maximum rises block after block (the running sum rescaled each time), one whose
    maximum sits in its first block; equal to the float64 reference at every level."""
    v = 9000
    g = generator(13)
    logits = torch.randn(3, 1, v, generator=g, dtype=torch.float64)
    logits[0, 0, :5000] = float("-inf")
    logits[1, 0] += torch.linspace(0, 40, v, dtype=torch.float64)
    logits[2, 0, 3] = 25.0
    logits = logits.to(dtype)
    target = torch.tensor([[6000], [17], [8999]])
    want, _ = _expected(logits, target, None)
    wide = torch.zeros(3, 1, 3 * v, dtype=dtype)
    wide[..., ::3] = logits
    rtol = 1e-13 if dtype == torch.float64 else 2e-7

    def run(level):
        for view in (logits, wide[..., ::3]):
            total, count = _states()
            c_core.perplexity_update(total, count, view, target, None)
            torch.testing.assert_close(total, want, rtol=rtol, atol=0, msg=f"level {level}")

    _at_every_level(c_core, run)


def test_nothing_counted(c_core):
    """Every token ignored, and an empty batch: nothing added, nothing read."""
    x = torch.full((2, 3, 9), float("nan"))
    total, count = _states()
    c_core.perplexity_update(total, count, x, torch.full((2, 3), 7, dtype=torch.int64), 7)
    c_core.perplexity_update(total, count, torch.zeros(0, 3, 9), torch.zeros(0, 3, dtype=torch.int64), None)
    assert float(total) == 0.0 and int(count) == 0
