"""Migration: ordinary torchmetrics code, run twice with only the import changed (``torchmetrics``
-> ``torchtally``), gives the same numbers, dtypes and shapes.

Each snippet is written once against a library namespace ``lib`` (a module with the same layout
as torchmetrics: ``lib.classification``, ``lib.regression``, ``lib.aggregation``,
``lib.functional``, ``lib.MetricCollection``) and run against both.
"""

import importlib
import types

import pytest
import torch
from support.parity_tester import assert_parity
from torch import nn


def library(name: str) -> types.SimpleNamespace:
    root = importlib.import_module(name)
    return types.SimpleNamespace(
        root=root,
        MetricCollection=root.MetricCollection,
        classification=importlib.import_module(f"{name}.classification"),
        regression=importlib.import_module(f"{name}.regression"),
        aggregation=importlib.import_module(f"{name}.aggregation"),
        functional=importlib.import_module(f"{name}.functional"),
    )


def data(seed: int, n: int = 96, c: int = 5):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, c, generator=g)
    labels = torch.randint(0, c, (n,), generator=g)
    return logits, labels


def validation_collection(lib):
    """A MetricCollection of macro metrics with a prefix, called per batch, computed per epoch."""
    c = lib.classification
    metrics = lib.MetricCollection(
        [
            c.MulticlassAccuracy(num_classes=5, average="macro"),
            c.MulticlassPrecision(num_classes=5, average="macro"),
            c.MulticlassRecall(num_classes=5, average="macro"),
            c.MulticlassF1Score(num_classes=5, average="macro"),
        ],
        prefix="val_",
    )
    logits, labels = data(0)
    per_batch = [metrics(logits[i : i + 16].softmax(-1), labels[i : i + 16]) for i in range(0, 96, 16)]
    epoch = metrics.compute()
    metrics.reset()
    return per_batch, epoch, sorted(metrics.keys())


def binary_ranking(lib):
    """BinaryAUROC and BinaryAveragePrecision on scores, BinaryAccuracy / BinaryF1Score fed
    float 0/1 targets (torchmetrics' curves take integer targets only)."""
    c = lib.classification
    auroc, ap = c.BinaryAUROC(), c.BinaryAveragePrecision()
    acc, f1 = c.BinaryAccuracy(), c.BinaryF1Score()
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        scores = torch.rand(32, generator=g)
        target = (torch.rand(32, generator=g) < scores).long()
        auroc.update(scores, target)
        ap.update(scores, target)
        acc.update(scores, target.float())
        f1.update(scores, target.float())
    return auroc.compute(), ap.compute(), acc.compute(), f1.compute()


def multi_output_regression(lib):
    """MeanSquaredError and R2Score on [N, 3] outputs, R2 inferring the number of outputs."""
    r = lib.regression
    mse, r2 = r.MeanSquaredError(), r.R2Score()
    g = torch.Generator().manual_seed(2)
    for _ in range(3):
        target = torch.randn(20, 3, generator=g)
        preds = target + 0.3 * torch.randn(20, 3, generator=g)
        mse.update(preds, target)
        r2.update(preds, target)
    return mse.compute(), r2.compute()


def task_wrappers_and_functional(lib):
    """Accuracy(task=...), F1Score(task=...) and the functional forms."""
    c, f = lib.root, lib.functional
    logits, labels = data(3)
    acc = c.Accuracy(task="multiclass", num_classes=5)
    f1 = c.F1Score(task="multiclass", num_classes=5, average="weighted")
    acc.update(logits, labels)
    f1.update(logits, labels)
    return (
        acc.compute(),
        f1.compute(),
        f.accuracy(logits, labels, task="multiclass", num_classes=5),
        f.classification.multiclass_f1_score(logits, labels, num_classes=5),
    )


class Classifier(nn.Module):
    """A model that holds its metrics, as Lightning modules do."""

    def __init__(self, lib):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.train_acc = lib.classification.MulticlassAccuracy(num_classes=3)
        self.val_metrics = lib.MetricCollection(
            {"acc": lib.classification.MulticlassAccuracy(num_classes=3), "mse": lib.regression.MeanSquaredError()},
            postfix="/val",
        )


def metrics_inside_a_model(lib):
    torch.manual_seed(4)
    model = Classifier(lib)
    model.to(torch.device("cpu"))
    names = sorted(n for n, m in model.named_modules() if n)
    keys = sorted(model.state_dict())  # metric states stay out of the model's state_dict
    x, y = torch.randn(12, 4), torch.randint(0, 3, (12,))
    out = model.layer(x)
    batch_acc = model.train_acc(out, y)
    model.val_metrics["acc"].update(out, y)
    model.val_metrics["mse"].update(out[:, 0], y.float())
    return batch_acc, model.train_acc.compute(), model.val_metrics.compute(), names, keys


SNIPPETS = [
    validation_collection,
    binary_ranking,
    multi_output_regression,
    task_wrappers_and_functional,
    metrics_inside_a_model,
]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.__name__)
def test_same_code_same_numbers(snippet):
    want = snippet(library("torchmetrics"))
    got = snippet(library("torchtally"))
    assert_parity(got, want, snippet.__name__, rtol=1e-6, atol=1e-7)
