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

import warnings
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sized

import torch
import torch.distributed
from torch.utils.data import Dataset, DistributedSampler

__all__ = [
    "SamplerWarning",
    "ShardLayout",
    "UnpaddedDistributedSampler",
    "find_distributed_sampler",
    "num_valid_samples",
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
        dataset_len=len(dataset),
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
        self.num_samples = _strided_count(len(dataset), self.num_replicas, self.rank)
        self.total_size = len(dataset)

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        return iter(indices[self.rank : n : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples
