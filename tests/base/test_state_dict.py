"""load_state_dict validates what it loads.

A loaded state is stored as a C-contiguous copy of its own (a transposed confusion matrix was
accepted as it was, and every later update failed on it); entries of the wrong dtype, shape or
device kind, and states that break a metric's invariants (``check_state_invariants``: exact
curves' scores and labels of equal length with labels in range, counts >= 0, ...), raise at
load naming the key, and leave the metric exactly as it was. ``merge_state`` of a dict and
MetricCollection.load_state_dict apply the same checks.
"""

import warnings

import pytest
import torch
from support.metric_catalogue import METRICS, by_name, entry_id
from support.metric_tester import saved_states, states_of
from support.state_checks import assert_same_states

from torchtally import MetricCollection


def _loaded(entry, states):
    m = entry.metric()
    m.persistent(True)
    m.load_state_dict(states)
    return m


def _strided_copy(t):
    """The values of ``t`` in memory that is not C-contiguous: transposed (2 dims or more), else
    every other element of a wider tensor."""
    if t.dim() >= 2 and min(t.shape[-2:]) > 1:
        return t.mT.contiguous().mT
    wide = torch.zeros(t.shape + (2,), dtype=t.dtype)
    wide[..., 0] = t
    return wide[..., 0]


def _fed(entry, batches):
    m = entry.metric()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for batch in batches:
            m.update(*batch)
    return m


