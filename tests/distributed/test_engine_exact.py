"""Synced metrics through ignite's Engine and the plain loop equal scikit-learn over the whole
dataset, with a shuffling DistributedSampler that pads, on 2 and 3 gloo processes.

One spawned process group per world size runs every dataset size and batch size.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, roc_auc_score
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchtally.metric import Metric
from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

C = 3


# ---- metrics under test ---------------------------------------------------------------------


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
    ref_loss = F.cross_entropy(logits, target).item()
    assert loss == pytest.approx(ref_loss, rel=1e-12), label


def _sorted_rows(rows):
    order = np.lexsort(rows.numpy().T[::-1])
    return rows[torch.from_numpy(order)]


def dataset_sizes(w, k=3):
    return [k * w, k * w + 1, k * w + w - 1, w - 1]


# ---- the workers ----------------------------------------------------------------------------


def _ignite_and_plain_loop(rank, world_size):
    from ignite.engine import Engine, Events

    from torchtally.adapters.ignite import attach
    from torchtally.engine import MetricHook

    for n in dataset_sizes(world_size):
        for batch_size in (1, 4):
            ds = make_dataset(n, seed=n)
            sampler = DistributedSampler(ds, shuffle=True, seed=11)
            loader = DataLoader(ds, batch_size=batch_size, sampler=sampler)
            label = f"W={world_size} N={n} batch={batch_size} rank={rank}"

            def step(engine, batch):
                logits, target = batch
                return {"y_pred": logits, "y": target, "loss": F.cross_entropy(logits, target, reduction="none")}

            evaluator = Engine(step)
            attach(make_metrics(), evaluator, "metrics")
            attach(MeanValue(), evaluator, "loss", output_transform=lambda out: out["loss"])

            @evaluator.on(Events.EPOCH_STARTED)
            def _(engine):
                sampler.set_epoch(engine.state.epoch)

            evaluator.run(loader, max_epochs=2)  # two epochs: the second starts from scratch
            assert evaluator.state.epoch == 2
            check_against_sklearn(evaluator.state.metrics["metrics"], evaluator.state.metrics["loss"], ds, "ignite " + label)

            hook = MetricHook(make_metrics())
            loss_hook = MetricHook(MeanValue())
            for epoch in range(2):
                sampler.set_epoch(epoch)
                with hook.epoch(loader), loss_hook.epoch(loader):
                    for logits, target in loader:
                        hook.update(logits, target)
                        loss_hook.update(F.cross_entropy(logits, target, reduction="none"))
                check_against_sklearn(hook.result, loss_hook.result.item(), ds, f"loop epoch {epoch} " + label)


@pytest.mark.parametrize("world_size", [2, 3])
def test_ignite_and_plain_loop_equal_sklearn(world_size):
    run_distributed(_ignite_and_plain_loop, world_size)
