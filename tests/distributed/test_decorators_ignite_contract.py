"""ignite 0.5.5's contract for sync_all_reduce / reinit__is_reduced, pinned across real gloo
processes (1 and 2 ranks), with ignite's own decorators as the oracle.

One spawned run per world size (``run_checks``) decorates the same ignite Metric with ignite's
decorators and with torchtally's, for every attribute spelling in CASES, and records for each
when it raised (class definition or compute), what it raised, which of ignite's three messages
it carries, and what compute saw. The tests assert that torchtally's record equals ignite's,
except for the deliberate differences listed in DIFFERENCES; then that torchtally's errors
come before any collective and leave every value as it was, and that all_reduced_synchronized
checks its spellings when the class is defined.
"""

import functools
import re
import time
from typing import Any, Dict, List, Tuple

import ignite.distributed as idist
import ignite.metrics
import ignite.metrics.metric
import pytest
import torch
import torch.distributed as dist

import torchtally
from torchtally import all_reduced_synchronized
from torchtally.testing import count_collectives, run_distributed

pytestmark = pytest.mark.distributed

# The parts of ignite's messages that ignite's own tests match (tests/ignite/metrics/test_metric.py).
MESSAGES = {
    "op": r"Reduction operation is not valid",
    "missing": r"has no attribute named `{name}`\.",
    "type": r"Attribute provided to {decorator} should be a number or tensor but `{name}`",
}

# Every spelling is tried on the same state (see make_probe). The valid ones cover each op on
# a tensor, an int and a float; the rest are ignite's own failing cases and their neighbours.
CASES: Dict[str, Tuple[Any, ...]] = {
    "plain names": ("a", "n", "c"),
    "every op": ("a:SUM", "n:MAX", "c:MIN", "p:PRODUCT"),
    "lower case sum": ("a:sum",),
    "mixed case max": ("c:MaX",),
    "unknown op": ("n:MINN",),
    "mixed case product": ("p:PROduCT",),
    "empty op": ("a:",),
    "space before op": ("a: SUM",),
    "space after op": ("a:SUM ",),
    "two colons": ("a:SUM:MAX",),
    "mean is no op": ("a:MEAN",),
    "valid then bad op": ("a", "n:min"),
    "missing attribute": ("missingattr",),
    "empty name": (":SUM",),
    "name with a space": (" a",),
    "class attribute": ("cls_attr",),
    "property": ("prop",),
    "string value": ("d",),
    "None value": ("none",),
    "list value": ("lst",),
    "missing before bad op": ("missingattr", "n:MINN"),
    "bad op before missing": ("n:MINN", "missingattr"),
    "string before missing": ("d", "missingattr"),
    "not a string": (3,),
    "named twice": ("a", "a:MAX"),
    "complex number": ("z",),
    "complex max": ("z:MAX",),
}

# Where torchtally deliberately differs from ignite, and what it does instead (2 ranks; in one
# process neither library checks anything). ignite reduces a name given twice twice (and
# then "restores" the reduced value); for "a:SUM:MAX" its ValueError is a failed tuple unpack.
DIFFERENCES = {"named twice": ("compute", "ValueError", "other"), "two colons": ("compute", "ValueError", "op")}


def make_probe(decorators, attrs: Tuple[Any, ...]):
    """An ignite Metric whose compute is decorated with ``attrs`` by the given decorators."""
    sync_all_reduce, reinit__is_reduced = decorators

    class Probe(ignite.metrics.Metric):
        cls_attr = 5

        @property
        def prop(self):
            return 7

        @reinit__is_reduced
        def reset(self):
            rank = idist.get_rank()
            self.a = torch.tensor([1.0, 2.0]) * (rank + 1)
            self.n = 3 + rank
            self.c = 1.5 * (rank + 1)
            self.p = torch.tensor([2.0, 3.0]) + rank
            self.d = "a string"
            self.none = None
            self.lst = [1, 2]
            self.z = complex(1, rank)

        @reinit__is_reduced
        def update(self, output):
            pass

        @sync_all_reduce(*attrs)
        def compute(self):
            return snapshot(self)

    return Probe


def snapshot(obj) -> Dict[str, Any]:
    return {
        k: (v.clone() if isinstance(v, torch.Tensor) else v)
        for k, v in vars(obj).items()
        if k in ("a", "n", "c", "p", "z")
    }


def same(x: Dict[str, Any], y: Dict[str, Any]) -> bool:
    if x.keys() != y.keys():
        return False
    for k in x:
        a, b = x[k], y[k]
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            if not torch.equal(torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)):
                return False
        elif a != b:
            return False
    return True


