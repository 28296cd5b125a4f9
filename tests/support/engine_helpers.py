"""Metrics and checks shared by the engine tests of tests/distributed/ (test_engine_*.py).

Beside the catalogue metrics under test, two small torchtally.Metric subclasses show what the
hook passed on: a confusion matrix (sum-synced) and every (scores, target) row (cat-synced).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, roc_auc_score
from torch.utils.data import TensorDataset

from torchtally import MulticlassAccuracy, MulticlassAUROC, MulticlassF1Score
from torchtally.base.metric import Metric

C = 3


class ConfusionCounts(Metric):
    """int64 confusion matrix (row = target, column = argmax prediction), summed over ranks."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("confmat", torch.zeros(C, C, dtype=torch.int64), reduce="sum")

    def update(self, preds, target):
        idx = target * C + preds.argmax(dim=1)
        self.confmat = self.confmat + torch.bincount(idx, minlength=C * C).reshape(C, C)

    def compute(self):
        return self.confmat.clone()


class GatheredScores(Metric):
    """(scores, target) rows concatenated over ranks: for AUROC and to see which samples arrived."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("rows", torch.empty(0, C + 1, dtype=torch.float64), reduce="cat")

    def update(self, preds, target):
        self.append_state("rows", torch.cat([preds.double(), target.double()[:, None]], dim=1))

    def compute(self):
        return self.rows.clone()


def make_metrics():
    """The catalogue metrics under test, plus two that expose what the hook passed on."""
    return {
        "confmat": ConfusionCounts(),
        "rows": GatheredScores(),
        "accuracy": MulticlassAccuracy(num_classes=C, average="micro"),
        "f1": MulticlassF1Score(num_classes=C, average="macro"),
        "auroc": MulticlassAUROC(num_classes=C, thresholds=None),
    }


# ---- the data and the single-process reference ----------------------------------------------


def make_dataset(n, seed):
    """(probabilities, target) rows; probabilities so that no batch is mistaken for logits."""
    g = torch.Generator().manual_seed(seed)
    probs = torch.randn(n, C, generator=g, dtype=torch.float64).softmax(dim=1)
    target = torch.randint(0, C, (n,), generator=g)
    return TensorDataset(probs, target)


def per_sample_loss(probs, target):
    return F.nll_loss(probs.log(), target, reduction="none")


def check_against_sklearn(result, loss, ds, label):
    probs, target = ds.tensors
    y, y_hat = target.numpy(), probs.argmax(dim=1).numpy()
    n = len(y)
    labels = list(range(C))
    confmat = result["confmat"]
    assert int(confmat.sum()) == n, f"{label}: {int(confmat.sum())} samples counted, dataset has {n}"
    np.testing.assert_array_equal(confmat.numpy(), confusion_matrix(y, y_hat, labels=labels), err_msg=label)
    # every sample arrived exactly once, with its own scores
    rows = result["rows"]
    expected_rows = torch.cat([probs, target.double()[:, None]], dim=1)
    assert torch.equal(_sorted_rows(rows), _sorted_rows(expected_rows)), label
    if n == 0:
        return
    assert float(result["accuracy"]) == pytest.approx(accuracy_score(y, y_hat), abs=1e-6), label
    # macro over the classes present in target or prediction (torchmetrics' and sklearn's
    # default; labels=range(C) would also average in absent classes as 0)
    ref_f1 = f1_score(y, y_hat, average="macro", zero_division=0)
    assert float(result["f1"]) == pytest.approx(ref_f1, abs=1e-6), label
    if len(set(y.tolist())) == C:  # sklearn's AUROC needs every class present
        ref_auroc = roc_auc_score(y, probs.numpy(), multi_class="ovr", average="macro")
        assert float(result["auroc"]) == pytest.approx(ref_auroc, abs=1e-6), label
    if loss is not None:
        ref_loss = per_sample_loss(probs, target).mean().item()
        # MeanMetric: float64 sums, a float32 result (torchmetrics' dtype)
        assert float(loss) == pytest.approx(ref_loss, rel=1e-6), label


def _sorted_rows(rows):
    order = np.lexsort(rows.numpy().T[::-1])
    return rows[torch.from_numpy(order)]


def dataset_sizes(w, k=3):
    return [k * w, k * w + 1, k * w + w - 1, w - 1]
