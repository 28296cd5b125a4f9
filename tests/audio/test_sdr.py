"""SignalDistortionRatio, ScaleInvariantSignalDistortionRatio, SourceAggregatedSignalDistortionRatio
and their functional forms against numpy (SDR by its definition: an explicit least-squares
projection onto shifted targets; SI-SDR and SA-SDR by their formulas), fast-bss-eval where it
is installed, and torchmetrics (values, dtypes, forward); bad input raises with the state
unchanged; 3 gloo ranks with uneven shards == one process."""

import functools
import warnings

import numpy as np
import pytest
import torch
import torchmetrics.audio as tma
import torchmetrics.functional.audio as tmf
from support.audio_signals import sa_sdr, sdr, si_sdr, signals
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from support.parity_tester import ParityCase, check_parity

import torchtally.functional.audio as ttf
from torchtally.audio import (
    ScaleInvariantSignalDistortionRatio,
    SignalDistortionRatio,
    SourceAggregatedSignalDistortionRatio,
)

# torch's batched LU solve (torchmetrics' SDR) fails with "Pivots given to lu_solve ..." once the
# intra-op thread count has gone to 1 and back in the process (MKL, torch 2.13); on one thread it
# solves, so every test here runs on one, whatever ran before it.
pytestmark = pytest.mark.usefixtures("one_intra_op_thread")

F64_EPS = float(np.finfo(np.float64).eps)


@pytest.mark.parametrize("filter_length", [1, 8, 32])
@pytest.mark.parametrize("zero_mean", [False, True])
def test_sdr_equals_the_projection_by_its_definition(filter_length, zero_mean):
    preds, target = signals(1, (3, 120), torch.float64, noise=0.5)
    got = ttf.signal_distortion_ratio(preds, target, filter_length=filter_length, zero_mean=zero_mean)
    assert got.dtype == torch.float64 and got.shape == (3,)
    assert_same(got, sdr(preds, target, filter_length, zero_mean), rtol=1e-8, atol=1e-8)
    loaded = ttf.signal_distortion_ratio(preds, target, filter_length=filter_length, load_diag=1e-3)
    assert_same(loaded, sdr(preds, target, filter_length, load_diag=1e-3), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sdr_equals_torchmetrics(dtype):
    preds, target = signals(2, (2, 3, 700), dtype, noise=0.7)
    for kwargs in ({}, dict(filter_length=64, zero_mean=True), dict(filter_length=100, load_diag=1e-4)):
        got, want = (
            ttf.signal_distortion_ratio(preds, target, **kwargs),
            tmf.signal_distortion_ratio(preds, target, **kwargs),
        )
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_same(got, want, rtol=1e-6, atol=1e-6)
    half = ttf.signal_distortion_ratio(preds.half(), target.half(), filter_length=16)
    assert half.dtype == torch.float32  # torchmetrics' dtype: float64 for float64 preds, else float32


def test_sdr_equals_fast_bss_eval():
    fbe = pytest.importorskip("fast_bss_eval")
    preds, target = signals(3, (4, 900), torch.float64, noise=0.6)
    for filter_length in (16, 512):
        want = fbe.sdr(target[:, None].numpy(), preds[:, None].numpy(), filter_length=filter_length)[:, 0]
        assert_same(ttf.signal_distortion_ratio(preds, target, filter_length=filter_length), want, rtol=1e-6)
    want_si = fbe.si_sdr(target[:, None].numpy(), preds[:, None].numpy())[:, 0]
    assert_same(ttf.scale_invariant_signal_distortion_ratio(preds, target), want_si, rtol=1e-9)


def test_use_cg_iter_solves_exactly():
    preds, target = signals(4, (2, 300), torch.float64)
    exact = ttf.signal_distortion_ratio(preds, target, filter_length=32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: the exact solve is the documented behaviour
        assert_same(ttf.signal_distortion_ratio(preds, target, use_cg_iter=5, filter_length=32), exact)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(40,), (5, 33), (2, 3, 20)])
