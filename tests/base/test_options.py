"""Options never combine silently (single process): what counts as an option, exact
descriptions, and merge_state / load_state_dict refusing metrics configured differently. The
sync across ranks: tests/distributed/test_option_mismatch.py."""

import pickle

import pytest
import torch

from torchtally import Metric, MetricCollection, all_reduced_synchronized
from torchtally.aggregation import MeanMetric
from torchtally.base.options import find_options
from torchtally.classification import (
    BinaryAccuracy,
    BinaryAUROC,
    MulticlassAccuracy,
    MulticlassF1Score,
    MulticlassPrecision,
)
from torchtally.regression import R2Score
from torchtally.sync.fingerprint import describe_value


def _binary_batch(seed=0, n=50):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, generator=g), torch.randint(0, 2, (n,), generator=g)


def _multiclass_batch(seed=0, n=60, c=4):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, c, generator=g), torch.randint(0, c, (n,), generator=g)


class Scaled(Metric):
    """A user metric with options of its own: a number, a string and a tuple."""

    def __init__(self, scale=1.0, mode="sum", window=(1, 2), **kwargs):
        super().__init__(**kwargs)
        self.scale, self.mode, self.window = scale, mode, window
        self.add_state("total", torch.tensor(0.0, dtype=torch.float64))

    def update(self, x):
        self.total = self.total + x.sum(dtype=torch.float64)
        self.last_batch = int(x.numel())  # added by update: not an option

    def compute(self):
        return self.total * self.scale


# -- what an option is, described exactly ----------------------------------------------------


def test_every_option_of_the_builtin_metrics_is_described():
    opts = MulticlassAccuracy(4, top_k=2, average="micro", ignore_index=0).described_options
    for name, text in {
        "num_classes": "4",
        "top_k": "2",
        "average": "'micro'",
        "ignore_index": "0",
        "multidim_average": "'global'",
        "zero_division": "0.0",
    }.items():
        assert opts[name] == text, (name, opts)
    assert "thresholds" in BinaryAUROC(thresholds=[0.1, 0.5, 0.9]).described_options
    assert BinaryAccuracy(threshold=0.7).described_options["threshold"] == "0.7"
    r2 = R2Score(adjusted=3, multioutput="raw_values").described_options
    assert (r2["adjusted"], r2["multioutput"]) == ("3", "'raw_values'")
    assert MeanMetric(nan_strategy="ignore").described_options["nan_strategy"] == "'ignore'"
    for runtime in ("device", "sync_timeout", "process_group", "validate_args", "compute_on_cpu", "training"):
        assert runtime not in opts


def test_descriptions_are_exact_and_readable():
    edges = torch.tensor([0.1, 0.5, 0.9])
    assert describe_value(edges) == "tensor([0.1, 0.5, 0.9], float32)"
    # The next float32 after 0.5 reads differently: equal descriptions mean bit-equal values.
    nudged = edges.clone()
    nudged[1] = torch.nextafter(nudged[1], torch.tensor(1.0))
    assert describe_value(nudged) != describe_value(edges)
    assert describe_value(torch.tensor([0.1], dtype=torch.float64)) == "tensor([0.1], float64)"
    assert describe_value(0.1) != describe_value(0.1 + 2**-56)
    assert describe_value(-0.0) != describe_value(0.0)
    # Long tensors: a few values and a digest of all bytes, so one changed value anywhere shows.
    long = torch.linspace(0, 1, 1000)
    changed = long.clone()
    changed[500] = torch.nextafter(changed[500], torch.tensor(2.0))
    assert "1000 values" in describe_value(long) and describe_value(long) != describe_value(changed)
    assert describe_value(lambda: 0) is None and describe_value(torch.nn.Linear(1, 1)) is None


def test_a_user_metric_options_are_its_public_plain_attributes_set_before_the_first_update():
    m = Scaled(scale=2.0, mode="mean", window=(3, 4))
    m.update(torch.ones(3))
    assert m.described_options == {"scale": "2.0", "mode": "'mean'", "window": "[3, 4]"}


