"""PESQ and STOI against their packages and torchmetrics on seeded speech-like signals; an
utterance the package cannot score is counted, left out and warned about; the error path
without the package; bad input raises with the state unchanged; 3 gloo ranks == one process."""

import functools
import sys

import numpy as np
import pesq
import pystoi
import pytest
import torch
from support.audio_models import speech
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from torchmetrics.audio import PerceptualEvaluationSpeechQuality as TMPesq
from torchmetrics.audio import ShortTimeObjectiveIntelligibility as TMStoi
from torchmetrics.functional.audio import perceptual_evaluation_speech_quality as tm_pesq
from torchmetrics.functional.audio import short_time_objective_intelligibility as tm_stoi

from torchtally.audio import PerceptualEvaluationSpeechQuality, ShortTimeObjectiveIntelligibility
from torchtally.functional.audio import perceptual_evaluation_speech_quality, short_time_objective_intelligibility


def _pair(seed, n, time=8000, fs=8000):
    target = speech(seed, n, time, fs)
    g = torch.Generator().manual_seed(seed + 100)
    return target + 0.2 * torch.randn(target.shape, generator=g), target


@pytest.mark.parametrize("fs, mode", [(8000, "nb"), (16000, "wb"), (16000, "nb")])
def test_pesq_functional_equals_package_and_torchmetrics(fs, mode):
    preds, target = _pair(fs, 3, time=fs)
    got = perceptual_evaluation_speech_quality(preds, target, fs, mode)
    direct = [pesq.pesq(fs, t.double().numpy(), p.double().numpy(), mode) for p, t in zip(preds, target)]
    np.testing.assert_allclose(got.numpy(), direct, rtol=1e-6)
    want = tm_pesq(preds, target, fs, mode)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    one = perceptual_evaluation_speech_quality(preds[0], target[0], fs, mode)
    assert one.shape == () and abs(float(one) - float(tm_pesq(preds[0], target[0], fs, mode))) < 1e-5


@pytest.mark.parametrize("extended", [False, True])
def test_stoi_functional_equals_package_and_torchmetrics(extended):
    preds, target = _pair(7, 4, time=16000, fs=16000)
    preds, target = preds.reshape(2, 2, -1), target.reshape(2, 2, -1)
    got = short_time_objective_intelligibility(preds, target, 16000, extended)
    want = tm_stoi(preds, target, 16000, extended)
    assert got.dtype == want.dtype and got.shape == want.shape == (2, 2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    direct = pystoi.stoi(target[0, 0].double().numpy(), preds[0, 0].double().numpy(), 16000, extended)
    assert abs(float(got[0, 0]) - direct) < 1e-12


def test_classes_equal_torchmetrics():
    batches = [_pair(s, 1 + s % 3) for s in range(3)]
    ours, theirs = PerceptualEvaluationSpeechQuality(8000, "nb"), TMPesq(8000, "nb")
    ours_s, theirs_s = ShortTimeObjectiveIntelligibility(8000), TMStoi(8000)
    for p, t in batches:
        ours.update(p, t)
        theirs.update(p, t)
        ours_s.update(p, t)
        theirs_s.update(p, t)
    assert abs(float(ours.compute()) - float(theirs.compute())) < 1e-5
    assert abs(float(ours_s.compute()) - float(theirs_s.compute())) < 1e-6
    assert int(ours.total) == 6 and int(ours.failed) == 0


def test_unscorable_utterances_are_counted_not_fatal():
    preds, target = _pair(1, 3)
    preds[1] = 0.0  # silence: the pesq package finds no utterance
    target[1] = 0.0
    with pytest.raises(pesq.PesqError):
        tm_pesq(preds, target, 8000, "nb")
    m = PerceptualEvaluationSpeechQuality(8000, "nb").update(preds, target)
    assert (int(m.total), int(m.failed)) == (2, 1)
    with pytest.warns(UserWarning, match="1 of 3 utterances could not be scored"):
        got = m.compute()
    keep = [0, 2]
    assert abs(float(got) - float(tm_pesq(preds[keep], target[keep], 8000, "nb").mean())) < 1e-5
    short = ShortTimeObjectiveIntelligibility(8000).update(torch.randn(2, 50), torch.randn(2, 50))
    assert (int(short.total), int(short.failed)) == (0, 2)
    with pytest.warns(UserWarning, match="2 of 2"):
        assert torch.isnan(short.compute())


def test_missing_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pesq", None)  # what a missing package looks like to import
    monkeypatch.setitem(sys.modules, "pystoi", None)
    with pytest.raises(ModuleNotFoundError, match="pip install pesq"):
        PerceptualEvaluationSpeechQuality(8000, "nb")
    with pytest.raises(ModuleNotFoundError, match="pip install pystoi"):
        short_time_objective_intelligibility(torch.randn(100), torch.randn(100), 8000)


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _pair(2, 2)
    m = PerceptualEvaluationSpeechQuality(8000, "nb").update(preds, target)
    assert_rejects(m, (preds, target[:1]), RuntimeError, "same shape")
    assert_rejects(m, (preds.numpy(), target), TypeError, "preds: expected a torch.Tensor")
    bad = preds.clone()
    bad[0, 3] = float("nan")
    assert_rejects(m, (bad, target), ValueError, "preds: expected finite")
    s = ShortTimeObjectiveIntelligibility(8000).update(preds, target)
    assert_rejects(s, (preds, target.to(torch.complex64)), TypeError, "target")
    with pytest.raises(ValueError, match="`fs`"):
        PerceptualEvaluationSpeechQuality(44100, "nb")
    with pytest.raises(ValueError, match="`mode`"):
        PerceptualEvaluationSpeechQuality(8000, "wb")
    with pytest.raises(ValueError, match="`n_processes`"):
        PerceptualEvaluationSpeechQuality(8000, "nb", n_processes=0)
    with pytest.raises(ValueError, match="`extended`"):
        ShortTimeObjectiveIntelligibility(8000, extended=1)


def _batches(seed, count):
    return [_pair(seed + i, 1 + i % 3) for i in range(count)]


def _pesq_ref(p, t):
    return float(tm_pesq(p, t, 8000, "nb").double().mean())


def _stoi_ref(p, t):
    return float(tm_stoi(p, t, 8000).mean())


CASES = [
    MetricCase("pesq", functools.partial(PerceptualEvaluationSpeechQuality, 8000, "nb"), _batches(10, 5), _pesq_ref,
               rtol=1e-6, atol=1e-6),
    MetricCase("stoi", functools.partial(ShortTimeObjectiveIntelligibility, 8000), _batches(20, 5), _stoi_ref,
               rtol=1e-6, atol=1e-7),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=3)
