"""ignite's own idiom on torchtally's objects, on 3 gloo ranks: ``metric.attach(evaluator, "acc")``
and ``collection.attach(evaluator, "val")`` on an ignite ``Engine`` that runs a loader with a
padding DistributedSampler give scikit-learn's value over the whole dataset on every rank, and
``detach`` / ``is_attached`` follow ignite's meaning."""

import pytest
import torch

from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

N, C, WORLD = 37, 4, 3  # 37 = 12 * 3 + 1: two ranks get a padding duplicate


def _dataset():
    g = torch.Generator().manual_seed(11)
    return torch.rand(N, C, generator=g, dtype=torch.float64), torch.randint(0, C, (N,), generator=g)


def _attached_run(rank, world_size):
    from ignite.engine import Engine
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from torchtally import MetricCollection
    from torchtally.classification import MulticlassAccuracy, MulticlassF1Score, MulticlassPrecision

    scores, target = _dataset()
    data = TensorDataset(scores, target)
    loader = DataLoader(data, batch_size=5, sampler=DistributedSampler(data, world_size, rank, shuffle=True, seed=3))
    evaluator = Engine(lambda engine, batch: (batch[0], batch[1]))
    accuracy = MulticlassAccuracy(num_classes=C, average="micro")
    collection = MetricCollection(
        {
            "f1": MulticlassF1Score(num_classes=C, average="macro"),
            "precision": MulticlassPrecision(num_classes=C, average="macro"),
        }
    )
    accuracy.attach(evaluator, "acc")
    collection.attach(evaluator, "val")
    attached = (
        accuracy.is_attached(evaluator),
        accuracy.is_attached(evaluator, "epoch_wise"),
        accuracy.is_attached(evaluator, "batch_wise"),
        collection.is_attached(evaluator),
    )
    metrics = dict(evaluator.run(loader).metrics)
    accuracy.detach(evaluator)
    evaluator.state.metrics.clear()
    second = dict(evaluator.run(loader).metrics)  # only the collection is still attached
    return attached, metrics, second, accuracy.is_attached(evaluator), len(loader.sampler)


def test_attach_on_three_ranks_gives_scikit_learns_value_on_every_rank():
    from sklearn.metrics import accuracy_score, f1_score, precision_score

    scores, target = _dataset()
    preds = scores.argmax(dim=1).numpy()
    expected = {
        "acc": accuracy_score(target.numpy(), preds),
        "f1": f1_score(target.numpy(), preds, average="macro"),
        "precision": precision_score(target.numpy(), preds, average="macro", zero_division=0),
    }
    results = run_distributed(_attached_run, WORLD)
    assert [r[4] for r in results] == [13, 13, 13]  # the sampler padded 37 to 39
    for attached, metrics, second, still_attached, _ in results:
        assert attached == (True, True, False, True)
        for key, value in expected.items():
            assert metrics[key] == pytest.approx(value, abs=1e-6), key
        assert metrics["val"] == {"f1": metrics["f1"], "precision": metrics["precision"]}
        assert "acc" not in second and second["f1"] == pytest.approx(expected["f1"], abs=1e-6)
        assert not still_attached
