"""Small plans sync in one collective: their data travels in the header exchange and every rank
reduces the W copies itself.

One spawned run per world size (2 and 4) and header exchange (gloo's all_to_all, the default up
to torchtally.sync.dist.DIRECT_HEADER_MAX_WORLD ranks; the all_gather used beyond it, forced here by
lowering that bound; and torchtally.sync.exchange's ring of point-to-point messages, taken where
a host has fewer cores than ranks and forced here by TORCHTALLY_HEADER_EXCHANGE) does every
check on real gloo ranks and returns what it saw; the tests below read it. Checked: exactly one
header exchange (one collective, or the ring's messages; counted by wrapping
torch.distributed) for metrics, collections and decorated objects whose states fit, two just
past the bound; float results bit-identical on every rank and equal to a rank-order reduction
done here; the unchanged shortcut; mismatched plans (both small, or one small and one large),
a bent state, a rejected batch and a missing rank all raising on every rank with no data
reduced; an int sum leaving int64 raising instead of wrapping; a recipient rank; and the
two-step path of a large plan holding Python numbers of mixed kinds.
"""

import datetime
import os
import struct
import time
from typing import Any, Dict, List

import numpy as np
import pytest
import torch
import torch.distributed as dist

import torchtally.sync.dist
from torchtally import Metric, MetricCollection, SyncError, all_reduced_synchronized
from torchtally.sync.exchange import EXCHANGE_ENV
from torchtally.sync.plan import HEADER_FIXED, HEADER_SLOTS, StateSpec, SyncPlan, number_spec
from torchtally.sync.protocol import sync_states
from torchtally.testing import count_collectives, run_distributed

pytestmark = pytest.mark.distributed

# Values whose float sums and products depend on the order they are taken in.
FLOAT_ROWS = [[1e8, 1.0, 3.0, -2.5], [-1e8, 1e-3, 0.1, 7.0], [0.3, -1.0, 1e-9, 1e20], [2.0, 1e-7, -0.2, -1e20]]


class Floats(Metric):
    """Every fixed dtype and op a small plan reduces (one unit: fields = 5 + 1 flag word)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("f32", torch.zeros(4, dtype=torch.float32), reduce="sum")
        self.add_state("f64p", torch.ones(4, dtype=torch.float64), reduce="prod")
        self.add_state("bf16", torch.zeros(4, dtype=torch.bfloat16), reduce="sum")
        self.add_state("c128", torch.zeros(2, dtype=torch.complex128), reduce="sum")
        self.add_state("fmax", torch.full((4,), -float("inf"), dtype=torch.float64), reduce="max")
        self.add_state("i32min", torch.full((3,), 2**31 - 1, dtype=torch.int32), reduce="min")
        self.add_state("seen", torch.zeros(2, dtype=torch.bool), reduce="max")

    def update(self, rank: int) -> None:
        row = torch.tensor(FLOAT_ROWS[rank], dtype=torch.float64)
        self.f32 = self.f32 + row.float()
        self.f64p = self.f64p * (row + 0.5)
        self.bf16 = self.bf16 + row.to(torch.bfloat16)
        self.c128 = self.c128 + torch.tensor([complex(row[0], row[1]), complex(row[2], row[3])], dtype=torch.complex128)
        self.fmax = torch.maximum(self.fmax, row if rank != 1 else torch.tensor([float("nan"), 0, 0, 0.0]))
        self.i32min = torch.minimum(self.i32min, torch.tensor([rank, -rank, 5 - rank], dtype=torch.int32))
        self.seen = self.seen | torch.tensor([rank == 0, False])

    def compute(self) -> Dict[str, torch.Tensor]:
        return {name: getattr(self, name).clone() for name in self.state_names()}

    def state_names(self) -> List[str]:
        return ["f32", "f64p", "bf16", "c128", "fmax", "i32min", "seen"]


class Counts(Metric):
    """One int64 sum state of ``n`` values: ``n`` sets the plan's size."""

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("counts", torch.zeros(n, dtype=torch.int64), reduce="sum")

    def update(self, rank: int) -> None:
        self.counts = self.counts + torch.arange(self.counts.numel()) * (rank + 1)

    def compute(self) -> torch.Tensor:
        return self.counts.clone()


