"""The resumable form (what torch.distributed.checkpoint saves) in one process: every state kind
(sum, max, cat, Chan-merged moments, a wrapper's) combined from several saved ranks equals one
metric over all their data; a plain state_dict stays nn.Module's; the sampler serves what the
saved ranks left; the hook keeps a state loaded mid-epoch at epoch start (one saved after
end_epoch starts the next epoch from zero); bad or mismatched checkpoints
raise naming what differs and leave the object unchanged. The multi-process runs are in
tests/distributed/test_resume_world_size.py."""

import warnings

import pytest
import torch
import torch.distributed.checkpoint as dcp

from torchtally import MaxMetric, MetricCollection, MetricHook, UnpaddedDistributedSampler
from torchtally.adapters.sampler import SamplerWarning
from torchtally.base.resume import RESUME_KEY, pack_record
from torchtally.classification import BinaryAUROC, MulticlassAccuracy
from torchtally.regression import MeanSquaredError, PearsonCorrCoef
from torchtally.wrappers import MetricTracker, MultioutputWrapper


def _shards(n: int = 60, parts: int = 3):
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(n, 2, generator=g), torch.rand(n, 2, generator=g)
    return x, y, [(x[i::parts], y[i::parts]) for i in range(parts)]


CASES = {
    "sum": (lambda: MeanSquaredError(), lambda x, y: (x[:, 0], y[:, 0])),
    "max": (lambda: MaxMetric(), lambda x, y: (x[:, 0],)),
    "cat": (lambda: BinaryAUROC(thresholds=None), lambda x, y: (x[:, 0], (y[:, 0] > 0.5).long())),
    "merge": (lambda: PearsonCorrCoef(), lambda x, y: (x[:, 0], y[:, 0])),
    "wrapper": (lambda: MultioutputWrapper(MeanSquaredError(), num_outputs=2), lambda x, y: (x, y)),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_saved_ranks_combine_into_one_metric_over_all_their_data(kind):
    make, args = CASES[kind]
    x, y, shards = _shards()
    ranks = [make() for _ in shards]
    for metric, (xs, ys) in zip(ranks, shards):
        metric.update(*args(xs, ys))
    saved = pack_record("Metric", {"ranks": [m.resumable_payload() for m in ranks]})  # as 3 ranks would save
    resumed = make()
    assert resumed.load_state_dict(saved) is None
    whole = make()
    whole.update(*args(x, y))
    torch.testing.assert_close(resumed.compute(), whole.compute(), rtol=1e-12, atol=1e-12)


def test_plain_state_dict_is_unchanged_and_dcp_round_trips_in_one_process(tmp_path):
    metric = MulticlassAccuracy(num_classes=3)
    metric.update(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2]))
    assert dict(metric.state_dict()) == {}  # torchmetrics' default: states not persistent
    metric.persistent(True)
    assert list(metric.state_dict()) == ["confmat"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DCP's warning that no process group is initialised
        dcp.save({"m": metric}, checkpoint_id=str(tmp_path))
        fresh = MulticlassAccuracy(num_classes=3)
        dcp.load({"m": fresh}, checkpoint_id=str(tmp_path))
    assert torch.equal(fresh.compute(), metric.compute())


def test_bad_or_mismatched_checkpoints_raise_and_change_nothing():
    metric = MulticlassAccuracy(num_classes=3)
    metric.update(torch.tensor([0, 1]), torch.tensor([0, 0]))
    before = metric.compute().clone()
    with pytest.raises(ValueError, match="not a torchtally checkpoint"):
        metric.load_state_dict({RESUME_KEY: b"garbage"})
    other = MulticlassAccuracy(num_classes=3, average="micro")
    with pytest.raises(ValueError, match="option 'average'"):
        metric.load_state_dict(other.resumable_state_dict())
    collection = MetricCollection({"acc": MulticlassAccuracy(num_classes=3)})
    with pytest.raises(ValueError, match="kind is 'Metric' here, 'MetricCollection' in the checkpoint"):
        metric.load_state_dict(collection.resumable_state_dict())
    with pytest.raises(ValueError, match="metrics is \\['acc', 'f1'\\] here, \\['acc'\\]"):
        MetricCollection(
            {"acc": MulticlassAccuracy(num_classes=3), "f1": MulticlassAccuracy(num_classes=3)}
        ).load_state_dict(collection.resumable_state_dict())
    assert torch.equal(metric.compute(), before)


def test_sampler_serves_what_the_saved_ranks_left_then_the_whole_dataset():
    data = list(range(23))
    saving = [UnpaddedDistributedSampler(data, num_replicas=3, rank=r, seed=5) for r in range(3)]
    served = []
    for sampler, taken in zip(saving, (4, 2, 3)):
        sampler.set_epoch(2)
        it = iter(sampler)
        served += [next(it) for _ in range(taken)]
        assert sampler.consumed == taken
    # the record three ranks would save: each rank's count, gathered
    assert saving[0].state_dict().keys() == {RESUME_KEY}  # in one process: rank 0's count only
    record = pack_record(
        "UnpaddedDistributedSampler",
        {"dataset length": 23, "shuffle": True, "seed": 5, "epoch": 2, "stages": [[3, [4, 2, 3]]]},
    )
    resumed = [UnpaddedDistributedSampler(data, num_replicas=2, rank=r, seed=5) for r in range(2)]
    rest = []
    for sampler in resumed:
        sampler.load_state_dict(record)
        sampler.set_epoch(2)
        assert len(sampler) == len(range(sampler.rank, 23 - 9, 2))
        rest += list(sampler)
    assert sorted(served + rest) == data  # each sample once
    resumed[0].set_epoch(3)
    assert len(resumed[0]) == 12 and len(list(resumed[0])) == 12  # another epoch: everything again
    with pytest.raises(ValueError, match="seed is 6 here, 5 in the checkpoint"):
        UnpaddedDistributedSampler(data, num_replicas=2, rank=0, seed=6).load_state_dict(record)


def test_hook_keeps_the_loaded_state_at_the_next_epoch_start():
    preds, target = torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2])
    saving = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
    saving.start_epoch()
    saving.update(preds[:2], target[:2])
    resumed = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
    resumed.load_state_dict(saving.state_dict())
    with pytest.warns(SamplerWarning, match="resumes a checkpoint's metric state, but the loader's sampler"):
        with resumed.epoch():  # no sampler was resumed with it: said, never silent
            resumed.update(preds[2:], target[2:])
    expected = MulticlassAccuracy(num_classes=3).update(preds, target).compute()
    assert torch.equal(resumed.result["acc"], expected)
    with resumed.epoch():  # the next epoch starts from zero again
        resumed.update(preds[:2], target[:2])
    assert torch.equal(resumed.result["acc"], torch.tensor(1.0))
    with pytest.raises(ValueError, match="usage 'epoch_wise'"):
        MetricHook(MulticlassAccuracy(num_classes=3), usage="running").load_state_dict(saving.state_dict())


