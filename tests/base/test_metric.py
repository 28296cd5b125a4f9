"""Metric in one process: declaration, update/compute/cache, merge_state, state_dict, clone,
pickling, bad input. The distributed behaviour is in tests/distributed/test_sync.py."""

import pickle

import pytest
import torch
from support.toy_metrics import (
    C,
    CatMetric,
    D,
    ExtremesMetric,
    MomentsMetric,
    SumMetric,
    batches,
    chan_merge,
    make_data,
)

from torchtally import Metric, NotComputableError
from torchtally.sync.plan import StateSpec, SyncPlan, transport_dtype
from torchtally.testing import count_collectives

DATA = make_data(40, seed=1)


def feed(metric, start=0, stop=40):
    for batch in batches(DATA, start, stop):
        metric.update(*batch)
    return metric


def states_equal(a: Metric, b: Metric) -> bool:
    sa, sb = a.metric_state, b.metric_state
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def saved(metric: Metric) -> dict:
    metric.persistent(True)
    return metric.state_dict()


def loaded(metric: Metric, state_dict: dict) -> Metric:
    metric.load_state_dict(state_dict)
    return metric


# -- update / compute / cache ----------------------------------------------------------------


def test_compute_before_update_warns_and_computes_over_no_data():
    m = SumMetric()
    with pytest.warns(UserWarning, match="SumMetric was called before the ``update`` method"):
        counts, total = m.compute()
    assert counts.sum() == 0 and total.sum() == 0
    with pytest.warns(UserWarning, match="before the ``update``"):
        m.compute_local()
    feed(m)
    m.compute()
    m.reset()
    with pytest.warns(UserWarning, match="before the ``update``"):
        m.compute()


def test_compute_before_update_raises_in_ignite_mode_and_after_reset_again():
    m = SumMetric()
    with m.raising_if_never_updated():
        with pytest.raises(NotComputableError, match="SumMetric.compute"):
            m.compute()
        with pytest.raises(NotComputableError):
            m.compute_local()
        feed(m)
        m.compute()
        m.reset()
        with pytest.raises(NotComputableError):
            m.compute()
    with pytest.warns(UserWarning):  # the context ended: torchmetrics' rule again
        m.compute()


def test_update_returns_self_and_results_match_direct_formula():
    labels, scores, rows = DATA
    m = SumMetric()
    assert m.update(labels[:5], scores[:5], rows[:5]) is m
    m.update(labels[5:], scores[5:], rows[5:])
    counts, total = m.compute()
    assert torch.equal(counts, torch.bincount(labels, minlength=C))
    torch.testing.assert_close(total, scores.sum(dim=0), rtol=1e-12, atol=0)


def test_compute_is_cached_until_update_or_reset():
    calls = []

    class Counting(SumMetric):
        def compute(self):
            calls.append(1)
            return super().compute()

    m = feed(Counting())
    first = m.compute()
    again = m.compute()  # from the cache, as a copy of its own (see test_results_are_the_callers)
    assert again is not first and all(torch.equal(x, y) for x, y in zip(again, first))
    assert len(calls) == 1
    m.update(*next(batches(DATA, 0, 3)))
    second = m.compute()
    assert len(calls) == 2 and not torch.equal(first[0], second[0])
    assert second[0].sum() == 43
    m.reset()
    with pytest.warns(UserWarning, match="before the ``update``"):
        m.compute()
    assert len(calls) == 3  # reset dropped the cache


def test_update_after_compute_keeps_accumulating():
    m = feed(SumMetric(), 0, 20)
    m.compute()
    feed(m, 20, 40)
    assert torch.equal(m.compute()[0], feed(SumMetric()).compute()[0])


def test_compute_local_equals_compute_in_one_process_and_is_not_cached():
    m = feed(ExtremesMetric())
    a = m.compute_local()
    assert all(torch.equal(x, y) for x, y in zip(a, m.compute()))
    assert m.compute_local() is not a


def test_nested_super_compute_runs_once_per_level():
    class Doubled(SumMetric):
        def compute(self):
            counts, total = super().compute()
            return counts * 2, total

    m = feed(Doubled())
    assert torch.equal(m.compute()[0], 2 * torch.bincount(DATA[0], minlength=C))