# The fixed fields and one unit flag word: the rest of the header is the data a Metric can carry.
FITS = HEADER_SLOTS - HEADER_FIXED - 1


@all_reduced_synchronized("total", "big")
class Totals:
    def __init__(self, rank: int) -> None:
        self.total = 2**62 + rank  # four ranks' sum leaves int64
        self.big = 0.5 * rank

    def compute(self):
        return self.total, self.big


@all_reduced_synchronized("num", "mean_sum", "flag:MAX", "hist")
class MixedLarge:
    """Numbers of mixed kinds next to a tensor too large for the header: the two-step path."""

    def __init__(self, rank: int) -> None:
        self.num = rank  # int everywhere
        self.mean_sum = 0 if rank == 0 else 0.25 * rank  # int on rank 0, float elsewhere
        self.flag = rank == 1
        self.hist = torch.arange(HEADER_SLOTS, dtype=torch.int64) * rank

    def compute(self):
        return self.num, self.mean_sum, self.flag, self.hist.clone()


def _counted(fn) -> Dict[str, Any]:
    start = time.monotonic()
    with count_collectives() as counter:
        try:
            value = fn()
            return {"value": value, "counts": dict(counter.by_name)}
        except (SyncError, ValueError) as exc:
            return {
                "kind": type(exc).__name__,
                "error": str(exc),
                "counts": dict(counter.by_name),
                "missing_ranks": getattr(exc, "missing_ranks", None),
                "seconds": time.monotonic() - start,
            }


def _reject():
    raise ValueError("target: label 9 is out of range [0, 4) (found on the GPU after that update returned)")


def run_checks(rank: int, ws: int, exchange: str) -> Dict[str, Any]:
    if exchange == "all_gather":  # as a group larger than the bound would (before any sync)
        torchtally.sync.dist.DIRECT_HEADER_MAX_WORLD = 1
    os.environ[EXCHANGE_ENV] = "ring" if exchange == "ring" else "all_to_all"
    Counts(1).update(rank).compute()  # the group's first header exchange, where it chooses
    out: Dict[str, Any] = {}
    floats = Floats()
    floats.update(rank)
    out["floats"] = _counted(floats.compute)
    out["floats_plan"] = floats._sync_plan().collectives_per_sync
    out["floats_again"] = _counted(floats.compute)  # nobody has new data: the cached result
    if rank == ws - 1:
        floats.update(rank)
    out["floats_after_one_rank"] = _counted(floats.compute)

    collection = MetricCollection({f"c{k}": Counts(5 + k) for k in range(3)})
    for m in collection.values():
        m.update(rank)
    out["collection"] = _counted(collection.compute)
    for n in (FITS, FITS + 1):
        out[f"counts_{n}"] = _counted(Counts(n).update(rank).compute)

    # Ranks whose plans differ: both small, or small on rank 0 and too large for the header elsewhere.
    out["mismatch_small"] = _counted(Counts(4 if rank == 0 else 3).update(rank).compute)
    out["mismatch_sizes"] = _counted(Counts(4 if rank == 0 else 1000).update(rank).compute)
    bent = Counts(4).update(rank)
    if rank == ws - 1:
        bent.counts = torch.zeros(6, dtype=torch.int64)
    out["bent"] = _counted(bent.compute)
    rejecting = Counts(4).update(rank)
    if rank == 0:
        rejecting.__dict__["raise_rejected_cuda_updates"] = _reject
    out["rejected"] = _counted(rejecting.compute)

    # A number state given as a Python number on even ranks and as a 0-dim tensor on odd ones:
    # each rank gets the agreed kind (float: rank 1 holds one) back in the form it gave.
    plan = SyncPlan([number_spec("n.total", "sum"), StateSpec("n.rows", "sum", torch.int64, (2,))])
    mine = rank + 1 if rank % 2 == 0 else torch.tensor(0.5 * rank, dtype=torch.float64)
    out["number_forms"] = _counted(lambda: sync_states(plan, [mine, torch.tensor([rank, 1])]))
    try:  # a subclass of a Python number is not one (numpy's float64): SyncError, every rank
        sync_states(plan, [np.float64(1.0) if rank == 0 else 1, torch.tensor([rank, 1])])
    except SyncError as exc:
        out["number_subclass"] = str(exc)
    out["overflow"] = _counted(Totals(rank).compute)
    out["recipient"] = _counted(Counts(4, recipient_rank=ws - 1).update(rank).compute)
    out["mixed_large"] = _counted(MixedLarge(rank).compute)
    out["after_errors"] = _counted(Counts(4).update(rank).compute)

    # A rank that never joins: the others raise SyncError naming it, within the sync timeout.
    store = dist.distributed_c10d._get_default_store()
    late = Counts(4, sync_timeout=2.0).update(rank)
    if rank == ws - 1:
        store.wait([f"test/small/missing/{r}" for r in range(ws - 1)], datetime.timedelta(seconds=60))
    else:
        out["missing"] = _counted(late.compute)
        store.set(f"test/small/missing/{rank}", "1")
    return out


