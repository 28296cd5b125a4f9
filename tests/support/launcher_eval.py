"""An evaluation pass shared by the Accelerate and Fabric tests (tests/adapters/test_*_runs.py):
the collection under test, its data, the single-process reference, and the loop run by every rank.

The collection: MulticlassAccuracy, MulticlassF1Score, MulticlassConfusionMatrix (its sum is the
number of samples counted, so a repeated sample shows) and an exact AUROC (BinaryAUROC with
thresholds=None, of class 1 against the rest), all updated from (probabilities, target).
"""

import torch
from torch.utils.data import TensorDataset

from torchtally import BinaryAUROC, MetricCollection, MulticlassAccuracy, MulticlassConfusionMatrix, MulticlassF1Score

C = 3
BATCH = 4


class ClassOneAUROC(BinaryAUROC):
    """BinaryAUROC(thresholds=None) of class 1 against the rest, from multiclass probabilities."""

    def update(self, preds, target):
        super().update(preds[:, 1], (target == 1).long())


def make_collection():
    return MetricCollection(
        {
            "acc": MulticlassAccuracy(num_classes=C, average="micro"),
            "f1": MulticlassF1Score(num_classes=C, average="macro"),
            "confmat": MulticlassConfusionMatrix(num_classes=C),
            "auroc": ClassOneAUROC(thresholds=None),
        }
    )


def make_dataset(n, seed=3):
    g = torch.Generator().manual_seed(seed)
    probs = torch.randn(n, C, generator=g, dtype=torch.float64).softmax(dim=1)
    return TensorDataset(probs, torch.randint(0, C, (n,), generator=g))


def single_process(n):
    """The collection's values over the whole dataset in one process."""
    metrics = make_collection()
    probs, target = make_dataset(n).tensors
    metrics.update(probs, target)
    return as_plain(metrics.compute())


def as_plain(result):
    return {k: v.detach().cpu().clone() for k, v in result.items()}


def assert_equal_results(got, expected, label):
    assert set(got) == set(expected), label
    for key in ("confmat", "acc", "f1"):  # counts, and ratios of the same counts: exact
        assert torch.equal(got[key], expected[key]), f"{label}: {key} {got[key]} != {expected[key]}"
    torch.testing.assert_close(got["auroc"], expected["auroc"], rtol=0, atol=1e-12, msg=label)


def evaluate(hook, loader):
    """One evaluation epoch through ``hook`` (scores are the inputs); returns the synced result."""
    with hook.epoch(loader):
        for probs, target in loader:
            hook.update(probs, target)
    return as_plain(hook.result)


def evaluate_without_adapter(metrics, loader):
    """What a plain loop gets: every row the loader yields goes into the metrics."""
    metrics.reset()
    for probs, target in loader:
        metrics.update(probs, target)
    return as_plain(metrics.compute())
