"""Metric and MetricCollection as torch.nn.Modules with torchmetrics' interface: forward, the
base keyword arguments, state_dict with persistent, placement through nn.Module, set_dtype,
composition, torchmetrics' manual sync, kwargs filtering in a collection.
Distributed behaviour of these (dist_sync_on_step, dist_sync_fn): tests/distributed/test_metric_module_sync.py."""

import copy
import pickle
import warnings

import pytest
import torch
from support.toy_metrics import C, CatMetric, SumMetric, make_data
from torch import nn

from torchtally import Metric, MetricCollection
from torchtally.base.composition import CompositionalMetric
from torchtally.classification import BinaryPrecision, BinaryRecall, MulticlassAccuracy, MulticlassF1Score

DATA = make_data(40, seed=3)


class Mean(Metric):
    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("total", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("count", torch.tensor(0), reduce="sum")

    def update(self, x, weight=None):
        self.total = self.total + x.sum(dtype=torch.float64)
        self.count = self.count + x.numel()

    def compute(self):
        return (self.total / self.count).to(self.dtype)


class Largest(Mean):
    """A metric whose update reads its accumulated state: forward must update twice."""

    full_state_update = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("best", torch.tensor(float("-inf"), dtype=torch.float64), reduce="max")
        self.add_state("improved", torch.tensor(0), reduce="sum")

    def update(self, x, weight=None):
        batch_max = x.max().double()
        self.improved = self.improved + int(batch_max > self.best)
        self.best = torch.maximum(self.best, batch_max)

    def compute(self):
        return self.improved


# -- nn.Module ---------------------------------------------------------------------------------


def test_metrics_are_modules_of_a_model_and_follow_it():
    model = nn.Sequential(nn.Linear(2, 2))
    model.acc = MulticlassAccuracy(3)
    model.metrics = MetricCollection({"f1": MulticlassF1Score(3), "acc": MulticlassAccuracy(3)})
    assert isinstance(model.acc, nn.Module) and isinstance(model.metrics, nn.Module)
    names = {n for n, _ in model.named_modules()}
    assert {"acc", "metrics", "metrics.f1", "metrics.acc"} <= names
    model.to("meta")  # Linear's parameters and the metrics' states move together
    assert model.acc.device == torch.device("meta") and model.acc.confmat.device == torch.device("meta")
    assert model.metrics["f1"].confmat is model.metrics["acc"].confmat  # still shared after the move
    assert model.metrics["acc"].confmat.device == torch.device("meta")


def test_states_stay_out_of_state_dict_unless_persistent():
    model = nn.Module()
    model.acc = MulticlassAccuracy(3).update(torch.tensor([0, 1]), torch.tensor([0, 2]))
    assert model.state_dict() == {}
    model.acc.persistent(True)
    saved = model.state_dict()
    assert list(saved) == ["acc.confmat"] and int(saved["acc.confmat"].sum()) == 2
    saved["acc.confmat"] += 1  # a copy
    assert int(model.acc.confmat.sum()) == 2
    fresh = nn.Module()
    fresh.acc = MulticlassAccuracy(3)
    fresh.load_state_dict(model.state_dict())
    assert torch.equal(fresh.acc.confmat, model.acc.confmat)
    assert float(fresh.acc.compute()) == float(model.acc.compute())


def test_dtype_casts_keep_exact_accumulators_and_set_dtype_sets_the_result_dtype():
    m = Mean().update(torch.tensor([1.0, 2.0]))
    for cast in (m.double, m.half, m.float, m.bfloat16):
        assert cast() is m and m.dtype == torch.float32  # as torchmetrics: no cast
    assert m.compute().dtype == torch.float32
    m.set_dtype(torch.float64)
    assert m.dtype == torch.float64 and m.compute().dtype == torch.float64
    assert m.total.dtype == torch.float64 and m.count.dtype == torch.int64
    m.to(torch.float16)  # .to(dtype) sets the result dtype too, as torchmetrics' states follow it
    assert m.dtype == torch.float16 and m.count.dtype == torch.int64
    model = nn.Sequential(nn.Linear(2, 2))
    model.m = Mean()
    model.double()  # a parent's cast leaves the metric alone (torchmetrics)
    assert model[0].weight.dtype == torch.float64 and model.m.dtype == torch.float32
    with pytest.raises(ValueError, match="floating-point"):
        m.set_dtype(torch.int64)


def test_class_constants_cannot_be_set_on_an_instance():
    m = Mean()
    with pytest.raises(RuntimeError, match="Can't change const `higher_is_better`"):
        m.higher_is_better = True


# -- forward -----------------------------------------------------------------------------------


def test_forward_returns_the_batch_value_and_accumulates():
    m = Mean()
    values = [m(x) for x in (torch.tensor([1.0, 3.0]), torch.tensor([10.0]), torch.tensor([0.0, 0.0, 2.0]))]
    assert [float(v) for v in values] == pytest.approx([2.0, 10.0, 2.0 / 3])
    assert float(m.compute()) == pytest.approx(16.0 / 6)
    assert m.update_count == 3 and m.update_called
    m.reset()
    assert m.update_count == 0 and not m.update_called


def test_forward_of_a_metric_that_reads_its_state_updates_twice():
    m = Largest()
    # The batch value comes from fresh states (as torchmetrics): every batch improves on -inf.
    assert [int(m(torch.tensor(v))) for v in ([1.0], [0.5], [2.0], [3.0])] == [1, 1, 1, 1]
    # The accumulated state saw the stream in order (1.0, 2.0 and 3.0 improve; 0.5 does not);
    # combining the batch states by their reduce instead would have summed 4.
    assert int(m.compute()) == 3
    assert m.update_count == 4


def test_a_rejected_forward_leaves_the_state_unchanged():
    m = SumMetric()
    labels, scores, rows = DATA
    m(labels[:5], scores[:5], rows[:5])
    before = {k: v.clone() for k, v in m.metric_state.items()}
    with pytest.raises(ValueError, match="labels"):
        m(torch.full((3,), C), scores[:3], rows[:3])
    assert all(torch.equal(before[k], v) for k, v in m.metric_state.items())
    assert m.update_count == 1


def test_forward_of_cat_states_keeps_every_row_in_order():
    m = CatMetric()
    labels, scores, rows = DATA
    for lo in range(0, 40, 10):
        batch = labels[lo : lo + 10], scores[lo : lo + 10], rows[lo : lo + 10]
        got_rows, got_labels = m(*batch)
        want_rows, want_labels = CatMetric().update(*batch).compute()
        assert torch.equal(got_rows, want_rows) and torch.equal(got_labels, want_labels)
    whole = CatMetric().update(labels, scores, rows).compute()
    assert all(torch.equal(a, b) for a, b in zip(m.compute(), whole))


def test_collection_forward_updates_each_shared_state_once():
    preds = torch.randn(64, 4).softmax(1)
    target = torch.randint(0, 4, (64,))
    coll = MetricCollection([MulticlassAccuracy(4), MulticlassF1Score(4)], prefix="val_", postfix="/x")
    per_batch = [coll(preds[i : i + 16], target[i : i + 16]) for i in range(0, 64, 16)]
    for i, values in enumerate(per_batch):
        alone = MulticlassF1Score(4).update(preds[16 * i : 16 * i + 16], target[16 * i : 16 * i + 16]).compute()
        assert sorted(values) == ["val_MulticlassAccuracy/x", "val_MulticlassF1Score/x"]
        assert float(values["val_MulticlassF1Score/x"]) == pytest.approx(float(alone))
    assert coll["MulticlassF1Score"].confmat is coll["MulticlassAccuracy"].confmat
    assert int(coll["MulticlassAccuracy"].confmat.sum()) == 64  # each batch counted once
    whole = MulticlassAccuracy(4).update(preds, target).compute()
    assert float(coll.compute()["val_MulticlassAccuracy/x"]) == pytest.approx(float(whole))
    assert coll["val_MulticlassAccuracy/x"] is coll["MulticlassAccuracy"]


# -- base keyword arguments ------------------------------------------------------------------------


def test_base_keyword_arguments_are_checked_as_torchmetrics_does():
    m = Mean(compute_on_cpu=True, dist_sync_on_step=True, compute_with_cache=False, sync_on_compute=False)
    assert (m.compute_on_cpu, m.dist_sync_on_step, m.compute_with_cache, m.sync_on_compute) == (
        True,
        True,
        False,
        False,
    )
    for bad in ("compute_on_cpu", "dist_sync_on_step", "compute_with_cache", "sync_on_compute"):
        with pytest.raises(ValueError, match=f"`{bad}` to be a `bool`"):
            Mean(**{bad: 1})
    with pytest.raises(ValueError, match="`dist_sync_fn` to be a callable"):
        Mean(dist_sync_fn=3)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: `bogus`"):
        Mean(bogus=1)


def test_compute_with_cache_false_recomputes():
    calls = []

    class Counting(Mean):
        def compute(self):
            calls.append(1)
            return super().compute()

    m = Counting(compute_with_cache=False).update(torch.tensor([1.0]))
    m.compute()
    m.compute()
    assert len(calls) == 2
    cached = Counting().update(torch.tensor([1.0]))
    cached.compute()
    cached.compute()
    assert len(calls) == 3


def test_compute_on_cpu_moves_cat_rows_to_the_cpu(lazy_device):
    m = CatMetric(compute_on_cpu=True)
    labels, scores, rows = DATA
    m.update(labels[:5].to(lazy_device), scores[:5].to(lazy_device), rows[:5].to(lazy_device))
    assert m.device == lazy_device  # the metric follows its input ...
    assert all(p.device.type == "cpu" for parts in m._cat_chunks.values() for p in parts)  # ... its rows do not
    kept = CatMetric().update(labels[:5].to(lazy_device), scores[:5].to(lazy_device), rows[:5].to(lazy_device))
    assert all(p.device == lazy_device for parts in kept._cat_chunks.values() for p in parts)


def test_distributed_available_fn_false_skips_the_sync():
    asked = []
    m = Mean(distributed_available_fn=lambda: asked.append(1) or False).update(torch.tensor([2.0]))
    assert float(m.compute()) == 2.0 and asked == [1]


def test_sync_and_unsync_without_a_process_group_are_no_ops():
    m = Mean().update(torch.tensor([2.0]))
    m.sync()  # not distributed: nothing to do, as torchmetrics
    with pytest.raises(RuntimeError, match="already been un-synced"):
        m.unsync()
    with m.sync_context():
        assert float(m.compute()) == 2.0


def test_sync_with_a_gather_function_replaces_states_until_unsync():
    m = Mean().update(torch.tensor([2.0]))
    twice = lambda tensor, group=None: [tensor, tensor]  # noqa: E731  (a "world" of 2 identical ranks)
    m.sync(dist_sync_fn=twice, distributed_available=lambda: True)
    assert int(m.count) == 2 and float(m.total) == 4.0
    with pytest.raises(RuntimeError, match="already been synced"):
        m.sync(dist_sync_fn=twice, distributed_available=lambda: True)
    with pytest.raises(RuntimeError, match="shouldn't be synced"):
        m(torch.tensor([1.0]))
    m.unsync()
    assert int(m.count) == 1 and float(m.total) == 2.0


# -- composition -----------------------------------------------------------------------------------


def test_arithmetic_builds_a_compositional_metric():
    preds, target = torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1])
    mean_pr = (BinaryPrecision() + BinaryRecall()) / 2
    assert isinstance(mean_pr, CompositionalMetric) and isinstance(mean_pr, nn.Module)
    batch_value = mean_pr(preds, target)
    p, r = BinaryPrecision().update(preds, target).compute(), BinaryRecall().update(preds, target).compute()
    assert float(batch_value) == pytest.approx(float((p + r) / 2))
    mean_pr.update(preds, target)
    assert float(mean_pr.compute()) == pytest.approx(float((p + r) / 2))
    for expression, expected in (
        (lambda m: 1 - m, 1 - p),
        (lambda m: m * 3, p * 3),
        (lambda m: -m, -p),
        (lambda m: abs(-m), p),
        (lambda m: m**2, p**2),
        (lambda m: 2 / m, 2 / p),
        (lambda m: m > 0.5, p > 0.5),
    ):
        composed = expression(BinaryPrecision())
        composed.update(preds, target)
        assert torch.equal(composed.compute(), torch.as_tensor(expected)), expression
    mean_pr.reset()
    assert BinaryPrecision() != BinaryPrecision()  # identity, not a composition
    with pytest.raises(TypeError, match="not iterable"):
        list(BinaryPrecision())