def category(exc: BaseException, names: List[str], decorator: str) -> str:
    """Which of ignite's messages (MESSAGES) the exception carries, for any of ``names``."""
    for key, pattern in MESSAGES.items():
        for name in names:
            if re.search(pattern.format(name=re.escape(name), decorator=decorator), str(exc)):
                return key
    return "other"


def outcome(decorators, attrs: Tuple[Any, ...], decorator: str):
    """(moment, exception type, message category, collectives before raising or what compute
    saw, whether the local values were kept)."""
    names = [a.partition(":")[0] for a in attrs if isinstance(a, str)]
    try:
        metric = make_probe(decorators, attrs)()
    except Exception as exc:
        return ("definition", type(exc).__name__, category(exc, names, decorator), None, True)
    before = snapshot(metric)
    with count_collectives() as counter:
        try:
            seen = metric.compute()
        except Exception as exc:
            kept = same(before, snapshot(metric))
            return ("compute", type(exc).__name__, category(exc, names, decorator), counter.total, kept)
    return ("ok", None, None, seen, same(before, snapshot(metric)))


def check_all_reduced_synchronized(rank: int, ws: int) -> Dict[str, Any]:
    """torchtally's class decorator: spellings at definition, attributes at compute."""
    out: Dict[str, Any] = {}
    for label, attrs in (("lower", ("a:sum",)), ("unknown", ("n:MINN",)), ("twice", ("a", "a")), ("nonstr", (3,))):
        try:
            all_reduced_synchronized(*attrs)
            out[label] = None
        except Exception as exc:
            out[label] = (type(exc).__name__, str(exc))

    class Slotted:
        __slots__ = ("total", "label")

        def __init__(self):
            self.total = rank + 1
            self.label = "not a number"

        def compute(self):
            return self.total

    class WithBuffer(torch.nn.Module):
        scale = 2  # a class attribute is not state

        def __init__(self):
            super().__init__()
            self.register_buffer("hits", torch.tensor([rank, 1]))

        def compute(self):
            return self.hits.clone()

    outcomes = {}
    for label, cls, attrs in (
        ("slot", Slotted, ("total:MAX",)),
        ("slot str", Slotted, ("label",)),
        ("buffer", WithBuffer, ("hits",)),
        ("class attribute", WithBuffer, ("scale",)),
    ):
        obj = all_reduced_synchronized(*attrs)(cls)()
        try:
            outcomes[label] = ("ok", obj.compute())
        except Exception as exc:
            outcomes[label] = (type(exc).__name__, str(exc))
    out["compute"] = outcomes
    return out


def run_checks(rank: int, ws: int) -> Dict[str, Any]:
    ignite_pair = (ignite.metrics.metric.sync_all_reduce, ignite.metrics.metric.reinit__is_reduced)
    tally_pair = (torchtally.sync_all_reduce, torchtally.reinit__is_reduced)
    out: Dict[str, Any] = {"ignite": {}, "tally": {}}
    for label, attrs in CASES.items():
        out["ignite"][label] = outcome(ignite_pair, attrs, "sync_all_reduce")
        out["tally"][label] = outcome(tally_pair, attrs, "sync_all_reduce")
    # After all those errors the process group is still in step: a valid sync gives the sums.
    out["after"] = make_probe(tally_pair, ("a", "n", "c:MAX"))().compute()
    out["class_decorator"] = check_all_reduced_synchronized(rank, ws)
    out["one_rank_missing"] = one_rank_missing(rank, tally_pair)
    dist.barrier()
    return out


def one_rank_missing(rank: int, tally_pair) -> Tuple[str, str, float]:
    """Only rank 0 lacks the attribute "q": rank 0 raises ignite's ValueError, the others a
    SyncError naming rank 0, at once (not after the sync timeout)."""
    metric = make_probe(tally_pair, ("a", "q"))()
    if rank != 0:
        metric.q = 1
    start = time.monotonic()
    try:
        metric.compute()
    except Exception as exc:
        return type(exc).__name__, str(exc), time.monotonic() - start
    return "no error", "", time.monotonic() - start


@functools.cache
def results(ws: int) -> List[Dict[str, Any]]:
    return run_distributed(run_checks, ws, timeout=240)


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("ws", [1, 2])
def test_every_spelling_behaves_as_ignite(ws):
    mismatches = []
    for rank, out in enumerate(results(ws)):
        for label in CASES:
            theirs, ours = out["ignite"][label], out["tally"][label]
            want = DIFFERENCES[label] if ws > 1 and label in DIFFERENCES else theirs[:3]
            # moment, exception type and message category as ignite's
            if ours[:3] != want:
                mismatches.append((rank, label, ours, theirs))
            elif ours[0] == "ok" and not (same(ours[3], theirs[3]) and ours[4] and theirs[4]):
                mismatches.append((rank, label, ours, theirs))
    assert not mismatches


