"""torchtally's Metric as a virtual subclass of torchmetrics.Metric (base/interop.py): registered
once torchmetrics is imported by someone else, when a metric is made or moved; importing
torchtally neither needs nor imports torchmetrics; torchmetrics' containers, which read its
private attributes, get an error that says what to use instead. Lightning's ``self.log(name,
metric)`` on top of this: tests/adapters/test_lightning.py and
tests/distributed/test_lightning_log.py."""

import subprocess
import sys
import textwrap

import pytest
import torch
import torchmetrics

from torchtally import MetricCollection
from torchtally.classification import MulticlassAccuracy, MulticlassF1Score


def test_a_metric_is_a_torchmetrics_metric_once_torchmetrics_is_imported():
    metric = MulticlassAccuracy(num_classes=3)
    assert isinstance(metric, torchmetrics.Metric)
    assert issubclass(MulticlassF1Score, torchmetrics.Metric)
    assert not isinstance(MetricCollection({"acc": metric}), torchmetrics.Metric)  # as torchmetrics' collection


def test_registration_waits_for_torchmetrics_and_never_imports_it():
    # torchtally imported and a metric made while torchmetrics cannot be imported (as where it is not
    # installed); then torchmetrics arrives: the old metric is registered when it is moved, as
    # Lightning moves the model it belongs to before any step.
    code = textwrap.dedent(
        """
        import sys
        for blocked in ("torchmetrics", "lightning", "pytorch_lightning"):
            sys.modules[blocked] = None  # import fails, as when not installed
        import torch, torchtally
        from torchtally.classification import MulticlassAccuracy
        early = MulticlassAccuracy(num_classes=3, average="micro")
        early(torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1]))
        print(round(float(early.compute()), 4))
        for blocked in ("torchmetrics", "lightning", "pytorch_lightning"):
            del sys.modules[blocked]
        import torchmetrics
        print(isinstance(early, torchmetrics.Metric))
        early.to("cpu")
        print(isinstance(early, torchmetrics.Metric))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0.6667", "False", "True"]


def test_torchmetrics_containers_say_to_use_torchtallys_collection():
    preds, target = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
    ours = MulticlassAccuracy(num_classes=3)
    with pytest.raises(AttributeError, match="torchtally.MetricCollection"):
        torchmetrics.MetricCollection({"acc": ours, "f1": MulticlassF1Score(num_classes=3)}).update(preds, target)
    with pytest.raises(AttributeError, match="'_defaults'.*torchtally.MetricCollection"):
        torchmetrics.wrappers.ClasswiseWrapper(MulticlassAccuracy(num_classes=3, average=None))
    assert ours.update_count == 0  # nothing was counted before the error
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'$"):  # any other name: nn.Module's
        ours.no_such_thing  # noqa: B018
