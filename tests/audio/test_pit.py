"""PermutationInvariantTraining, permutation_invariant_training and pit_permutate against a
brute-force numpy search over every permutation and against torchmetrics (values and the
permutations, speaker-wise for 1-4 speakers (scipy's assignment from 3 on) and
permutation-wise); keyword arguments reach metric_func; bad input raises with the state
unchanged; 3 gloo ranks with uneven shards == one process."""

import functools
import itertools

import numpy as np
import pytest
import torch
import torchmetrics.audio as tma
import torchmetrics.functional.audio as tmf
from support.audio_signals import sa_sdr, si_sdr, signals
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from support.parity_tester import ParityCase, check_parity

import torchtally.functional.audio as ttf
from torchtally.audio import PermutationInvariantTraining


def brute_force(preds, target, eval_func="max", zero_mean=False):
    """(best value, best permutation) per mixture: every permutation's mean SI-SDR, numpy."""
    spk, eps = target.shape[1], float(torch.finfo(preds.dtype).eps)
    best_values, best_perms = [], []
    for b in range(target.shape[0]):
        scores = {
            perm: np.mean([si_sdr(preds[b, perm[j]], target[b, j], zero_mean, eps) for j in range(spk)])
            for perm in itertools.permutations(range(spk))
        }
        pick = max if eval_func == "max" else min
        perm = pick(scores, key=scores.get)
        best_values.append(scores[perm])
        best_perms.append(perm)
    return np.array(best_values), np.array(best_perms)


def _mixtures(seed, batch, spk, time=40, dtype=torch.float32):
    """target speakers, preds = a shuffled, noisy copy of them (a clear best permutation)."""
    preds, target = signals(seed, (batch, spk, time), torch.float64, noise=0.6)
    g = torch.Generator().manual_seed(seed + 1000)
    order = torch.stack([torch.randperm(spk, generator=g) for _ in range(batch)])
    shuffled = preds[torch.arange(batch)[:, None], order]
    return shuffled.to(dtype), target.to(dtype)


@pytest.mark.parametrize("spk", [1, 2, 3, 4])
@pytest.mark.parametrize("eval_func", ["max", "min"])
def test_speaker_wise_equals_brute_force(spk, eval_func):
    preds, target = _mixtures(spk, 6, spk, dtype=torch.float64)
    best, perm = ttf.permutation_invariant_training(
        preds, target, ttf.scale_invariant_signal_distortion_ratio, eval_func=eval_func
    )
    want_best, want_perm = brute_force(preds, target, eval_func)
    assert best.dtype == torch.float64 and perm.dtype == torch.int64
    assert_same(best, want_best, rtol=1e-6, atol=1e-6)
    assert_same(perm, want_perm)


@pytest.mark.parametrize("spk", [2, 3, 4])
def test_speaker_wise_equals_torchmetrics(spk):
    preds, target = _mixtures(10 + spk, 5, spk)
    for eval_func in ("max", "min"):
        got = ttf.permutation_invariant_training(preds, target, ttf.signal_noise_ratio, eval_func=eval_func)
        want = tmf.permutation_invariant_training(preds, target, tmf.signal_noise_ratio, eval_func=eval_func)
        assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
        assert_same(got[0], want[0], rtol=1e-5, atol=1e-5)
        assert_same(got[1], want[1])
        assert_same(ttf.pit_permutate(preds, got[1]), tmf.pit_permutate(preds, want[1]))


def test_permutation_wise_equals_torchmetrics_and_numpy():
    preds, target = _mixtures(20, 5, 3, dtype=torch.float64)
    got = ttf.permutation_invariant_training(
        preds, target, ttf.source_aggregated_signal_distortion_ratio, mode="permutation-wise"
    )
    want = tmf.permutation_invariant_training(
        preds, target, tmf.source_aggregated_signal_distortion_ratio, mode="permutation-wise"
    )
    assert_same(got[0], want[0], rtol=1e-10, atol=1e-10)
    assert_same(got[1], want[1])
    eps = float(torch.finfo(torch.float64).eps)
    by_perm = np.stack([sa_sdr(preds[:, list(p)], target, eps=eps) for p in itertools.permutations(range(3))], 1)
    assert_same(got[0], by_perm.max(1), rtol=1e-10)
    # a metric_func with one value per speaker: the mean over the speakers, as torchmetrics
    got = ttf.permutation_invariant_training(
        preds, target, ttf.scale_invariant_signal_distortion_ratio, mode="permutation-wise", eval_func="min"
    )
    want = tmf.permutation_invariant_training(
        preds, target, tmf.scale_invariant_signal_distortion_ratio, mode="permutation-wise", eval_func="min"
    )
    assert_same(got[0], want[0], rtol=1e-10, atol=1e-10)
    assert_same(got[1], want[1])


