"""Plan-driven, packed sync of metric state across ranks (DESIGN.md §3).

A SyncPlan is built once from the *declared* states of one metric, one collection or one
decorated object (never from data), so every rank derives the same plan and makes the same
collectives in the same order. One sync is:

  1. one header all_gather of HEADER_SLOTS int64 per rank: the plan's fingerprint, this rank's
     local status, the sync options, whether this rank has data its last result did not see
     ("dirty"), which units (metrics) were updated, the dim-0 length of every cat/merge
     state, and the kind (bool, int, float) of every Python number. When no rank is dirty, every rank keeps its cached result and the sync ends here. Every rank sees every header, so a fingerprint that differs, or
     a rank whose state no longer matches its declaration, raises the same SyncError on every
     rank before any data is exchanged. (A second, plan-sized header all_gather happens only
     when a plan has more flags and lengths than the fixed header holds.)
  2. one all_reduce per (transport dtype, op) group of fixed-shape states, packed into one
     flat buffer across all metrics of the plan. Integer and bool states travel as int64 and
     half floats as float32, so a collection of int64/int32 counters costs one all_reduce.
     A Python number (a "number" state: bool, int or float, possibly a different one on each
     rank) travels as int64 when no rank holds a float and as float64 otherwise, as the
     header's kinds say; so ints stay exact, and an int on one rank and a float on another
     (an empty rank still holding its reset value 0) sync like any other state.
  3. one all_gather of raw bytes for all cat and merge states together, each padded to its
     longest rank (and to the plan's largest itemsize, so each can be viewed as its dtype) and
     trimmed by the header's lengths; skipped when they are empty on every rank. Ranks with no
     samples take part like any other.

A failure after the data collectives (unpacking, or a metric's merge) raises SyncError naming
the state; every rank has the same data then, so a rank that unpacks fails alike, and the
process group stays usable.

With a recipient rank, steps 2 and 3 become reduce and gather to that rank. Every wait is
bounded by the sync's timeout; a failed or timed-out collective becomes a SyncError naming the
ranks lost and where (torchtally.sync_failure: a roll call of the group over torchtally.rollcall,
whose addresses every header carries, so naming does not depend on the store's host).

Sync never writes to the values it is given: packing copies them into fresh buffers, and the
returned tensors are views of those buffers.

A transport registered for a group (torchtally.transport.register_transport; torchtally.nccl's
"nccl" backend is one) carries steps 2 and 3 instead of torch.distributed; the header and every
check and error report stay on torch.distributed.
"""
import contextlib
import hashlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.distributed

from . import dist, rollcall, sync_failure
from .errors import SyncError
from .metric_config import Options, describe_plan_differences, option_lines
from .transport import transport_for

FIXED_REDUCES = ("sum", "max", "min", "prod")
VAR_REDUCES = ("cat", "merge")
REDUCES = FIXED_REDUCES + VAR_REDUCES

HEADER_SLOTS = 64
_FP, _STATUS, _PROBLEM, _OPTIONS, _DIRTY, _ADDRESS = 0, 1, 2, 3, 4, 5  # _ADDRESS: rollcall's
_HEADER_FIXED = 6
_FLAG_BITS = 62  # unit flags per int64 header word (bit 63 left alone)
_PROTOCOL = "torchtally-sync-1"

_PROBLEMS = {1: "shape", 2: "dtype", 3: "type"}
_REJECTED = 4  # the problem code of a rank whose compute found a rejected batch (local_error)

# A number state's value is a 0-dim tensor of one of these dtypes; the index is its kind, and
# ranks agree on the widest kind any of them holds.
_NUMBER_KINDS = (torch.bool, torch.int64, torch.float64)

_INT_LIKE = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
_FLOAT_LIKE = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_COMPLEX = (torch.complex64, torch.complex128)


