"""Plan-driven, packed sync of metric state across ranks: one sync, step by step; the plan and
its layouts: torchtally.sync.plan; the header and a small plan's data: torchtally.sync.header.

A SyncPlan is built once from the *declared* states of one metric, one collection or one
decorated object (never from data), so every rank derives the same plan and makes the same
collectives in the same order. One sync is:

  1. one header exchange of HEADER_SLOTS int64 per rank (the same size for every plan; an
     all_to_all in a gloo group of up to dist.DIRECT_HEADER_MAX_WORLD ranks, one round where
     gloo's ring all_gather takes W - 1, or, where a host has fewer cores than ranks, a ring of
     point-to-point messages that wakes one rank at a time (torchtally.sync.exchange); an
     all_gather otherwise): the plan's fingerprint,
     this rank's local status, the sync options, whether this rank has data its last result
     did not see ("dirty"), which units (metrics) were updated, the dim-0 length
     of every cat/merge state, and the kind (bool, int, float) of every Python number. Every
     rank sees every header, so a fingerprint that differs, or a rank whose state no longer
     matches its declaration, raises the same SyncError on every rank before any data is
     reduced. When no rank is dirty, every rank keeps its cached result and the sync ends here.
     (A second, plan-sized header all_gather happens only when a plan has more flags and
     lengths than the header holds.)

     A *small* plan (fixed-shape states only, fitting the header after these fields: see
     torchtally.sync.plan.SmallLayout) sends its data in this same header, and the sync ends here too:
     every rank reduces the W copies itself, exactly and identically (torchtally.sync.header).
     One collective, where steps 2 and 3 would add at least one more round trip.
  2. one all_reduce per (transport dtype, op) group of fixed-shape states, packed into one
     flat buffer across all metrics of the plan. Integer and bool states travel as int64 and
     half floats as float32, so a collection of int64/int32 counters costs one all_reduce.
     A Python number (a "number" state: bool, int or float, possibly a different one on each
     rank; given as a Python number or a 0-dim tensor, and given back in the same form)
     travels as int64 when no rank holds a float and as float64 otherwise, as the header's
     kinds say; so ints stay exact, and an int on one rank and a float on another (an empty
     rank still holding its reset value 0) sync like any other state.
  3. one all_gather of raw bytes for all cat and merge states together, each padded to its
     longest rank (and to the plan's largest itemsize, so each can be viewed as its dtype) and
     trimmed by the header's lengths; skipped when they are empty on every rank. Ranks with no
     samples take part like any other.

A failure after the data collectives (unpacking, or a metric's merge) raises SyncError naming
the state; every rank has the same data then, so a rank that unpacks fails alike, and the
process group stays usable.

With a recipient rank, steps 2 and 3 become reduce and gather to that rank (a small plan's
header reaches every rank anyway; only the recipient reduces it). Every wait is bounded by the
sync's timeout; a failed or timed-out collective becomes a SyncError naming the ranks lost and
where (torchtally.sync.failure: a roll call of the group over torchtally.sync.rollcall, whose
addresses every header carries, so naming does not depend on the store's host).

Sync never writes to the values it is given: packing copies them into fresh buffers, and the
returned tensors are views of those buffers (or of a small plan's fresh reductions). The header's
buffers are the exception to "fresh": they are reused from one sync to the next
(torchtally.sync.header), and nothing returned is a view of them.

A transport registered for a group (torchtally.sync.transport.register_transport; torchtally.sync.nccl's
"nccl" backend is one) carries steps 2 and 3 instead of torch.distributed; the header, a small
plan's data within it, and every check and error report stay on torch.distributed.
"""

import contextlib
import time
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.distributed

from ..errors import SyncError
from . import dist, exchange, failure, rollcall
from .header import (
    ADDRESS,
    FP,
    OPTIONS,
    PROBLEM,
    PROBLEMS,
    REJECTED,
    STATUS,
    Header,
    decode,
    give_back,
    header_words,
    python_number,
    reduce_small,
    scan,
    take,
)
from .plan import HEADER_SLOTS, NUMBER_KINDS, FixedGroup, SyncPlan, describe_mismatch, local_problem
from .transport import transport_for

_REDUCE_OPS = {
    "sum": torch.distributed.ReduceOp.SUM,
    "max": torch.distributed.ReduceOp.MAX,
    "min": torch.distributed.ReduceOp.MIN,
    "prod": torch.distributed.ReduceOp.PRODUCT,
}


MergeFn = Callable[[int, List[torch.Tensor]], torch.Tensor]


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


