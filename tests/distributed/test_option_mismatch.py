"""Ranks whose metrics are configured differently never sync silently.

Two gloo ranks build the same metrics with one option different on rank 1 (bin edges of the
same count, threshold, ignore_index, top_k, average, a collection's sharing metric, a user
metric's own option, a decorated class's option), or one structural difference: the class a
wrapper wraps (accuracy against precision: the same states and options), a MultitaskWrapper's
task names, a collection's prefix. Every rank must raise SyncError naming the
metric, the option and both values, before any data collective; afterwards the process group
still syncs metrics that agree, exactly. One spawned run does every case.
"""

from typing import Any, Callable, Dict

import pytest
import torch

from torchtally import Metric, MetricCollection, SyncError, all_reduced_synchronized
from torchtally.classification import (
    BinaryAccuracy,
    BinaryAUROC,
    MulticlassAccuracy,
    MulticlassF1Score,
    MulticlassPrecision,
)
from torchtally.testing import count_collectives, run_distributed
from torchtally.wrappers import BootStrapper, ClasswiseWrapper, MinMaxMetric, MultitaskWrapper, Running

pytestmark = pytest.mark.distributed


class Scaled(Metric):
    def __init__(self, scale: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = scale
        self.add_state("total", torch.tensor(0.0, dtype=torch.float64))

    def update(self, x: torch.Tensor) -> None:
        self.total = self.total + x.sum(dtype=torch.float64)

    def compute(self) -> torch.Tensor:
        return self.total * self.scale


@all_reduced_synchronized("correct", "seen")
class DecoratedAccuracy:
    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold
        self.correct, self.seen = 0, 0
        self.local_positives = 0  # differs per rank, not an argument: not an option (ignite's contract)

    def update(self, scores: torch.Tensor, target: torch.Tensor) -> None:
        self.local_positives += int(target.sum())
        self.correct += int(((scores > self.threshold).long() == target).sum())
        self.seen += target.numel()

    def compute(self) -> float:
        return self.correct / self.seen


def _binary(rank: int):
    g = torch.Generator().manual_seed(rank)
    return torch.rand(40, generator=g), torch.randint(0, 2, (40,), generator=g)


def _multiclass(rank: int):
    g = torch.Generator().manual_seed(10 + rank)
    return torch.rand(40, 4, generator=g), torch.randint(0, 4, (40,), generator=g)


# option name -> (maker taking the option's value, rank 0's value, rank 1's value, batch maker)
CASES: Dict[str, Any] = {
    "thresholds": (lambda v: BinaryAUROC(thresholds=v), [0.1, 0.5, 0.9], [0.2, 0.3, 0.4], _binary),
    "threshold": (lambda v: BinaryAccuracy(threshold=v), 0.5, 0.7, _binary),
    "ignore_index": (lambda v: MulticlassAccuracy(4, ignore_index=v), None, 0, _multiclass),
    "top_k": (lambda v: MulticlassAccuracy(4, top_k=v), 2, 3, _multiclass),
    "average": (lambda v: MulticlassAccuracy(4, average=v), "macro", "micro", _multiclass),
    "collection": (
        lambda v: MetricCollection({"acc": MulticlassAccuracy(4), "f1": MulticlassF1Score(4, average=v)}),
        "macro",
        "weighted",
        _multiclass,
    ),
    "user": (lambda v: Scaled(scale=v), 1.0, 2.0, lambda rank: (torch.arange(4.0) + rank,)),
    "decorated": (lambda v: DecoratedAccuracy(threshold=v), 0.5, 0.25, _binary),
}
# wrapper name -> the wrapper around a given multiclass metric
WRAPPERS: Dict[str, Callable[[Any], Any]] = {
    "MinMaxMetric": MinMaxMetric,
    "BootStrapper": lambda m: BootStrapper(m, num_bootstraps=3),
    "Running": lambda m: Running(m, window=3),
    "ClasswiseWrapper": ClasswiseWrapper,
}
for _name, _wrap in WRAPPERS.items():
    CASES[f"wrapped {_name}"] = (
        lambda v, wrap=_wrap: wrap(
            MulticlassAccuracy(4, average=None) if v == "accuracy" else MulticlassPrecision(4, average=None)
        ),
        "accuracy",
        "precision",
        _multiclass,
    )


def _tasks(rank: int):
    """A MultitaskWrapper's batch: the rank's multiclass batch under each of its task names."""
    preds, target = _multiclass(rank)
    tasks = ["a", "b"] if rank == 0 else ["a", "c"]
    return dict.fromkeys(tasks, preds), dict.fromkeys(tasks, target)


CASES["tasks"] = (lambda v: MultitaskWrapper({t: MulticlassAccuracy(4) for t in v}), ["a", "b"], ["a", "c"], _tasks)
CASES["prefix"] = (lambda v: MetricCollection([MulticlassAccuracy(4)], prefix=v), "train_", "val_", _multiclass)


def _outcome(rank: int, make: Callable[[Any], Any], a: Any, b: Any, batch: Callable[[int], tuple]) -> Dict[str, Any]:
    metric = make(a if rank == 0 else b)
    metric.update(*batch(rank))
    with count_collectives() as counter:
        try:
            metric.compute()
            return {"error": None}
        except SyncError as exc:
            return {"error": str(exc), "collectives": dict(counter.by_name)}


def run_cases(rank: int, world_size: int) -> Dict[str, Any]:
    out = {name: _outcome(rank, *case) for name, case in CASES.items()}
    # The group is still usable, and metrics that agree sync exactly.
    agree = BinaryAUROC(thresholds=[0.1, 0.5, 0.9]).update(*_binary(rank))
    out["after"] = agree.compute()
    decorated = DecoratedAccuracy(0.5)
    decorated.update(*_binary(rank))
    out["decorated_after"] = decorated.compute()
    return out


@pytest.fixture(scope="module")
def runs():
    return run_distributed(run_cases, 2, timeout=180)


def test_bin_edges_of_the_same_count_raise_on_every_rank_naming_both(runs):
    """Bin edges of the same count but different values: [.1, .5, .9] against [.2, .3, .4] used
    to sync to 0.2814 on both (the histograms were added bin by bin as if the edges agreed)."""
    for rank, out in enumerate(runs):
        message = out["thresholds"]["error"]
        assert message is not None, f"rank {rank} synced silently"
        assert "before any data was exchanged" in message
        assert (
            "BinaryAUROC option 'thresholds': rank 0 has tensor([0.1, 0.5, 0.9], float32), "
            "rank 1 has tensor([0.2, 0.3, 0.4], float32)"
        ) in message, message


@pytest.mark.parametrize(
    "name,label",
    [
        ("threshold", "BinaryAccuracy option 'threshold': rank 0 has 0.5, rank 1 has 0.7"),
        ("ignore_index", "MulticlassAccuracy option 'ignore_index': rank 0 has None, rank 1 has 0"),
        ("top_k", "MulticlassAccuracy option 'top_k': rank 0 has 2, rank 1 has 3"),
        ("average", "MulticlassAccuracy option 'average': rank 0 has 'macro', rank 1 has 'micro'"),
        ("collection", "metric 'f1' (MulticlassF1Score) option 'average': rank 0 has 'macro', rank 1 has 'weighted'"),
        ("user", "Scaled option 'scale': rank 0 has 1.0, rank 1 has 2.0"),
        ("decorated", "DecoratedAccuracy option 'threshold': rank 0 has 0.5, rank 1 has 0.25"),
        *[(f"wrapped {name}", f"{name} option ") for name in WRAPPERS],
        ("tasks", "MultitaskWrapper option 'tasks': rank 0 has ['a', 'b'], rank 1 has ['a', 'c']"),
        ("prefix", "MetricCollection option 'prefix': rank 0 has 'train_', rank 1 has 'val_'"),
    ],
)
def test_any_differing_option_raises_on_every_rank_before_any_data(runs, name, label):
    for rank, out in enumerate(runs):
        seen = out[name]
        assert seen["error"] is not None, f"{name}: rank {rank} synced silently"
        assert label in seen["error"], seen["error"]
        if name.startswith("wrapped"):  # the wrapped classes, both named
            assert "MulticlassAccuracy" in seen["error"] and "MulticlassPrecision" in seen["error"], seen["error"]
        data = {k for k in seen["collectives"] if k in ("all_reduce", "reduce", "gather")}
        assert not data, f"{name}: data moved before the error: {seen['collectives']}"


def test_the_group_still_syncs_metrics_that_agree(runs):
    whole = BinaryAUROC(thresholds=[0.1, 0.5, 0.9])
    for rank in range(2):
        whole.update(*_binary(rank))
    want = whole.compute()
    decorated = DecoratedAccuracy(0.5)
    for rank in range(2):
        decorated.update(*_binary(rank))
    for out in runs:
        assert torch.equal(out["after"], want)
        assert out["decorated_after"] == decorated.compute()  # local_positives differs per rank: fine
