"""The buffers of a sync's header exchange, kept from one sync to the next (issue 14): the message
this rank sends (once for an all_gather, once per rank for an all_to_all, or as its own row of
the table for a ring: torchtally.sync and torchtally.sync_exchange pick the exchange), the
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
aliases these buffers: the table is read as Python ints and every reduction is a fresh tensor
(torchtally.sync_small).
"""
from typing import Any, Dict, Hashable, List, Optional, Sequence, Tuple

import torch

from .sync_plan import HEADER_SLOTS, SmallLayout, itemsize
from .sync_small import combine_rows

_POOL_LIMIT = 64  # distinct layouts kept; beyond that the oldest set is dropped

# One state of a small group as it comes back: (state index, its elements of the group's
# reduction, or None when it is the group's only state (its rows are shaped as it); shape, dtype).
Placed = Tuple[int, Optional[slice], torch.Size, torch.dtype]


class HeaderBuffers:
    """One set of header buffers (see the module docstring); build with ``take``."""

    def __init__(self, key: Hashable, fields: int, world: int, device: torch.device,
                 small: Optional[SmallLayout], shapes: Sequence[Tuple[int, ...]], copies: int = 1,
                 row: Optional[int] = None) -> None:
        self.key = key
        self.small = small
        # What this rank sends: its header once (for an all_gather) or once per rank (for an
        # all_to_all: torchtally.sync's direct exchange). Every copy is written at once, by
        # broadcasting the words and each state into all of them. For the ring exchange
        # (torchtally.sync_exchange) it is this rank's own ``row`` of the table, which the ring
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
        if self._on_cpu:
            try:
                self.words, readable = copied.numpy(), table.numpy()
            except RuntimeError:  # a torch built without numpy: the tensor paths below
                self.words, readable = None, table
        self._copied = copied
        self._written: Optional[List[int]] = None  # the fields in the message now (see write)
        self.table = readable[:, :shown]
        self.slots: Tuple[Tuple[int, torch.Tensor], ...] = ()
        self.groups: Tuple[Tuple[str, torch.Tensor, Tuple[torch.Tensor, ...], Tuple[Placed, ...]], ...] = ()
        if small is not None:
            self._place_small(small, copied, table, shapes)

    def _place_small(self, small: SmallLayout, copied: torch.Tensor, table: torch.Tensor,
                     shapes: Sequence[Tuple[int, ...]]) -> None:
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

    def reduce(self, values: Sequence[torch.Tensor], synced: List[Optional[torch.Tensor]], fail) -> None:
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


def take(fingerprint: int, small: Optional[SmallLayout], fields: int, world: int, device: torch.device,
         shapes: Sequence[Tuple[int, ...]], copies: int = 1, row: Optional[int] = None) -> HeaderBuffers:
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
