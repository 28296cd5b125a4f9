"""Ranks that disagree never sync silently, for every class of the catalogue
(tests/support/metric_catalogue.py): on two gloo ranks, rank 1 makes the same entry with one
option changed (each bool, int and float constructor option the class describes, where the
changed value is accepted), or the next class of the same input family. Every rank must raise
SyncError before any data moves, the option's name (or both classes') in the message; one spawn
runs every case. The hand-picked cases with exact messages: tests/distributed/test_option_mismatch.py.
"""

import inspect
import warnings
from typing import Any, Dict, List, Optional, Tuple

import pytest
import torch
from support.metric_catalogue import METRICS, Entry

from torchtally import SyncError
from torchtally.testing import count_collectives, run_distributed

pytestmark = pytest.mark.distributed

# the data collectives (all_gather also carries the ranks' option descriptions for the message)
DATA_COLLECTIVES = ("all_reduce", "reduce", "gather")


def _changed(value: Any) -> Optional[Any]:
    """Another value of an option's kind (None: no obvious other value of this kind)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2 + 0.125
    return None


def _variant(entry: Entry) -> Optional[Tuple[str, Dict[str, Any]]]:
    """(option, constructor kwargs) of the first option of ``entry`` whose changed value the class
    accepts and updates with; None when there is none."""
    metric = entry.metric()
    parameters = inspect.signature(type(metric).__init__).parameters
    for name in metric.described_options:
        new = _changed(getattr(metric, name, None))
        if new is None or name not in parameters:
            continue
        kwargs = {**dict(entry.kwargs), name: new}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                entry.make(**kwargs).update(*entry.batch(4, generator=torch.Generator().manual_seed(0)))
        except (TypeError, ValueError):
            continue
        return name, kwargs
    return None


def _cases() -> List[Tuple[str, Entry, Dict[str, Any], Tuple[str, ...]]]:
    """(case id, rank 0's entry, rank 1's kwargs or {"entry": other}, words the error must say)."""
    cases = []
    for i, entry in enumerate(METRICS):
        variant = _variant(entry)
        if variant is not None:
            name, kwargs = variant
            cases.append((f"{entry.name}:{name}", entry, {"kwargs": kwargs}, (f"option '{name}'",)))
        other = next((e for e in METRICS[i + 1 :] if e.family == entry.family and e.make is not entry.make), None)
        if other is not None and isinstance(entry.make, type) and isinstance(other.make, type):
            words = (entry.make.__name__, other.make.__name__)
            cases.append((f"{entry.name}:class", entry, {"entry": other}, words))
    return cases


CASES = _cases()


def _outcome(rank: int, entry: Entry, rank1: Dict[str, Any]) -> Dict[str, Any]:
    if rank == 0:
        metric = entry.metric()
    elif "entry" in rank1:
        metric = rank1["entry"].metric()
    else:
        metric = entry.make(**rank1["kwargs"])
    batch = (rank1["entry"] if rank == 1 and "entry" in rank1 else entry).batch(
        4, generator=torch.Generator().manual_seed(rank)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric.update(*batch)
        with count_collectives() as counter:
            try:
                metric.compute()
            except SyncError as exc:
                return {"error": str(exc), "data": [k for k in counter.by_name if k in DATA_COLLECTIVES]}
            except Exception as exc:  # anything else is a finding, reported by the test
                return {"error": None, "other": f"{type(exc).__name__}: {exc}"}
    return {"error": None}


def run_cases(rank: int, world_size: int) -> Dict[str, Any]:
    return {case_id: _outcome(rank, entry, rank1) for case_id, entry, rank1, _ in CASES}


@pytest.fixture(scope="module")
def runs():
    return run_distributed(run_cases, 2, timeout=600)


def test_the_sweep_covers_the_catalogue():
    """Most entries have an option to change, and every family a second class: the sweep is
    not vacuous (a catalogue change that left it so would fail here)."""
    with_option = {entry.name for _, entry, rank1, _ in CASES if "kwargs" in rank1}
    assert len(with_option) >= 0.5 * len(METRICS), sorted(e.name for e in METRICS if e.name not in with_option)
    assert sum(1 for case in CASES if "entry" in case[2]) >= 0.5 * len(METRICS)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_disagreement_raises_on_every_rank_before_any_data(runs, case):
    case_id, _, _, words = case
    for rank, out in enumerate(runs):
        seen = out[case_id]
        assert seen["error"] is not None, f"{case_id}: rank {rank} did not raise SyncError: {seen}"
        for word in words:
            assert word in seen["error"], seen["error"]
        assert not seen["data"], f"{case_id}: data moved before the error: {seen['data']}"
