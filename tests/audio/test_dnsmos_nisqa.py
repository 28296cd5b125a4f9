"""DNSMOS and NISQA with small stand-in models (tests/support/audio_models.py) against
torchmetrics given the same models, and against the formula computed directly; what to pass
when no model is given; bad input raises with the state unchanged; 3 gloo ranks == one
process."""

import librosa
import numpy as np
import pytest
import torch
import torchmetrics.functional.audio.dnsmos as tm_dnsmos
import torchmetrics.functional.audio.nisqa as tm_nisqa
from support.audio_models import NISQA_ARGS, TinyNisqa, dnsmos_metric, dnsmos_personalized, nisqa_metric, p808, p835
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.audio import DeepNoiseSuppressionMeanOpinionScore, NonIntrusiveSpeechQualityAssessment
from torchtally.functional.audio import (
    deep_noise_suppression_mean_opinion_score,
    non_intrusive_speech_quality_assessment,
)


class _Session:
    """onnxruntime's interface over a stand-in model."""

    def __init__(self, fn):
        self.fn = fn

    def run(self, _names, feeds):
        return [self.fn(feeds["input_1"])]


@pytest.fixture
def tm_with_models(monkeypatch):
    monkeypatch.setattr(tm_dnsmos, "_ONNXRUNTIME_AVAILABLE", True)
    monkeypatch.setattr(tm_dnsmos, "librosa", librosa)
    monkeypatch.setattr(
        tm_dnsmos, "_cached_load_session", lambda path, *a: _Session(p808 if "model_v8" in path else p835)
    )
    net = TinyNisqa()
    monkeypatch.setattr(tm_nisqa, "_load_nisqa_model", lambda: (net, NISQA_ARGS))
    return net


def _waves(seed, shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("fs, personalized, shape", [(16000, False, (2, 16000)), (8000, True, (2, 1, 8000 * 11))])
def test_dnsmos_equals_torchmetrics_with_the_same_models(tm_with_models, fs, personalized, shape):
    x = _waves(fs, shape)
    got = deep_noise_suppression_mean_opinion_score(x, fs, personalized, p808_model=p808, sig_bak_ovr_model=p835)
    want = tm_dnsmos.deep_noise_suppression_mean_opinion_score(x, fs, personalized)
    assert got.shape == want.shape == (*shape[:-1], 4) and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    # as a session object, and as nn.Module-free callables: the same
    same = deep_noise_suppression_mean_opinion_score(
        x, fs, personalized, p808_model=_Session(p808), sig_bak_ovr_model=_Session(p835)
    )
    assert torch.equal(same, got)


def test_dnsmos_formula_directly():
    x = _waves(3, (1, 16000))
    audio = np.concatenate([x.double().numpy()] * 16, axis=-1)[:, : int(9.01 * 16000)]
    mel = librosa.feature.melspectrogram(y=audio[:, :-160], sr=16000, n_fft=321, hop_length=160, n_mels=120)
    mel = (librosa.power_to_db(mel[0], ref=np.max) + 40) / 40
    raw = p835(audio)[0]
    sig, bak, ovr = (np.polyval(c, v) for c, v in zip(
        [(-0.08397278, 1.22083953, 0.0052439), (-0.13166888, 1.60915514, -0.39604546),
         (-0.06766283, 1.11546468, 0.04602535)], raw))  # fmt: skip
    got = deep_noise_suppression_mean_opinion_score(x[0], 16000, False, p808_model=p808, sig_bak_ovr_model=p835)
    np.testing.assert_allclose(got.numpy(), [mel.mean() + 3, sig, bak, ovr], rtol=1e-5)


def test_nisqa_equals_torchmetrics_with_the_same_model(tm_with_models):
    x = _waves(4, (2, 3, 8000))
    got = non_intrusive_speech_quality_assessment(x, 16000, model=tm_with_models, args=NISQA_ARGS)
    want = tm_nisqa.non_intrusive_speech_quality_assessment(x, 16000)
    assert got.shape == want.shape == (2, 3, 5) and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    ours = nisqa_metric().update(x).compute()
    np.testing.assert_allclose(ours.numpy(), want.reshape(-1, 5).double().mean(0).numpy(), rtol=1e-5, atol=1e-6)


def test_no_model_says_what_to_pass():
    with pytest.raises(ValueError, match="DNS-Challenge.*nothing is downloaded"):
        DeepNoiseSuppressionMeanOpinionScore(16000, False, sig_bak_ovr_model=p835)
    with pytest.raises(ValueError, match="model=.*args=.*nisqa.tar"):
        NonIntrusiveSpeechQualityAssessment(16000)
    with pytest.raises(ValueError, match="args: expected a dict"):
        NonIntrusiveSpeechQualityAssessment(16000, model=TinyNisqa(), args={"ms_n_fft": 512})
    with pytest.raises(TypeError, match="model: expected an nn.Module"):
        non_intrusive_speech_quality_assessment(torch.randn(8000), 16000, model=p808, args=NISQA_ARGS)


def test_bad_input_raises_with_the_state_unchanged():
    x = _waves(5, (2, 16000))
    m = dnsmos_metric().update(x)
    assert_rejects(m, (x.numpy(),), TypeError, "preds: expected a torch.Tensor")
    bad = x.clone()
    bad[0, 0] = float("inf")
    assert_rejects(m, (bad,), ValueError, "preds: expected finite")
    n = nisqa_metric().update(x[:, :8000])
    assert_rejects(n, (x[:, :100],), ValueError, "too short")
    assert_rejects(n, (torch.randn(1, 16000 * 30),), ValueError, "more than the model's")
    with pytest.raises(ValueError, match="`fs`"):
        DeepNoiseSuppressionMeanOpinionScore(0, False, p808_model=p808, sig_bak_ovr_model=p835)
    with pytest.raises(ValueError, match="`personalized`"):
        DeepNoiseSuppressionMeanOpinionScore(16000, 1, p808_model=p808, sig_bak_ovr_model=p835)


def _dnsmos_ref(x):
    return deep_noise_suppression_mean_opinion_score(x, 16000, False, p808_model=p808, sig_bak_ovr_model=p835).mean(0)


def _dnsmos_ref_8k(x):
    return deep_noise_suppression_mean_opinion_score(x, 8000, True, p808_model=p808, sig_bak_ovr_model=p835).mean(0)


def _nisqa_ref(x):
    return non_intrusive_speech_quality_assessment(x, 16000, model=TinyNisqa(), args=NISQA_ARGS).double().mean(0)


CASES = [
    MetricCase("dnsmos", dnsmos_metric, [(_waves(i, (1 + i % 3, 16000)),) for i in range(5)], _dnsmos_ref,
               rtol=1e-5, atol=1e-6),
    MetricCase("dnsmos-p-8k", dnsmos_personalized, [(_waves(10 + i, (1 + i % 2, 8000)),) for i in range(4)],
               _dnsmos_ref_8k, rtol=1e-5, atol=1e-6),
    MetricCase("nisqa", nisqa_metric, [(_waves(20 + i, (1 + i % 3, 8000)),) for i in range(5)], _nisqa_ref,
               rtol=1e-5, atol=1e-6),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=3)
