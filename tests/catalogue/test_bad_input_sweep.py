"""Bad input to every public metric class of every family, and to the wrappers around a few.

The classes: support.metric_catalogue (classification, regression, aggregation, segmentation,
retrieval, panoptic, pixel-wise image) and support.sweep_catalogue (text, box detection, the
rest of image, audio, clustering, nominal, shape, multimodal, video, wrappers); a test in
test_catalogue_coverage.py fails when a public class is in neither. The faults: an empty batch,
then support.sweep_faults' list, one leaf of one valid batch at a time. Per class, alone and
as the member of a MetricCollection (there one fault of each kind):

(a) only TypeError / ValueError escape, naming the argument (or the dict key) at fault; a
    class that takes a fault on purpose is listed in ``ACCEPTS`` with the reason; an empty
    batch may be taken;
(b) after a refused batch every state (the wrapped metrics' too) is bit-identical; a meta
    batch also goes to a fresh metric, which must stay on its device;
(c) after all the refused (and empty) batches, a valid one gives exactly the states and the
    value of a twin that saw the valid batches only;
(d) transposed / strided / offset views of a batch (one layout per class, in turn) give the
    states of its contiguous copy (bit for bit, but for ``VIEW_TOLERANCES``).

Lean for CI: one batch maker per kind of input, a few samples per batch, one metric per class
taking every fault in turn (refusals are cheap; the valid batch and compute() run once).
"""

import copy
import dataclasses
import functools
import warnings
from typing import Any, Callable, Dict, List, Tuple

import pytest
import torch
from support.metric_catalogue import METRICS
from support.state_checks import assert_same_states
from support.sweep_catalogue import ACCEPTS, ACCEPTS_BY_KIND, OWNED_ELSEWHERE, SWEPT, VIEW_TOLERANCES
from support.sweep_faults import LAYOUTS, faults, relaid
from support.sweep_inputs import make_batch

from torchtally import Metric, MetricCollection


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], Any]
    batch: Callable[[int, int], Tuple[Any, ...]]  # (n, seed) -> a valid batch
    names: Tuple[str, ...]
    kind: str  # the kind of input (ACCEPTS_BY_KIND)

    def __repr__(self) -> str:
        return self.name


def _from_metric_catalogue(entry: Any) -> Case:
    def batch(n: int, seed: int) -> Tuple[Any, ...]:
        return entry.batch(n, generator=torch.Generator().manual_seed(seed))

    return Case(entry.name, entry.metric, batch, entry.arg_names, entry.family)


def _from_sweep_catalogue(entry: Any) -> Case:
    return Case(entry.name, entry.metric, lambda n, seed: make_batch(entry.kind, n, seed), entry.names(), entry.kind)


CASES = [_from_metric_catalogue(e) for e in METRICS] + [_from_sweep_catalogue(e) for e in SWEPT]


def deep_states(metric: Any) -> Dict[str, torch.Tensor]:
    """Copies of the states of ``metric`` and of every metric inside it, by module path."""
    return {
        f"{path}.{name}": value.clone()
        for path, module in metric.named_modules()
        if isinstance(module, Metric)
        for name, value in module.metric_state.items()
    }


def _quiet_update(metric: Any, batch: Tuple[Any, ...]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)  # the bootstrapper's resampling: the same in the metric and its twin
        metric.update(*batch)


def _value(metric: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        try:
            return metric.compute()
        except (TypeError, ValueError) as exc:  # not computable from these batches: the same refusal
            return type(exc)


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a.double().nan_to_num(), b.double().nan_to_num()))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def _allowed(table: Dict[str, Any], case: Case, key: str) -> bool:
    """Whether ``table`` lists ``key`` ("<fault>:<leaf>") for the case (or its class): as it
    is, by its fault ("dtype" for every dtype), or by its leaf."""
    entries = {**table.get(case.name, table.get(case.name.split("[")[0], {}))}
    if table is ACCEPTS:
        entries.update(ACCEPTS_BY_KIND.get(case.kind, {}))
    fault, _, leaf = key.partition(":")
    kind = fault.split("=")[0]
    return any(k in entries for k in (key, fault, kind, leaf, f"{kind}:{leaf}"))


@functools.lru_cache(maxsize=1)
def _prototype(case: Case) -> Any:
    return case.make()


def _made(case: Case, in_collection: bool) -> Any:
    """A fresh metric: a copy of one prototype (a BootStrapper's resampling stream is its
    object's, so the metric and its twin must be copies of one)."""
    metric = copy.deepcopy(_prototype(case))
    return MetricCollection({"m": metric}) if in_collection else metric


