"""forward's reused batch buffers and a collection's one finish per shared state: the values and
the accumulated state are those of plain updates, step after step."""

import pytest
import torch

import torchtally
from torchtally import Metric, MetricCollection
from torchtally import classification as clf


def batches(n: int, classes: int = 4):
    g = torch.Generator().manual_seed(3)
    for _ in range(n):
        yield torch.randn(8, classes, generator=g), torch.randint(0, classes, (8,), generator=g)


def test_forward_values_and_state_equal_fresh_metrics_step_after_step():
    stepped = clf.MulticlassF1Score(4, average=None)
    accumulated = clf.MulticlassF1Score(4, average=None)
    kept = []
    for preds, target in batches(6):
        value = stepped(preds, target)
        kept.append((value, value.clone()))
        assert torch.equal(value, clf.MulticlassF1Score(4, average=None).update(preds, target).compute())
        accumulated.update(preds, target)
        assert torch.equal(stepped.confmat, accumulated.confmat)
    for value, copy in kept:  # a later step's buffer is not a returned value
        assert torch.equal(value, copy)
    assert stepped.update_count == 6


class StateReturning(Metric):
    """A user metric whose compute returns its state itself (torchmetrics allows it)."""

    full_state_update = False

    def __init__(self):
        super().__init__()
        self.add_state("total", torch.zeros(2, dtype=torch.int64), reduce="sum")

    def update(self, x):
        self.total = self.total + x

    def compute(self):
        return self.total


def test_a_batch_value_that_is_the_state_is_not_overwritten_by_the_next_forward():
    m = StateReturning()
    first = m(torch.tensor([1, 2]))
    second = m(torch.tensor([10, 20]))
    assert first.tolist() == [1, 2] and second.tolist() == [10, 20]
    assert m.compute().tolist() == [11, 22]


FACTORIES = {
    "acc": lambda: clf.MulticlassAccuracy(4, average="micro"),
    "f1": lambda: clf.MulticlassF1Score(4),
    "recall": lambda: clf.MulticlassRecall(4, average=None),
    "jaccard": lambda: clf.MulticlassJaccardIndex(4, average="weighted"),
    "confmat": lambda: clf.MulticlassConfusionMatrix(4),
}


def test_a_collection_finishes_a_shared_state_once_with_each_metrics_own_value(monkeypatch):
    coll = MetricCollection({key: make() for key, make in FACTORIES.items()})
    assert coll.compute_groups == {0: sorted(FACTORIES)}
    calls = []
    real = torchtally.kernels.stat_finish

    def counted(out, state, requests, layout):
        calls.append(requests.shape[0])
        return real(out, state, requests, layout)

    monkeypatch.setattr(torchtally.kernels, "stat_finish", counted)
    for preds, target in batches(3):
        calls.clear()
        values = coll(preds, target)
        assert calls == [4]  # accuracy, F1, recall and Jaccard in one call; the confusion matrix is its copy
        for key, make in FACTORIES.items():
            assert torch.equal(values[key], make().update(preds, target).compute()), key


def test_a_batch_rejected_in_forward_leaves_the_state_and_the_next_forward_as_they_should_be():
    stepped, plain = clf.MulticlassAccuracy(4, average="macro"), clf.MulticlassAccuracy(4, average="macro")
    data = list(batches(4))
    for i, (preds, target) in enumerate(data):
        stepped(preds, target)
        plain.update(preds, target)
        if i == 1:
            before = stepped.confmat.clone()
            with pytest.raises(ValueError, match="target: label 9"):
                stepped(preds, torch.full_like(target, 9))
            assert torch.equal(stepped.confmat, before) and stepped.update_count == 2
    assert torch.equal(stepped.confmat, plain.confmat) and stepped.update_count == 4
    assert torch.equal(stepped.compute(), plain.compute())
