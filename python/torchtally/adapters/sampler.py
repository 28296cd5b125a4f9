"""Where a rank's samples sit in a DistributedSampler's padded list, and which are duplicates.

``torch.utils.data.DistributedSampler`` (drop_last=False) pads its index list to
``total_size = num_samples * num_replicas`` by repeating indices from the front, then hands
rank ``r`` the positions ``r, r + W, r + 2W, ...``. With ``N = len(dataset)``, local position
``j`` on rank ``r`` is padded-list position ``g = r + j*W``; it is a duplicate iff ``g >= N``.
The padded list is ``permutation + permutation[:pad]`` with shuffle on and
``range(N) + range(N)[:pad]`` with it off, so "position" is the same either way and the
formula does not depend on the shuffle. Because ``total_size - N < W``, only a rank's last
local position can be a duplicate.

The same counting covers samplers that do not pad at all (drop_last=True, Lightning's
``UnrepeatedDistributedSampler``, :class:`UnpaddedDistributedSampler`): a rank's number of
valid positions is ``min(num_samples, len(range(r, N, W)))`` in every case.
"""

from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Sized

import torch
import torch.distributed
from torch.utils.data import Dataset, DistributedSampler

from ..base.resume import (
    checkpointer_state_dict,
    gather_from_ranks,
    pack_record,
    raise_if_record_differs,
    unpack_record,
)

__all__ = [
    "SamplerWarning",
    "ShardLayout",
    "UnpaddedDistributedSampler",
    "find_distributed_sampler",
    "num_valid_samples",
    "positions_left",
    "shard_layout",
    "warn_lost_samples",
]


class SamplerWarning(UserWarning):
    """A sampler setting makes synced metrics differ from a single pass over the dataset."""