def test_hook_saved_after_end_epoch_starts_the_next_epoch_from_zero():
    preds, target = torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2])
    saving = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
    with saving.epoch():
        saving.update(preds, target)
    resumed = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
    resumed.load_state_dict(saving.state_dict())
    assert torch.equal(resumed.metrics.compute()["acc"], saving.result["acc"])  # the saved epoch
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing resumed mid-epoch: no warning
        with resumed.epoch():
            resumed.update(preds[:2], target[:2])
    assert torch.equal(resumed.result["acc"], torch.tensor(1.0))


def test_tracker_resumes_every_step_and_a_mismatch_adds_none():
    preds, target = torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2])
    tracker = MetricTracker(MulticlassAccuracy(num_classes=3))
    for cut in (2, 4):
        tracker.increment()
        tracker.update(preds[:cut], target[:cut])
    saved = tracker.resumable_state_dict()
    fresh = MetricTracker(MulticlassAccuracy(num_classes=3))
    fresh.load_state_dict(saved)
    assert fresh.n_steps == 2
    assert torch.equal(fresh.compute_all(), tracker.compute_all())
    other = MetricTracker(MulticlassAccuracy(num_classes=4))
    with pytest.raises(ValueError, match="MetricTracker step 0: .*num_classes"):
        other.load_state_dict(saved)
    assert other.n_steps == 0


def test_dcp_stores_the_record_raw_not_as_a_pickled_string(tmp_path):
    metric = BinaryAUROC(thresholds=None)  # exact: 5 bytes per sample (float32 score, int8 label)
    metric.update(torch.rand(20_000), torch.randint(0, 2, (20_000,)))
    record = len(metric.resumable_state_dict()[RESUME_KEY])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.save({"m": metric}, checkpoint_id=str(tmp_path))
    on_disk = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert record < on_disk < record * 1.05 + 4096  # pickled as bytes it would take about 1.4 times


def test_hook_and_sampler_give_other_checkpointers_plain_bytes(tmp_path):
    """Accelerate's save_state and Fabric's save torch.save the state_dict() and read it back
    with weights_only=True: plain bytes pass, DCP's PackedRecord would not."""
    preds, target = torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2])
    hook = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
    with hook.epoch():
        hook.update(preds, target)
    sampler = UnpaddedDistributedSampler(list(range(9)), num_replicas=1, rank=0, seed=1)
    next(iter(sampler))
    torch.save({"hook": hook.state_dict(), "sampler": sampler.state_dict()}, tmp_path / "plain.pt")
    saved = torch.load(tmp_path / "plain.pt", weights_only=True)
    assert isinstance(saved["hook"][RESUME_KEY], bytes) and isinstance(saved["sampler"][RESUME_KEY], bytes)
    fresh = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
    fresh_sampler = UnpaddedDistributedSampler(list(range(9)), num_replicas=1, rank=0, seed=1)
    fresh.load_state_dict(saved["hook"])
    fresh_sampler.load_state_dict(saved["sampler"])
    assert torch.equal(fresh.metrics.compute()["acc"], hook.result["acc"])
    assert len(list(fresh_sampler)) == 8  # the one consumed sample is not served again
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.save({"hook": hook}, checkpoint_id=str(tmp_path / "dcp"))  # DCP still gets its own form
        from_dcp = MetricHook({"acc": MulticlassAccuracy(num_classes=3)})
        dcp.load({"hook": from_dcp}, checkpoint_id=str(tmp_path / "dcp"))
    assert torch.equal(from_dcp.metrics.compute()["acc"], hook.result["acc"])