def _attempt(metric: Any, case: Case, key: str, bad: Any, blamed: Tuple[str, ...]) -> Tuple[str, bool]:
    """(what went wrong or '', whether the batch was taken) for one bad batch."""
    before = deep_states(metric)
    try:
        _quiet_update(metric, bad)
    except (TypeError, ValueError) as exc:
        if not any(name in str(exc) for name in blamed):
            return f"{key}: the error does not name {blamed[0]}: {type(exc).__name__}: {exc}", False
    except Exception as exc:  # noqa: BLE001 - the finding: anything else escaped
        return f"{key}: {type(exc).__name__} escaped: {str(exc)[:200]}", False
    else:
        if key == "empty" and not _allowed(ACCEPTS, case, key):
            return "", False  # taken: it must change nothing of the result (checked at the end)
        if _allowed(ACCEPTS, case, key) or key.startswith("huge:"):  # 1e300 is finite: it must only not overflow
            return "", True
        return f"{key}: accepted", True
    try:
        assert_same_states(before, deep_states(metric), key)
    except AssertionError as exc:
        return f"{key}: state changed by a refused batch ({exc})", False
    return "", False


def _sweep(case: Case, in_collection: bool, wanted: Callable[[str], bool] = lambda key: True) -> List[str]:
    """Every fault (``wanted``) to one metric holding a batch, then a valid batch: the states
    and value of a twin that saw only the valid ones. A meta fault also goes to a fresh metric."""
    twin = _made(case, in_collection)
    _quiet_update(twin, case.batch(3, 1))
    _quiet_update(twin, case.batch(2, 2))
    want_states, want_value = deep_states(twin), _value(twin)
    problems = []
    bad_batches = [("empty", case.batch(0, 3), case.names)] + list(faults(case.batch(2, 3), case.names))
    metric = None
    for key, bad, blamed in bad_batches:
        if not wanted(key) or _allowed(OWNED_ELSEWHERE, case, key):
            continue
        if key.startswith("meta:"):  # a fresh metric must stay where it is
            fresh = _made(case, in_collection)
            problem, _ = _attempt(fresh, case, key, bad, blamed)
            if not problem and any(t.device.type != "cpu" for t in deep_states(fresh).values()):
                problem = f"{key}: a fresh metric left its device"
            problems += [f"fresh, {problem}"] if problem else []
        if metric is None:
            metric = _made(case, in_collection)
            _quiet_update(metric, case.batch(3, 1))
        problem, taken = _attempt(metric, case, key, bad, blamed)
        problems += [f"holding data, {problem}"] if problem else []
        if taken:  # a fault the class takes on purpose: the next ones go to a new metric
            metric = None
    if metric is not None:
        _quiet_update(metric, case.batch(2, 2))
        try:
            assert_same_states(want_states, deep_states(metric), "")
        except AssertionError as exc:
            problems.append(f"after the refused batches a valid one gave other states than a twin's ({exc})")
        if not _same_value(_value(metric), want_value):
            problems.append("after the refused batches a valid one gave another value than a twin's")
    return problems


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_bad_batches_are_refused_with_states_kept(case):
    problems = _sweep(case, False)
    assert not problems, f"{case.name}:\n" + "\n".join(problems)


# Wrappers that are no members of a MetricCollection (a collection, or a tracker of epochs).
NOT_IN_COLLECTIONS = {
    "FeatureShare": "a MetricCollection itself",
    "MetricTracker": "keeps one copy per increment(); a collection cannot call increment()",
    "MetricTracker[collection]": "keeps one copy per increment(); a collection cannot call increment()",
}


def _for_collections(key: str) -> bool:
    """The faults a collection sees: one of each kind of check (the rest is the metric's own)."""
    return key == "empty" or key.split(":")[0] in ("meta", "dtype=uint16", "nan", "none", "rank+1", "shorter")


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in NOT_IN_COLLECTIONS], ids=repr)
def test_bad_batches_to_a_collection_are_refused_with_states_kept(case):
    problems = _sweep(case, True, _for_collections)
    assert not problems, f"{case.name} in a MetricCollection:\n" + "\n".join(problems)


@pytest.mark.parametrize("case, how", [(c, LAYOUTS[i % len(LAYOUTS)]) for i, c in enumerate(CASES)], ids=repr)
def test_views_give_the_states_of_contiguous_copies(case, how):
    """One layout per class, in turn (every layout is drawn for every family)."""
    batch = case.batch(4, 5)
    viewed = relaid(batch, how)
    contiguous, strided = _made(case, False), _made(case, False)
    _quiet_update(contiguous, batch)
    _quiet_update(strided, viewed)
    want, got = deep_states(contiguous), deep_states(strided)
    if case.name not in VIEW_TOLERANCES:
        assert_same_states(want, got, f"{case.name}, {how} views")
        return
    rtol, _ = VIEW_TOLERANCES[case.name]
    assert want.keys() == got.keys()
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=rtol, atol=0, msg=f"{case.name}, {how} views: {name}")