def test_indexing_a_metric_result():
    m = MulticlassAccuracy(3, average=None)[1]
    m.update(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
    assert float(m.compute()) == 1.0


# -- collections: construction and keyword arguments -------------------------------------------


class Weighted(Mean):
    def update(self, x, weight=None):
        w = torch.ones_like(x) if weight is None else weight
        self.total = self.total + (x * w).sum(dtype=torch.float64)
        self.count = self.count + int(w.sum())


def test_collection_passes_each_metric_the_keywords_its_update_takes():
    class Plain(Mean):
        def update(self, x):
            super().update(x)

    coll = MetricCollection({"plain": Plain(), "weighted": Weighted()})
    out = coll(torch.tensor([1.0, 3.0]), weight=torch.tensor([1.0, 3.0]))
    assert float(out["plain"]) == 2.0 and float(out["weighted"]) == 2.5


def test_collection_forms_prefix_postfix_nesting_and_groups():
    a, b = MulticlassAccuracy(3), MulticlassF1Score(3)
    nested = MetricCollection(
        [
            MetricCollection([a, b], postfix="_macro"),
            MetricCollection([MulticlassAccuracy(3, average="micro")], postfix="_micro"),
        ],
        prefix="val/",
    )
    assert list(nested.keys(keep_base=True)) == [
        "MulticlassAccuracy_macro",
        "MulticlassF1Score_macro",
        "MulticlassAccuracy_micro",
    ]
    out = nested(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2]))
    assert sorted(out) == [
        "val/MulticlassAccuracy_macro",
        "val/MulticlassAccuracy_micro",
        "val/MulticlassF1Score_macro",
    ]
    assert nested.compute_groups == {
        0: ["MulticlassAccuracy_macro", "MulticlassF1Score_macro", "MulticlassAccuracy_micro"]
    }
    in_dict = MetricCollection({"b": MulticlassF1Score(3), "a": MulticlassAccuracy(3)})
    assert list(in_dict.keys()) == ["a", "b"]  # sorted, as torchmetrics
    none_shared = MetricCollection({"b": MulticlassF1Score(3), "a": MulticlassAccuracy(3)}, compute_groups=False)
    assert none_shared.compute_groups == {0: ["a"], 1: ["b"]}
    explicit = MetricCollection(
        {"b": MulticlassF1Score(3), "a": MulticlassAccuracy(3), "c": MulticlassAccuracy(4)}, compute_groups=[["a", "b"]]
    )
    assert explicit.compute_groups == {0: ["a", "b"], 1: ["c"]}
    with pytest.raises(ValueError, match="their state options differ"):
        MetricCollection(
            {"a": MulticlassAccuracy(3), "b": MulticlassAccuracy(3, ignore_index=0)}, compute_groups=[["a", "b"]]
        )
    with pytest.raises(ValueError, match="does not match a metric"):
        MetricCollection({"a": MulticlassAccuracy(3)}, compute_groups=[["a", "z"]])
    with pytest.raises(ValueError, match="Expected input `prefix` to be a string"):
        MetricCollection([MulticlassAccuracy(3)], prefix=1)


