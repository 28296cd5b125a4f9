"""Deferred value checks of the torch-op metrics (torchtally.kernels.deferred_checks), on CPU.

There is no GPU here: the ``deferred`` fixture makes CPU metrics take the CUDA path (the one
predicate ``defers`` says yes, "cpu" joins the deferring device types) and the verdict's trip
to the host is the module's CPU stand-in. Every regression and aggregation class of the
catalogue is checked: a bad batch returns from update without a host read, leaves the state as
it was, and its ValueError (the immediate path's text) comes from the next update, which does
not run, or from compute; reset forgets it; forward raises at the call.
"""

import contextlib
import types
import warnings

import pytest
import torch
from support import aggregation_cases, regression_cases
from support.metric_catalogue import METRICS, entry_id

import torchtally.functional as F
from torchtally import Metric, kernels
from torchtally.aggregation import MaxMetric, MeanMetric, RunningMean, SumMetric
from torchtally.kernels import deferred_checks
from torchtally.regression import MeanSquaredError, MeanSquaredLogError, R2Score

_FAMILIES = ("regression", "nonnegative", "rows", "distributions", "ensemble", "aggregation", "loss")
# Batches that append rows to a "cat" state cannot be undone on the device: they wait for their
# verdict and raise at the call (rank-based metrics keep (preds, target) rows, CatMetric values).
_HOST_ROWS = {
    "CatMetric",
    "SpearmanCorrCoef",
    "KendallRankCorrCoef",
    "CosineSimilarity[none]",
    "KLDivergence[none]",
    "CriticalSuccessIndex[sequence]",
}
ENTRIES = [e for e in METRICS if e.family in _FAMILIES]
DEFERRED = [e for e in ENTRIES if e.name not in _HOST_ROWS]
HOST_ROWS = [e for e in ENTRIES if e.name in _HOST_ROWS]
_AGGREGATING = ("aggregation", "loss")


class Deferral:
    """Switches the CPU stand-in of deferred mode on (``on``) and off."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch

    def on(self) -> None:
        self.monkeypatch.setattr(deferred_checks, "DEVICE_TYPES", ("cuda", "cpu"))
        self.monkeypatch.setattr(deferred_checks, "defers", lambda t: True)

    def off(self) -> None:
        self.monkeypatch.setattr(deferred_checks, "DEVICE_TYPES", ("cuda",))
        self.monkeypatch.setattr(deferred_checks, "defers", lambda t: False)


@pytest.fixture
def deferred(monkeypatch):
    monkeypatch.setattr(deferred_checks, "_pending", [])
    switch = Deferral(monkeypatch)
    switch.on()
    return switch


_READS = ("item", "tolist", "numpy", "cpu", "__bool__", "__int__", "__float__", "__index__", "__format__")


@contextlib.contextmanager
def counting_host_reads(monkeypatch):
    """Count the ways a tensor's values reach Python (each a device sync on CUDA)."""
    reads = []
    originals = {name: getattr(torch.Tensor, name) for name in _READS}

    def counted(name):
        def read(self, *args, **kwargs):
            reads.append(name)
            return originals[name](self, *args, **kwargs)

        return read

    with monkeypatch.context() as m:
        for name in _READS:
            m.setattr(torch.Tensor, name, counted(name))
        yield reads


def make(entry):
    kwargs = dict(entry.kwargs)
    if entry.family == "aggregation":
        kwargs["nan_strategy"] = "error"
    return entry.make(**kwargs)


def batch(entry, seed):
    return entry.batch(6, generator=torch.Generator().manual_seed(seed))


def poisoned(entry, value, seed=1):
    """A valid batch with ``value`` written into its first argument."""
    args = [a.clone() for a in batch(entry, seed)]
    args[0].reshape(-1)[3] = value
    return tuple(args)


def bad_batches(entry):
    """(label, bad batch) pairs the immediate path refuses for this entry."""
    out = [("nan", poisoned(entry, float("nan")))]
    if entry.family not in _AGGREGATING:  # NaN is the aggregation's only bad value
        out.append(("inf", poisoned(entry, float("inf"))))
    if entry.name == "MeanSquaredLogError":
        out.append(("domain", poisoned(entry, -2.0)))
    if entry.family == "distributions":
        out.append(("domain", poisoned(entry, -0.5)))
    return out


def states(metric):
    return {name: value.clone() for name, value in metric.metric_state.items()}


def assert_same_states(metric, expected):
    got = metric.metric_state
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert torch.equal(got[name], value) or torch.allclose(got[name], value, equal_nan=True, rtol=0, atol=0), name


