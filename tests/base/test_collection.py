"""MetricCollection in one process: construction, update/compute, state sharing by state_key,
reset, merge_state, state_dict, clone, pickling. Distributed: tests/distributed/test_sync.py."""

import pickle

import pytest
import torch
from support.metric_tester import states_of
from support.toy_metrics import (
    C,
    CatMetric,
    ExtremesMetric,
    MeanScore,
    MomentsMetric,
    SumMetric,
    batches,
    make_data,
    mixed_metrics,
)

from torchtally import Metric, MetricCollection, NotComputableError

DATA = make_data(30, seed=2)


def feed(target, start=0, stop=30):
    for batch in batches(DATA, start, stop):
        target.update(*batch)
    return target


def same(a, b):
    """Integers exactly, floats to 1e-12 relative (summation order may differ)."""
    if isinstance(a, torch.Tensor):
        if a.dtype.is_floating_point:
            return a.shape == b.shape and bool(torch.allclose(a, b, rtol=1e-12, atol=0))
        return torch.equal(a, b)
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def test_results_equal_each_metric_alone():
    coll = feed(MetricCollection(mixed_metrics()))
    alone = {name: feed(m).compute() for name, m in mixed_metrics().items()}
    got = coll.compute()
    assert list(got) == sorted(alone)  # a dict is taken in sorted key order, as torchmetrics does
    assert all(same(got[n], alone[n]) for n in alone)


def test_list_construction_names_by_class_and_rejects_duplicates():
    coll = MetricCollection([SumMetric(), CatMetric()])
    assert list(coll) == ["SumMetric", "CatMetric"]
    with pytest.raises(ValueError, match="two metrics both named SumMetric"):
        MetricCollection([SumMetric(), SumMetric()])
    m = SumMetric()
    with pytest.raises(ValueError, match="same object"):
        MetricCollection({"a": m, "b": m})
    with pytest.raises(ValueError, match="key 'x' is not an instance of torchtally.Metric"):
        MetricCollection({"x": object()})


def test_update_returns_self_and_compute_is_cached():
    coll = MetricCollection(mixed_metrics())
    assert feed(coll) is coll
    first = coll.compute()
    second = coll.compute()  # from the cache: equal, and copies of their own
    assert first.keys() == second.keys()
    for n in first:
        for x, y in zip(torch.utils._pytree.tree_leaves(first[n]), torch.utils._pytree.tree_leaves(second[n])):
            assert torch.equal(x, y) and x is not y
    assert all(m._cache is not None for m in coll.values())
    coll.update(*next(batches(DATA, 0, 2)))
    assert coll.compute()["sum"][0].sum() == 32


def test_not_computable_names_the_metrics():
    coll = MetricCollection(mixed_metrics())
    with coll.raising_if_never_updated(), pytest.raises(NotComputableError, match="'cat', 'ext', 'mom', 'sum'"):
        coll.compute()
    with pytest.warns(UserWarning, match="'cat', 'ext', 'mom', 'sum'"):
        coll.compute()


def test_shared_state_updates_once_per_batch():
    SumMetric.calls = 0
    coll = MetricCollection(
        {
            "counts": SumMetric(shared=True),
            "mean": MeanScore(shared=True),
            "other": SumMetric(num_classes=C + 1, shared=True),
        }
    )
    feed(coll)
    n_batches = len(list(batches(DATA, 0, 30)))
    # "counts" and "mean" share one state (owner "counts"); "other" has its own key.
    assert SumMetric.calls == 2 * n_batches
    got = coll.compute()
    assert same(got["counts"], feed(SumMetric()).compute())
    torch.testing.assert_close(got["mean"], feed(MeanScore()).compute(), rtol=0, atol=0)
    assert coll["mean"].counts is coll["counts"].counts
    # The sync plan carries the shared state once.
    labels = [s.label for s in coll._sync_plan().specs]
    assert labels == [
        "counts=SumMetric.counts",
        "counts=SumMetric.total",
        "other=SumMetric.counts",
        "other=SumMetric.total",
    ]


