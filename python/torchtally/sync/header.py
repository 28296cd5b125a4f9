"""The header of a sync, and a small plan's data within it.

The table (what a sync's exchanged header says, torchtally.sync.protocol): every rank reads the
same table, in rank order, so every rank draws the same conclusions from it and raises (or goes
on) alike. A header row is HEADER_FIXED words (the positions below), then the plan's unit flag
words, the dim-0 length of each cat/merge state, the kind of each number state and, for a small
plan, each number's word and the data (torchtally.sync.plan.SmallLayout).

A small plan's sync is one collective: its data travels in the header exchange, and every rank
reduces the W copies itself. The reduction is exact and the same on every rank: integer sums,
products, max and min are exact in any order (int64 arithmetic wraps the same way an
all_reduce does); float and complex sums and products are taken in rank order, one rank at a
time, so every rank computes the very same operations on the very same gathered bytes and gets
bit-identical results. max and min propagate NaN. Python numbers are combined as Python numbers
in the kind the ranks agreed on (an int sum that leaves int64 raises instead of wrapping).

The buffers (HeaderBuffers), kept from one sync to the next: the message
this rank sends (once for an all_gather, once per rank for an all_to_all, or as its own row of
the table for a ring: torchtally.sync.protocol and torchtally.sync.exchange pick the exchange), the
[W, HEADER_SLOTS] table every rank gets back and, for a small plan, a view of each state's place in
every copy of the message and of each group's W rows in the table. Packing is then one
broadcasting copy per state and reducing one op per group, with no allocation, slicing or offset
arithmetic per sync; on the CPU the header words are written and read through numpy views, a
fraction of the cost of tensor indexing.

A set of buffers is keyed on what fixes its layout: the plan's fingerprint (the same declared
states and options give the same layout; the layout itself is compared on taking a set, as a
hash is no proof), the number of header fields, the world size, the device, the number of copies
sent and, for a ring, this rank's row. Two syncs of one layout fill the same words (a set writes
those whose value changed, remembering what it wrote), so a reused buffer holds no stale word
that a sync reads. A sync takes a set out of the pool and gives it back only once it has read
everything out of it: two syncs at once (threads) never share a set, and a set whose collective
failed or timed out (gloo may still write into it) is never given back. Nothing a sync returns
aliases these buffers: the table is read as Python ints and every reduction is a fresh tensor.
"""

import math
import struct
from typing import Any, Callable, Dict, Hashable, List, NamedTuple, Optional, Sequence, Tuple, Union

import torch

from .plan import FLAG_BITS, HEADER_FIXED, HEADER_SLOTS, NUMBER_KINDS, SmallLayout, SyncPlan, itemsize

# ADDRESS: torchtally.sync.rollcall's; VOTE and HOST: this rank's say in how the group's headers
# travel, and the machine it runs on (torchtally.sync.exchange)
FP, STATUS, PROBLEM, OPTIONS, DIRTY, ADDRESS, VOTE, HOST = 0, 1, 2, 3, 4, 5, 6, 7
PROBLEMS = {1: "shape", 2: "dtype", 3: "type"}  # a rank's STATUS != 0: its state's PROBLEM
REJECTED = 4  # the PROBLEM of a rank whose compute found a rejected batch (local_error)


