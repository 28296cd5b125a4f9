"""ignite's idiom on torchtally's objects (base/attachable.py): ``attach`` / ``detach`` /
``is_attached`` on a Metric and a MetricCollection, as on ignite's own metrics, without torchtally
importing ignite until one is called. The 3-rank run through a DistributedSampler:
tests/distributed/test_attach_ignite.py."""

import doctest
import subprocess
import sys

import pytest
import torch
from ignite.engine import Engine

import torchtally.base.attachable
from torchtally import MetricCollection
from torchtally.adapters.ignite import is_attached as adapter_is_attached
from torchtally.classification import MulticlassAccuracy, MulticlassF1Score

BATCHES = [(torch.tensor([0, 2, 1, 1]), torch.tensor([0, 1, 1, 2])), (torch.tensor([2, 2]), torch.tensor([2, 0]))]


def _engine():
    return Engine(lambda engine, batch: batch)


def test_metric_attach_publishes_the_epoch_value_as_ignite_does():
    engine = _engine()
    metric = MulticlassAccuracy(num_classes=3, average="micro")
    hook = metric.attach(engine, "acc")
    assert hook.metrics is metric and adapter_is_attached(engine, "acc")
    assert engine.run(BATCHES).metrics["acc"] == pytest.approx(3 / 6)


def test_batch_wise_usage_gives_the_last_batch_value():
    engine = _engine()
    metric = MulticlassAccuracy(num_classes=3, average="micro")
    metric.attach(engine, "acc", usage="batch_wise")
    assert engine.run(BATCHES).metrics["acc"] == pytest.approx(1 / 2)
    assert metric.is_attached(engine, "batch_wise") and not metric.is_attached(engine, "epoch_wise")


def test_ignites_usage_objects_are_accepted():
    from ignite.metrics.metric import BatchWise, EpochWise

    engine = _engine()
    metric = MulticlassAccuracy(num_classes=3, average="micro")
    metric.attach(engine, "acc", usage=EpochWise())
    assert metric.is_attached(engine, EpochWise()) and not metric.is_attached(engine, BatchWise())


def test_detach_removes_only_this_objects_handlers_of_that_usage():
    engine = _engine()
    first, second = MulticlassAccuracy(num_classes=3, average="micro"), MulticlassAccuracy(num_classes=3)
    first.attach(engine, "a")
    second.attach(engine, "b")
    first.detach(engine, "batch_wise")  # not attached so: nothing happens
    assert first.is_attached(engine)
    first.detach(engine)
    assert not first.is_attached(engine) and second.is_attached(engine)
    metrics = engine.run(BATCHES).metrics
    assert "a" not in metrics and "b" in metrics


def test_a_collection_attaches_under_one_name_with_its_keys_flattened():
    engine = _engine()
    collection = MetricCollection(
        {
            "acc": MulticlassAccuracy(num_classes=3, average="micro"),
            "f1": MulticlassF1Score(num_classes=3, average="macro"),
        }
    )
    collection.attach(engine, "val")
    metrics = engine.run(BATCHES).metrics
    assert metrics["acc"] == pytest.approx(3 / 6)
    assert metrics["val"] == {"acc": metrics["acc"], "f1": metrics["f1"]}
    assert collection.is_attached(engine)
    collection.detach(engine)
    assert not collection.is_attached(engine)


def test_attach_checks_its_arguments_as_the_adapter_does():
    with pytest.raises(TypeError, match="name"):
        MulticlassAccuracy(num_classes=3).attach(_engine(), 7)
    with pytest.raises(ValueError, match="usage"):
        MulticlassAccuracy(num_classes=3).attach(_engine(), "acc", usage="sometimes")


def test_importing_torchtally_does_not_import_ignite():
    code = "import sys, torchtally; torchtally.MulticlassAccuracy(num_classes=3).attach; print('ignite' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_docstring_example():
    failed, attempted = doctest.testmod(torchtally.base.attachable)
    assert attempted > 0 and failed == 0


def test_one_object_is_attached_to_an_engine_once():
    engine = _engine()
    metric = MulticlassAccuracy(num_classes=3, average="micro")
    metric.attach(engine, "acc")
    metric.attach(engine, "acc")  # the same name again: re-attached, as the adapter does
    with pytest.raises(ValueError, match="already attached to this engine as 'acc'"):
        metric.attach(engine, "acc2")  # a second hook would count every sample twice
    metric.clone().attach(engine, "acc2")
    metrics = engine.run(BATCHES).metrics
    assert metrics["acc"] == metrics["acc2"] == pytest.approx(3 / 6)


def test_the_running_usages_are_told_apart():
    from ignite.metrics.metric import RunningBatchWise, SingleEpochRunningBatchWise

    engine = _engine()
    metric = MulticlassAccuracy(num_classes=3, average="micro")
    metric.attach(engine, "acc", usage=RunningBatchWise())
    assert metric.is_attached(engine, RunningBatchWise())
    assert not metric.is_attached(engine, SingleEpochRunningBatchWise())