def test_shared_state_key_with_different_states_is_rejected():
    class Other(Metric):
        state_key = ("toy_sums", C)

        def __init__(self):
            super().__init__()
            self.add_state("counts", torch.zeros(C, dtype=torch.int32))

        def update(self, *a):
            pass

        def compute(self):
            return self.counts

    with pytest.raises(ValueError, match="'a' and 'b' cannot share state: they declare different states"):
        MetricCollection({"a": SumMetric(shared=True), "b": Other()})


def test_shared_state_survives_reset_load_and_merge():
    def make():
        return MetricCollection({"counts": SumMetric(shared=True), "mean": MeanScore(shared=True)})

    a = feed(make(), 0, 10)
    a.reset()
    feed(a, 0, 10)
    b = feed(make(), 10, 30)
    a.merge_state([b])
    whole = feed(make())
    assert same(a.compute()["counts"], whole.compute()["counts"])
    assert a.state_dict() == {}  # states are not persistent by default (torchmetrics)
    a.persistent(True)
    c = make()
    c.load_state_dict(a.state_dict())
    assert set(a.state_dict()) == {"counts.counts", "counts.total", "mean.counts", "mean.total"}
    assert c["mean"].counts is c["counts"].counts
    assert same(c.compute()["mean"], whole.compute()["mean"])


def test_reset_clears_all():
    coll = feed(MetricCollection(mixed_metrics()))
    coll.compute()
    coll.reset()
    with coll.raising_if_never_updated(), pytest.raises(NotComputableError):
        coll.compute()
    assert coll["cat"].rows.shape == (0, 3)


def test_merge_state_equals_one_collection_over_all_data():
    parts = [feed(MetricCollection(mixed_metrics()), a, b) for a, b in [(0, 11), (11, 11), (11, 30)]]
    merged = parts[0].merge_state(parts[1:]).compute()
    whole = feed(MetricCollection(mixed_metrics())).compute()
    for name in whole:
        for got, want in zip(merged[name], whole[name]):
            if want.dtype.is_floating_point:
                torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12 * float(want.abs().max()))
            else:
                assert torch.equal(got, want)
    with pytest.raises(ValueError, match="merge_state"):
        parts[0].merge_state([MetricCollection({"sum": SumMetric()})])


def test_state_dict_roundtrip_and_bad_input_leaves_state_unchanged():
    coll = feed(MetricCollection(mixed_metrics()))
    coll.persistent(True)
    sd = coll.state_dict()
    assert "cat.rows" in sd and sd["cat.rows"].shape == (30, 3)
    fresh = MetricCollection(mixed_metrics())
    fresh.load_state_dict(sd)
    assert all(same(fresh.compute()[n], coll.compute()[n]) for n in coll)
    fresh.persistent(True)
    before = fresh.state_dict()
    bad = dict(sd, **{"mom.moments": torch.zeros(2, 4, dtype=torch.float64)})
    with pytest.raises(ValueError, match="moments"):
        fresh.load_state_dict(bad)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "nope.x"'):
        fresh.load_state_dict(dict(sd, **{"nope.x": torch.zeros(1)}))
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "cat.rows"'):
        fresh.load_state_dict({k: v for k, v in sd.items() if k != "cat.rows"})
    assert all(torch.equal(before[k], v) for k, v in fresh.state_dict().items())


def test_clone_and_pickle_are_independent_and_keep_sharing():
    coll = feed(
        MetricCollection({"counts": SumMetric(shared=True), "mean": MeanScore(shared=True), "cat": CatMetric()}), 0, 10
    )
    for copy_ in (coll.clone(), pickle.loads(pickle.dumps(coll))):
        feed(copy_, 10, 30)
        assert copy_["mean"].counts is copy_["counts"].counts
        assert copy_.compute()["counts"][0].sum() == 30
    assert coll.compute()["counts"][0].sum() == 10