def header_words(
    plan: SyncPlan, fixed: List[int], values: Sequence[Any], updated: Optional[Sequence[bool]], sendable: bool
) -> List[int]:
    """This rank's header row: the HEADER_FIXED words ``fixed``, then the unit flags
    (``updated[u]``, every unit when None), the dim-0 length of each cat/merge state, the kind
    of each number state and, for a small plan, each number's word. A rank whose states cannot
    be sent (not ``sendable``: it reports a problem instead) sends zeros for lengths and numbers."""
    words = [0] * plan.n_flag_words
    for u in range(plan.n_units):
        if updated is None or updated[u]:
            words[u // FLAG_BITS] |= 1 << (u % FLAG_BITS)
    header = fixed + words
    if plan.var_indices:
        header += [values[i].shape[0] if sendable else 0 for i in plan.var_indices]
    if plan.number_indices:
        header += [number_kind(values[i]) if sendable else 0 for i in plan.number_indices]
        if plan.small is not None:
            header += [number_word(values[i]) if sendable else 0 for i in plan.number_indices]
    return header


class Scan(NamedTuple):
    """One pass over the rows (at every step under a per-step sync, so one pass only)."""

    agree: bool  # every rank has the same plan fingerprint and options
    troubled: bool  # some rank reported a local problem (its STATUS)
    rejected: bool  # ... that is a rejected batch of its own
    dirty_anywhere: bool  # some rank has data its last result did not see
    flags: List[int]  # every rank's unit flag words, or-ed


class Header(NamedTuple):
    """What the header exchange told every rank."""

    table: List[List[int]]  # every rank's header words (Python ints), in rank order
    lengths: List[List[int]]  # per rank, the dim-0 length of each cat/merge state
    updated_anywhere: List[bool]  # per unit, whether any rank updated it
    number_kinds: List[int]  # per number state, the kind the ranks agreed on
    dirty_anywhere: bool


def scan(plan: SyncPlan, table: List[List[int]]) -> Scan:
    fingerprint, options = table[0][FP], table[0][OPTIONS]
    agree, troubled, rejected, dirty_anywhere = True, False, False, False
    n_words = plan.n_flag_words
    flags = [0] * n_words
    for row in table:
        if row[FP] != fingerprint or row[OPTIONS] != options:
            agree = False
        if row[STATUS]:
            troubled = True
            rejected = rejected or row[PROBLEM] == REJECTED
        if row[DIRTY]:
            dirty_anywhere = True
        for w in range(n_words):
            flags[w] |= row[HEADER_FIXED + w]
    return Scan(agree, troubled, rejected, dirty_anywhere, flags)


def decode(plan: SyncPlan, table: List[List[int]], seen: Scan) -> Header:
    """The rest of what a table agreed on (after ``scan`` found nothing to raise)."""
    flags = seen.flags
    updated_anywhere = [bool((flags[u // FLAG_BITS] >> (u % FLAG_BITS)) & 1) for u in range(plan.n_units)]
    base = HEADER_FIXED + plan.n_flag_words
    lengths = [row[base : base + len(plan.var_indices)] for row in table] if plan.var_indices else []
    base += len(plan.var_indices)
    number_kinds = (
        [max(row[base + k] for row in table) for k in range(len(plan.number_indices))] if plan.number_indices else []
    )
    return Header(table, lengths, updated_anywhere, number_kinds, seen.dirty_anywhere)


# -- a small plan's numbers and rows --------------------------------------------------

_FLOAT_KIND = NUMBER_KINDS.index(torch.float64)
_INT_KIND = NUMBER_KINDS.index(torch.int64)
_BOOL_KIND = NUMBER_KINDS.index(torch.bool)

# A number state's value is a Python bool, int or float, or a 0-dim tensor of a NUMBER_KINDS
# dtype; the synced value comes back in the same form (a Python number saves the four tensor
# ops of a round trip through a 0-dim tensor, at every sync of a decorated metric).
Number = Union[bool, int, float, torch.Tensor]


def number_kind(value: Number) -> int:
    """The NUMBER_KINDS index of a number state's value."""
    if isinstance(value, torch.Tensor):
        return NUMBER_KINDS.index(value.dtype)
    if isinstance(value, bool):
        return _BOOL_KIND
    return _FLOAT_KIND if isinstance(value, float) else _INT_KIND


def number_word(value: Number) -> int:
    """The int64 header word of a number state's value: the int itself, or a float's bits."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, float):
        return struct.unpack("<q", struct.pack("<d", value))[0]
    return int(value)


def python_number(tensor: torch.Tensor, kind: int) -> Union[bool, int, float]:
    """A synced 0-dim (or one-element) tensor as the Python number of ``kind``."""
    value = tensor.item()
    return bool(value) if kind == _BOOL_KIND else int(value) if kind == _INT_KIND else float(value)


def combine_rows(rows: torch.Tensor, per_rank: Sequence[torch.Tensor], reduce: str) -> torch.Tensor:
    """Reduce [W, ...] rows (rank order; ``per_rank``: rows[0], rows[1], ...) by ``reduce``
    over the rank dim, into a new tensor."""
    if reduce == "max":
        return rows.amax(0)
    if reduce == "min":
        return rows.amin(0)
    if len(per_rank) > 2 and not (rows.dtype.is_floating_point or rows.dtype.is_complex):
        return rows.sum(0) if reduce == "sum" else rows.prod(0)  # exact in any order
    # Floats: one rank at a time, in rank order. (Two rows of any dtype: one elementwise op,
    # cheaper than a reduction.)
    if len(per_rank) == 1:
        return per_rank[0].clone()
    out = (torch.add if reduce == "sum" else torch.mul)(per_rank[0], per_rank[1])
    step = out.add_ if reduce == "sum" else out.mul_
    for row in per_rank[2:]:
        step(row)
    return out


def reduce_numbers(
    plan: SyncPlan,
    layout: SmallLayout,
    table: List[List[int]],
    kinds: List[int],
    local: Sequence[Number],
    synced: List[Any],
    fail: Callable[[int, BaseException], BaseException],
) -> None:
    """Combine the number states from the header ``table`` (Python ints, rank order) into
    ``synced``, each in the form of its ``local`` value; ``kinds`` are the agreed kinds
    (number_indices order); ``fail(i, exc)`` is the error naming state i."""
    kinds_at = layout.numbers_at - len(plan.number_indices)
    for k, i in enumerate(plan.number_indices):
        agreed = kinds[k]
        try:
            values = [_decode(row[layout.numbers_at + k], row[kinds_at + k], agreed) for row in table]
            total = _combine_numbers(values, plan.specs[i].reduce, agreed)
            mine = local[i]
            synced[i] = (
                torch.full((), total, dtype=NUMBER_KINDS[agreed], device=mine.device)
                if isinstance(mine, torch.Tensor)
                else total
            )
        except Exception as exc:
            raise fail(i, exc) from exc


def reduce_small(
    plan: SyncPlan,
    buffers: "HeaderBuffers",
    table: List[List[int]],
    number_kinds: List[int],
    values: Sequence[Any],
    fail: Callable[[int, BaseException], BaseException],
) -> List[Any]:
    """A small plan's synced values, from the W copies of its data in ``buffers`` and the number
    states' words in ``table``: fresh tensors (or Python numbers), every rank alike."""
    synced: List[Any] = [None] * len(plan.specs)
    buffers.reduce(values, synced, fail)
    if plan.number_indices:
        # plan.small is set: reduce_small is called for small plans only
        reduce_numbers(plan, plan.small, table, number_kinds, values, synced, fail)  # type: ignore[arg-type]
    return synced


def _decode(word: int, kind: int, agreed: int) -> float:
    if kind == _FLOAT_KIND:
        return struct.unpack("<d", struct.pack("<q", word))[0]
    return float(word) if agreed == _FLOAT_KIND else word


_PYTHON_REDUCES: Dict[str, Callable] = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b, "max": max, "min": min}


def _combine_numbers(values: List[float], reduce: str, kind: int) -> float:
    if kind == _FLOAT_KIND and reduce in ("max", "min") and any(math.isnan(v) for v in values):
        return math.nan
    step = _PYTHON_REDUCES[reduce]
    total = values[0]
    for v in values[1:]:
        total = step(total, v)
    if kind == _BOOL_KIND:
        return bool(total)
    if kind != _FLOAT_KIND and not -(2**63) <= total < 2**63:
        raise OverflowError(f"the {reduce} over ranks, {total}, does not fit in int64")
    return total


# -- the reused buffers ------------------------------------------------------------

_POOL_LIMIT = 64  # distinct layouts kept; beyond that the oldest set is dropped

# One state of a small group as it comes back: (state index, its elements of the group's
# reduction, or None when it is the group's only state (its rows are shaped as it); shape, dtype).
Placed = Tuple[int, Optional[slice], torch.Size, torch.dtype]


class HeaderBuffers:
    """One set of header buffers (see the module docstring); build with ``take``."""

    def __init__(
        self,
        key: Hashable,
        fields: int,
        world: int,
        device: torch.device,
        small: Optional[SmallLayout],
        shapes: Sequence[Tuple[int, ...]],
        copies: int = 1,
        row: Optional[int] = None,
    ) -> None:
        self.key = key
        self.small = small
        # What this rank sends: its header once (for an all_gather) or once per rank (for an
        # all_to_all: torchtally.sync.protocol's direct exchange). Every copy is written at once, by
        # broadcasting the words and each state into all of them. For the ring exchange
        # (torchtally.sync.exchange) it is this rank's own ``row`` of the table, which the ring
        # passes on and never writes to.
        self.gathered = torch.zeros(world * HEADER_SLOTS, dtype=torch.int64, device=device)
        if row is None:
            self.sent = torch.zeros(copies * HEADER_SLOTS, dtype=torch.int64, device=device)
        else:
            self.sent = self.gathered[row * HEADER_SLOTS : (row + 1) * HEADER_SLOTS]
        copied = self.sent.view(copies, HEADER_SLOTS)
        table = self.gathered.view(world, HEADER_SLOTS)
        shown = min(fields, HEADER_SLOTS)
        # numpy views share the tensors' memory: writing the words and reading the table back
        # costs a microsecond each, where tensor indexing costs several. Either kind of table
        # reads back the same way (``tolist``).
        self.words: Any = None
        readable: Any = table
        self._on_cpu = device.type == "cpu"
        self._staging: Optional[torch.Tensor] = None  # a CUDA set's fields, in pinned host memory
        if self._on_cpu:
            try:
                self.words, readable = copied.numpy(), table.numpy()
            except RuntimeError:  # a torch built without numpy: the tensor paths below
                self.words, readable = None, table
        elif device.type == "cuda":
            # The fields are written in pinned host memory and copied to the device without a
            # host synchronisation (a pageable copy would wait); the table is read back once.
            try:
                self._staging = torch.zeros(copies, shown, dtype=torch.int64, pin_memory=True)
                self.words = self._staging.numpy()
            except RuntimeError:
                self._staging, self.words = None, None
        self._copied = copied
        self._written: Optional[List[int]] = None  # the fields in the message now (see write)
        self.table = readable[:, :shown]
        self.slots: Tuple[Tuple[int, torch.Tensor], ...] = ()
        self.groups: Tuple[Tuple[str, torch.Tensor, Tuple[torch.Tensor, ...], Tuple[Placed, ...]], ...] = ()
        if small is not None:
            self._place_small(small, copied, table, shapes)

    def _place_small(
        self, small: SmallLayout, copied: torch.Tensor, table: torch.Tensor, shapes: Sequence[Tuple[int, ...]]
    ) -> None:
        """Views made once per layout: each state's place in every copy of the message, and each
        group's W rows in the table (shaped as its state when the group holds one state, so
        that reducing it is a single op), with each rank's row on its own."""
        sent = copied.view(torch.uint8)
        received = table.view(torch.uint8)
        copies, world = copied.shape[0], table.shape[0]
        slots, groups = [], []
        for g, start in small.groups:
            step = itemsize(g.dtype)
            total = sum(g.numels)
            placed = []
            at = 0
            for i, n, out_dtype in zip(g.indices, g.numels, g.out_dtypes):
                first = start + at * step
                slots.append((i, sent[:, first : first + n * step].view(g.dtype).view((copies,) + tuple(shapes[i]))))
                # None: the group's one state, whose rows are shaped as it (below); a group of
                # several states is sliced, even where one fills it (its siblings hold nothing).
                part = None if len(g.indices) == 1 else slice(at, at + n)
                placed.append((i, part, torch.Size(shapes[i]), out_dtype))
                at += n
            rows = received[:, start : start + total * step].view(g.dtype)
            if len(placed) == 1:
                rows = rows.view((world,) + tuple(shapes[placed[0][0]]))
            groups.append((g.reduce, rows, tuple(rows[r] for r in range(world)), tuple(placed)))
        self.slots, self.groups = tuple(slots), tuple(groups)

    def write(self, header: List[int]) -> None:
        """The header's fields (Python ints) into every copy of the message, from word 0. Only
        the words that changed since this set's last sync are written (nothing else writes
        them: the data lies after the fields), so the same header at every step, as a per-step
        sync of a collection sends, costs no write, and a decorated metric's growing counts
        cost a word each."""
        fields = header[:HEADER_SLOTS]
        last, self._written = self._written, None  # unknown until written in full
        if fields == last:
            self._written = last
            return
        if self.words is None:
            self._copied[:, : len(fields)].copy_(torch.tensor(fields, dtype=torch.int64))
        elif last is None:  # (a set's header length is part of its key: len(last) == len(fields))
            self.words[:, : len(fields)] = fields
        else:
            words = self.words
            for k, (new, old) in enumerate(zip(fields, last)):
                if new != old:
                    words[:, k] = new
        if self._staging is not None:
            # a set is used by one sync at a time, which reads the table (waiting for the stream)
            # before the next write: the staging memory is never rewritten under a pending copy
            self._copied[:, : len(fields)].copy_(self._staging[:, : len(fields)], non_blocking=True)
        self._written = fields

    def pack(self, values: Sequence[torch.Tensor]) -> None:
        """A small plan's tensor states into their places in every copy of the message (each
        converted to its group's transport dtype); ``values`` are only read."""
        for i, slot in self.slots:
            value = values[i]
            slot.copy_(value.detach() if value.requires_grad else value)

    def read_table(self) -> List[List[int]]:
        """The gathered header fields, one list of Python ints per rank."""
        return self.table.tolist()

    def reduce(
        self,
        values: Sequence[torch.Tensor],
        synced: List[Optional[torch.Tensor]],
        fail: Callable[[int, BaseException], BaseException],
    ) -> None:
        """Reduce every tensor group of a small plan's table into ``synced`` (plan order), each
        state back in its dtype on its value's device; ``fail(i, exc)`` is the error naming
        state i when that goes wrong."""
        for reduce, rows, per_rank, placed in self.groups:
            i = placed[0][0]
            try:
                reduced = combine_rows(rows, per_rank, reduce)  # a fresh tensor: never a view of the table
                for i, part, shape, dtype in placed:
                    out = reduced if part is None else reduced[part].view(shape)
                    value = values[i]
                    if out.dtype != dtype or (not value.is_cpu if self._on_cpu else value.device != out.device):
                        out = out.to(device=value.device, dtype=dtype)
                    synced[i] = out
            except Exception as exc:
                raise fail(i, exc) from exc


_pool: Dict[Hashable, HeaderBuffers] = {}


def take(
    fingerprint: int,
    small: Optional[SmallLayout],
    fields: int,
    world: int,
    device: torch.device,
    shapes: Sequence[Tuple[int, ...]],
    copies: int = 1,
    row: Optional[int] = None,
) -> HeaderBuffers:
    """A set of header buffers for this layout: the pooled one, or a new one if none is free.
    ``shapes``: every state's declared shape (plan order), for a small plan's views; ``copies``:
    how many times the message is sent (1 for an all_gather, the world size for an all_to_all);
    ``row``: for the ring exchange, this rank's row of the table, which it sends from."""
    key = (fingerprint, fields, world, device, copies, row)  # cheap to hash, unlike the layout itself
    buffers = _pool.pop(key, None)  # atomic: a concurrent sync gets its own set
    if buffers is not None and (buffers.small is small or buffers.small == small):
        return buffers
    return HeaderBuffers(key, fields, world, device, small, shapes, copies, row)


def give_back(buffers: HeaderBuffers) -> None:
    """Return a set whose sync has read everything out of it (after a successful collective)."""
    if len(_pool) >= _POOL_LIMIT and buffers.key not in _pool:
        _pool.pop(next(iter(_pool)), None)
    _pool[buffers.key] = buffers