def test_option_names_lists_the_options_explicitly():
    class Listed(Scaled):
        option_names = ("scale",)

    assert Listed(scale=3.0, mode="x").described_options == {"scale": "3.0"}


def test_an_option_assigned_later_is_described_again_and_drops_the_cached_result():
    m = MulticlassAccuracy(4, average="macro")
    m.update(*_multiclass_batch())
    macro = m.compute()
    m.average = "micro"
    assert m.described_options["average"] == "'micro'"
    micro = m.compute()  # not the cached macro result
    want = MulticlassAccuracy(4, average="micro").update(*_multiclass_batch()).compute()
    assert torch.equal(micro, want) and not torch.equal(micro, macro)


def test_a_decorated_class_options_are_the_attributes_holding_its_constructor_arguments():
    class Base:
        def __init__(self, average="macro"):
            self._average = average  # ignite's style: a private attribute named after the argument

    @all_reduced_synchronized("correct", "seen")
    class Acc(Base):
        def __init__(self, threshold=0.5, weights=None, device="cpu"):
            super().__init__("micro")
            self.threshold, self.weights, self.device = threshold, torch.ones(2), device
            self.name, self.correct, self.seen, self.local_batches = "acc", 0, 0, 7  # not arguments

        def compute(self):
            return self.correct / max(self.seen, 1)

    found = find_options(Acc(0.25), exclude=("correct", "seen"), decorated=True)
    assert found == {"_average": "'micro'", "threshold": "0.25"}  # weights: a tensor is state


# -- merge_state ----------------------------------------------------------------------------

MISMATCHES = [
    ("thresholds", lambda v: BinaryAUROC(thresholds=v), [0.1, 0.5, 0.9], [0.2, 0.3, 0.4], _binary_batch),
    ("threshold", lambda v: BinaryAccuracy(threshold=v), 0.5, 0.7, _binary_batch),
    ("ignore_index", lambda v: MulticlassAccuracy(4, ignore_index=v), None, 0, _multiclass_batch),
    ("top_k", lambda v: MulticlassAccuracy(4, top_k=v), 2, 3, _multiclass_batch),
    ("average", lambda v: MulticlassAccuracy(4, average=v), "macro", "micro", _multiclass_batch),
    ("scale", lambda v: Scaled(scale=v), 1.0, 2.0, lambda seed=0: (torch.arange(4.0) + seed,)),
]


@pytest.mark.parametrize("option,make,a,b,batch", MISMATCHES, ids=[m[0] for m in MISMATCHES])
def test_merge_state_refuses_a_metric_configured_differently(option, make, a, b, batch):
    mine, other = make(a).update(*batch(0)), make(b).update(*batch(1))
    before = {k: v.clone() for k, v in mine.metric_state.items()}
    with pytest.raises(ValueError, match=f"option '{option}' is .* here, .* in the .* merged in") as info:
        mine.merge_state(other)
    assert type(mine).__name__ in str(info.value)
    assert describe_value(a) in str(info.value) or option == "thresholds"
    assert all(torch.equal(before[k], v) for k, v in mine.metric_state.items())  # nothing merged
    make(a).update(*batch(0)).merge_state(make(a).update(*batch(1)))  # alike: merges


def test_merge_state_of_thresholds_names_both_values():
    mine = BinaryAUROC(thresholds=[0.1, 0.5, 0.9]).update(*_binary_batch())
    with pytest.raises(ValueError) as info:
        mine.merge_state(BinaryAUROC(thresholds=[0.2, 0.3, 0.4]).update(*_binary_batch(1)))
    assert "tensor([0.1, 0.5, 0.9], float32)" in str(info.value)
    assert "tensor([0.2, 0.3, 0.4], float32)" in str(info.value)


