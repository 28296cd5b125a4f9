"""The shared tester itself: it passes correct metrics and catches broken ones."""

import pytest
import torch

from support.metric_tester import (
    MetricCase,
    assert_rejects,
    assert_same,
    check_metric,
    run_distributed_cases,
    split_uneven,
)
from torchtally import Metric, MetricCollection


class Mean(Metric):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.add_state("total", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("count", torch.tensor(0), reduce="sum")

    def update(self, x):
        if x.dim() != 1:
            raise ValueError(f"x: expected a 1-D tensor, got shape {tuple(x.shape)}")
        self.total = self.total + x.sum(dtype=torch.float64)
        self.count = self.count + x.numel()

    def compute(self):
        return self.total / self.count


class Rows(Metric):
    """All values in arrival order (a cat state: rank order matters)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.add_state("rows", torch.empty(0), reduce="cat")

    def update(self, x):
        self.append_state("rows", x.float())

    def compute(self):
        return self.rows.clone()


class ForgetfulMean(Mean):
    """Broken: compute consumes the state."""

    def compute(self):
        value = self.total / self.count
        self.total = torch.zeros_like(self.total)
        return value


class MaxCount(Mean):
    """Broken: the count is combined by max across ranks / merges."""

    def __init__(self, **kw):
        Metric.__init__(self, **kw)
        self.add_state("total", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("count", torch.tensor(0), reduce="max")


class LastBatchSum(Metric):
    """Keeps only the sum of its last batch; merged/synced: the sum of each part's last batch."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.add_state("last", torch.tensor(0.0, dtype=torch.float64), reduce="sum")

    def update(self, x):
        self.last = x.sum(dtype=torch.float64)

    def compute(self):
        return self.last.clone()


def last_sums(shards):
    return sum(float(shard[-1][0].sum()) for shard in shards if shard)


def both() -> MetricCollection:
    return MetricCollection({"mean": Mean(), "rows": Rows()})


X = torch.randn(41, generator=torch.Generator().manual_seed(0), dtype=torch.float64) + 5
BATCHES = [X[i : i + 6] for i in range(0, 41, 6)]


def case(name, factory, reference=lambda x: x.mean()):
    return MetricCase(name, factory, BATCHES, reference, rtol=1e-12, atol=1e-12)


def test_split_uneven_is_contiguous_uneven_and_complete():
    for n in range(0, 30):
        for empty in (None, 1):
            bounds = split_uneven(n, 3, empty)
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            if empty is not None:
                assert bounds[empty][0] == bounds[empty][1]
            if n >= 6:
                sizes = [hi - lo for lo, hi in bounds]
                assert len({s for s in sizes if s}) == len([s for s in sizes if s]), sizes


def test_correct_metrics_pass():
    check_metric(case("mean", Mean))
    check_metric(case("rows", Rows, reference=lambda x: x.float()))
    check_metric(case("collection", both, reference=lambda x: {"mean": x.mean(), "rows": x.float()}))
    last = MetricCase(
        "last", LastBatchSum, BATCHES, lambda b: b[-1][0].sum(), reference_on_batches=True, sharded_reference=last_sums
    )
    check_metric(last)
    last.sharded_reference = None
    with pytest.raises(AssertionError, match="merge_state"):
        check_metric(last)


@pytest.mark.parametrize(
    "broken, match",
    [
        (case("forgetful", ForgetfulMean), "update after compute|second compute"),
        (case("maxcount", MaxCount), "merge_state"),
        (case("wrong-reference", Mean, reference=lambda x: x.mean() + 1e-9), "compute vs reference"),
    ],
)
def test_broken_metrics_are_caught(broken, match):
    with pytest.raises(AssertionError, match=match):
        check_metric(broken)


def test_assert_rejects_checks_message_and_state():
    m = Mean().update(X[:3])
    assert_rejects(m, (X[:4].reshape(2, 2),), ValueError, "x: expected a 1-D")
    with pytest.raises(AssertionError, match="does not match"):
        assert_rejects(m, (X[:4].reshape(2, 2),), ValueError, "preds")
    with pytest.raises(AssertionError, match="did not raise"):
        assert_rejects(m, (X[:4],), ValueError, "x")


def test_assert_same_compares_nested_results():
    assert_same({"a": (torch.tensor(1.0), [1, 2])}, {"a": (1.0, torch.tensor([1, 2]))})
    with pytest.raises(AssertionError):
        assert_same(torch.tensor([1, 2]), torch.tensor([1, 3]))
    with pytest.raises(AssertionError):
        assert_same(torch.tensor(1.0), 1.0 + 1e-6, rtol=1e-9, atol=0)


@pytest.mark.distributed
def test_distributed_passes_correct_and_names_broken_cases():
    cases = [
        case("mean", Mean),
        case("rows", Rows, reference=lambda x: x.float()),
        case("collection", both, reference=lambda x: {"mean": x.mean(), "rows": x.float()}),
        case("maxcount", MaxCount),
        MetricCase(
            "last",
            LastBatchSum,
            BATCHES,
            lambda b: b[-1][0].sum(),
            reference_on_batches=True,
            sharded_reference=last_sums,
        ),
    ]
    with pytest.raises(AssertionError) as info:
        run_distributed_cases(cases)
    message = str(info.value)
    assert "[maxcount," in message
    for good in ("[mean,", "[rows,", "[collection,", "[last,"):
        assert good not in message