class InPlaceCounts(Metric):
    """Adds into its state tensor in place, as the C kernels do."""

    def __init__(self):
        super().__init__()
        self.add_state("counts", torch.zeros(C, dtype=torch.int64))

    def update(self, labels, scores, rows):
        self.counts.add_(torch.bincount(labels, minlength=C))

    def compute(self):
        return self.counts.clone()


class Picky(SumMetric):
    """Rejects label C - 1 (before mutating); its large extra state makes it the last one updated."""

    def __init__(self):
        super().__init__(num_classes=C - 1)
        self.add_state("unused", torch.zeros(1000))


def test_a_batch_rejected_by_a_later_metric_leaves_every_metric_unchanged():
    def make():
        return MetricCollection(
            {
                "counts": SumMetric(shared=True),
                "mean": MeanScore(shared=True),
                "inplace": InPlaceCounts(),
                **mixed_metrics(),
                "picky": Picky(),
            }
        )

    labels, scores, rows = DATA
    good = (labels[:10].clamp(max=C - 2), scores[:10], rows[:10])
    bad = (torch.full((4,), C - 1), scores[10:14], rows[10:14])

    fresh = make()
    with pytest.raises(ValueError, match="labels: expected values in"):
        fresh.update(*bad)
    with (
        fresh.raising_if_never_updated(),
        pytest.raises(NotComputableError, match="\\['cat', 'counts', 'ext', 'inplace', 'mom', 'picky', 'sum'\\]"),
    ):
        fresh.compute()  # still "never updated", every one of them

    coll = make().update(*good)
    before = states_of(coll)
    result = coll.compute()
    with pytest.raises(ValueError, match="labels: expected values in"):
        coll.update(*bad)
    after = states_of(coll)
    assert after.keys() == before.keys() and all(torch.equal(before[k], after[k]) for k in before)
    assert all(m._cache is not None for m in coll.values())  # the cached results were kept, too
    assert all(torch.equal(x, y) for x, y in zip(coll.compute()["cat"], result["cat"]))
    assert coll["mean"].counts is coll["counts"].counts  # and the shared state
    coll.update(*good)  # a good batch after the bad one counts once
    assert coll.compute()["inplace"].sum() == 20 and coll["cat"].rows.shape == (20, 3)


class UncopyableGroup:
    """Stands in for a ProcessGroup: neither deep-copyable nor picklable."""

    def __deepcopy__(self, memo):
        raise TypeError("a process group cannot be copied")

    def __reduce__(self):
        raise TypeError("a process group cannot be pickled")


@pytest.mark.parametrize("collection", [False, True])
def test_clone_shares_the_process_group_and_plan_and_pickle_drops_them(collection):
    group = UncopyableGroup()
    original = (
        MetricCollection({"sum": SumMetric()}, process_group=group) if collection else SumMetric(process_group=group)
    )
    feed(original, 0, 10)
    plan = original._sync_plan()
    clone = original.clone()
    assert clone.process_group is group and clone._plan is plan
    restored = pickle.loads(pickle.dumps(original))
    assert restored.process_group is None and restored._plan is None
    assert original.process_group is group and original._plan is plan
    result = restored.compute()
    assert same(result["sum"] if collection else result, feed(SumMetric(), 0, 10).compute())


def test_compute_local_per_metric():
    coll = feed(MetricCollection({"ext": ExtremesMetric(), "mom": MomentsMetric()}))
    local = coll.compute_local()
    assert same(local["ext"], coll.compute()["ext"])


def test_a_collection_checks_its_sync_options_as_a_metric_does():
    with pytest.raises(ValueError, match="recipient_rank must be None or a rank >= 0, got -1"):
        MetricCollection([SumMetric()], recipient_rank=-1)
    with pytest.raises(ValueError, match="recipient_rank must be None or a rank >= 0, got 1.5"):
        MetricCollection([SumMetric()], recipient_rank=1.5)
    assert MetricCollection([SumMetric()], recipient_rank=2).recipient_rank == 2