_runs: Dict[Any, List[Dict[str, Any]]] = {}


def results(ws: int, exchange: str) -> List[Dict[str, Any]]:
    if (ws, exchange) not in _runs:
        _runs[ws, exchange] = run_distributed(run_checks, ws, exchange, timeout=240)
    return _runs[ws, exchange]


def rank_order(op, rows: List[torch.Tensor]) -> torch.Tensor:
    """The reduction a small plan promises: rank 0's value, then each next rank's, in order."""
    total = rows[0].clone()
    for row in rows[1:]:
        total = op(total, row)
    return total


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))


WORLD_SIZES = [2, 4]
# The header exchange of a gloo group, and the collective it shows up as.
HEADER = {"all_to_all": "all_to_all_single", "all_gather": "all_gather_single"}
EXCHANGES = list(HEADER) + ["ring"]


def ring_messages(rank: int, ws: int) -> Dict[str, int]:
    """A ring exchange's point-to-point messages on ``rank``: the rows before its own come from
    its predecessor and go on with its own (the last rank, holding every row, sends rank 0 all
    but row 0); the rows after its own come round next, and go on while the next rank lacks any."""
    return {"irecv": (rank > 0) + (rank < ws - 1), "isend": 1 + (rank + 2 < ws)}


def one(exchange: str, rank: int, ws: int) -> Dict[str, int]:
    """The collectives of a small plan's sync on ``rank``: the header exchange alone."""
    return ring_messages(rank, ws) if exchange == "ring" else {HEADER[exchange]: 1}