def immediate_error(entry, deferral, bad):
    """The immediate path's ValueError text for the bad batch (after one good batch)."""
    deferral.off()
    metric = make(entry)
    metric.update(*batch(entry, 0))
    with pytest.raises(ValueError) as info:
        metric.update(*bad)
    deferral.on()
    return str(info.value)


def warmed(entry):
    """A metric with one good batch whose check was read (its first batch fixes the shapes)."""
    metric = make(entry)
    metric.update(*batch(entry, 0))
    metric.compute()
    assert not deferred_checks.pending()
    return metric


DEFERRED_BAD = [(e, label, bad) for e in DEFERRED for label, bad in bad_batches(e)]
HOST_BAD = [(e, label, bad) for e in HOST_ROWS for label, bad in bad_batches(e)]


def _id(case):
    entry, label, _ = case
    return f"{entry_id(entry)}-{label}"


@pytest.mark.parametrize("case", DEFERRED_BAD, ids=_id)
def test_bad_batch_returns_without_a_host_read_and_the_next_update_raises(case, deferred, monkeypatch):
    entry, _, bad = case
    expected = immediate_error(entry, deferred, bad)
    metric = warmed(entry)
    before = states(metric)
    with counting_host_reads(monkeypatch) as reads:
        metric.update(*bad)
    assert reads == []
    assert_same_states(metric, before)
    assert deferred_checks.pending()
    with pytest.raises(ValueError) as info:
        metric.update(*batch(entry, 2))
    assert str(info.value) == expected
    assert_same_states(metric, before)  # the raising update did not run its batch
    metric.update(*batch(entry, 2))  # raised once: a good batch then counts
    reference = make(entry)
    deferred.off()
    reference.update(*batch(entry, 0))
    reference.update(*batch(entry, 2))
    deferred.on()
    torch.testing.assert_close(metric.compute(), reference.compute(), rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("entry", DEFERRED, ids=entry_id)
def test_compute_raises_a_pending_rejection_and_reset_forgets_it(entry, deferred):
    bad = bad_batches(entry)[0][1]
    expected = immediate_error(entry, deferred, bad)
    metric = warmed(entry)
    metric.update(*bad)
    with pytest.raises(ValueError) as info:
        metric.compute()
    assert str(info.value) == expected
    metric.update(*bad)
    metric.reset()
    assert not deferred_checks.pending()
    metric.update(*batch(entry, 4))
    reference = make(entry)
    deferred.off()
    reference.update(*batch(entry, 4))
    deferred.on()
    torch.testing.assert_close(metric.compute(), reference.compute(), rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("entry", DEFERRED, ids=entry_id)
def test_forward_raises_at_the_call(entry, deferred):
    bad = bad_batches(entry)[0][1]
    expected = immediate_error(entry, deferred, bad)
    metric = warmed(entry)
    before = states(metric)
    with pytest.raises(ValueError) as info:
        metric(*bad)
    assert str(info.value) == expected
    assert_same_states(metric, before)
    assert not deferred_checks.pending()


@pytest.mark.parametrize("case", HOST_BAD, ids=_id)
def test_a_batch_of_rows_waits_and_raises_at_the_call(case, deferred):
    entry, _, bad = case
    expected = immediate_error(entry, deferred, bad)
    metric = warmed(entry)
    before = states(metric)
    with pytest.raises(ValueError) as info:
        metric.update(*bad)
    assert str(info.value) == expected
    assert_same_states(metric, before)
    assert not deferred_checks.pending()


def test_a_move_raises_a_pending_rejection(deferred):
    metric = warmed(next(e for e in DEFERRED if e.name == "MeanSquaredError"))
    metric.update(torch.tensor([float("nan")]), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="preds: expected finite values, got nan at flat index 0"):
        metric.to("meta")


def test_inputs_changed_in_place_give_the_batch_level_message(deferred):
    metric = MeanSquaredError()
    metric.update(torch.tensor([1.0]), torch.tensor([1.0]))
    preds = torch.tensor([1.0, float("nan")])
    metric.update(preds, torch.tensor([1.0, 2.0]))
    preds[1] = 0.0  # the check keeps a reference to the batch's inputs, not a copy
    with pytest.raises(ValueError, match="the batch held a NaN, inf or out-of-domain value, not found again"):
        metric.compute()


def test_the_domain_of_msle_is_searched_like_the_immediate_path(deferred):
    metric = MeanSquaredLogError()
    metric.update(torch.tensor([0.5]), torch.tensor([0.5]))
    metric.update(torch.tensor([0.5, -3.0]), torch.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match=r"preds: expected values > -1 \(log\(1 \+ x\) is taken\), got -3.0"):
        metric.compute()


def test_r2_first_batch_fixes_its_shape_and_waits(deferred):
    metric = R2Score()
    with pytest.raises(ValueError, match="target: expected finite values"):
        metric.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, float("inf")]))
    assert metric.residual_target_moments.shape == (0, 6)  # as before the batch