def test_in_one_process_nothing_is_checked():
    """ignite checks nothing in one process (every reduction is the identity there)."""
    for label in CASES:
        assert results(1)[0]["tally"][label][0] == "ok", label


def test_two_ranks_raise_what_ignite_raises_at_compute():
    expected = {
        "lower case sum": ("ValueError", "op"),
        "mixed case max": ("ValueError", "op"),
        "unknown op": ("ValueError", "op"),
        "mixed case product": ("ValueError", "op"),
        "empty op": ("ValueError", "op"),
        "space before op": ("ValueError", "op"),
        "two colons": ("ValueError", "op"),
        "valid then bad op": ("ValueError", "op"),
        "missing attribute": ("ValueError", "missing"),
        "class attribute": ("ValueError", "missing"),
        "property": ("ValueError", "missing"),
        "string value": ("TypeError", "type"),
        "None value": ("TypeError", "type"),
        "missing before bad op": ("ValueError", "missing"),
        "bad op before missing": ("ValueError", "op"),
        "string before missing": ("TypeError", "type"),
        "not a string": ("TypeError", "other"),
    }
    for out in results(2):
        for label, (kind, what) in expected.items():
            moment, got_kind, got_what, collectives, kept = out["tally"][label]
            assert (moment, got_kind, got_what) == ("compute", kind, what), (label, out["tally"][label])
            # raised before any data moved (the error is announced in the sync's header, one
            # collective, so that a rank alone in its error cannot leave the others waiting)
            assert collectives == 1 and kept, (label, out["tally"][label])
        for label in ("plain names", "every op"):
            assert out["tally"][label][0] == "ok"


def test_an_error_on_one_rank_only_stops_every_rank_at_once():
    ws = 2
    outs = results(ws)
    kind, message, seconds = outs[0]["one_rank_missing"]
    assert kind == "ValueError" and "has no attribute named `q`" in message
    for out in outs[1:]:
        kind, message, seconds = out["one_rank_missing"]
        assert kind == "SyncError" and "rank(s) [0] stopped the sync" in message, (kind, message)
        assert seconds < 30  # the sync timeout is 300 s


def test_valid_ops_reduce_and_local_values_come_back():
    for rank, out in enumerate(results(2)):
        seen, kept = out["tally"]["every op"][3:]
        assert torch.equal(seen["a"], torch.tensor([1.0, 2.0]) * 3)  # SUM over ranks 0, 1
        assert seen["n"] == 4 and type(seen["n"]) is int  # MAX of 3, 4
        assert seen["c"] == 1.5  # MIN of 1.5, 3.0
        assert torch.equal(seen["p"], torch.tensor([2.0, 3.0]) * torch.tensor([3.0, 4.0]))  # PRODUCT
        assert kept
        # After every error above, the process group is still in step.
        after = out["after"]
        assert torch.equal(after["a"], torch.tensor([1.0, 2.0]) * 3) and after["n"] == 7 and after["c"] == 3.0
        assert torch.equal(after["p"], torch.tensor([2.0, 3.0]) + rank)  # not named: local


def test_all_reduced_synchronized_checks_spellings_at_definition():
    for ws in (1, 2):
        for out in results(ws):
            seen = out["class_decorator"]
            assert seen["lower"][0] == "ValueError" and "Reduction operation is not valid" in seen["lower"][1]
            assert seen["unknown"][0] == "ValueError" and "'MINN'" in seen["unknown"][1]
            assert seen["twice"][0] == "ValueError" and "named twice" in seen["twice"][1]
            assert seen["nonstr"][0] == "TypeError"


def test_all_reduced_synchronized_syncs_slots_and_buffers_and_refuses_the_rest():
    for out in results(2):
        seen = out["class_decorator"]["compute"]
        assert seen["slot"] == ("ok", 2)
        assert seen["buffer"][0] == "ok" and torch.equal(seen["buffer"][1], torch.tensor([1, 2]))
        kind, message = seen["slot str"]
        assert (
            kind == "TypeError"
            and "Attribute provided to all_reduced_synchronized should be a number or tensor but `label`" in message
        )
        kind, message = seen["class attribute"]
        assert kind == "ValueError" and "has no attribute named `scale`." in message
    one = results(1)[0]["class_decorator"]["compute"]  # one process: no sync, nothing checked
    assert one["slot"] == ("ok", 1) and one["slot str"] == ("ok", 1)
    assert one["class attribute"][0] == "ok" and torch.equal(one["class attribute"][1], torch.tensor([0, 1]))