# Returned by sync_states when no rank had new data (dirty=False everywhere).
UNCHANGED: Any = _Unchanged()


def sync_states(
    plan: SyncPlan,
    values: Sequence[torch.Tensor],
    *,
    group: Optional[Any] = None,
    timeout_s: float = dist.DEFAULT_SYNC_TIMEOUT_S,
    recipient: Optional[int] = None,
    updated: Optional[Sequence[bool]] = None,
    merge: Optional[MergeFn] = None,
    on_header: Optional[Callable[[List[bool]], None]] = None,
    dirty: bool = True,
    local_error: Optional[BaseException] = None,
) -> Any:
    """Sync ``values`` (one per plan spec, in plan order) across ``group``.

    Returns the synced tensors in plan order, on the devices of ``values``; None on ranks other
    than ``recipient`` when one is given (a rank within ``group``). ``updated[u]`` tells whether
    unit u was updated on this rank; after the header, ``on_header`` receives, per unit, whether
    any rank updated it, and may raise (consistently on every rank) before any data moves.
    ``merge(i, per_rank_values)`` combines spec i's per-rank values (rank order) for a "merge"
    state. ``dirty=False`` says this rank's state has not changed since its last synced result;
    when that holds on every rank, only the header is exchanged and UNCHANGED is returned, so
    that cached results stay in step across ranks. Must be called by every rank of ``group``;
    a world of size 1 is the caller's job (no sync at all).

    ``local_error``: an error this rank found before the sync (a batch its device rejected). It
    is announced in the header, so every rank stops there: this rank raises it, the others a
    SyncError naming this rank, and no data moves.
    """
    sync = _Sync(plan, group, timeout_s, recipient)
    try:
        return sync.run(values, updated, merge, on_header, dirty, local_error)
    finally:
        rollcall.leave(sync.ranks, sync.sync_id)