def test_keyword_arguments_reach_metric_func():
    preds, target = _mixtures(30, 4, 2, dtype=torch.float64)
    best, _ = ttf.permutation_invariant_training(
        preds, target, ttf.scale_invariant_signal_distortion_ratio, zero_mean=True
    )
    assert_same(best, brute_force(preds, target, zero_mean=True)[0], rtol=1e-6)
    m = PermutationInvariantTraining(ttf.scale_invariant_signal_distortion_ratio, zero_mean=True, sync_on_compute=False)
    assert m.kwargs == {"zero_mean": True} and m.sync_on_compute is False
    assert_same(m.update(preds, target).compute(), best.mean().float(), rtol=1e-6)


def test_pit_permutate_and_edge_cases():
    preds = torch.arange(12.0).reshape(2, 3, 2)
    perm = torch.tensor([[2, 0, 1], [0, 1, 2]])
    assert_same(ttf.pit_permutate(preds, perm), tmf.pit_permutate(preds, perm))
    empty = ttf.permutation_invariant_training(torch.zeros(0, 2, 8), torch.zeros(0, 2, 8), ttf.signal_noise_ratio)
    assert empty[0].shape == (0,) and empty[1].shape == (0, 2)
    empty3 = ttf.permutation_invariant_training(torch.zeros(0, 3, 8), torch.zeros(0, 3, 8), ttf.signal_noise_ratio)
    assert empty3[0].shape == (0,) and empty3[1].shape == (0, 3)
    with pytest.raises(ValueError, match="perm: expected an integer tensor"):
        ttf.pit_permutate(preds, perm[:1])


def _batches(seed, sizes, spk=2):
    return [_mixtures(seed + i, n, spk) for i, n in enumerate(sizes)]


BATCHES2 = _batches(40, [3, 1, 4, 2, 2])
BATCHES3 = _batches(50, [2, 3, 1, 2], spk=3)
SI_SDR = ttf.scale_invariant_signal_distortion_ratio


def _mean(values):
    return torch.tensor(float(np.mean(values)), dtype=torch.float32)


CASES = [
    MetricCase(
        "pit-2spk",
        functools.partial(PermutationInvariantTraining, SI_SDR),
        BATCHES2,
        lambda p, t: _mean(brute_force(p, t)[0]),
        rtol=1e-5,
        atol=1e-5,
    ),
    MetricCase(
        "pit-3spk-min",
        functools.partial(PermutationInvariantTraining, SI_SDR, eval_func="min"),
        BATCHES3,
        lambda p, t: _mean(brute_force(p, t, "min")[0]),
        rtol=1e-5,
        atol=1e-5,
    ),
    MetricCase(
        "pit-permutation-wise",
        functools.partial(
            PermutationInvariantTraining, ttf.source_aggregated_signal_distortion_ratio, "permutation-wise"
        ),
        BATCHES3,
        lambda p, t: _mean(np.stack([sa_sdr(p[:, list(q)], t) for q in itertools.permutations(range(3))], 1).max(1)),
        rtol=1e-5,
        atol=1e-5,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


PARITY = [
    ParityCase(
        "pit-2spk",
        functools.partial(PermutationInvariantTraining, SI_SDR),
        functools.partial(tma.PermutationInvariantTraining, tmf.scale_invariant_signal_distortion_ratio),
        BATCHES2,
        rtol=1e-5,
        atol=1e-5,
    ),
    ParityCase(
        "pit-3spk-snr-zero-mean",
        functools.partial(PermutationInvariantTraining, ttf.signal_noise_ratio, zero_mean=True),
        functools.partial(tma.PermutationInvariantTraining, tmf.signal_noise_ratio, zero_mean=True),
        BATCHES3,
        rtol=1e-5,
        atol=1e-5,
    ),
]


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c.name)
def test_parity_with_torchmetrics_classes(case):
    check_parity(case)


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = BATCHES2[0]
    m = PermutationInvariantTraining(SI_SDR).update(preds, target)
    assert_rejects(m, (preds, target[:, :1]), ValueError, "target: expected the batch and speaker sizes")
    assert_rejects(m, (preds[:1], target), ValueError, "target: expected the batch and speaker sizes")
    assert_rejects(m, (preds[0, 0], target[0, 0]), ValueError, r"preds: expected a tensor of shape \(batch, spk")
    assert_rejects(m, (preds, target[..., :5]), ValueError, "target: expected the shape of preds")
    assert_rejects(m, (preds.long(), target), TypeError, "preds: expected a floating point")
    with pytest.raises(ValueError, match="eval_func"):
        PermutationInvariantTraining(SI_SDR, eval_func="best")
    with pytest.raises(ValueError, match="mode"):
        PermutationInvariantTraining(SI_SDR, mode="pairwise")
    with pytest.raises(TypeError, match="metric_func"):
        PermutationInvariantTraining("si_sdr")
    with pytest.raises(ValueError, match="mode"):
        ttf.permutation_invariant_training(preds, target, SI_SDR, mode="pairwise")


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)