@dataclass(frozen=True)
class StateSpec:
    """One declared state as the plan sees it.

    label: unique, human-readable name used in errors and in the fingerprint ("acc.confmat").
    reduce: one of REDUCES.
    dtype: the state's dtype.
    shape: full shape of a fixed state; for cat/merge the shape of one row (dims after dim 0).
    unit: index of the metric/object owning the state (for the "was updated" flags).
    number: a Python number (see number_spec); dtype and shape are then float64 and ().
    """

    label: str
    reduce: str
    dtype: torch.dtype
    shape: Tuple[int, ...]
    unit: int = 0
    number: bool = False

    def describe(self) -> str:
        shape = ("N",) + self.shape if self.reduce in VAR_REDUCES else self.shape
        dtype = "number" if self.number else str(self.dtype).replace("torch.", "")
        return f"{self.label}: {self.reduce} {dtype} {tuple(shape)}"


def number_spec(label: str, reduce: str, unit: int = 0) -> StateSpec:
    """A Python number state: its value is a 0-dim bool, int64 or float64 tensor, whichever
    this rank holds; the synced value has the widest kind any rank held (float64 > int64 > bool)."""
    if reduce not in FIXED_REDUCES:
        raise ValueError(f"state '{label}': a Python number reduces by one of {FIXED_REDUCES}, got {reduce!r}")
    return StateSpec(label, reduce, torch.float64, (), unit, number=True)


def check_declarable(label: str, dtype: torch.dtype, reduce: str) -> None:
    """Raise a clear error for a state the sync cannot carry exactly."""
    if reduce not in REDUCES:
        raise ValueError(f"state '{label}': reduce must be one of {REDUCES}, got {reduce!r}")
    if reduce in VAR_REDUCES:
        return  # travels as raw bytes: any dtype
    if dtype == torch.bool and reduce in ("sum", "prod"):
        raise ValueError(f"state '{label}': a bool state can only reduce by 'max' (any) or 'min' (all), got {reduce!r}")
    if dtype in _COMPLEX and reduce != "sum":
        raise ValueError(f"state '{label}': a complex state can only reduce by 'sum', got {reduce!r}")
    if dtype not in _INT_LIKE + _FLOAT_LIKE + _COMPLEX:
        raise ValueError(
            f"state '{label}': dtype {dtype} cannot be reduced exactly across ranks; "
            f"use one of int64, int32, int16, int8, uint8, bool, float64, float32, float16, bfloat16, complex"
        )


def transport_dtype(dtype: torch.dtype) -> torch.dtype:
    """dtype a fixed state travels in: integers and bool widen to int64 (exact), half floats to float32."""
    if dtype in _INT_LIKE:
        return torch.int64
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return dtype


_REDUCE_OPS = {
    "sum": torch.distributed.ReduceOp.SUM,
    "max": torch.distributed.ReduceOp.MAX,
    "min": torch.distributed.ReduceOp.MIN,
    "prod": torch.distributed.ReduceOp.PRODUCT,
}


@dataclass(frozen=True)
class _FixedGroup:
    dtype: torch.dtype  # transport dtype
    reduce: str
    indices: Tuple[int, ...]
    numels: Tuple[int, ...]
    out_dtypes: Tuple[torch.dtype, ...]  # what each state comes back as


def _group_fixed(specs: Sequence[StateSpec], number_kinds: Dict[int, int]) -> Tuple[_FixedGroup, ...]:
    """One group per (transport dtype, op), in first-appearance order; ``number_kinds`` maps the
    index of every number state to the kind the ranks agreed on."""
    groups: Dict[Tuple[torch.dtype, str], List[int]] = {}
    dtypes: Dict[int, torch.dtype] = {}
    for i, s in enumerate(specs):
        if s.reduce in FIXED_REDUCES:
            dtypes[i] = _NUMBER_KINDS[number_kinds[i]] if s.number else s.dtype
            groups.setdefault((transport_dtype(dtypes[i]), s.reduce), []).append(i)
    return tuple(
        _FixedGroup(dt, red, tuple(idx), tuple(_numel(specs[i].shape) for i in idx), tuple(dtypes[i] for i in idx))
        for (dt, red), idx in groups.items()
    )


