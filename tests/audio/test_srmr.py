"""SRMR against an oracle written here from the algorithm's description (scipy's lfilter and
hilbert, plain loops), the class against its functional form, silent utterances counted, bad
input raising with the state unchanged, the error without gammatone, 3 gloo ranks == one
process. torchmetrics' own SRMR needs torchaudio (not installed here): only its signatures are
compared."""

import functools
import inspect
import math
import sys

import numpy as np
import pytest
import torch
from scipy import signal
from support.audio_models import speech
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.audio import SpeechReverberationModulationEnergyRatio
from torchtally.functional.audio import speech_reverberation_modulation_energy_ratio

gt_filters = pytest.importorskip("gammatone.filters")
gt_fft = pytest.importorskip("gammatone.fftweight")


def oracle_one(x, fs, n_filters=23, low_freq=125, min_cf=4, max_cf=None, norm=False, fast=False):
    """SRMR of one utterance, straight from the description (SRMRpy's steps, torchmetrics'
    window and scaling)."""
    x = np.asarray(x, dtype=np.float64)
    x = x / max(1.0, np.abs(x).max())
    if max_cf is None:
        max_cf = 30 if norm else 128
    if fast:
        mfs = 400.0
        env = gt_fft.fft_gtgram(x, fs, 0.010, 0.0025, n_filters, low_freq)
    else:
        mfs = fs
        coefs = gt_filters.make_erb_filters(fs, gt_filters.centre_freqs(fs, n_filters, low_freq))
        bands = []
        for c in coefs:
            y = x
            for stage in (1, 2, 3, 4):  # four second-order stages sharing the denominator
                y = signal.lfilter([c[0], c[stage], c[5]], [c[6], c[7], c[8]], y)
            bands.append(y / c[9])
        n_fft = int(math.ceil(len(x) / 16) * 16)
        env = np.abs(signal.hilbert(np.array(bands), N=n_fft, axis=-1)[:, : len(x)])
    frame, hop = math.ceil(0.256 * mfs), math.ceil(0.064 * mfs)
    cfs = [float(min_cf)]
    for _ in range(7):
        cfs.append(cfs[-1] * (max_cf / min_cf) ** (1 / 7))
    window = signal.windows.hamming(frame + 2, sym=True)[:frame]
    n_frames = 1 + (env.shape[1] - frame) // hop
    energy = np.zeros((n_filters, 8, n_frames))
    lower = []
    for j, cf in enumerate(cfs):
        w0 = np.tan(np.pi * cf / mfs)
        q_bw = w0 / 2
        lower.append(cf - q_bw * mfs / (2 * np.pi))
        b = [q_bw, 0.0, -q_bw]
        a = [1 + q_bw + w0**2, 2 * w0**2 - 2, 1 - q_bw + w0**2]
        for i in range(n_filters):
            out = signal.lfilter(b, a, env[i])
            for f in range(n_frames):
                seg = out[f * hop : f * hop + frame]
                energy[i, j, f] = np.sum((seg * window) ** 2)
    if norm:
        peak = energy.mean(axis=0).max()
        energy = np.minimum(np.maximum(energy, peak * 10 ** (-3.0)), peak)
    avg = energy.mean(axis=2)
    if avg.sum() == 0:
        return math.nan
    perc = avg.sum(axis=1) * 100 / avg.sum()
    erbs = np.flipud(gt_filters.centre_freqs(fs, n_filters, low_freq) / 9.26449 + 24.7)
    running, idx = 0.0, None
    for k, p in enumerate(np.flipud(perc)):
        running += p
        if running > 90:
            idx = k
            break
    bw = erbs[idx]
    kstar = None
    for k in (4, 5, 6):
        if lower[k] <= bw < lower[k + 1]:
            kstar = k + 1
    if lower[7] <= bw:
        kstar = 8
    if kstar is None:
        raise ValueError("bandwidth below the 5th band")
    return avg[:, :4].sum() / avg[:, 4:kstar].sum()


def oracle(preds, fs, **kw):
    rows = preds.double().reshape(-1, preds.shape[-1]).numpy()
    return np.array([oracle_one(r, fs, **kw) for r in rows])