def test_a_decorator_around_an_inherited_compute_runs_once_everywhere():
    """functools.wraps copies the wrapped compute's attributes: the decorator still runs, once,
    whether the result comes from compute(), compute_local(), forward or a collection."""
    import functools

    from torchtally import MetricCollection
    from torchtally.classification import MulticlassAccuracy

    def percent(fn):
        @functools.wraps(fn)
        def run(self):
            return fn(self) * 100

        return run

    class Percent(MulticlassAccuracy):
        compute = percent(MulticlassAccuracy.compute)

    preds, target = torch.tensor([0, 1, 2, 1]), torch.tensor([0, 1, 1, 1])
    metric = Percent(3, average="micro").update(preds, target)
    collection = MetricCollection({"p": Percent(3, average="micro")})
    collection.update(preds, target)
    for value in (
        metric.compute(),
        metric.compute_local(),
        Percent(3, average="micro")(preds, target),
        collection.compute()["p"],
        MetricCollection({"p": Percent(3, average="micro")})(preds, target)["p"],
    ):
        assert value.item() == pytest.approx(75.0)


def test_world_size_one_makes_no_collective():
    m = feed(SumMetric())
    with count_collectives() as counter:
        m.compute()
    assert counter.total == 0


def test_bad_update_leaves_state_unchanged():
    m = feed(SumMetric(), 0, 10)
    before = m.metric_state
    before = {k: v.clone() for k, v in before.items()}
    labels, scores, rows = DATA
    with pytest.raises(ValueError, match="labels"):
        m.update(torch.full((3,), C), scores[:3], rows[:3])
    assert all(torch.equal(before[k], v) for k, v in m.metric_state.items())


# -- state kinds -----------------------------------------------------------------------------


def test_cat_state_appends_and_reads_one_tensor():
    m = feed(CatMetric())
    rows, labels = m.compute()
    assert torch.equal(rows, DATA[2]) and torch.equal(labels, DATA[0])
    assert isinstance(m.rows, torch.Tensor) and m.rows.shape == (40, 3)


def test_cat_state_rejects_wrong_rows_and_stays_unchanged():
    m = feed(CatMetric(), 0, 10)
    with pytest.raises(TypeError, match="append_state\\('rows'\\): expected dtype torch.float32"):
        m.append_state("rows", torch.zeros(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="expected shape \\('N', 3\\)"):
        m.append_state("rows", torch.zeros(2, 4))
    with pytest.raises(ValueError, match="not a 'cat' state"):
        m.append_state("nope", torch.zeros(2, 3))
    with pytest.raises(ValueError, match="assigning\\('rows'\\)"):
        m.rows = torch.zeros(5)
    assert torch.equal(m.rows, DATA[2][:10])


def test_cat_state_empty_reads_as_default():
    m = CatMetric()
    assert m.rows.shape == (0, 3) and m.labels.dtype == torch.int64


def test_merge_state_values_is_required_for_merge_states():
    class NoHook(Metric):
        def __init__(self):
            super().__init__()
            self.add_state("m", torch.zeros(2, 3, dtype=torch.float64), reduce="merge")

        def update(self, x):
            self.m = self.m + x

        def compute(self):
            return self.m

    a, b = NoHook().update(1.0), NoHook().update(2.0)
    with pytest.raises(NotImplementedError, match="merge_state_values"):
        a.merge_state([b])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(name="1x", default=torch.zeros(1)), ValueError, "identifier"),
        (dict(name="update", default=torch.zeros(1)), ValueError, "clashes"),
        (dict(name="x", default=[0.0]), ValueError, "empty list"),  # torchmetrics: only an empty list
        (dict(name="x", default=0.0), TypeError, "torch.Tensor"),
        (dict(name="x", default=torch.zeros(1), reduce="mean"), ValueError, "reduce must be one of"),
        (dict(name="x", default=torch.zeros(1, dtype=torch.bool), reduce="sum"), ValueError, "bool"),
        (dict(name="x", default=torch.zeros(1, dtype=torch.complex64), reduce="max"), ValueError, "complex"),
        (dict(name="x", default=torch.zeros(1, dtype=torch.uint16), reduce="sum"), ValueError, "exactly"),
        (dict(name="x", default=torch.zeros(2, 3), reduce="cat"), ValueError, "0 rows"),
        (dict(name="x", default=torch.tensor(0.0), reduce="merge"), ValueError, "at least one dim"),
    ],
)
def test_add_state_rejects_bad_declarations(kwargs, error, match):
    m = SumMetric()
    with pytest.raises(error, match=match):
        m.add_state(**kwargs)
    assert m.state_names == ("counts", "total")


def test_add_state_twice_and_before_super_init():
    m = SumMetric()
    with pytest.raises(ValueError, match="already declared"):
        m.add_state("counts", torch.zeros(C, dtype=torch.int64))

    class Forgetful(Metric):
        def __init__(self):
            self.add_state("x", torch.zeros(1))

    with pytest.raises(RuntimeError, match="super\\(\\).__init__"):
        Forgetful()