def test_add_metrics_clone_items_and_additional_positional_metrics():
    coll = MetricCollection(MulticlassAccuracy(3), MulticlassF1Score(3))
    assert list(coll.keys()) == ["MulticlassAccuracy", "MulticlassF1Score"]
    coll.add_metrics({"extra": MulticlassAccuracy(3, average="micro")})
    assert coll.compute_groups == {0: ["MulticlassAccuracy", "MulticlassF1Score", "extra"]}
    with pytest.raises(ValueError, match="already exists"):
        coll.add_metrics({"extra": MulticlassAccuracy(3)})
    twin = coll.clone(prefix="test_")
    assert list(twin.keys())[0] == "test_MulticlassAccuracy" and list(coll.keys())[0] == "MulticlassAccuracy"
    assert [k for k, _ in twin.items(keep_base=True)] == list(coll.keys())
    with pytest.raises(ValueError, match="not compatible with the first passed dictionary"):
        MetricCollection({"a": MulticlassAccuracy(3)}, MulticlassF1Score(3))


def test_copies_and_pickles_keep_working():
    m = Mean()
    m(torch.tensor([1.0, 2.0]))
    for dup in (copy.deepcopy(m), pickle.loads(pickle.dumps(m)), m.clone()):
        assert isinstance(dup, nn.Module) and dup.update_count == 1
        dup(torch.tensor([4.0]))
        assert float(dup.compute()) == pytest.approx(7.0 / 3)
    assert float(m.compute()) == 1.5