def _strided_count(dataset_len: int, num_replicas: int, rank: int) -> int:
    """len(range(rank, dataset_len, num_replicas)): the rank's share of the N real positions."""
    return max(0, -(-(dataset_len - rank) // num_replicas))


def num_valid_samples(dataset_len: int, num_replicas: int, rank: int, start: int, count: int) -> int:
    """Number of real (non-padding) samples among local positions ``[start, start + count)``.

    Assumes DistributedSampler's layout with drop_last=False: rank ``rank`` holds
    ``num_samples = ceil(N / W)`` positions and local position ``j`` is padded-list position
    ``rank + j * num_replicas``; positions at or past ``N`` are padding duplicates.

    >>> num_valid_samples(dataset_len=10, num_replicas=4, rank=3, start=0, count=3)
    2
    >>> num_valid_samples(dataset_len=10, num_replicas=4, rank=1, start=2, count=8)
    1
    """
    if num_replicas < 1:
        raise ValueError(f"num_replicas: expected an int >= 1, got {num_replicas}")
    if not 0 <= rank < num_replicas:
        raise ValueError(f"rank: expected an int in [0, {num_replicas}), got {rank}")
    if dataset_len < 0 or start < 0 or count < 0:
        raise ValueError(f"dataset_len, start, count: expected ints >= 0, got {dataset_len}, {start}, {count}")
    valid = _strided_count(dataset_len, num_replicas, rank)
    return min(max(valid - start, 0), count)


@dataclass(frozen=True)
class ShardLayout:
    """The part of a distributed sampler that decides which local positions are padding.

    ``total_size`` is the length of the global list the sampler strides over: ``num_samples *
    num_replicas`` for DistributedSampler (padded, or cut with drop_last=True), ``N`` for an
    unpadded sampler whose shards differ in size. Build one with :func:`shard_layout`.

    >>> layout = ShardLayout(dataset_len=10, num_replicas=4, rank=3, num_samples=3, total_size=12)
    >>> layout.num_valid, layout.num_padding, layout.is_padding(2)
    (2, 1, True)
    >>> layout.valid_in(start=2, count=1)   # the last batch of one sample is all padding
    0
    """

    dataset_len: int
    num_replicas: int
    rank: int
    num_samples: int
    total_size: int

    def __post_init__(self) -> None:
        if self.num_replicas < 1 or not 0 <= self.rank < self.num_replicas:
            raise ValueError(
                f"rank/num_replicas: expected 0 <= rank < num_replicas, "
                f"got rank={self.rank}, num_replicas={self.num_replicas}"
            )
        if min(self.dataset_len, self.num_samples, self.total_size) < 0:
            raise ValueError(
                f"dataset_len/num_samples/total_size: expected ints >= 0, "
                f"got {self.dataset_len}, {self.num_samples}, {self.total_size}"
            )

    @property
    def num_valid(self) -> int:
        """Real samples this rank holds (its first ``num_valid`` local positions)."""
        return min(self.num_samples, _strided_count(self.dataset_len, self.num_replicas, self.rank))

    @property
    def num_padding(self) -> int:
        """Padding duplicates at the end of this rank's shard (0 or 1 for DistributedSampler)."""
        return self.num_samples - self.num_valid

    @property
    def pads(self) -> bool:
        """True when some rank (not necessarily this one) receives a padding duplicate."""
        return self.total_size > self.dataset_len

    @property
    def num_lost(self) -> int:
        """Samples of the dataset that no rank receives (DistributedSampler(drop_last=True))."""
        return max(0, self.dataset_len - self.total_size)

    @property
    def even(self) -> bool:
        """True when every rank holds ``num_samples`` positions (and so runs as many batches)."""
        return self.total_size == self.num_samples * self.num_replicas

    def shard_size(self, rank: int) -> int:
        """Number of local positions rank ``rank`` holds (computable on any rank)."""
        if self.even:
            return self.num_samples
        return _strided_count(self.total_size, self.num_replicas, rank)

    def padded_position(self, j: int) -> int:
        """Position in the (padded) global list of local position ``j``."""
        return self.rank + j * self.num_replicas

    def is_padding(self, j: int) -> bool:
        """True iff local position ``j`` holds a padding duplicate."""
        return self.num_valid <= j < self.num_samples

    def valid_in(self, start: int, count: int) -> int:
        """Real samples among local positions ``[start, start + count)``."""
        if start < 0 or count < 0:
            raise ValueError(f"start, count: expected ints >= 0, got {start}, {count}")
        return min(max(self.num_valid - start, 0), count)

    def batches_per_rank(self, batch_size: int, drop_last: bool = False) -> List[int]:
        """Number of batches each rank runs with this batch size."""
        if batch_size < 1:
            raise ValueError(f"batch_size: expected an int >= 1, got {batch_size}")
        sizes = [self.shard_size(r) for r in range(self.num_replicas)]
        return [n // batch_size if drop_last else -(-n // batch_size) for n in sizes]


def shard_layout(sampler: DistributedSampler) -> Optional[ShardLayout]:
    """The :class:`ShardLayout` of a DistributedSampler (or subclass), or None if its dataset has
    no length. Read at call time, so call it after the dataset is final (at epoch start)."""
    dataset = getattr(sampler, "dataset", None)
    if not isinstance(dataset, Sized):
        return None
    return ShardLayout(
        # a resumed unpadded sampler covers only what the saving job left: total_size of them
        dataset_len=sampler.total_size if isinstance(sampler, UnpaddedDistributedSampler) else len(dataset),
        num_replicas=int(sampler.num_replicas),
        rank=int(sampler.rank),
        num_samples=int(sampler.num_samples),
        total_size=int(sampler.total_size),
    )


def find_distributed_sampler(loader: Any) -> Optional[DistributedSampler]:
    """The DistributedSampler that decides which samples ``loader`` yields on this rank, or None.

    Looks at a DataLoader's ``batch_sampler.sampler`` (a BatchSampler wrapping a distributed
    sampler, also what DataLoader builds from ``sampler=``), then ``loader.sampler``. A sampler
    passed directly is returned as is.

    >>> from torch.utils.data import DataLoader, DistributedSampler
    >>> ds = list(range(10))
    >>> s = DistributedSampler(ds, num_replicas=2, rank=0)
    >>> find_distributed_sampler(DataLoader(ds, batch_size=4, sampler=s)) is s
    True
    """
    if isinstance(loader, DistributedSampler):
        return loader
    batch_sampler = getattr(loader, "batch_sampler", None)
    inner = getattr(batch_sampler, "sampler", None)
    if isinstance(inner, DistributedSampler):
        return inner
    sampler = getattr(loader, "sampler", None)
    if isinstance(sampler, DistributedSampler):
        return sampler
    return None


def warn_lost_samples(loader: Any, sampler: Optional[DistributedSampler] = None) -> int:
    """Warn (SamplerWarning) when ``loader`` never yields some samples of its dataset, and
    return how many real samples this rank loses.

    Two causes: DistributedSampler(drop_last=True) removes ``N mod W`` samples from the global
    list, and DataLoader(drop_last=True) drops each rank's last incomplete batch.
    """
    sampler = sampler if sampler is not None else find_distributed_sampler(loader)
    layout = shard_layout(sampler) if sampler is not None else None
    if layout is None:
        return 0
    lost_here = 0
    if layout.num_lost:
        cut = range(layout.total_size, layout.dataset_len)
        lost_here += len(cut[layout.rank :: layout.num_replicas])
        warnings.warn(
            f"DistributedSampler(drop_last=True) never yields {layout.num_lost} of "
            f"{layout.dataset_len} samples (N mod num_replicas); synced metrics cover "
            f"{layout.total_size} samples. Use drop_last=False for evaluation.",
            SamplerWarning,
            stacklevel=3,
        )
    batch_sampler = getattr(loader, "batch_sampler", None)
    batch_size = getattr(batch_sampler, "batch_size", None)
    if getattr(batch_sampler, "drop_last", False) and isinstance(batch_size, int) and batch_size > 0:
        kept = (layout.num_samples // batch_size) * batch_size
        dropped_valid = layout.num_valid - layout.valid_in(0, kept)
        if dropped_valid:
            lost_here += dropped_valid
            warnings.warn(
                f"DataLoader(drop_last=True) drops the last {layout.num_samples - kept} "
                f"position(s) of rank {layout.rank}'s shard ({dropped_valid} real sample(s)); "
                "synced metrics will not cover the whole dataset.",
                SamplerWarning,
                stacklevel=3,
            )
    return lost_here


class UnpaddedDistributedSampler(DistributedSampler):
    """A DistributedSampler for evaluation that gives every sample to exactly one rank.

    Same order as DistributedSampler (``torch.randperm`` seeded with ``seed + epoch`` when
    shuffling; call :meth:`set_epoch` each epoch), but no padding: rank ``r`` takes positions
    ``r, r + W, ...`` of the N indices, so shard sizes differ by at most one and ranks
    ``r >= N mod W`` may run one batch fewer. That is fine for evaluation with epoch-wise
    metrics, where only the final sync is collective. Do not use it for DDP training (its
    per-step gradient all-reduce needs the same number of steps on every rank), nor with
    batch-wise or running metrics, which sync every few batches (the hook raises if the batch
    counts differ).

    Subclassing DistributedSampler keeps Lightning and ignite from wrapping it again.

    Resumable at another world size: :meth:`state_dict` (what ``dcp.save`` stores) records how
    many positions of its shard each rank has consumed this epoch, and a sampler of a job with
    any number of ranks that loads it serves, for that epoch, exactly the positions no rank had
    consumed (split ``r, r + W', ...`` among its ranks); the next pass, or another epoch set
    by :meth:`set_epoch` (call it every epoch), covers the whole dataset again. Consumed
    means yielded by the iterator; a DataLoader with workers fetches ahead, so there let a
    :class:`MetricHook` count (it calls :meth:`mark_consumed` after every update).

    >>> ds = list(range(5))
    >>> [list(UnpaddedDistributedSampler(ds, num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
    [[0, 2, 4], [1, 3]]
    """

    def __init__(
        self,
        dataset: Dataset,
        num_replicas: Optional[int] = None,
        rank: Optional[int] = None,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        if not isinstance(dataset, Sized):
            raise TypeError(f"dataset: expected a dataset with __len__, got {type(dataset).__name__}")
        initialised = torch.distributed.is_available() and torch.distributed.is_initialized()
        if num_replicas is None:
            num_replicas = torch.distributed.get_world_size() if initialised else 1
        if rank is None:
            rank = torch.distributed.get_rank() if initialised else 0
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=False)
        # Earlier jobs' consumption of ``epoch`` (world size, consumed count per rank), oldest
        # first: this epoch serves only the positions they left. Empty: the whole dataset.
        self.resume_stages: List[List[Any]] = []
        self._pass: Optional[Iterator[int]] = None  # the current pass's iterator over its list
        self._pass_len = 0
        self._marked: Optional[int] = None  # mark_consumed's count, which then holds for the pass
        self._resume_served = False  # whether a pass over the resumed positions has started
        self._share(range(len(dataset)))

    def _share(self, positions: Sequence[int]) -> None:
        """Serve ``positions`` (of the epoch's permutation) this epoch, strided over the ranks."""
        mine = positions[self.rank :: self.num_replicas]
        self._resumed_share: Optional[Sequence[int]] = mine if self.resume_stages else None
        self.num_samples = len(mine)
        self.total_size = len(positions)

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self._resume_served:  # a pass after the resumed one: the whole dataset again
            self._drop_resume()
        self._resume_served = bool(self.resume_stages)
        if self._resumed_share is None:
            served = indices[self.rank : n : self.num_replicas]
        else:
            served = [indices[p] for p in self._resumed_share]
        # A plain list iterator (no per-sample Python code); what it has yielded is read back
        # from its length hint.
        self._pass, self._pass_len, self._marked = iter(served), len(served), None
        return self._pass

    @property
    def consumed(self) -> int:
        """Positions of this rank's shard consumed in the current pass: those the iterator has
        yielded, or the count given to :meth:`mark_consumed`."""
        if self._marked is not None:
            return self._marked
        if self._pass is None:
            return 0
        return self._pass_len - operator.length_hint(self._pass)

    def _drop_resume(self) -> None:
        self.resume_stages = []
        self._resume_served = False
        self._share(range(len(self.dataset)))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch (the shuffle's seed is ``seed + epoch``). Another epoch than a resumed
        one drops the resume: that epoch covers the whole dataset."""
        if self.resume_stages and epoch != self.epoch:
            self._drop_resume()
        super().set_epoch(epoch)

    def mark_consumed(self, count: int) -> None:
        """Say that ``count`` positions of this rank's shard are consumed this pass (exact
        where a loader fetches ahead); from then on the iterator no longer counts."""
        if not isinstance(count, int) or not 0 <= count <= self.num_samples:
            raise ValueError(f"count: expected an int in [0, {self.num_samples}], got {count!r}")
        self._marked = count

    def state_dict(self) -> Dict[str, Any]:
        """What this epoch's consumption looks like on every rank, as ``{"torchtally_resume":
        bytes}``: dataset length, shuffle, seed, epoch and, per job so far, its world size and
        each rank's consumed count (the permutation is rebuilt from them, so no index list is
        stored). A collective under torch.distributed (every rank must call it, as ``dcp.save``
        does, and Accelerate's ``save_state`` and Fabric's ``save``); when ``dcp.load`` calls
        it, the key to read."""
        return checkpointer_state_dict(self.resumable_state_dict)

    def resumable_state_dict(self) -> Dict[str, Any]:
        """:meth:`state_dict`'s form, whoever calls it (a collective under torch.distributed)."""
        counts = gather_from_ranks(self.consumed)
        return pack_record(
            "UnpaddedDistributedSampler",
            {
                **self._configuration(),
                "epoch": int(self.epoch),
                "stages": [*self.resume_stages, [self.num_replicas, counts]],
            },
        )

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Resume :meth:`state_dict`'s epoch at this sampler's world size: this epoch serves
        only the positions the saving job(s) had not consumed. A checkpoint of another dataset
        length, shuffle or seed raises ValueError naming what differs; nothing changes then."""
        record = unpack_record(state_dict, "UnpaddedDistributedSampler")
        raise_if_record_differs("UnpaddedDistributedSampler", self._configuration(), record)
        stages = [[int(w), [int(c) for c in counts]] for w, counts in record["stages"]]
        positions = positions_left(len(self.dataset), stages)  # type: ignore[arg-type]
        self.epoch = int(record["epoch"])
        self.resume_stages = stages
        self._pass, self._marked, self._resume_served = None, None, False
        self._share(positions)

    load_resumable_state_dict = load_state_dict  # the name Metric and MetricCollection give it

    def _configuration(self) -> Dict[str, Any]:
        return {"dataset length": len(self.dataset), "shuffle": bool(self.shuffle), "seed": int(self.seed)}  # type: ignore[arg-type]


def positions_left(dataset_len: int, stages: List[List[Any]]) -> List[int]:
    """The positions (of an epoch's order) that no rank of the jobs in ``stages`` consumed, in
    order: each stage ``[W, counts]`` strided what the stages before it left over W ranks, and
    its rank ``r`` consumed its first ``counts[r]`` positions, ``r, r + W, ...``.

    >>> positions_left(10, [[3, [2, 1, 1]]])   # rank 0 took 0 and 3, rank 1 took 1, rank 2 took 2
    [4, 5, 6, 7, 8, 9]
    """
    left = torch.arange(dataset_len)
    for world, counts in stages:
        if world < 1 or len(counts) != world:
            raise ValueError(f"stages: expected a world size >= 1 and one count per rank, got {world}, {counts}")
        keep = torch.ones(len(left), dtype=torch.bool)
        for rank, count in enumerate(counts):
            share = _strided_count(len(left), world, rank)
            if not 0 <= count <= share:
                raise ValueError(f"stages: rank {rank} of {world} consumed {count} of its {share} positions")
            keep[rank : rank + count * world : world] = False
        left = left[keep]
    return left.tolist()