class _Sync:
    """One sync's state: the deadline, the sync id for error reports, the comm device."""

    def __init__(self, plan: SyncPlan, group: Optional[Any], timeout_s: float, recipient: Optional[int]) -> None:
        self.plan = plan
        self.group = group
        self.timeout_s = timeout_s
        info = dist.group_info(group)
        self.world = info.size
        self.rank = info.rank
        if recipient is not None and not 0 <= recipient < self.world:
            raise ValueError(f"recipient_rank must be in [0, {self.world}) for this process group, got {recipient}")
        self.recipient = recipient
        self.info = info
        # the header's and the data's, known with the values (run)
        self.device: torch.device = None  # type: ignore[assignment]  # run() sets it before any use
        self.data_device: Optional[torch.device] = None
        self.direct_header = info.direct_header
        self.route = exchange.route_of(info) if info.direct_header else None
        self.transport = transport_for(group)
        self.sync_id = dist.next_sync_id(group, info)
        self.start = time.monotonic()
        self.deadline = self.start + timeout_s
        self.ranks = info.ranks
        rollcall.mark(self.ranks, self.sync_id, "header")
        self.address = rollcall.address_word(info.ranks[info.rank], dist.default_store)
        self.buffers: Any = None  # the header's, taken from torchtally.sync.header's pool

    # -- the protocol -------------------------------------------------------------------

    def run(
        self,
        values: Sequence[Any],
        updated: Optional[Sequence[bool]],
        merge: Optional[MergeFn],
        on_header: Optional[Callable[[List[bool]], None]],
        dirty: bool,
        local_error: Optional[BaseException] = None,
    ) -> Any:
        plan = self.plan
        if len(values) != len(plan.specs):
            raise ValueError(f"sync got {len(values)} values for a plan of {len(plan.specs)} states")
        self.device = self.info.device_for(values)
        self.data_device = self.transport.device if self.transport is not None else self.device
        header = self._exchange_header(values, updated, dirty, local_error)
        table, lengths, number_kinds = header.table, header.lengths, header.number_kinds
        if on_header is not None:
            on_header(header.updated_anywhere)
        if plan.small is not None:  # the data came with the header
            if not header.dirty_anywhere:
                give_back(self.buffers)
                return UNCHANGED
            if self.recipient is not None and self.rank != self.recipient:
                give_back(self.buffers)
                return None
            synced = reduce_small(plan, self.buffers, table, number_kinds, values, self._unpack_error)
            give_back(self.buffers)  # only now: the reductions are fresh tensors, all read out
            return synced
        if not header.dirty_anywhere:
            return UNCHANGED

        pending: List[Tuple[str, Any, Any]] = []  # (kind, payload, work)
        for g in plan.fixed_groups_for(number_kinds):
            buf = self._pack_fixed(g, values)
            pending.append(("fixed", (g, buf), self._reduce(buf, g.reduce)))
        var_layout = self._var_layout(lengths)
        if var_layout is not None:
            block, offsets = var_layout
            local = self._pack_var(values, block, offsets)
            out, work = self._gather(local, block)
            pending.append(("var", (out, block, offsets), work))
        for _, _, work in pending:
            self._wait(work, "data collectives")

        if self.recipient is not None and self.rank != self.recipient:
            return None
        synced = [None] * len(plan.specs)
        for kind, payload, _ in pending:
            if kind == "fixed":
                self._unpack_fixed(payload[0], payload[1], values, synced)
            else:
                self._unpack_var(payload[0], payload[1], payload[2], lengths, values, synced, merge)
        for i in plan.var_indices:
            if synced[i] is None:  # empty on every rank: nothing was gathered
                with self._unpacking(i):
                    empty = values[i].new_empty((0,) + plan.specs[i].shape)
                    synced[i] = self._combine_var(i, [empty] * self.world, merge)
        return synced

    @contextlib.contextmanager
    def _unpacking(self, i: int) -> Iterator[None]:
        """Turn a failure while unpacking or merging state i into a SyncError naming it. The
        data has arrived on every rank by then, so the process group is still usable."""
        try:
            yield
        except Exception as exc:
            raise self._unpack_error(i, exc) from exc

    def _unpack_error(self, i: int, exc: BaseException) -> SyncError:
        return SyncError(
            f"torchtally sync #{self.sync_id}: the data collectives completed, but unpacking state "
            f"'{self.plan.specs[i].label}' failed: {type(exc).__name__}: {exc}",
            missing_ranks=[],  # every rank reached the sync
            sync_id=self.sync_id,
        )

    def _exchange_header(
        self,
        values: Sequence[Any],
        updated: Optional[Sequence[bool]],
        dirty: bool,
        local_error: Optional[BaseException] = None,
    ) -> Header:
        plan = self.plan
        status, problem, detail = 0, 0, ""
        for i, (spec, value) in enumerate(zip(plan.specs, values)):
            problem, detail = local_problem(spec, value)
            if problem:
                status = i + 1
                break
        route = self.route
        if local_error is None and route is not None:
            local_error = route.error()  # this process's unreadable choice of exchange, if any
        if not status and local_error is not None:
            status, problem = 1, REJECTED
        fixed = [
            plan.fingerprint,
            status,
            problem,
            0 if self.recipient is None else self.recipient + 1,
            1 if dirty else 0,
            self.address,
        ] + ([route.vote, route.host] if route is not None else [0, 0])
        header = header_words(plan, fixed, values, updated, sendable=status == 0)
        small = plan.small
        # Every plan's header has the same size, so ranks whose plans differ still exchange
        # well-formed headers and find the difference in them. The buffers are reused from the
        # last sync of this layout (torchtally.sync.header).
        ring = route is not None and route.ring is True
        copies = self.world if self.direct_header and not ring else 1
        buffers = self.buffers = take(
            plan.fingerprint,
            small,
            len(header),
            self.world,
            self.device,
            plan.shapes,
            copies,
            self.rank if ring else None,
        )
        buffers.write(header)
        if small is not None and status == 0:
            buffers.pack(values)

        if ring:
            try:
                exchange.ring(buffers.gathered, HEADER_SLOTS, self.rank, self.ranks, self.group, self.deadline)
            except Exception as exc:
                self._fail("header", exc)
        else:
            collective = torch.distributed.all_to_all_single if self.direct_header else _all_gather_flat
            self._wait(self._start(collective, buffers.gathered, buffers.sent, stage="header"), "header")
        table = buffers.read_table()
        if small is None:
            give_back(buffers)  # all read: a plan that is not small needs nothing more from them
        seen = scan(plan, table)
        if route is not None:
            route.learn(table, seen.agree)  # on the group's first agreed header, every rank alike
        rollcall.learn(self.ranks, [row[ADDRESS] for row in table])
        # A rank's own error first: its plan may differ from the others' because of that error
        # (an attribute it could not read), and every rank should hear about the error itself.
        if seen.rejected:
            self._raise_local_problem(table, detail, local_error)
        if not seen.agree:
            self._raise_mismatch(table)
        if seen.troubled:
            self._raise_local_problem(table, detail, local_error)
        if len(header) > HEADER_SLOTS:
            rest = torch.tensor(header[HEADER_SLOTS:], dtype=torch.int64, device=self.device)
            rest_table = self._all_gather_tensor(rest, "header (overflow)").tolist()
            table = [row + extra for row, extra in zip(table, rest_table)]
        rollcall.mark(self.ranks, self.sync_id, "after header")
        return decode(plan, table, seen)

    def _all_gather_tensor(self, local: torch.Tensor, stage: str) -> torch.Tensor:
        """[W, n]: every rank's ``local`` (n int64 words), in rank order."""
        out = torch.empty(self.world * local.numel(), dtype=torch.int64, device=self.device)
        self._wait(self._start(_all_gather_flat, out, local, stage=stage), stage)
        return out.view(self.world, -1)

    def _raise_mismatch(self, table: List[List[int]]) -> None:
        """The ranks' fingerprints or options differ: raise SyncError describing how."""
        fps = [row[FP] for row in table]
        opts = [row[OPTIONS] for row in table]
        # Every rank saw the same table, so every rank is here: describing the plans with one
        # more (object) gather is safe and gives the user the actual difference.
        mine = {"plan": self.plan.describe(), "options": self.plan.options, "recipient": self.recipient}
        plans: List[Any] = [None] * self.world
        try:
            torch.distributed.all_gather_object(plans, mine, group=self.group)
            message = describe_mismatch(plans)
        except Exception as exc:  # pragma: no cover - depends on the failure
            message = f"plan fingerprints per rank {fps}, options per rank {opts} (describing failed: {exc})"
        raise SyncError(
            f"torchtally sync #{self.sync_id}: ranks disagree on what to sync, detected before any data "
            f"was exchanged: {message}",
            sync_id=self.sync_id,
        )

    def _raise_local_problem(
        self, table: List[List[int]], my_detail: str, local_error: Optional[BaseException] = None
    ) -> None:
        if local_error is not None and table[self.rank][PROBLEM] == REJECTED:
            raise local_error  # this rank's own error, as it would be raised without a sync
        rejected = [r for r, row in enumerate(table) if row[STATUS] and row[PROBLEM] == REJECTED]
        if rejected:
            raise SyncError(
                f"torchtally sync #{self.sync_id}: rank(s) {rejected} stopped the sync with an error of their "
                "own, raised there (a batch that rank's device rejected after the update returned, or a "
                "state it could not send, e.g. a missing attribute of a decorated metric). No data was "
                "exchanged; the process group is usable.",
                missing_ranks=[],
                sync_id=self.sync_id,
            )
        parts = []
        for r, row in enumerate(table):
            if row[STATUS]:
                spec = self.plan.specs[row[STATUS] - 1]
                what = PROBLEMS.get(row[PROBLEM], "value")
                got = f" (got {my_detail})" if r == self.rank else ""
                parts.append(
                    f"rank {r}: state '{spec.label}' changed {what} since it was declared as {spec.describe()}{got}"
                )
        raise SyncError(
            f"torchtally sync #{self.sync_id}: " + "; ".join(parts) + ". Assign states only values of their "
            "declared shape and dtype.",
            sync_id=self.sync_id,
        )

    # -- fixed-shape states -------------------------------------------------------------

    def _pack_fixed(self, g: FixedGroup, values: Sequence[Any]) -> torch.Tensor:
        parts = []
        for i in g.indices:
            v = values[i]
            v = v.detach() if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=g.dtype)  # a Python number
            if v.dtype != g.dtype or v.device != self.data_device:
                v = v.to(device=self.data_device, dtype=g.dtype)
            parts.append(v.reshape(-1))
        return torch.cat(parts)  # always a fresh buffer: the collective never touches local state

    def _reduce(self, buf: torch.Tensor, reduce: str) -> Any:
        op = _REDUCE_OPS[reduce]
        if self.transport is not None:
            return self._start(self.transport.all_reduce, buf, op=op, stage="all_reduce")
        if self.recipient is None:
            return self._start(torch.distributed.all_reduce, buf, op=op, stage="all_reduce")
        dst = dist.global_rank_of(self.group, self.recipient)
        return self._start(torch.distributed.reduce, buf, dst=dst, op=op, stage="reduce")

    def _unpack_fixed(self, g: FixedGroup, buf: torch.Tensor, values: Sequence[Any], synced: List[Any]) -> None:
        for i, dtype, chunk in zip(g.indices, g.out_dtypes, buf.split(list(g.numels))):
            with self._unpacking(i):
                if not isinstance(values[i], torch.Tensor):  # a Python number comes back as one
                    synced[i] = python_number(chunk, NUMBER_KINDS.index(dtype))
                    continue
                out = chunk.view(self.plan.specs[i].shape)
                if out.dtype != dtype or out.device != values[i].device:
                    out = out.to(device=values[i].device, dtype=dtype)
                synced[i] = out

    # -- cat and merge states: one byte gather ------------------------------------------

    def _var_layout(self, lengths: List[List[int]]) -> Optional[Tuple[int, List[int]]]:
        if not self.plan.var_indices:
            return None
        offsets, block = [], 0
        for j, row_bytes in enumerate(self.plan.row_bytes):
            offsets.append(block)
            longest = max(rank_lengths[j] for rank_lengths in lengths)
            block += _align(longest * row_bytes, self.plan.var_align)
        return (block, offsets) if block else None

    def _pack_var(self, values: Sequence[Any], block: int, offsets: List[int]) -> torch.Tensor:
        buf = torch.zeros(block, dtype=torch.uint8, device=self.data_device)
        for j, i in enumerate(self.plan.var_indices):
            v = values[i]
            if v.numel() == 0:
                continue
            raw = v.detach().to(self.data_device).contiguous().view(-1).view(torch.uint8)
            buf[offsets[j] : offsets[j] + raw.numel()] = raw
        return buf

    def _gather(self, local: torch.Tensor, block: int) -> Tuple[torch.Tensor, Any]:
        out = torch.empty(self.world * block, dtype=torch.uint8, device=self.data_device)
        if self.transport is not None:
            return out, self._start(self.transport.all_gather_flat, out, local, stage="all_gather")
        if self.recipient is None:
            return out, self._start(_all_gather_flat, out, local, stage="all_gather")
        dst = dist.global_rank_of(self.group, self.recipient)
        parts = list(out.split(block)) if self.rank == self.recipient else None
        return out, self._start(torch.distributed.gather, local, gather_list=parts, dst=dst, stage="gather")

    def _unpack_var(
        self,
        out: torch.Tensor,
        block: int,
        offsets: List[int],
        lengths: List[List[int]],
        values: Sequence[Any],
        synced: List[Any],
        merge: Optional[MergeFn],
    ) -> None:
        plan = self.plan
        for j, i in enumerate(plan.var_indices):
            spec = plan.specs[i]
            with self._unpacking(i):
                per_rank = []
                for r in range(self.world):
                    start = r * block + offsets[j]
                    n = lengths[r][j]
                    raw = out[start : start + n * plan.row_bytes[j]]
                    per_rank.append(raw.view(spec.dtype).view((n,) + spec.shape).to(values[i].device))
                synced[i] = self._combine_var(i, per_rank, merge)

    def _combine_var(self, i: int, per_rank: List[torch.Tensor], merge: Optional[MergeFn]) -> torch.Tensor:
        if self.plan.specs[i].reduce == "cat":
            return torch.cat(per_rank)
        if merge is None:
            raise ValueError(f"state '{self.plan.specs[i].label}' reduces by 'merge' but no merge function was given")
        return merge(i, per_rank)

    # -- waiting and failing ------------------------------------------------------------

    def _start(self, collective: Callable[..., Any], *args: Any, stage: str, **kwargs: Any) -> Any:
        if not stage.startswith("header"):
            rollcall.mark(self.ranks, self.sync_id, "data call")
        try:
            return collective(*args, group=self.group, async_op=True, **kwargs)
        except Exception as exc:
            self._fail(stage, exc)

    def _wait(self, work: Any, stage: str) -> None:
        if not stage.startswith("header"):
            rollcall.mark(self.ranks, self.sync_id, "data wait")
        try:
            dist.wait(work, self.deadline, poll=self.info.nccl_only)
        except Exception as exc:
            self._fail(stage, exc)

    def _fail(self, stage: str, exc: BaseException) -> None:
        raise failure.sync_error(
            group=self.ranks,
            me=self.ranks[self.rank],
            sync_id=self.sync_id,
            stage=stage,
            elapsed_s=time.monotonic() - self.start,
            timeout_s=self.timeout_s,
            cause=exc,
            store_getter=dist.default_store,
        ) from exc


def _all_gather_flat(output: torch.Tensor, input: torch.Tensor, **kwargs: Any) -> Any:
    # torch 2.13 renamed all_gather_into_tensor to all_gather_single; look both up at call time
    # so that instrumentation of torch.distributed sees the call.
    fn = getattr(torch.distributed, "all_gather_single", None) or torch.distributed.all_gather_into_tensor
    return fn(output, input, **kwargs)


def _align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment
