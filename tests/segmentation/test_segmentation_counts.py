"""The overlap counts behind MeanIoU, DiceScore and GeneralizedDiceScore (functional/segmentation/
counts.py): one kernel call per batch whose value checks (index range, NaN scores, 0/1 masks) are
the kernels', so an update reads no value back to the host (on CUDA, a host read is a wait for
the GPU); the kernels' messages name the argument and the sample, and a rejected batch leaves
the state unchanged, in every input format."""

import pytest
import torch
from support.host_reads import count_host_reads
from support.metric_tester import assert_rejects

import torchtally.segmentation as TS
from torchtally.functional.segmentation import counts as seg_counts

C = 4
_G = torch.Generator().manual_seed(3)


def _labels(n=3):
    return torch.randint(0, C, (n, 7, 6), generator=_G)


def _hot(labels):
    return labels.unsqueeze(1) == torch.arange(C).view(1, C, 1, 1)


def batches():
    p, t = _labels(), _labels()
    scores = torch.randn(3, C, 7, 6, generator=_G)
    return {
        "index": (p, t),
        "one-hot": (_hot(p).to(torch.uint8), _hot(t)),
        "scores": (scores, _hot(t)),
        "mixed": (scores, t),
        "mixed-masks": (p, _hot(t)),
    }


def format_of(key):
    return {"scores": "one-hot", "mixed-masks": "mixed"}.get(key, key)


@pytest.fixture
def host_reads(monkeypatch):
    return count_host_reads(monkeypatch)


@pytest.mark.parametrize("key", ["index", "one-hot", "scores", "mixed", "mixed-masks"])
@pytest.mark.parametrize("name", ["MeanIoU", "DiceScore", "GeneralizedDiceScore"])
def test_update_reads_nothing_back(host_reads, name, key):
    batch = batches()[key]
    metric = getattr(TS, name)(num_classes=C, input_format=format_of(key))
    metric.update(*batch)  # the first update sizes the states
    del host_reads[:]
    metric.update(*batch)
    metric.update(*batch)
    assert host_reads == []
    counts = seg_counts.overlap_counts(*batch, C, format_of(key))
    assert host_reads == []
    p, t = batch
    p = p.argmax(1) if p.is_floating_point() else p
    ph = _hot(p) if p.dim() == 3 else p.bool()
    th = _hot(t) if t.dim() == 3 else t.bool()
    direct = torch.stack(((ph & th).sum((2, 3)), ph.sum((2, 3)), th.sum((2, 3))), dim=-1)
    assert torch.equal(counts, direct)


def spoiled(key):
    batch = list(batches()[key])
    if key == "index":
        batch[1] = batch[1].clone()
        batch[1][2, 3, 4] = C
        return batch, r"^target: sample 2: class index 4 is out of range \[0, 4\)"
    if key == "one-hot":
        batch[0] = batch[0].clone()
        batch[0][1, 2, 0, 0] = 2
        return batch, r"^preds: sample 1, class 2: expected a one-hot \(0/1\) mask"
    if key in ("scores", "mixed"):
        batch[0] = batch[0].clone()
        batch[0][1, 3, 2, 2] = float("nan")
        return batch, r"^preds: NaN in the scores of sample 1$"
    batch[0] = batch[0].clone()
    batch[0][0, 0, 0] = -3
    return batch, r"^preds: sample 0: class index -3 is out of range \[0, 4\)"


@pytest.mark.parametrize("key", ["index", "one-hot", "scores", "mixed", "mixed-masks"])
def test_bad_values_raise_at_the_call_naming_the_sample(key):
    metric = TS.DiceScore(num_classes=C, input_format=format_of(key))
    metric.update(*batches()[key])
    batch, match = spoiled(key)
    assert_rejects(metric, batch, ValueError, match)


def test_mixed_index_side_named_when_it_is_target():
    scores, t = batches()["mixed"]
    t = t.clone()
    t[1, 0, 0] = 9
    metric = TS.MeanIoU(num_classes=C, input_format="mixed")
    assert_rejects(metric, (_hot(_labels()), t), ValueError, r"^target: sample 1: class index 9 is out of range")
