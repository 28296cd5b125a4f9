"""The audio signal formulas from the signal_sums kernel's energies (functional/audio/signals.py)
against numpy's direct float64 formulas where the one-pass identities would fail: signals with a
large DC offset, predictions within 1e-9 of a multiple of their target; the C core and the torch
reference give the same values, NaN and inf included; the functional forms still carry a
gradient (through the reference's differentiable sums)."""

import numpy as np
import pytest
import torch
from support.audio_signals import sa_sdr, si_sdr, signals, snr
from support.metric_tester import assert_same

import torchtally.functional.audio as ttf
from torchtally import kernels

F64_EPS = float(np.finfo(np.float64).eps)
BACKENDS = ("c", "reference") if kernels.has_c() else ("reference",)


def _each_backend(fn):
    out = {}
    for backend in BACKENDS:
        previous = kernels.set_backend(backend)
        try:
            out[backend] = fn()
        finally:
            kernels.set_backend(previous)
    return out


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
def test_large_dc_offsets_keep_float64_digits(offset):
    preds, target = signals(1, (3, 2, 4000), torch.float64)
    preds, target = preds + offset, target + offset
    for backend, got in _each_backend(
        lambda: (
            ttf.scale_invariant_signal_noise_ratio(preds, target),
            ttf.signal_noise_ratio(preds, target, zero_mean=True),
            ttf.source_aggregated_signal_distortion_ratio(preds, target, zero_mean=True),
            ttf.scale_invariant_signal_distortion_ratio(preds, target),
        )
    ).items():
        si_snr, snr_zm, sa, si_sdr_raw = got
        assert_same(si_snr, si_sdr(preds, target, True, F64_EPS), rtol=1e-9, what=backend)
        assert_same(snr_zm, snr(preds, target, True, F64_EPS), rtol=1e-9, what=backend)
        assert_same(sa, sa_sdr(preds, target, True, True, F64_EPS), rtol=1e-9, what=backend)
        assert_same(si_sdr_raw, si_sdr(preds, target, False, F64_EPS), rtol=1e-9, what=backend)


def test_near_perfect_predictions_keep_their_decibels():
    """A prediction 1e-9 from half its target: SI-SDR ~ 174 dB; |p|^2 - <p, t>^2 / |t|^2 would
    leave rounding noise of ~1e-13 |p|^2 (~ 130 dB, or a negative energy)."""
    _, target = signals(2, (4, 3000), torch.float64)
    preds = 0.5 * target + 1e-9 * torch.randn(4, 3000, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    want = si_sdr(preds, target, False, F64_EPS)
    assert (want > 150).all()
    for backend, got in _each_backend(lambda: ttf.scale_invariant_signal_distortion_ratio(preds, target)).items():
        assert_same(got, want, rtol=1e-7, what=backend)
    exact = ttf.scale_invariant_signal_distortion_ratio(target * 2, target)
    assert_same(exact, si_sdr(target * 2, target, False, F64_EPS), rtol=1e-12)


def test_nan_and_inf_are_the_same_on_both_routes():
    preds, target = signals(4, (6, 2, 300), torch.float32)
    preds[0, 0, 3], target[1, 1, 9], preds[2, 0, 5], target[3, 0, 0] = (
        float("nan"),
        float("nan"),
        float("inf"),
        -float("inf"),
    )
    fns = (
        lambda: ttf.signal_noise_ratio(preds, target),
        lambda: ttf.signal_noise_ratio(preds, target, zero_mean=True),
        lambda: ttf.scale_invariant_signal_distortion_ratio(preds, target),
        lambda: ttf.scale_invariant_signal_noise_ratio(preds, target),
        lambda: ttf.source_aggregated_signal_distortion_ratio(preds, target),
        lambda: ttf.source_aggregated_signal_distortion_ratio(preds, target, scale_invariant=False),
    )
    for fn in fns:
        got = _each_backend(fn)
        values = list(got.values())
        for v in values[1:]:
            torch.testing.assert_close(v, values[0], equal_nan=True)
        assert values[0][4:].isfinite().all()  # the clean utterances stay finite


def test_gradients_match_the_direct_formula():
    preds, target = signals(5, (3, 50), torch.float64)
    preds.requires_grad_(True)

    def direct(p):
        alpha = (p * target).sum(-1, keepdim=True) / target.square().sum(-1, keepdim=True)
        return 10 * torch.log10((alpha * target).square().sum(-1) / (alpha * target - p).square().sum(-1))

    (got,) = torch.autograd.grad(ttf.scale_invariant_signal_distortion_ratio(preds, target).sum(), preds)
    (want,) = torch.autograd.grad(direct(preds).sum(), preds)
    torch.testing.assert_close(got, want, rtol=1e-8, atol=1e-10)