def test_a_rejected_batch_with_a_new_input_dtype_leaves_no_trace_of_it(deferred):
    """The batch's float64 inputs change the recorded input dtype: once rejected, the metric
    reads its state again, so a later float64 batch still promotes the result."""
    metric = R2Score(multioutput="raw_values")
    metric.update(torch.randn(6, 2), torch.randn(6, 2))
    bad = torch.randn(6, 2, dtype=torch.float64)
    bad[1, 1] = float("nan")
    metric.update(bad, torch.randn(6, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="preds: expected finite values"):
        metric.update(torch.randn(6, 2), torch.randn(6, 2))
    assert metric.compute().dtype == torch.float32
    metric.update(torch.randn(6, 2, dtype=torch.float64), torch.randn(6, 2, dtype=torch.float64))
    assert metric.compute().dtype == torch.float64


def test_bad_weights_are_deferred(deferred, monkeypatch):
    metric = MeanMetric()
    metric.update(torch.tensor([1.0]))
    metric.compute()
    with counting_host_reads(monkeypatch) as reads:
        metric.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, -1.0]))
    assert reads == []
    with pytest.raises(ValueError, match="weight: expected finite weights >= 0, got -1.0 at flat index 1"):
        metric.update(torch.tensor([3.0]))
    assert float(metric.compute()) == 1.0


@pytest.mark.parametrize("strategy", ["ignore", 0.5, "disable"])
@pytest.mark.parametrize("cls", [SumMetric, MeanMetric, MaxMetric, RunningMean])
def test_strategies_without_an_error_need_no_host_read(cls, strategy, deferred, monkeypatch):
    values = [torch.tensor([1.0, float("nan"), -4.0]), torch.tensor([[2.0, float("nan")], [-7.0, 3.0]])]
    metric = cls(nan_strategy=strategy)
    with counting_host_reads(monkeypatch) as reads:
        for v in values:
            metric.update(v)
    assert reads == []
    assert not deferred_checks.pending()
    deferred.off()
    reference = cls(nan_strategy=strategy)
    for v in values:
        reference.update(v)
    torch.testing.assert_close(metric.compute(), reference.compute(), equal_nan=True)


def test_warn_warns_later_naming_the_update(deferred, monkeypatch):
    metric = MeanMetric()  # nan_strategy="warn"
    metric.update(torch.tensor([1.0]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with counting_host_reads(monkeypatch) as reads:
            metric.update(torch.tensor([3.0, float("nan"), float("nan")]))
        assert reads == [] and caught == []
        assert float(metric.compute()) == 2.0
    words = [str(w.message) for w in caught]
    assert words == [
        "value: Encountered `nan` values in tensor: 2 NaN value(s) dropped (nan_strategy='warn') "
        "in MeanMetric's update 2"
    ]


def test_functional_forms_raise_at_the_call(deferred):
    with pytest.raises(ValueError, match="preds: expected finite values"):
        F.mean_squared_error(torch.tensor([float("nan")]), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="NaN at flat index 1"):
        F.weighted_mean(torch.tensor([1.0, float("nan")]), nan_strategy="error")
    assert not deferred_checks.pending()


def test_outside_a_metric_update_nothing_is_deferred():
    assert not deferred_checks.deferring(torch.zeros(1))  # on CPU, and no update open


def test_set_cuda_checks_switches_the_predicate():
    cuda_like = types.SimpleNamespace(is_cuda=True)
    previous = kernels.set_cuda_checks("immediate")
    try:
        assert not deferred_checks.defers(cuda_like)
        kernels.set_cuda_checks("deferred")
        assert deferred_checks.defers(cuda_like)
        assert not deferred_checks.defers(types.SimpleNamespace(is_cuda=False))
    finally:
        kernels.set_cuda_checks(previous)


# -- the catalogue's good batches give the same values deferred -----------------------------------


def _single_metric_cases(module):
    return [c for c in module.CASES if isinstance(c.factory(), Metric)]


CATALOGUE = _single_metric_cases(regression_cases) + _single_metric_cases(aggregation_cases)


@pytest.mark.parametrize("case", CATALOGUE, ids=lambda c: c.name)
def test_catalogue_values_are_the_same_deferred(case, deferred):
    metric = case.factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "warn" cases warn on either path
        for args in case.batches:
            args = args if isinstance(args, tuple) else (args,)
            metric.update(*args)
        got = metric.compute()
        deferred.off()
        reference = case.factory()
        for args in case.batches:
            args = args if isinstance(args, tuple) else (args,)
            reference.update(*args)
        expected = reference.compute()
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=0, equal_nan=True)