class SyncPlan:
    """The collectives one sync makes, derived from declared states only. Immutable; cache it.

    ``options``: (metric label, {option: description}) for every metric the sync computes
    (torchtally.metric_config), also those that share another's state: they move no data but
    enter the fingerprint, so ranks configured differently stop before any data moves."""

    def __init__(self, specs: Sequence[StateSpec], n_units: int = 1,
                 options: Sequence[Tuple[str, Options]] = ()) -> None:
        labels = [s.label for s in specs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"state labels in one sync plan must be unique, got {labels}")
        for s in specs:
            check_declarable(s.label, s.dtype, s.reduce)
            if not 0 <= s.unit < n_units:
                raise ValueError(f"state '{s.label}': unit {s.unit} out of range for {n_units} units")
            if s.number and (s.reduce not in FIXED_REDUCES or s.shape != ()):
                raise ValueError(f"state '{s.label}': a number state is 0-dim and reduces by one of {FIXED_REDUCES}")
        self.specs: Tuple[StateSpec, ...] = tuple(specs)
        self.n_units = n_units
        self.options: List[Tuple[str, Options]] = [(label, dict(opts)) for label, opts in options]

        self.number_indices: Tuple[int, ...] = tuple(i for i, s in enumerate(self.specs) if s.number)
        self._groups_by_kinds: Dict[Tuple[int, ...], Tuple[_FixedGroup, ...]] = {}
        # The groups of a sync in which every number is an int (all groups, without numbers).
        self.fixed_groups = self.fixed_groups_for([_NUMBER_KINDS.index(torch.int64)] * len(self.number_indices))
        # A number may land in its op's int64 or float64 group: count both for the bound.
        self._max_fixed_groups = len(
            {(dt, s.reduce) for s in self.specs if s.reduce in FIXED_REDUCES
             for dt in ((torch.int64, torch.float64) if s.number else (transport_dtype(s.dtype),))}
        )
        self.var_indices: Tuple[int, ...] = tuple(i for i, s in enumerate(self.specs) if s.reduce in VAR_REDUCES)
        self.row_bytes: Tuple[int, ...] = tuple(
            _numel(self.specs[i].shape) * _itemsize(self.specs[i].dtype) for i in self.var_indices
        )
        # Every state's bytes start at a multiple of the largest itemsize (a power of two, so a
        # multiple of every other): each one can be viewed back as its dtype in place.
        self.var_align = max((_itemsize(self.specs[i].dtype) for i in self.var_indices), default=1)
        self.n_flag_words = (n_units + _FLAG_BITS - 1) // _FLAG_BITS
        self.header_extra = self.n_flag_words + len(self.var_indices) + len(self.number_indices)
        self.fingerprint = _fingerprint(self.describe() + option_lines(self.options))

    def describe(self) -> List[str]:
        """The declared states, one line each (the options: ``self.options``)."""
        return [f"{self.n_units} unit(s)"] + [s.describe() for s in self.specs]

    def fixed_groups_for(self, number_kinds: Sequence[int]) -> Tuple[_FixedGroup, ...]:
        """The fixed groups of a sync whose number states have the agreed ``number_kinds`` (in
        number_indices order). Every rank gets the same kinds from the header, so the same groups."""
        key = tuple(number_kinds)
        groups = self._groups_by_kinds.get(key)
        if groups is None:
            groups = self._groups_by_kinds[key] = _group_fixed(self.specs, dict(zip(self.number_indices, key)))
        return groups

    @property
    def collectives_per_sync(self) -> int:
        """Upper bound of collectives one successful sync makes (the var gather may be skipped)."""
        overflow = 1 if _HEADER_FIXED + self.header_extra > HEADER_SLOTS else 0
        return 1 + overflow + self._max_fixed_groups + (1 if self.var_indices else 0)


