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
