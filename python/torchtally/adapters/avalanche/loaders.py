"""Which rows of each batch of an Avalanche data loader are DistributedSampler padding.

Avalanche's loaders (``SingleDatasetDataLoader``, ``TaskBalancedDataLoader``,
``GroupBalancedDataLoader``, ``ReplayDataLoader``: all ``MultiDatasetDataLoader``) keep no
sampler. Each pass builds, for every dataset in ``loader.datasets``, a fresh
``DistributedSampler(dataset, shuffle=..., drop_last=...)`` (when ``loader.distributed_sampling``)
wrapped in a ``BatchSampler`` of ``loader.batch_sizes[i]``, and a ``MultiDatasetSampler`` that
concatenates one sub-batch per dataset (in dataset order) into each batch; datasets that run out
stop contributing, or start over when the loader oversamples them.

A DistributedSampler's padding sits at fixed local positions, whatever the shuffle
(``torchtally.adapters.sampler``). So this module replays the loader's batch plan with samplers that
yield local *positions* instead of indices, through Avalanche's own ``MultiDatasetSampler``:
every row of every batch is then known as (dataset, local position), and a row is padding iff
its position is at or past that dataset's ``ShardLayout.num_valid``. Several datasets in one
batch (replay, task or group balancing), cycling and oversampling are all covered exactly.

This module imports nothing from Avalanche at import time (the loader classes are recognised
by the attributes they keep); ``MultiDatasetSampler`` is imported when a plan is built.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator, List, Optional, Sequence

import torch
import torch.distributed
from torch.utils.data import BatchSampler, DistributedSampler, Sampler

from ..sampler import SamplerWarning, ShardLayout, find_distributed_sampler, shard_layout, warn_lost_samples

__all__ = ["RowFilter", "row_filter", "is_avalanche_loader"]

_MULTI_DATASET_ATTRS = ("datasets", "batch_sizes", "distributed_sampling", "loader_kwargs")


def is_avalanche_loader(loader: Any) -> bool:
    """True for Avalanche's ``MultiDatasetDataLoader`` family (and look-alikes keeping the same
    four attributes: datasets, batch_sizes, distributed_sampling, loader_kwargs)."""
    return all(hasattr(loader, name) for name in _MULTI_DATASET_ATTRS)


def _distributed_world() -> int:
    td = torch.distributed
    return td.get_world_size() if td.is_available() and td.is_initialized() else 1


class _Positions(Sampler):
    """Yields local positions 0 .. n-1: a stand-in for one rank's DistributedSampler."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.n))

    def __len__(self) -> int:
        return self.n


class RowFilter:
    """The kept rows of each batch of one pass over a loader, batch after batch.

    :meth:`next_batch` takes the number of rows the batch has and returns ``None`` (keep every
    row) or a LongTensor of the row indices to keep. It raises ValueError when the batch does not
    have the rows the loader's plan says it must (outputs must keep one row per sample, in the
    loader's order, one update per batch), so a mismatch never passes as a silently wrong count.
    """

    def __init__(self, plan: Optional[Iterator[List[bool]]], describe: str = "") -> None:
        self._plan = plan
        self.describe = describe
        self.batches = 0

    @property
    def drops(self) -> bool:
        """Whether this filter knows where the padding is (False: every row is kept)."""
        return self._plan is not None

    def next_batch(self, rows: int) -> Optional[torch.Tensor]:
        self.batches += 1
        if self._plan is None:
            return None
        try:
            valid = next(self._plan)
        except StopIteration:
            raise ValueError(
                f"batch {self.batches}: the {self.describe} has no more batches in this pass, "
                "but another batch arrived; update once per batch of one pass over the loader"
            ) from None
        if len(valid) != rows:
            raise ValueError(
                f"batch {self.batches}: the {self.describe} gives {len(valid)} samples on this "
                f"rank, but the outputs have {rows} rows on dim 0; outputs must keep one row per "
                "sample, in the loader's order"
            )
        if all(valid):
            return None
        return torch.tensor([i for i, ok in enumerate(valid) if ok], dtype=torch.long)


def _layout_of(dataset: Any, drop_last: bool) -> ShardLayout:
    # the same sampler the loader builds on this rank (world size and rank from torch.distributed)
    layout = shard_layout(DistributedSampler(dataset, shuffle=False, drop_last=drop_last))
    if layout is None:  # pragma: no cover - Avalanche datasets always have a length
        raise TypeError(f"loader.datasets: a {type(dataset).__name__} without __len__")
    return layout