def test_collection_merge_state_checks_metrics_that_share_state():
    def coll(average):
        return MetricCollection({"acc": MulticlassAccuracy(4), "f1": MulticlassF1Score(4, average=average)})

    mine = coll("macro").update(*_multiclass_batch())
    assert mine.compute_groups == {0: ["acc", "f1"]}  # f1 holds no state of its own
    before = mine["acc"].confmat.clone()
    with pytest.raises(ValueError, match="metric 'f1'.*option 'average' is 'macro' here, 'micro' in"):
        mine.merge_state(coll("micro").update(*_multiclass_batch(1)))
    assert torch.equal(mine["acc"].confmat, before)


# -- load_state_dict ------------------------------------------------------------------------


def _saved(metric):
    metric.persistent(True)
    return metric.state_dict()


def test_load_state_dict_refuses_states_saved_under_other_options():
    sd = _saved(BinaryAUROC(thresholds=[0.1, 0.5, 0.9]).update(*_binary_batch()))
    target = BinaryAUROC(thresholds=[0.2, 0.3, 0.4]).update(*_binary_batch(1))
    before = target.hist.clone()
    with pytest.raises(
        ValueError,
        match="load_state_dict: BinaryAUROC .*option 'thresholds' is "
        r"tensor\(\[0.2, 0.3, 0.4\], float32\) here, "
        r"tensor\(\[0.1, 0.5, 0.9\], float32\) in the state_dict",
    ):
        target.load_state_dict(sd)
    assert torch.equal(target.hist, before)
    same = BinaryAUROC(thresholds=[0.1, 0.5, 0.9])
    same.load_state_dict(sd)
    assert torch.equal(same.hist, sd["hist"])


def test_load_state_dict_options_survive_torch_save(tmp_path):
    sd = _saved(MulticlassAccuracy(4, average="micro").update(*_multiclass_batch()))
    torch.save(sd, tmp_path / "m.pt")
    with pytest.raises(ValueError, match="option 'average'"):
        MulticlassAccuracy(4, average="macro").load_state_dict(torch.load(tmp_path / "m.pt"))
    with pytest.raises(ValueError, match="option 'average'"):
        MulticlassAccuracy(4, average="macro").load_state_dict(pickle.loads(pickle.dumps(sd)))


def test_a_state_dict_without_options_loads_unchecked():
    """Saved before options were recorded, or rebuilt as a plain dict: no metadata, no check."""
    sd = _saved(BinaryAccuracy(threshold=0.7).update(*_binary_batch()))
    target = BinaryAccuracy(threshold=0.5)
    target.load_state_dict(dict(sd))
    assert torch.equal(target.confmat, sd["confmat"])


def test_a_module_holding_a_metric_without_states_in_its_state_dict_loads_whatever_the_options():
    """Non-persistent states (the default) are not in the state dict: nothing to check."""
    model = torch.nn.Module()
    model.acc = BinaryAccuracy(threshold=0.7)
    sd = model.state_dict()
    model2 = torch.nn.Module()
    model2.acc = BinaryAccuracy(threshold=0.5)
    model2.load_state_dict(sd)


def test_collection_load_state_dict_checks_every_metric_before_assigning_any():
    def coll(average):
        c = MetricCollection(
            {
                "acc": MulticlassAccuracy(4),
                "top2": MulticlassAccuracy(4, top_k=2),
                "prec": MulticlassPrecision(4, average=average),
            }
        )
        c.persistent(True)
        return c

    source = coll("micro").update(*_multiclass_batch())
    sd = source.state_dict()
    target = coll("macro")
    with pytest.raises(ValueError, match="metric 'prec'.*option 'average' is 'macro' here, 'micro' in"):
        target.load_state_dict(sd)
    assert target["acc"].confmat.sum() == 0 and target["top2"].topk.sum() == 0  # nothing assigned
    alike = coll("micro")
    alike.load_state_dict(sd)
    assert torch.equal(alike.compute()["prec"], source.compute()["prec"])
