"""Metrics and checks shared by the engine tests under tests/distributed/ (test_engine_*.py).

The metrics are small torchtally.Metric subclasses, so they sync through the real plan:
a confusion matrix (sum), every (scores, target) row (cat) and a mean (sum, sum).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, roc_auc_score
from torch.utils.data import TensorDataset

from torchtally.metric import Metric

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


class MeanValue(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("total", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("count", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, value):
        self.total = self.total + value.double().sum()
        self.count = self.count + value.numel()

    def compute(self):
        return self.total / self.count


def make_metrics():
    return {"confmat": ConfusionCounts(), "rows": GatheredScores()}


# ---- the data and the single-process reference ----------------------------------------------


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, C, generator=g, dtype=torch.float64)
    target = torch.randint(0, C, (n,), generator=g)
    return TensorDataset(logits, target)


def check_against_sklearn(result, loss, ds, label):
    logits, target = ds.tensors
    probs = logits.softmax(dim=1)
    y, y_hat = target.numpy(), logits.argmax(dim=1).numpy()
    n = len(y)
    confmat = result["confmat"]
    assert int(confmat.sum()) == n, f"{label}: {int(confmat.sum())} samples counted, dataset has {n}"
    np.testing.assert_array_equal(confmat.numpy(), confusion_matrix(y, y_hat, labels=list(range(C))), err_msg=label)
    # every sample arrived exactly once, with its own scores
    rows = result["rows"]
    expected_rows = torch.cat([logits, target.double()[:, None]], dim=1)
    assert torch.equal(_sorted_rows(rows), _sorted_rows(expected_rows)), label
    acc = confmat.diag().sum().item() / n
    assert acc == accuracy_score(y, y_hat), label
    tp = confmat.diag().double()
    f1 = (2 * tp / (confmat.sum(0) + confmat.sum(1)).double()).nan_to_num(0.0).mean().item()
    assert f1 == pytest.approx(f1_score(y, y_hat, average="macro", labels=list(range(C)), zero_division=0), abs=1e-12)
    if len(set(y.tolist())) == C:
        gathered_probs = rows[:, :C].softmax(dim=1).numpy()
        ours = roc_auc_score(rows[:, C].long().numpy(), gathered_probs, multi_class="ovr")
        assert ours == pytest.approx(roc_auc_score(y, probs.numpy(), multi_class="ovr"), abs=1e-12), label
    if loss is not None:
        ref_loss = F.cross_entropy(logits, target).item()
        assert loss == pytest.approx(ref_loss, rel=1e-12), label


def _sorted_rows(rows):
    order = np.lexsort(rows.numpy().T[::-1])
    return rows[torch.from_numpy(order)]


def dataset_sizes(w, k=3):
    return [k * w, k * w + 1, k * w + w - 1, w - 1]