def _noisy_speech(seed, n, time=4000, fs=8000):
    g = torch.Generator().manual_seed(seed + 7)
    return speech(seed, n, time, fs) + 0.05 * torch.randn(n, time, generator=g)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("fast", [False, True])
def test_functional_equals_the_oracle(norm, fast):
    preds = _noisy_speech(1, 4, time=5000).reshape(2, 2, -1)
    got = speech_reverberation_modulation_energy_ratio(preds, 8000, norm=norm, fast=fast)
    assert got.dtype == torch.float64 and got.shape == (2, 2)
    np.testing.assert_allclose(got.numpy().ravel(), oracle(preds, 8000, norm=norm, fast=fast), rtol=1e-9)


def test_other_arguments_rates_and_shapes():
    preds = 3.0 * torch.randn(2, 6000, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    kw = dict(n_cochlear_filters=12, low_freq=80, min_cf=2, max_cf=64)
    got = speech_reverberation_modulation_energy_ratio(preds, 16000, **kw)
    np.testing.assert_allclose(got.numpy(), oracle(preds, 16000, n_filters=12, low_freq=80, min_cf=2, max_cf=64),
                               rtol=1e-9)  # fmt: skip
    one = speech_reverberation_modulation_energy_ratio(preds[0], 16000, **kw)
    assert one.shape == (1,) and float(one[0]) == pytest.approx(float(got[0]), rel=1e-12)  # torchmetrics' [1]
    # scaling does not change the ratio; integer PCM is accepted
    pcm = (preds[1] * 3000).round().to(torch.int16)
    from_int = speech_reverberation_modulation_energy_ratio(pcm, 16000, **kw)
    from_float = speech_reverberation_modulation_energy_ratio(pcm.double() / 32767, 16000, **kw)
    assert float(from_int[0]) == pytest.approx(float(from_float[0]), rel=1e-9)
    strided = preds.t().contiguous().t()  # a non-contiguous view of the same values
    assert torch.equal(speech_reverberation_modulation_energy_ratio(strided, 16000, **kw), got)
    empty = speech_reverberation_modulation_energy_ratio(torch.zeros(0, 3, 4000), 8000)
    assert empty.shape == (0, 3)


def test_signatures_are_torchmetrics():
    tm_functional = pytest.importorskip("torchmetrics.functional.audio.srmr")
    tm_class = pytest.importorskip("torchmetrics.audio.srmr")
    assert inspect.signature(speech_reverberation_modulation_energy_ratio) == inspect.signature(
        tm_functional.speech_reverberation_modulation_energy_ratio
    )
    ours = inspect.signature(SpeechReverberationModulationEnergyRatio.__init__)
    assert ours == inspect.signature(tm_class.SpeechReverberationModulationEnergyRatio.__init__)


def test_class_is_the_mean_of_the_functional_form():
    batches = [_noisy_speech(s, 1 + s % 3) for s in range(3)]
    m = SpeechReverberationModulationEnergyRatio(8000, norm=True)
    first = m(batches[0])
    assert first.dtype == torch.float32
    alone = speech_reverberation_modulation_energy_ratio(batches[0], 8000, norm=True)
    assert float(first) == pytest.approx(float(alone.mean()), rel=1e-6)
    for b in batches[1:]:
        m.update(b)
    scores = torch.cat([speech_reverberation_modulation_energy_ratio(b, 8000, norm=True) for b in batches])
    assert int(m.total) == 6 and int(m.failed) == 0
    assert float(m.compute()) == pytest.approx(float(scores.mean()), rel=1e-6)
    assert m.msum.dtype == torch.float64


def test_silent_utterances_score_nan_and_are_counted():
    preds = _noisy_speech(4, 3)
    preds[1] = 0.0
    got = speech_reverberation_modulation_energy_ratio(preds, 8000)
    assert math.isnan(float(got[1])) and not torch.isnan(got[[0, 2]]).any()
    # the rows after the silent one keep their own score
    assert float(got[2]) == pytest.approx(oracle_one(preds[2].numpy(), 8000), rel=1e-9)
    m = SpeechReverberationModulationEnergyRatio(8000).update(preds)
    assert (int(m.total), int(m.failed)) == (2, 1)
    with pytest.warns(UserWarning, match="1 of 3 utterances could not be scored"):
        assert float(m.compute()) == pytest.approx(float(got[[0, 2]].mean()), rel=1e-6)


def test_missing_package_names_it(monkeypatch):
    for name in ("gammatone", "gammatone.filters", "gammatone.fftweight"):
        monkeypatch.setitem(sys.modules, name, None)  # what a missing package looks like to import
    with pytest.raises(ModuleNotFoundError, match="pip install gammatone"):
        SpeechReverberationModulationEnergyRatio(8000)
    with pytest.raises(ModuleNotFoundError, match="pip install gammatone"):
        speech_reverberation_modulation_energy_ratio(torch.randn(4000), 8000)


def test_bad_input_raises_with_the_state_unchanged():
    preds = _noisy_speech(5, 2)
    m = SpeechReverberationModulationEnergyRatio(8000).update(preds)
    assert_rejects(m, (preds[:, :2000],), ValueError, "preds: expected at least one 256 ms frame")
    assert_rejects(SpeechReverberationModulationEnergyRatio(8000, fast=True).update(preds), (preds[:, :2000],),
                   ValueError, "preds: expected at least one 256 ms frame")  # fmt: skip
    assert_rejects(m, (preds.numpy(),), TypeError, "preds: expected a torch.Tensor")
    assert_rejects(m, (preds.to(torch.complex64),), TypeError, "preds")
    assert_rejects(m, (preds > 0,), TypeError, "preds")
    bad = preds.clone()
    bad[1, 7] = float("inf")
    assert_rejects(m, (bad,), ValueError, "preds: expected finite")
    # a utterance whose 90% bandwidth lies below the 5th modulation band (as torchmetrics)
    tone = torch.sin(2 * torch.pi * 140 * torch.arange(4000) / 8000)[None]
    low = SpeechReverberationModulationEnergyRatio(8000, min_cf=30, max_cf=120).update(preds)
    assert_rejects(low, (tone,), ValueError, "5th modulation band")
    for kwargs, arg in [
        (dict(fs=0), "`fs`"), (dict(fs=8000.0), "`fs`"), (dict(fs=True), "`fs`"),
        (dict(n_cochlear_filters=0), "`n_cochlear_filters`"), (dict(low_freq=-1), "`low_freq`"),
        (dict(low_freq=4000), "`low_freq`"), (dict(min_cf=0), "`min_cf`"), (dict(max_cf=-2.0), "`max_cf`"),
        (dict(norm=1), "`norm`"), (dict(fast="yes"), "`fast`"), (dict(fast=True, max_cf=200), "`max_cf`"),
    ]:  # fmt: skip
        full = dict(fs=8000, **{k: v for k, v in kwargs.items() if k != "fs"})
        if "fs" in kwargs:
            full["fs"] = kwargs["fs"]
        with pytest.raises(ValueError, match=arg):
            SpeechReverberationModulationEnergyRatio(**full)
        with pytest.raises(ValueError, match=arg):
            speech_reverberation_modulation_energy_ratio(preds, **full)


def _batches(seed, count):
    return [_noisy_speech(seed + i, 1 + i % 3) for i in range(count)]


def _srmr_ref(preds, **kw):
    return float(np.mean(oracle(preds, 8000, **kw)))


_FAST_NORM = functools.partial(SpeechReverberationModulationEnergyRatio, 8000, norm=True, fast=True)
CASES = [
    MetricCase("srmr", functools.partial(SpeechReverberationModulationEnergyRatio, 8000), _batches(10, 5), _srmr_ref,
               rtol=1e-6, atol=1e-6),
    MetricCase("srmr_fast_norm", _FAST_NORM, _batches(20, 4), functools.partial(_srmr_ref, norm=True, fast=True),
               rtol=1e-6, atol=1e-6),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=3)
