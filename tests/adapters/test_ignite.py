"""The ignite adapter on a real ignite Engine, in one process: events, usages, state.metrics,
padding found through engine.state.dataloader, detach."""

import pytest
import torch
from ignite.engine import Engine, Events
from ignite.metrics.metric import BatchWise, SingleEpochRunningBatchWise
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchtally import Metric
from torchtally.adapters.ignite import attach, detach, is_attached
from torchtally.adapters.sampler import SamplerWarning


class Count(Metric):
    """Number of samples and of correct argmax predictions."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("counts", torch.zeros(2, dtype=torch.int64), reduce="sum")

    def update(self, preds, target):
        hits = (preds.argmax(dim=1) == target).sum()
        self.counts = self.counts + torch.stack([hits, torch.tensor(len(target))])

    def compute(self):
        return {"correct": self.counts[0], "seen": self.counts[1]}


class Seen(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("ids", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, ids):
        self.append_state("ids", ids)

    def compute(self):
        return self.ids.clone()


def make_data(n):
    g = torch.Generator().manual_seed(n)
    return TensorDataset(torch.randn(n, 4, generator=g), torch.randint(0, 4, (n,), generator=g), torch.arange(n))


def evaluator():
    return Engine(lambda engine, batch: {"y_pred": batch[0], "y": batch[1], "ids": batch[2]})


def test_epoch_wise_results_land_in_state_metrics():
    ds = make_data(10)
    engine = evaluator()
    attach(Count(), engine, "count")
    engine.run(DataLoader(ds, batch_size=3), max_epochs=1)
    logits, target, _ = ds.tensors
    correct = int((logits.argmax(1) == target).sum())
    # a dict result is stored under its name and flattened into its keys, 0-dim -> Python numbers
    assert engine.state.metrics["count"] == {"correct": correct, "seen": 10}
    assert engine.state.metrics["correct"] == correct and isinstance(engine.state.metrics["seen"], int)


def test_padding_found_through_state_dataloader_for_every_rank():
    n, w = 11, 4
    ds = make_data(n)
    seen = []
    for r in range(w):
        engine = evaluator()
        attach(Seen(), engine, "ids", output_transform=lambda out: out["ids"])
        loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=w, rank=r))
        engine.run(loader, max_epochs=3)  # each epoch restarts the position count
        seen += engine.state.metrics["ids"].tolist()
    assert sorted(seen) == list(range(n))


def test_batch_wise_and_running_usages():
    ds = make_data(12)
    loader = DataLoader(ds, batch_size=4)
    per_iteration = {"batch_wise": [], "running": []}
    engine = evaluator()
    attach(Seen(), engine, "batch_wise", usage=BatchWise(), output_transform=lambda o: o["ids"])
    attach(Seen(), engine, "running", usage="running", every=2, output_transform=lambda o: o["ids"])

    @engine.on(Events.ITERATION_COMPLETED)
    def record(e):
        for key in per_iteration:
            per_iteration[key].append(e.state.metrics.get(key, torch.empty(0)).tolist())

    engine.run(loader, max_epochs=1)
    assert per_iteration["batch_wise"] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    # running: computed at iterations 2 (ids 0-7); iteration 1 had nothing published yet
    assert per_iteration["running"][0] == [] and per_iteration["running"][1] == list(range(8))
    assert engine.state.metrics["running"].tolist() == list(range(12))  # epoch end


def test_ignite_single_epoch_running_usage_object():
    engine = evaluator()
    hook = attach(Seen(), engine, "r", usage=SingleEpochRunningBatchWise(), output_transform=lambda o: o["ids"])
    assert hook.usage.name == "running" and hook.usage.every == 1
    engine.run(DataLoader(make_data(5), batch_size=2), max_epochs=2)
    assert engine.state.metrics["r"].tolist() == list(range(5))


def test_detach_and_is_attached():
    engine = evaluator()
    attach(Count(), engine, "count")
    assert is_attached(engine, "count")
    detach(engine, "count")
    assert not is_attached(engine, "count")
    engine.run(DataLoader(make_data(4), batch_size=2), max_epochs=1)
    assert "count" not in engine.state.metrics
    with pytest.raises(KeyError, match="count"):
        detach(engine, "count")


def test_name_colliding_with_a_result_key_raises():
    engine = evaluator()
    attach(Count(), engine, "seen")
    with pytest.raises(ValueError, match="collides"):
        engine.run(DataLoader(make_data(4), batch_size=2), max_epochs=1)
    with pytest.raises(ValueError, match="collides"):  # a collection's names are known up front
        attach({"a": Count(), "b": Seen()}, evaluator(), "b")


def test_epoch_length_shorter_than_the_loader_keeps_padding_with_a_warning():
    ds = make_data(5)
    loader = DataLoader(ds, batch_size=1, sampler=DistributedSampler(ds, num_replicas=2, rank=1))
    engine = evaluator()
    attach(Seen(), engine, "ids", output_transform=lambda o: o["ids"])
    with pytest.warns(SamplerWarning, match="epoch_length"):
        engine.run(loader, max_epochs=1, epoch_length=2)


def test_attach_takes_a_metric_or_a_collection():
    from torchtally import MetricCollection

    engine = evaluator()
    hook = attach(Count(), engine, "count")
    attach(
        MetricCollection({"seen_ids": Seen()}), engine, "coll", usage="batch_wise", output_transform=lambda o: o["ids"]
    )
    assert is_attached(engine, "count") and is_attached(engine, "coll")
    assert hook.usage.name == "epoch_wise"
    engine.run(DataLoader(make_data(6), batch_size=4), max_epochs=1)
    assert engine.state.metrics["count"]["seen"] == 6
    assert engine.state.metrics["seen_ids"].tolist() == [4, 5]  # the last batch only