def _multi_dataset_plan(loader: Any) -> Iterator[List[bool]]:
    """Per batch of one pass over an Avalanche MultiDatasetDataLoader: is each row real?"""
    from avalanche.benchmarks.utils.data_loader import MultiDatasetSampler

    kwargs = dict(loader.loader_kwargs)
    drop_last = bool(kwargs.get("drop_last", False))
    layouts = [_layout_of(d, drop_last) for d in loader.datasets]
    # Avalanche passes drop_last to both the DistributedSampler and the DataLoader
    samplers = [
        BatchSampler(_Positions(layout.num_samples), int(size), drop_last)
        for layout, size in zip(layouts, loader.batch_sizes)
    ]
    batches = MultiDatasetSampler(
        [range(layout.num_samples) for layout in layouts],
        samplers,
        termination_dataset_idx=loader.termination_dataset,
        oversample_small_datasets=loader.oversample_small_datasets,
        never_ending=loader.never_ending,
    )
    offsets = [0]
    for layout in layouts:
        offsets.append(offsets[-1] + layout.num_samples)
    for batch in batches:
        valid = []
        for index in batch:
            d = next(i for i in range(len(layouts)) if index < offsets[i + 1])
            valid.append(not layouts[d].is_padding(index - offsets[d]))
        yield valid


def _warn_lost(loader: Any, layouts: Sequence[ShardLayout]) -> None:
    lost = sum(layout.num_lost for layout in layouts)
    if lost:
        warnings.warn(
            f"the Avalanche loader uses drop_last=True: {lost} sample(s) of its dataset(s) reach "
            "no rank, so synced metrics do not cover every sample. Use drop_last=False.",
            SamplerWarning,
            stacklevel=4,
        )


def _unsharded_warning(what: str, world: int) -> None:
    warnings.warn(
        f"{what} (world size {world}), so DistributedSampler padding duplicates cannot be "
        "located: synced metrics may count them, or count every sample once per rank. Use "
        "Avalanche's loaders (SingleDatasetDataLoader, TaskBalancedDataLoader, ...) or a "
        "DataLoader with a DistributedSampler.",
        SamplerWarning,
        stacklevel=4,
    )


def row_filter(loader: Any) -> RowFilter:
    """The :class:`RowFilter` for one pass over ``loader`` on this rank.

    - Not distributed (no process group, or world size 1): keeps every row.
    - An Avalanche ``MultiDatasetDataLoader``: exact, as the module docstring says; with
      ``distributed_sampling=False`` every rank loads every sample, which is warned about
      (SamplerWarning); ``never_ending=True`` (an endless loader has no pass to be exact over)
      raises ValueError.
    - A torch DataLoader with a DistributedSampler: its padding (a prefix of each shard).
    - Anything else: SamplerWarning, every row kept.
    """
    world = _distributed_world()
    if world == 1:
        return RowFilter(None)
    name = type(loader).__name__
    if is_avalanche_loader(loader):
        if getattr(loader, "never_ending", False):
            raise ValueError(
                f"loader: a never-ending {name} has no end of pass, so torchtally cannot locate "
                "its padding over an epoch; evaluate with a finite loader"
            )
        if not loader.distributed_sampling:
            _unsharded_warning(f"the {name} was built with distributed_sampling=False", world)
            return RowFilter(None)
        drop_last = bool(dict(loader.loader_kwargs).get("drop_last", False))
        _warn_lost(loader, [_layout_of(d, drop_last) for d in loader.datasets])
        return RowFilter(_multi_dataset_plan(loader), describe=name)
    sampler = find_distributed_sampler(loader)
    if sampler is not None:
        warn_lost_samples(loader, sampler)
        layout = shard_layout(sampler)
        if layout is not None:
            return RowFilter(_prefix_plan(loader, layout), describe=name)
    _unsharded_warning(f"torchtally cannot tell how a {name} shards its data", world)
    return RowFilter(None)


def _prefix_plan(loader: Any, layout: ShardLayout) -> Iterator[List[bool]]:
    """A DataLoader over a DistributedSampler: batches of ``batch_size`` local positions."""
    batch_sampler = getattr(loader, "batch_sampler", None)
    size = getattr(batch_sampler, "batch_size", None) or 1
    drop_last = bool(getattr(batch_sampler, "drop_last", False))
    for start in range(0, layout.num_samples, size):
        count = min(size, layout.num_samples - start)
        if drop_last and count < size:
            return
        yield [not layout.is_padding(j) for j in range(start, start + count)]