def test_torchtally_exports_the_module_paths():
    import torchtally.aggregation
    import torchtally.classification
    import torchtally.functional.classification
    import torchtally.regression

    assert torchtally.classification.MulticlassAccuracy is torchtally.MulticlassAccuracy
    assert torchtally.classification.BinaryAUROC is torchtally.BinaryAUROC
    assert torchtally.regression.R2Score is torchtally.R2Score
    assert torchtally.aggregation.MeanMetric is torchtally.MeanMetric
    assert callable(torchtally.functional.classification.binary_auroc)


def test_metrics_and_collections_can_be_scripted_as_torchmetrics_ones():
    """torchmetrics' tester runs torch.jit.script(metric): forward is left unscripted."""
    from torchtally.aggregation import CatMetric as Cat
    from torchtally.aggregation import MeanMetric
    from torchtally.classification import BinaryAUROC
    from torchtally.regression import MeanSquaredError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for metric in (
            MulticlassAccuracy(3),
            BinaryAUROC(),
            MeanSquaredError(),
            MeanMetric(),
            Cat(),
            MetricCollection([MulticlassAccuracy(3), MulticlassF1Score(3)], prefix="p_"),
        ):
            torch.jit.script(metric)


def test_a_collection_forward_whose_merge_is_refused_keeps_every_metric_as_before():
    from torchtally.regression import MeanSquaredError, R2Score

    coll = MetricCollection({"r2": R2Score(multioutput="raw_values"), "mse": MeanSquaredError()})
    preds, target = torch.randn(6, 3), torch.randn(6, 3)
    coll(preds, target)
    with pytest.raises(ValueError, match="outputs"):
        coll(torch.randn(6), torch.randn(6))  # a valid batch alone, not with the earlier ones
    got = coll.compute()
    assert torch.equal(got["mse"], MeanSquaredError().update(preds, target).compute())
    assert torch.equal(got["r2"], R2Score(multioutput="raw_values").update(preds, target).compute())
    assert coll["mse"].update_count == 1