# -- merge_state -----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [SumMetric, ExtremesMetric, CatMetric, MomentsMetric])
def test_merge_state_equals_one_metric_over_all_data(cls):
    whole = feed(cls())
    parts = [feed(cls(), 0, 13), feed(cls(), 13, 13), feed(cls(), 13, 29), feed(cls(), 29, 40)]
    other_states = [saved(p) for p in parts[1:]]
    merged = parts[0].merge_state(parts[1:])
    assert merged is parts[0]
    for got, want in zip(merged.compute(), whole.compute()):
        if want.dtype.is_floating_point:
            torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12 * float(want.abs().max()))
        else:
            assert torch.equal(got, want)
    for p, before in zip(parts[1:], other_states):  # the others are unchanged
        assert all(torch.equal(before[k], v) for k, v in p.metric_state.items())


def test_merge_state_rejects_different_states_and_stays_unchanged():
    a, b = feed(SumMetric(), 0, 10), feed(SumMetric(num_classes=C + 1), 10, 20)
    before = saved(a)
    with pytest.raises(ValueError, match="same states"):
        a.merge_state([b])
    with pytest.raises(ValueError, match="same states"):
        a.merge_state([ExtremesMetric()])
    assert states_equal(a, loaded(SumMetric(), before))


def test_merge_state_marks_updated():
    a = SumMetric()
    a.merge_state([feed(SumMetric(), 0, 5)])
    assert a.compute()[0].sum() == 5


def test_moments_merge_is_accurate_with_far_means():
    # Exact variance of a column around 1e3 with spread 3: Chan's merge keeps full precision.
    m = feed(MomentsMetric())
    _, var = m.compute()
    torch.testing.assert_close(var, DATA[1].var(dim=0), rtol=1e-12, atol=0)


# -- state_dict / clone / pickle / to --------------------------------------------------------


@pytest.mark.parametrize("cls", [SumMetric, ExtremesMetric, CatMetric, MomentsMetric])
def test_state_dict_roundtrip(cls):
    a = feed(cls())
    b = loaded(cls(), saved(a))
    assert states_equal(a, b)
    for x, y in zip(a.compute(), b.compute()):
        assert torch.equal(x, y)


def test_state_dict_is_a_copy():
    m = feed(SumMetric())
    sd = saved(m)
    sd["counts"] += 100
    assert m.counts.sum() == 40


def test_load_state_dict_rejects_bad_entries_and_stays_unchanged():
    m = feed(SumMetric(), 0, 10)
    before = saved(m)
    bad_shape = dict(before, counts=torch.zeros(C + 1, dtype=torch.int64))
    with pytest.raises(ValueError, match="load_state_dict\\('counts'\\): expected dtype torch.int64 shape \\(4,\\)"):
        m.load_state_dict(bad_shape)
    bad_dtype = dict(before, total=torch.zeros(D, dtype=torch.float32))
    with pytest.raises(ValueError, match="'total'"):
        m.load_state_dict(bad_dtype)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "total"'):  # persistent states
        m.load_state_dict({"counts": before["counts"]})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
        m.load_state_dict(dict(before, extra=torch.zeros(1)))
    assert states_equal(m, loaded(SumMetric(), before))
    with pytest.raises(RuntimeError, match="Missing"):  # nothing of a refused state_dict is loaded
        m.load_state_dict({"counts": torch.ones(C, dtype=torch.int64)})
    assert states_equal(m, loaded(SumMetric(), before))
    m.load_state_dict({"counts": torch.ones(C, dtype=torch.int64)}, strict=False)
    assert torch.equal(m.counts, torch.ones(C, dtype=torch.int64))


def test_clone_is_independent():
    a = feed(CatMetric(), 0, 10)
    b = a.clone()
    feed(b, 10, 20)
    assert a.rows.shape[0] == 10 and b.rows.shape[0] == 20


@pytest.mark.parametrize("cls", [SumMetric, CatMetric, MomentsMetric])
def test_pickle_roundtrip_keeps_state_and_behaviour(cls):
    a = feed(cls(), 0, 20)
    b = pickle.loads(pickle.dumps(a))
    assert states_equal(a, b)
    feed(a, 20, 40)
    feed(b, 20, 40)
    for x, y in zip(a.compute(), b.compute()):
        assert torch.equal(x, y)


def test_to_moves_states_and_defaults():
    m = feed(CatMetric(), 0, 5).to("meta")
    assert m.rows.device.type == "meta" and m.device.type == "meta"
    m.reset()  # the defaults moved too
    assert m.rows.device.type == "meta"
    s = feed(SumMetric(), 0, 5).to("meta")
    assert s.counts.device.type == "meta" and s.total.device.type == "meta"