def _result(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return m.compute()
        except ValueError as exc:  # e.g. R2 of too few samples: the same error both ways
            return str(exc)


def _same_result(a, b):
    if isinstance(a, dict):  # group fairness: results keyed by group
        return a.keys() == b.keys() and all(_same_result(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_result(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and torch.equal(a.double().nan_to_num(), b.double().nan_to_num())
    return a == b


@pytest.mark.parametrize("entry", METRICS, ids=entry_id)
def test_states_loaded_from_strided_tensors_are_stored_contiguous_and_keep_working(entry):
    g = torch.Generator().manual_seed(3)
    batches = [entry.batch(6, generator=g) for _ in range(3)]
    saved = saved_states(_fed(entry, batches[:2]))
    strided = {k: _strided_copy(v) for k, v in saved.items()}
    if any(v.numel() > 1 for v in saved.values()):  # 0-d states have no layout to get wrong
        assert any(not v.is_contiguous() for v in strided.values()), "the test must load strided memory"
    for k in saved:
        assert torch.equal(strided[k], saved[k])
    plain, loaded = _loaded(entry, saved), _loaded(entry, strided)
    assert all(t.is_contiguous() for t in loaded.metric_state.values())
    for m in (plain, loaded):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.update(*batches[2])  # failed on a transposed [C, C] state: "out: expected a contiguous tensor"
    assert _same_result(_result(loaded), _result(plain))
    assert _same_result(_result(loaded), _result(_fed(entry, batches)))


@pytest.mark.parametrize("name", ["MulticlassConfusionMatrix", "BinaryAUROC", "CatMetric", "R2Score"])
def test_loaded_tensors_are_copied(name):
    entry = by_name(name)
    saved = saved_states(_fed(entry, [entry.batch(6)]))
    m = _loaded(entry, saved)
    before = states_of(m)
    for t in saved.values():
        if t.numel():
            t.view(-1)[0] = 7 if not t.is_floating_point() else 0.25
    assert_same_states(before, states_of(m), f"{name} after the loaded tensors were written")


def _bad_load(name, key, value, match, strict=True, **entry_kwargs):
    """Loading ``value`` at ``key`` (over a saved state) raises ValueError/TypeError naming the
    key; the metric keeps what it had."""
    entry = by_name(name)
    m = _fed(entry, [entry.batch(10, generator=torch.Generator().manual_seed(2))])
    m.persistent(True)
    states = saved_states(m)
    if strict:
        states[key] = value(states[key]) if callable(value) else value
    else:
        states = {key: value(states[key]) if callable(value) else value}
    before = states_of(m)
    with pytest.raises((ValueError, TypeError)) as info:
        m.load_state_dict(states, strict=strict)
    assert key in str(info.value) and (match is None or match in str(info.value)), str(info.value)
    assert_same_states(before, states_of(m), f"{name} after loading a bad {key!r}")
    return m


BAD_STATES = [
    # exact curves: one label per score, labels in range, no NaN score
    ("BinaryAUROC", "labels", lambda t: t[:7], "one row per score"),
    ("BinaryAUROC", "labels", lambda t: torch.where(torch.arange(t.shape[0]) == 3, 7, t).to(t.dtype), "[0, 2)"),
    ("BinaryAUROC", "scores", lambda t: torch.cat([t[:-1], torch.tensor([float("nan")])]), "NaN"),
    ("MulticlassAveragePrecision", "labels", lambda t: torch.full_like(t, 3), "[0, 3)"),
    ("MultilabelROC", "labels", lambda t: torch.full_like(t, 2), "[0, 2)"),  # 2 = ignored, but there is no ignore_index
    ("MultilabelROC", "scores", lambda t: t[:4], "one row per score"),
    # binned curves and counts: >= 0
    ("BinaryAUROC[binned]", "hist", lambda t: t - 5, ">= 0"),
    ("MulticlassConfusionMatrix", "confmat", lambda t: t - t.max() - 1, ">= 0"),
    ("MultilabelPrecision[samplewise]", "sample_confmat", lambda t: -t, ">= 0"),
    ("AverageLoss", "num_samples", torch.tensor(-3), ">= 0"),
    ("MeanSquaredError", "num_samples", torch.tensor(-1), ">= 0"),
    # moments
    ("R2Score", "residual_target_moments", lambda t: t[:1], "2 rows per output"),
    ("PearsonCorrCoef", "comoments", lambda t: t * torch.tensor([-1.0, 1, 1, 1, 1, 1], dtype=t.dtype), ">= 0"),
    ("ExplainedVariance", "residual_target_moments", lambda t: t * float("nan"), "NaN"),
    # CatMetric: the values must fill whole values of the recorded shape
    ("CatMetric", "value_shape", torch.tensor([1, 4]), "multiple of 4"),
    ("CatMetric", "value_shape", torch.tensor([], dtype=torch.int64), "value_shape"),
    # what any metric refuses: dtype, shape, a meta tensor, not a tensor
    ("MulticlassConfusionMatrix", "confmat", lambda t: t.double(), "dtype"),
    ("MulticlassConfusionMatrix", "confmat", lambda t: t[:2], "shape"),
    ("MulticlassConfusionMatrix", "confmat", lambda t: t.to("meta"), "meta"),
    ("BinaryAUROC", "scores", lambda t: t.to("meta"), "meta"),
    ("MeanMetric", "weight_sum", 3.0, "tensor"),
]


@pytest.mark.parametrize("name, key, value, match", BAD_STATES, ids=[f"{b[0]}-{b[1]}-{b[3]}" for b in BAD_STATES])
def test_bad_states_raise_at_load_naming_the_key(name, key, value, match):
    _bad_load(name, key, value, match)


def test_a_partial_load_is_checked_against_the_states_it_keeps():
    """strict=False loads some states: the invariants hold between loaded and kept ones."""
    _bad_load("BinaryAUROC", "labels", lambda t: t[:3], "one row per score", strict=False)


def test_merge_state_of_a_dict_checks_the_invariants():
    entry = by_name("BinaryAUROC")
    m = _fed(entry, [entry.batch(8)])
    other = saved_states(_fed(entry, [entry.batch(5)]))
    other["labels"] = other["labels"][:2]
    before = states_of(m)
    with pytest.raises(ValueError, match="labels"):
        m.merge_state(other)
    assert_same_states(before, states_of(m), "after a refused merge")


def test_collection_load_is_all_or_nothing():
    """A MetricCollection checks every member's entries (invariants included) before loading any."""
    make = lambda: MetricCollection(
        {  # noqa: E731
            "acc": by_name("MulticlassAccuracy").metric(),
            "auroc": by_name("MulticlassAUROC").metric(),
        }
    )
    coll = make()
    batch = by_name("MulticlassAUROC").batch(8)
    coll.update(*batch)
    coll.persistent(True)
    states = coll.state_dict()
    label_key = next(k for k in states if k.endswith("labels"))
    states[label_key] = torch.full_like(states[label_key], 9)
    fresh = make()
    fresh.persistent(True)
    fresh.update(*by_name("MulticlassAUROC").batch(4))
    before = states_of(fresh)
    with pytest.raises(ValueError, match="labels"):
        fresh.load_state_dict(states)
    assert_same_states(before, states_of(fresh), "collection after a refused load")


def test_check_state_invariants_is_the_hook_a_user_metric_overrides():
    import torchtally

    class Positive(torchtally.Metric):
        def __init__(self):
            super().__init__()
            self.add_state("total", torch.tensor(0.0), reduce="sum", persistent=True)

        def update(self, x):
            self.total = self.total + x.abs().sum()

        def compute(self):
            return self.total

        def check_state_invariants(self, states):
            super().check_state_invariants(states)
            if states["total"] < 0:
                raise ValueError("'total': a sum of absolute values is >= 0")

    m = Positive().update(torch.tensor([1.0, -2.0]))
    with pytest.raises(ValueError, match="Positive.load_state_dict: 'total'"):
        m.load_state_dict({"total": torch.tensor(-1.0)})
    assert m.compute().item() == 3.0
    m.load_state_dict({"total": torch.tensor(5.0)})
    assert m.compute().item() == 5.0
