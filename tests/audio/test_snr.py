"""SignalNoiseRatio, ScaleInvariantSignalNoiseRatio, ComplexScaleInvariantSignalNoiseRatio and
their functional forms against numpy's formulas (float64) and torchmetrics (values, dtypes,
forward); edge cases (silence, no utterance, no sample); bad input raises with the state
unchanged; 3 gloo ranks with uneven shards == one process."""

import functools

import numpy as np
import pytest
import torch
import torchmetrics.audio as tma
import torchmetrics.functional.audio as tmf
from support.audio_signals import si_sdr, signals, snr
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from support.parity_tester import ParityCase, check_parity

import torchtally.functional.audio as ttf
from torchtally.audio import ComplexScaleInvariantSignalNoiseRatio, ScaleInvariantSignalNoiseRatio, SignalNoiseRatio

F64_EPS = float(np.finfo(np.float64).eps)
SHAPES = [(50,), (4, 37), (3, 2, 64)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("zero_mean", [False, True])
def test_functions_equal_numpy_in_float64(shape, zero_mean):
    preds, target = signals(1, shape, torch.float64)
    got = ttf.signal_noise_ratio(preds, target, zero_mean)
    assert got.dtype == torch.float64 and got.shape == shape[:-1]
    assert_same(got, snr(preds, target, zero_mean, F64_EPS), rtol=1e-12, atol=1e-12)
    assert_same(ttf.scale_invariant_signal_noise_ratio(preds, target), si_sdr(preds, target, True, F64_EPS), rtol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_functions_equal_torchmetrics(dtype, shape):
    preds, target = signals(2, shape, dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    for zero_mean in (False, True):
        got, want = ttf.signal_noise_ratio(preds, target, zero_mean), tmf.signal_noise_ratio(preds, target, zero_mean)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_same(got, want, **tol)
    got, want = (
        ttf.scale_invariant_signal_noise_ratio(preds, target),
        tmf.scale_invariant_signal_noise_ratio(preds, target),
    )
    assert got.dtype == want.dtype
    assert_same(got, want, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_complex_si_snr_equals_torchmetrics_real_and_complex_inputs(dtype):
    preds, target = signals(3, (2, 3, 9, 7, 2), dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    for zero_mean in (False, True):
        want = tmf.complex_scale_invariant_signal_noise_ratio(preds, target, zero_mean)
        got = ttf.complex_scale_invariant_signal_noise_ratio(preds, target, zero_mean)
        assert got.dtype == want.dtype and got.shape == (2, 3)
        assert_same(got, want, **tol)
        cp, ct = torch.view_as_complex(preds.contiguous()), torch.view_as_complex(target.contiguous())
        assert_same(ttf.complex_scale_invariant_signal_noise_ratio(cp, ct, zero_mean), want, **tol)
    flat = si_sdr(preds.reshape(2, 3, -1), target.reshape(2, 3, -1), False, float(torch.finfo(dtype).eps))
    assert_same(ttf.complex_scale_invariant_signal_noise_ratio(preds, target), flat, **tol)


def test_float64_arithmetic_for_half_inputs():
    """float16 sums of squares overflow past 65504; here they are float64, returned in float16."""
    preds, target = signals(4, (2, 4000), torch.float64)
    preds, target = (preds * 20).half(), (target * 20).half()
    got = ttf.signal_noise_ratio(preds, target)
    assert got.dtype == torch.float16
    want = snr(preds, target, eps=float(torch.finfo(torch.float16).eps))
    assert_same(got, want, rtol=1e-3)
    assert torch.isfinite(got).all()


def test_gradients_flow_through_the_functional_forms():
    preds, target = signals(5, (3, 40), torch.float64)
    preds.requires_grad_(True)
    for fn in (ttf.signal_noise_ratio, ttf.scale_invariant_signal_noise_ratio):
        (grad,) = torch.autograd.grad(fn(preds, target).sum(), preds)
        assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    assert torch.autograd.gradcheck(lambda p: ttf.scale_invariant_signal_noise_ratio(p, target), (preds,))


def test_edge_cases_as_torchmetrics():
    silence = torch.zeros(2, 10)
    for fn in ("signal_noise_ratio", "scale_invariant_signal_noise_ratio"):
        ours, theirs = getattr(ttf, fn), getattr(tmf, fn)
        assert_same(ours(silence, silence), theirs(silence, silence), atol=1e-6)  # 0 dB, not NaN
        assert_same(ours(torch.zeros(0, 10), torch.zeros(0, 10)), torch.zeros(0))  # no utterance
        const = torch.full((3, 8), 2.0)
        assert_same(ours(const, const), theirs(const, const), rtol=1e-5, atol=1e-4)
    assert_same(ttf.signal_noise_ratio(torch.zeros(3, 0), torch.zeros(3, 0)), torch.zeros(3))  # no sample: 0 dB
    m = SignalNoiseRatio()
    m.update(torch.zeros(0, 10), torch.zeros(0, 10))
    assert torch.isnan(m.compute())  # 0 / 0, as torchmetrics


def _batches(seed, shapes, dtype=torch.float32):
    return [signals(seed + i, shape, dtype) for i, shape in enumerate(shapes)]


BATCHES = _batches(10, [(3, 64), (1, 64), (4, 64), (2, 64), (5, 64)])
SPEC_BATCHES = _batches(20, [(2, 5, 6, 2), (1, 5, 6, 2), (3, 5, 6, 2), (2, 5, 6, 2)])


def _mean(values):
    return torch.tensor(float(np.mean(values)), dtype=torch.float32)


CASES = [
    MetricCase("snr", SignalNoiseRatio, BATCHES, lambda p, t: _mean(snr(p, t)), rtol=1e-6, atol=1e-6),
    MetricCase(
        "snr-zero-mean",
        functools.partial(SignalNoiseRatio, zero_mean=True),
        BATCHES,
        lambda p, t: _mean(snr(p, t, True)),
        rtol=1e-6,
        atol=1e-6,
    ),
    MetricCase(
        "si-snr", ScaleInvariantSignalNoiseRatio, BATCHES, lambda p, t: _mean(si_sdr(p, t, True)), rtol=1e-6, atol=1e-6
    ),
    MetricCase(
        "c-si-snr",
        ComplexScaleInvariantSignalNoiseRatio,
        SPEC_BATCHES,
        lambda p, t: _mean(si_sdr(p.reshape(len(p), -1), t.reshape(len(t), -1))),
        rtol=1e-6,
        atol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


PARITY = [
    ParityCase("snr", SignalNoiseRatio, tma.SignalNoiseRatio, BATCHES, rtol=1e-5, atol=1e-5),
    ParityCase(
        "snr-zero-mean",
        functools.partial(SignalNoiseRatio, True),
        functools.partial(tma.SignalNoiseRatio, True),
        BATCHES,
        rtol=1e-5,
        atol=1e-5,
    ),
    ParityCase(
        "si-snr", ScaleInvariantSignalNoiseRatio, tma.ScaleInvariantSignalNoiseRatio, BATCHES, rtol=1e-5, atol=1e-5
    ),
    ParityCase(
        "c-si-snr",
        ComplexScaleInvariantSignalNoiseRatio,
        tma.ComplexScaleInvariantSignalNoiseRatio,
        SPEC_BATCHES,
        rtol=1e-5,
        atol=1e-5,
    ),
    ParityCase(
        "snr-f64-inputs",
        SignalNoiseRatio,
        tma.SignalNoiseRatio,
        _batches(30, [(2, 50), (3, 50)], torch.float64),
        rtol=1e-6,
        atol=1e-6,
    ),
]


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c.name)
def test_parity_with_torchmetrics_classes(case):
    check_parity(case)


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = BATCHES[0]
    for m in (SignalNoiseRatio(), ScaleInvariantSignalNoiseRatio()):
        m.update(preds, target)
        assert_rejects(m, (preds, target[:, :10]), ValueError, "target: expected the shape of preds")
        assert_rejects(m, (preds.long(), target), TypeError, "preds: expected a floating point")
        assert_rejects(m, (preds, target.int()), TypeError, "target: expected a floating point")
        assert_rejects(m, (preds.numpy(), target), TypeError, "preds: expected a torch.Tensor")
        assert_rejects(m, (torch.tensor(1.0), torch.tensor(1.0)), ValueError, "preds: expected a tensor of shape")
    c = ComplexScaleInvariantSignalNoiseRatio().update(*SPEC_BATCHES[0])
    sp, st = SPEC_BATCHES[0]
    assert_rejects(c, (sp[..., :1], st[..., :1]), ValueError, r"preds: expected a tensor of shape \(\.\.\., frequency")
    assert_rejects(c, (sp[0, 0], st[0, 0]), ValueError, "preds: expected a tensor of shape")
    assert_rejects(c, (sp, st[:1]), ValueError, "target: expected the shape of preds")
    with pytest.raises(ValueError, match="zero_mean"):
        ComplexScaleInvariantSignalNoiseRatio(zero_mean=1)
    with pytest.raises(ValueError, match="target: expected the shape"):
        ttf.signal_noise_ratio(preds, target[:1])


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)


def test_a_shape_mismatch_is_also_torchmetrics_runtimeerror():
    from torchtally.functional.audio import signal_noise_ratio

    for catch in (ValueError, RuntimeError):
        with pytest.raises(catch, match="target: expected the shape of preds"):
            signal_noise_ratio(torch.randn(100), torch.randn(50))


def test_shape_errors_carry_torchmetrics_words():
    """Code matching torchmetrics' messages (and catching its RuntimeError) still matches."""
    import torchtally.audio as A

    cases = [
        (A.SignalNoiseRatio(), (100,), (50,), "Predictions and targets are expected to have the same shape"),
        (A.SourceAggregatedSignalDistortionRatio(), (100,), (50,), "expected to have the same shape"),
        (A.ComplexScaleInvariantSignalNoiseRatio(), (100,), (50,), r"expected to have the shape \(\.\.\., frequency"),
        (A.PermutationInvariantTraining(ttf.signal_noise_ratio), (3, 3, 10), (3, 2, 10), "at the batch and speaker"),
    ]
    for metric, p, t, words in cases:
        with pytest.raises(RuntimeError, match=words):
            metric(torch.randn(*p), torch.randn(*t))
    with pytest.raises(ValueError, match=r"Inputs must be of shape \[batch, spk"):
        A.PermutationInvariantTraining(ttf.signal_noise_ratio)(torch.randn(3), torch.randn(3))