def test_sync_options_are_validated():
    with pytest.raises(ValueError, match="sync_timeout must be > 0"):
        SumMetric(sync_timeout=0)
    with pytest.raises(TypeError, match="sync_timeout"):
        SumMetric(sync_timeout="60")
    with pytest.raises(ValueError, match="recipient_rank"):
        SumMetric(recipient_rank=-1)


# -- the sync plan (no processes needed) -----------------------------------------------------


def test_plan_packs_by_transport_dtype_and_op():
    specs = [
        StateSpec("a", "sum", torch.int64, (3,)),
        StateSpec("b", "sum", torch.int32, (2, 2)),
        StateSpec("c", "sum", torch.uint8, ()),
        StateSpec("d", "sum", torch.float64, (5,)),
        StateSpec("e", "max", torch.float64, ()),
        StateSpec("f", "max", torch.bool, (2,)),
        StateSpec("g", "cat", torch.float32, (3,)),
        StateSpec("h", "merge", torch.float64, (6,)),
    ]
    plan = SyncPlan(specs)
    groups = {(g.dtype, g.reduce): g.indices for g in plan.fixed_groups}
    assert groups == {
        (torch.int64, "sum"): (0, 1, 2),
        (torch.float64, "sum"): (3,),
        (torch.float64, "max"): (4,),
        (torch.int64, "max"): (5,),
    }
    assert plan.var_indices == (6, 7) and plan.row_bytes == (12, 48)
    assert plan.collectives_per_sync == 1 + 4 + 1
    assert transport_dtype(torch.float16) == torch.float32


def test_plan_groups_python_numbers_by_the_kind_the_ranks_agree_on():
    from torchtally.sync.plan import number_spec

    # 1000 int64 do not fit the header: the data goes by all_reduce, grouped by agreed kinds.
    plan = SyncPlan([StateSpec("t", "sum", torch.int64, (1000,)), number_spec("n", "sum"), number_spec("m", "max")])
    assert "n: sum number ()" in plan.describe()
    # Kinds (0 bool, 1 int, 2 float) are agreed in the header; the plan is the same for all.
    groups = {(g.dtype, g.reduce): (g.indices, g.out_dtypes) for g in plan.fixed_groups_for([1, 0])}
    assert groups == {
        (torch.int64, "sum"): ((0, 1), (torch.int64, torch.int64)),
        (torch.int64, "max"): ((2,), (torch.bool,)),
    }
    groups = {(g.dtype, g.reduce): (g.indices, g.out_dtypes) for g in plan.fixed_groups_for([2, 2])}
    assert groups == {
        (torch.int64, "sum"): ((0,), (torch.int64,)),
        (torch.float64, "sum"): ((1,), (torch.float64,)),
        (torch.float64, "max"): ((2,), (torch.float64,)),
    }
    assert plan.collectives_per_sync == 1 + 4  # header + int64/float64 x sum/max at most
    small = SyncPlan([StateSpec("t", "sum", torch.int64, (2,)), number_spec("n", "sum"), number_spec("m", "max")])
    assert small.small is not None and small.collectives_per_sync == 1  # everything in the header
    with pytest.raises(ValueError, match="Python number reduces by one of"):
        number_spec("x", "cat")


def test_plan_collectives_do_not_grow_with_states():
    few = SyncPlan([StateSpec(f"s{i}", "sum", torch.int64, (400,)) for i in range(2)])
    many = SyncPlan([StateSpec(f"s{i}", "sum", torch.int64, (400,)) for i in range(200)])
    assert few.collectives_per_sync == many.collectives_per_sync == 2  # header + one all_reduce


def test_plan_fingerprint_depends_on_declarations_only():
    def plan(shape=(3,), label="a", reduce="sum"):
        return SyncPlan([StateSpec(label, reduce, torch.int64, shape)])

    assert plan().fingerprint == plan().fingerprint
    assert (
        len(
            {
                plan().fingerprint,
                plan(shape=(4,)).fingerprint,
                plan(label="b").fingerprint,
                plan(reduce="max").fingerprint,
            }
        )
        == 4
    )
    with pytest.raises(ValueError, match="unique"):
        SyncPlan([StateSpec("a", "sum", torch.int64, ()), StateSpec("a", "max", torch.int64, ())])


def test_chan_merge_helper_matches_direct_moments():
    # The toy merge used by the distributed tests is itself right.
    x = DATA[1]
    parts = []
    for i in range(0, 40, 9):
        y = x[i : i + 9]
        parts.append(
            torch.stack(
                [torch.full((D,), float(len(y)), dtype=torch.float64), y.mean(0), ((y - y.mean(0)) ** 2).sum(0)], dim=1
            )
        )
    merged = chan_merge(parts)
    torch.testing.assert_close(merged[:, 2] / 39, x.var(dim=0), rtol=1e-12, atol=0)