def test_si_sdr_equals_numpy_and_torchmetrics(dtype, shape):
    preds, target = signals(5, shape, dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    for zero_mean in (False, True):
        got = ttf.scale_invariant_signal_distortion_ratio(preds, target, zero_mean)
        want = tmf.scale_invariant_signal_distortion_ratio(preds, target, zero_mean)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_same(got, want, **tol)
        assert_same(got, si_sdr(preds, target, zero_mean, float(torch.finfo(dtype).eps)), **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sa_sdr_equals_numpy_and_torchmetrics(dtype):
    preds, target = signals(6, (4, 3, 50), dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    for scale_invariant in (True, False):
        for zero_mean in (False, True):
            got = ttf.source_aggregated_signal_distortion_ratio(preds, target, scale_invariant, zero_mean)
            want = tmf.source_aggregated_signal_distortion_ratio(preds, target, scale_invariant, zero_mean)
            assert got.dtype == want.dtype and got.shape == (4,)
            assert_same(got, want, **tol)
            eps = float(torch.finfo(dtype).eps)
            assert_same(got, sa_sdr(preds, target, scale_invariant, zero_mean, eps), **tol)


def test_gradients_flow_through_the_functional_forms():
    preds, target = signals(7, (2, 2, 64), torch.float64)
    preds.requires_grad_(True)
    for fn in (
        ttf.scale_invariant_signal_distortion_ratio,
        ttf.source_aggregated_signal_distortion_ratio,
        functools.partial(ttf.signal_distortion_ratio, filter_length=8),
    ):
        (grad,) = torch.autograd.grad(fn(preds, target).sum(), preds)
        assert torch.isfinite(grad).all() and grad.abs().sum() > 0


def test_edge_cases():
    silence = torch.zeros(2, 16)
    assert_same(
        ttf.scale_invariant_signal_distortion_ratio(silence, silence),
        tmf.scale_invariant_signal_distortion_ratio(silence, silence),
        atol=1e-6,
    )
    # a silent target: the loaded diagonal keeps the system solvable, as torchmetrics'
    noisy, _ = signals(8, (2, 64))
    assert_same(
        ttf.signal_distortion_ratio(noisy, torch.zeros(2, 64), filter_length=8, load_diag=1e-5),
        tmf.signal_distortion_ratio(noisy, torch.zeros(2, 64), filter_length=8, load_diag=1e-5),
        rtol=1e-5,
        atol=1e-5,
    )
    assert ttf.signal_distortion_ratio(torch.zeros(0, 64), torch.zeros(0, 64), filter_length=8).shape == (0,)
    # a filter longer than the signals: every lag the correlations have (as torchmetrics)
    short_p, short_t = signals(9, (2, 5), torch.float64)
    assert_same(
        ttf.signal_distortion_ratio(short_p, short_t, filter_length=3),
        tmf.signal_distortion_ratio(short_p, short_t, filter_length=3),
        rtol=1e-8,
    )


def _batches(seed, shapes, dtype=torch.float32):
    return [signals(seed + i, shape, dtype, noise=0.5) for i, shape in enumerate(shapes)]


BATCHES = _batches(10, [(3, 160), (1, 160), (4, 160), (2, 160), (3, 160)])
MIXTURES = _batches(20, [(2, 3, 80), (1, 3, 80), (3, 3, 80), (2, 3, 80)])


def _mean(values):
    return torch.tensor(float(np.mean(values)), dtype=torch.float32)


CASES = [
    MetricCase(
        "sdr",
        functools.partial(SignalDistortionRatio, filter_length=16),
        BATCHES,
        lambda p, t: _mean(sdr(p, t, 16)),
        rtol=1e-6,
        atol=1e-6,
    ),
    MetricCase(
        "si-sdr", ScaleInvariantSignalDistortionRatio, BATCHES, lambda p, t: _mean(si_sdr(p, t)), rtol=1e-6, atol=1e-6
    ),
    MetricCase(
        "si-sdr-zero-mean",
        functools.partial(ScaleInvariantSignalDistortionRatio, zero_mean=True),
        BATCHES,
        lambda p, t: _mean(si_sdr(p, t, True)),
        rtol=1e-6,
        atol=1e-6,
    ),
    MetricCase("sa-sdr", SourceAggregatedSignalDistortionRatio, MIXTURES, lambda p, t: _mean(sa_sdr(p, t)), rtol=1e-6),
    MetricCase(
        "sa-sdr-not-scale-invariant",
        functools.partial(SourceAggregatedSignalDistortionRatio, False, True),
        MIXTURES,
        lambda p, t: _mean(sa_sdr(p, t, False, True)),
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


PARITY = [
    ParityCase(
        "sdr",
        functools.partial(SignalDistortionRatio, filter_length=16),
        functools.partial(tma.SignalDistortionRatio, filter_length=16),
        BATCHES,
        rtol=1e-5,
        atol=1e-5,
    ),
    ParityCase(
        "si-sdr",
        ScaleInvariantSignalDistortionRatio,
        tma.ScaleInvariantSignalDistortionRatio,
        BATCHES,
        rtol=1e-5,
        atol=1e-5,
    ),
    ParityCase(
        "sa-sdr",
        SourceAggregatedSignalDistortionRatio,
        tma.SourceAggregatedSignalDistortionRatio,
        MIXTURES,
        rtol=1e-5,
        atol=1e-5,
    ),
]


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c.name)
def test_parity_with_torchmetrics_classes(case):
    check_parity(case)


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = BATCHES[0]
    for m in (SignalDistortionRatio(filter_length=8), ScaleInvariantSignalDistortionRatio()):
        m.update(preds, target)
        assert_rejects(m, (preds, target[:, :10]), ValueError, "target: expected the shape of preds")
        assert_rejects(m, (preds.long(), target), TypeError, "preds: expected a floating point")
        assert_rejects(m, ([1.0], target), TypeError, "preds: expected a torch.Tensor")
    sdr_metric = SignalDistortionRatio(filter_length=8).update(preds, target)
    assert_rejects(sdr_metric, (preds[:, :0], target[:, :0]), ValueError, "at least one sample")
    sa = SourceAggregatedSignalDistortionRatio().update(*MIXTURES[0])
    assert_rejects(sa, (preds[0], target[0]), ValueError, r"preds: expected a tensor of shape \(\.\.\., spk, time\)")
    for bad in (dict(filter_length=0), dict(use_cg_iter=0), dict(load_diag="x")):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SignalDistortionRatio(**bad)
        with pytest.raises(ValueError, match=next(iter(bad))):
            ttf.signal_distortion_ratio(preds, target, **bad)
    for bad in (dict(scale_invariant=1), dict(zero_mean="yes")):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SourceAggregatedSignalDistortionRatio(**bad)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)