def _numel(shape: Tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def _fingerprint(lines: List[str]) -> int:
    digest = hashlib.blake2b("\n".join([_PROTOCOL] + lines).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def _local_problem(spec: StateSpec, value: Any) -> Tuple[int, str]:
    """(problem code, detail) when ``value`` no longer matches ``spec``; (0, "") when it does."""
    if not isinstance(value, torch.Tensor):
        return 3, f"a {type(value).__name__}, not a tensor"
    if spec.number:
        if value.dtype not in _NUMBER_KINDS:
            return 2, f"dtype {value.dtype}"
        return (1, f"shape {tuple(value.shape)}") if value.dim() else (0, "")
    if value.dtype != spec.dtype:
        return 2, f"dtype {value.dtype}"
    if spec.reduce in VAR_REDUCES:
        if value.dim() != 1 + len(spec.shape) or tuple(value.shape[1:]) != spec.shape:
            return 1, f"shape {tuple(value.shape)}"
    elif tuple(value.shape) != spec.shape:
        return 1, f"shape {tuple(value.shape)}"
    return 0, ""


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
        self.device = info.device  # the header's
        self.transport = transport_for(group)
        self.data_device = self.transport.device if self.transport is not None else self.device
        self.sync_id = dist.next_sync_id(group)
        self.start = time.monotonic()
        self.deadline = self.start + timeout_s
        self.ranks = info.ranks
        rollcall.mark(self.ranks, self.sync_id, "header")
        self.address = rollcall.address_word(info.ranks[info.rank], dist.default_store)

    # -- the protocol -------------------------------------------------------------------

    def run(self, values, updated, merge, on_header, dirty, local_error=None) -> Any:
        plan = self.plan
        if len(values) != len(plan.specs):
            raise ValueError(f"sync got {len(values)} values for a plan of {len(plan.specs)} states")
        table, lengths, updated_anywhere, number_kinds = self._exchange_header(values, updated, dirty, local_error)
        if on_header is not None:
            on_header(updated_anywhere)
        if not any(row[_DIRTY] for row in table):
            return UNCHANGED

        pending = []  # (kind, payload, work)
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
        synced: List[Optional[torch.Tensor]] = [None] * len(plan.specs)
        for kind, payload, _ in pending:
            if kind == "fixed":
                self._unpack_fixed(payload[0], payload[1], values, synced)
            else:
                self._unpack_var(*payload, lengths, values, synced, merge)
        for i in plan.var_indices:
            if synced[i] is None:  # empty on every rank: nothing was gathered
                with self._unpacking(i):
                    empty = values[i].new_empty((0,) + plan.specs[i].shape)
                    synced[i] = self._combine_var(i, [empty] * self.world, merge)
        return synced  # type: ignore[return-value]

    @contextlib.contextmanager
    def _unpacking(self, i: int) -> Iterator[None]:
        """Turn a failure while unpacking or merging state i into a SyncError naming it. The
        data has arrived on every rank by then, so the process group is still usable."""
        try:
            yield
        except Exception as exc:
            raise SyncError(
                f"torchtally sync #{self.sync_id}: the data collectives completed, but unpacking state "
                f"'{self.plan.specs[i].label}' failed: {type(exc).__name__}: {exc}",
                missing_ranks=[],  # every rank reached the sync
                sync_id=self.sync_id,
            ) from exc

    def _exchange_header(self, values, updated, dirty, local_error=None):
        plan = self.plan
        status, problem, detail = 0, 0, ""
        for i, (spec, value) in enumerate(zip(plan.specs, values)):
            problem, detail = _local_problem(spec, value)
            if problem:
                status = i + 1
                break
        if not status and local_error is not None:
            status, problem = 1, _REJECTED
        words = [0] * plan.n_flag_words
        for u in range(plan.n_units):
            if updated is None or updated[u]:
                words[u // _FLAG_BITS] |= 1 << (u % _FLAG_BITS)
        var_lengths = [values[i].shape[0] if status == 0 else 0 for i in plan.var_indices]
        kinds = [_NUMBER_KINDS.index(values[i].dtype) if status == 0 else 0 for i in plan.number_indices]
        options = 0 if self.recipient is None else self.recipient + 1
        header = [plan.fingerprint, status, problem, options, int(bool(dirty)), self.address] + words + var_lengths + kinds
        fixed_part = header[:HEADER_SLOTS] + [0] * max(0, HEADER_SLOTS - len(header))

        table = self._all_gather_ints(fixed_part, "header")
        rollcall.learn(self.ranks, [row[_ADDRESS] for row in table])
        # A rank's own error first: its plan may differ from the others' because of that error
        # (an attribute it could not read), and every rank should hear about the error itself.
        if any(row[_STATUS] and row[_PROBLEM] == _REJECTED for row in table):
            self._raise_local_problem(table, detail, local_error)
        self._check_agreement(table)
        if status or any(row[_STATUS] for row in table):
            self._raise_local_problem(table, detail, local_error)
        if len(header) > HEADER_SLOTS:
            rest = self._all_gather_ints(header[HEADER_SLOTS:], "header (overflow)")
            table = [row + extra for row, extra in zip(table, rest)]
        rollcall.mark(self.ranks, self.sync_id, "after header")

        base = _HEADER_FIXED
        updated_anywhere = [
            any((row[base + u // _FLAG_BITS] >> (u % _FLAG_BITS)) & 1 for row in table) for u in range(plan.n_units)
        ]
        base += plan.n_flag_words
        lengths = [row[base : base + len(plan.var_indices)] for row in table]
        base += len(plan.var_indices)
        number_kinds = [max(row[base + k] for row in table) for k in range(len(plan.number_indices))]
        return table, lengths, updated_anywhere, number_kinds

    def _all_gather_ints(self, ints: List[int], stage: str) -> List[List[int]]:
        n = len(ints)
        local = torch.tensor(ints, dtype=torch.int64, device=self.device)
        out = torch.empty(self.world * n, dtype=torch.int64, device=self.device)
        self._wait(self._start(_all_gather_flat, out, local, stage=stage), stage)
        return out.view(self.world, n).tolist()

    def _check_agreement(self, table: List[List[int]]) -> None:
        fps = [row[_FP] for row in table]
        opts = [row[_OPTIONS] for row in table]
        if len(set(fps)) == 1 and len(set(opts)) == 1:
            return
        # Every rank saw the same table, so every rank is here: describing the plans with one
        # more (object) gather is safe and gives the user the actual difference.
        mine = {"plan": self.plan.describe(), "options": self.plan.options, "recipient": self.recipient}
        plans: List[Any] = [None] * self.world
        try:
            torch.distributed.all_gather_object(plans, mine, group=self.group)
            message = _describe_mismatch(plans)
        except Exception as exc:  # pragma: no cover - depends on the failure
            message = f"plan fingerprints per rank {fps}, options per rank {opts} (describing failed: {exc})"
        raise SyncError(
            f"torchtally sync #{self.sync_id}: ranks disagree on what to sync, detected before any data "
            f"was exchanged: {message}",
            sync_id=self.sync_id,
        )

    def _raise_local_problem(self, table: List[List[int]], my_detail: str,
                             local_error: Optional[BaseException] = None) -> None:
        if local_error is not None and table[self.rank][_PROBLEM] == _REJECTED:
            raise local_error  # this rank's own error, as it would be raised without a sync
        rejected = [r for r, row in enumerate(table) if row[_STATUS] and row[_PROBLEM] == _REJECTED]
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
            if row[_STATUS]:
                spec = self.plan.specs[row[_STATUS] - 1]
                what = _PROBLEMS.get(row[_PROBLEM], "value")
                got = f" (got {my_detail})" if r == self.rank else ""
                parts.append(f"rank {r}: state '{spec.label}' changed {what} since it was declared as {spec.describe()}{got}")
        raise SyncError(
            f"torchtally sync #{self.sync_id}: " + "; ".join(parts) + ". Assign states only values of their "
            "declared shape and dtype.",
            sync_id=self.sync_id,
        )

    # -- fixed-shape states -------------------------------------------------------------

    def _pack_fixed(self, g: _FixedGroup, values) -> torch.Tensor:
        parts = []
        for i in g.indices:
            v = values[i].detach()
            if v.dtype != g.dtype or v.device != self.data_device:
                v = v.to(device=self.data_device, dtype=g.dtype)
            parts.append(v.reshape(-1))
        return torch.cat(parts)  # always a fresh buffer: the collective never touches local state

    def _reduce(self, buf: torch.Tensor, reduce: str):
        op = _REDUCE_OPS[reduce]
        if self.transport is not None:
            return self._start(self.transport.all_reduce, buf, op=op, stage="all_reduce")
        if self.recipient is None:
            return self._start(torch.distributed.all_reduce, buf, op=op, stage="all_reduce")
        dst = dist.global_rank_of(self.group, self.recipient)
        return self._start(torch.distributed.reduce, buf, dst=dst, op=op, stage="reduce")

    def _unpack_fixed(self, g: _FixedGroup, buf: torch.Tensor, values, synced) -> None:
        for i, dtype, chunk in zip(g.indices, g.out_dtypes, buf.split(list(g.numels))):
            with self._unpacking(i):
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

    def _pack_var(self, values, block: int, offsets: List[int]) -> torch.Tensor:
        buf = torch.zeros(block, dtype=torch.uint8, device=self.data_device)
        for j, i in enumerate(self.plan.var_indices):
            v = values[i]
            if v.numel() == 0:
                continue
            raw = v.detach().to(self.data_device).contiguous().view(-1).view(torch.uint8)
            buf[offsets[j] : offsets[j] + raw.numel()] = raw
        return buf

    def _gather(self, local: torch.Tensor, block: int):
        out = torch.empty(self.world * block, dtype=torch.uint8, device=self.data_device)
        if self.transport is not None:
            return out, self._start(self.transport.all_gather_flat, out, local, stage="all_gather")
        if self.recipient is None:
            return out, self._start(_all_gather_flat, out, local, stage="all_gather")
        dst = dist.global_rank_of(self.group, self.recipient)
        parts = list(out.split(block)) if self.rank == self.recipient else None
        return out, self._start(torch.distributed.gather, local, gather_list=parts, dst=dst, stage="gather")

    def _unpack_var(self, out, block, offsets, lengths, values, synced, merge) -> None:
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

    def _start(self, collective, *args, stage: str, **kwargs):
        if not stage.startswith("header"):
            rollcall.mark(self.ranks, self.sync_id, "data call")
        try:
            return collective(*args, group=self.group, async_op=True, **kwargs)
        except Exception as exc:
            self._fail(stage, exc)

    def _wait(self, work, stage: str) -> None:
        if not stage.startswith("header"):
            rollcall.mark(self.ranks, self.sync_id, "data wait")
        try:
            dist.wait(work, self.deadline)
        except Exception as exc:
            self._fail(stage, exc)

    def _fail(self, stage: str, exc: BaseException) -> None:
        raise sync_failure.sync_error(
            group=self.ranks, me=self.ranks[self.rank], sync_id=self.sync_id, stage=stage,
            elapsed_s=time.monotonic() - self.start, timeout_s=self.timeout_s, cause=exc,
            store_getter=dist.default_store,
        ) from exc


def _all_gather_flat(output: torch.Tensor, input: torch.Tensor, **kwargs):
    # torch 2.13 renamed all_gather_into_tensor to all_gather_single; look both up at call time
    # so that instrumentation of torch.distributed sees the call.
    fn = getattr(torch.distributed, "all_gather_single", None) or torch.distributed.all_gather_into_tensor
    return fn(output, input, **kwargs)


def _align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def _describe_mismatch(plans: List[Dict[str, Any]]) -> str:
    reference = plans[0]
    notes = []
    for r, other in enumerate(plans[1:], start=1):
        if other == reference:
            continue
        if other["recipient"] != reference["recipient"]:
            notes.append(f"rank 0 asks for recipient_rank={reference['recipient']}, rank {r} for {other['recipient']}")
        a, b = reference["plan"], other["plan"]
        if a != b:
            k = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            left = a[k] if k < len(a) else "<nothing>"
            right = b[k] if k < len(b) else "<nothing>"
            notes.append(
                f"rank 0 syncs {len(a) - 1} state(s), rank {r} syncs {len(b) - 1}; first difference at entry {k}: "
                f"rank 0 has [{left}], rank {r} has [{right}]"
            )
        notes += describe_plan_differences(reference["options"], other["options"], r)
    return "; ".join(notes) if notes else "plans differ"