def with_one_exchange(counts: Dict[str, int], exchange: str, rank: int, ws: int) -> bool:
    """``counts`` hold the header exchange once (and maybe other collectives)."""
    return all(counts.get(name) == n for name, n in one(exchange, rank, ws).items())


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_a_small_plan_is_one_collective(ws, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        header = one(exchange, rank, ws)
        assert out["floats"]["counts"] == header and out["floats_plan"] == 1
        assert out["collection"]["counts"] == header
        assert out[f"counts_{FITS}"]["counts"] == header  # fills the header exactly
        # One int64 more does not fit: the header, then one all_reduce.
        assert out[f"counts_{FITS + 1}"]["counts"] == {**header, "all_reduce": 1}
        for n in (FITS, FITS + 1):
            want = torch.arange(n) * sum(r + 1 for r in range(ws))
            assert torch.equal(out[f"counts_{n}"]["value"], want)
        for k in range(3):
            assert torch.equal(out["collection"]["value"][f"c{k}"], torch.arange(5 + k) * sum(r + 1 for r in range(ws)))


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_float_results_are_bit_identical_on_every_rank_and_in_rank_order(ws, exchange):
    rows = [torch.tensor(FLOAT_ROWS[r], dtype=torch.float64) for r in range(ws)]
    want = {
        "f32": rank_order(torch.add, [r.float() for r in rows]),
        "f64p": rank_order(torch.mul, [r + 0.5 for r in rows]),
        # bf16 travels as float32, summed in rank order, and comes back as bf16.
        "bf16": rank_order(torch.add, [r.to(torch.bfloat16).float() for r in rows]).to(torch.bfloat16),
        "c128": rank_order(
            torch.add, [torch.tensor([complex(r[0], r[1]), complex(r[2], r[3])], dtype=torch.complex128) for r in rows]
        ),
        "i32min": torch.tensor([0, -(ws - 1), 5 - (ws - 1)], dtype=torch.int32),
        "seen": torch.tensor([True, False]),
    }
    values = [out["floats"]["value"] for out in results(ws, exchange)]
    for rank, got in enumerate(values):
        for name, expected in want.items():
            assert got[name].dtype == expected.dtype, (rank, name)
            assert torch.equal(got[name], expected), (rank, name, got[name], expected)
        # max propagates the NaN rank 1 holds
        maxed = torch.stack([r if i != 1 else torch.tensor([float("nan"), 0, 0, 0.0]) for i, r in enumerate(rows)])
        assert torch.isnan(got["fmax"][0]) and torch.equal(got["fmax"][1:], maxed[:, 1:].amax(0))
        for name in got:  # the very same bits on every rank
            assert same_bits(got[name], values[0][name]), (rank, name)
    if ws > 2:  # the order matters for these values, so the checks above would see another one
        assert not torch.equal(want["f32"], rank_order(torch.add, [r.float() for r in reversed(rows)]))


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_unchanged_shortcut_through_the_header(ws, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        assert out["floats_again"]["counts"] == one(exchange, rank, ws)
        for name, value in out["floats"]["value"].items():
            assert same_bits(out["floats_again"]["value"][name], value), name
        # One rank updated again: every rank's result moves, in the same one collective.
        after = out["floats_after_one_rank"]
        assert after["counts"] == one(exchange, rank, ws)
        assert not torch.equal(after["value"]["f32"], out["floats"]["value"]["f32"])
        assert torch.equal(after["value"]["f32"], results(ws, exchange)[0]["floats_after_one_rank"]["value"]["f32"])


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
@pytest.mark.parametrize("case", ["mismatch_small", "mismatch_sizes"])
def test_ranks_whose_plans_differ_raise_on_every_rank(ws, case, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        seen = out[case]
        assert seen.get("kind") == "SyncError", (rank, seen)
        assert "ranks disagree on what to sync" in seen["error"]
        assert "rank 0 has [Counts.counts: sum int64 (4,)]" in seen["error"], seen["error"]
        assert "all_reduce" not in seen["counts"] and with_one_exchange(seen["counts"], exchange, rank, ws), seen


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_a_bent_state_or_a_rejected_batch_raises_on_every_rank(ws, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        bent = out["bent"]
        assert bent.get("kind") == "SyncError" and bent["counts"] == one(exchange, rank, ws), bent
        assert f"rank {ws - 1}: state 'Counts.counts' changed shape" in bent["error"]
        rejected = out["rejected"]
        if rank == 0:
            assert rejected.get("kind") == "ValueError" and rejected["error"].startswith("target: label 9"), rejected
        else:
            assert rejected.get("kind") == "SyncError" and "rank(s) [0] stopped the sync" in rejected["error"]
        assert rejected["counts"] == one(exchange, rank, ws)
        assert torch.equal(out["after_errors"]["value"], torch.arange(4) * sum(r + 1 for r in range(ws)))


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_a_missing_rank_raises_sync_error_naming_it(ws, exchange):
    for out in results(ws, exchange)[:-1]:
        missing = out["missing"]
        assert missing.get("kind") == "SyncError" and missing["missing_ranks"] == [ws - 1], missing
        assert f"rank(s) [{ws - 1}] did not reach this sync" in missing["error"]
        assert missing["seconds"] < 30  # a no-hang bound (2 s timeout + check-in grace), not a speed claim


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_an_int_number_sum_that_leaves_int64_raises_instead_of_wrapping(ws, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        seen = out["overflow"]  # 2**63 + 1 at world size 2, 2**64 + 6 at 4
        assert seen.get("kind") == "SyncError" and seen["counts"] == one(exchange, rank, ws), seen
        assert "Totals.total" in seen["error"] and "does not fit in int64" in seen["error"]


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_a_number_comes_back_in_the_form_it_was_given(ws, exchange):
    total = sum(r + 1 if r % 2 == 0 else 0.5 * r for r in range(ws))
    for rank, out in enumerate(results(ws, exchange)):
        seen = out["number_forms"]
        assert seen["counts"] == one(exchange, rank, ws), seen
        number, rows = seen["value"]
        if rank % 2 == 0:  # given a Python int, back a Python float (rank 1 held a float)
            assert type(number) is float and number == total, (rank, number)
        else:
            assert isinstance(number, torch.Tensor) and number.dtype == torch.float64 and number.dim() == 0
            assert number.item() == total, (rank, number)
        assert torch.equal(rows, torch.tensor([sum(range(ws)), ws]))
        assert "rank 0: state 'n.total' changed type" in out["number_subclass"], out["number_subclass"]
        if rank == 0:  # the rank at fault says what it held
            assert "(got a float64)" in out["number_subclass"], out["number_subclass"]


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_a_recipient_rank_alone_gets_the_result(ws, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        assert out["recipient"]["counts"] == one(exchange, rank, ws)
        if rank == ws - 1:
            assert torch.equal(out["recipient"]["value"], torch.arange(4) * sum(r + 1 for r in range(ws)))
        else:
            assert out["recipient"]["value"] is None


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_a_large_plan_with_numbers_of_mixed_kinds_takes_the_two_step_path(ws, exchange):
    for rank, out in enumerate(results(ws, exchange)):
        seen = out["mixed_large"]
        # header + int64 sum (num, hist) + float64 sum (mean_sum) + int64 max (flag)
        assert seen["counts"] == {**one(exchange, rank, ws), "all_reduce": 3}, seen
        num, mean_sum, flag, hist = seen["value"]
        assert (num, type(num)) == (sum(range(ws)), int)
        assert (mean_sum, type(mean_sum)) == (sum(0.25 * r for r in range(ws)), float)
        assert flag is True
        assert torch.equal(hist, torch.arange(HEADER_SLOTS) * sum(range(ws)))


def test_number_words_round_trip_floats_bit_for_bit():
    from torchtally.sync.header import number_word

    for x in (0.1, -0.0, float("inf"), 1e-310, 2.0**60):
        word = number_word(torch.tensor(x, dtype=torch.float64))
        assert struct.pack("<q", word) == struct.pack("<d", x)


def choose_automatically(rank: int, ws: int) -> Dict[str, Any]:
    os.environ[EXCHANGE_ENV] = "auto"
    counts = []
    for _ in range(2):
        counts.append(_counted(Counts(3).update(rank).compute)["counts"])
    return {"counts": counts, "cores": len(os.sched_getaffinity(0))}


def test_a_group_takes_the_ring_where_its_host_has_fewer_cores_than_ranks():
    """Left to choose (TORCHTALLY_HEADER_EXCHANGE=auto), the ranks make their first header
    exchange by all_to_all and take the ring from then on when this host gives them fewer cores
    than there are ranks (as on a 2-core machine), the all_to_all again otherwise."""
    ws = 3
    outs = run_distributed(choose_automatically, ws, timeout=120)
    short = any(out["cores"] < ws for out in outs)  # every rank runs on this host
    for rank, out in enumerate(outs):
        first, second = out["counts"]
        assert first == one("all_to_all", rank, ws)
        assert second == one("ring" if short else "all_to_all", rank, ws), (rank, out)


def misconfigure_one_rank(rank: int, ws: int) -> List[Dict[str, Any]]:
    os.environ[EXCHANGE_ENV] = "tree" if rank == 1 else "all_to_all"
    return [_counted(Counts(3, sync_timeout=60.0).update(rank).compute) for _ in range(2)]


def test_a_rank_that_cannot_read_its_choice_of_exchange_stops_every_rank_at_once():
    """A TORCHTALLY_HEADER_EXCHANGE that one rank cannot read raises there, at every sync, and
    the others raise too, in the same header exchange, long before the sync timeout (60 s)."""
    for rank, seen in enumerate(run_distributed(misconfigure_one_rank, 3, timeout=120)):
        for attempt in seen:
            if rank == 1:
                assert attempt.get("kind") == "ValueError", attempt
                assert attempt["error"] == f"{EXCHANGE_ENV} must be one of 'auto', 'all_to_all', 'ring'; got 'tree'"
            else:
                assert attempt.get("kind") == "SyncError" and "rank(s) [1] stopped the sync" in attempt["error"]
            assert attempt["counts"] == one("all_to_all", rank, 3), attempt  # the header alone, no data
            assert attempt["seconds"] < 30
