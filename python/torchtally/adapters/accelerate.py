"""HF Accelerate adapter: exact synced metrics over ``accelerator.prepare``'d DataLoaders.

Accelerate does not shard with a DistributedSampler: its ``BatchSamplerShard`` deals whole
batches of the original batch sampler to the processes in turn (``split_batches=True``: a slice
of every batch to each). With ``even_batches=True`` (the default) it then fills the last round up
with samples from the start of the dataset, so that every process runs as many batches of the
same size; those repeats would be counted as data. ``gather_for_metrics`` trims them only from
per-sample tensors it gathers, not from a metric's state.

Where the repeats are follows from the shard's public attributes (``num_processes``,
``process_index``, ``split_batches``, ``even_batches``, ``batch_size``, ``drop_last``) and the
number of indices N the original batch sampler draws. Let ``b`` be the rows a process gets per
batch (``batch_size``, or ``batch_size / num_processes`` with split_batches) and W the number of
processes. In both modes row ``i`` of a process ``p``'s local batch ``j`` is position
``j*W*b + p*b + i`` of the stream the original batch sampler yields, extended past N by the
repeats; a row is a repeat iff its position is >= N. Positions only grow along a process's
batches, so, as with DistributedSampler, a process's repeats are the tail of its shard and the
hook drops them by counting rows (:class:`AccelerateShardLayout`). With ``even_batches=False``
nothing is repeated and the processes may run different numbers of batches (fine for
``usage="epoch_wise"``). A batch sampler with ``drop_last=True`` never yields some samples:
that warns.

Refused, with what to do instead: ``dispatch_batches=True`` (process 0 reads every batch and
slices it out: the default for an IterableDataset), an IterableDataset, a batch sampler without
a ``batch_size`` with even_batches, and a loader made by ``skip_first_batches`` (a resume inside
the epoch). Accelerate's ``GradientState.remainder`` is not used: it gives the size of the last
gathered batch, not which process holds the repeats.

Checkpoints: register the hook, not the metrics, with ``accelerator.register_for_checkpointing``.
Between syncs a metric's state is local: each process holds what its own shard contributed.
``save_state`` asks every process for ``state_dict()`` but writes the main process's only, and
``load_state`` hands that one dict to every process. A metric registered as is would come back
on every process with process 0's state, so the synced result would count process 0's shard
once per process (and a torchtally metric, like torchmetrics', is not ``persistent``: it would
save nothing at all). The hook's ``state_dict`` is MetricHook's resumable form instead: one
record of every process's state (gathered at save, so every process must call ``save_state``,
as Accelerate requires anyway), which loads on any number of processes: process 0 takes the
saved total, the others start empty, and the next sync gives every process the values of one
process. A checkpoint taken after ``end_epoch`` is an epoch's result; one taken inside an epoch
is resumed only over the rest of that epoch, and Accelerate's way there, a ``skip_first_batches``
loader, is refused above: its rows already seen depend on the saving job's batches.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, List, Optional, Union

import torch
from accelerate.data_loader import BatchSamplerShard, DataLoaderDispatcher, IterableDatasetShard, SkipBatchSampler

from .hook import MetricHook
from .sampler import SamplerWarning, ShardLayout

__all__ = ["AccelerateMetricHook", "AccelerateShardLayout", "accelerate_layout", "find_batch_sampler_shard"]


@dataclass(frozen=True)
class AccelerateShardLayout(ShardLayout):
    """The rows of one process's batches under Accelerate's ``BatchSamplerShard``.

    ``rows_per_batch`` is ``b`` and ``padded`` says whether the last round was filled up with
    repeats (even_batches=True and a batch sampler that keeps its last batch). The inherited
    fields: ``dataset_len`` N, ``num_replicas`` W, ``rank`` p, ``num_samples`` the rows of this
    process's shard, ``total_size`` the rows dealt to all processes. Build one with
    :func:`accelerate_layout`.

    >>> layout = AccelerateShardLayout.build(10, num_replicas=2, rank=1, rows_per_batch=4,
    ...                                      padded=True, drop_last=False)
    >>> layout.num_samples, layout.num_valid     # batches [4..7] and [12..15]: positions >= 10 repeat
    (8, 4)
    >>> AccelerateShardLayout.build(10, 2, 1, 4, padded=False, drop_last=False).num_samples
    4
    """

    rows_per_batch: int = 1
    padded: bool = False

    @classmethod
    def build(
        cls, dataset_len: int, num_replicas: int, rank: int, rows_per_batch: int, *, padded: bool, drop_last: bool
    ) -> AccelerateShardLayout:
        """The layout of process ``rank`` when the batch sampler draws ``dataset_len`` indices."""
        if rows_per_batch < 1:
            raise ValueError(f"rows_per_batch: expected an int >= 1, got {rows_per_batch}")
        round_rows = num_replicas * rows_per_batch
        if drop_last:  # only complete rounds of full batches
            rounds = dataset_len // round_rows
            num_samples, total = rounds * rows_per_batch, rounds * round_rows
        elif padded:
            rounds = -(-dataset_len // round_rows)
            num_samples, total = rounds * rows_per_batch, rounds * round_rows
        else:
            num_samples, total = _rows_of(dataset_len, num_replicas, rank, rows_per_batch), dataset_len
        return cls(dataset_len, num_replicas, rank, num_samples, total, rows_per_batch, padded and not drop_last)

    @property
    def num_valid(self) -> int:
        return min(self.num_samples, _rows_of(self.dataset_len, self.num_replicas, self.rank, self.rows_per_batch))

    @property
    def pads(self) -> bool:
        return self.padded and self.total_size > self.dataset_len

    def shard_size(self, rank: int) -> int:
        if self.even:
            return self.num_samples
        return _rows_of(self.dataset_len, self.num_replicas, rank, self.rows_per_batch)

    def padded_position(self, j: int) -> int:
        b = self.rows_per_batch
        return (j // b) * self.num_replicas * b + self.rank * b + j % b

    def batches_per_rank(self, batch_size: int = 0, drop_last: bool = False) -> List[int]:
        """Batches each process runs; the arguments are ignored (the layout knows its batches)."""
        b = self.rows_per_batch
        return [-(-self.shard_size(r) // b) for r in range(self.num_replicas)]


def _rows_of(dataset_len: int, num_replicas: int, rank: int, rows_per_batch: int) -> int:
    """Rows of positions ``j*W*b + p*b + i`` (i < b) that lie below N: process p's real rows."""
    rounds, rest = divmod(dataset_len, num_replicas * rows_per_batch)
    return rounds * rows_per_batch + min(max(rest - rank * rows_per_batch, 0), rows_per_batch)


def find_batch_sampler_shard(loader: Any) -> Optional[BatchSamplerShard]:
    """The BatchSamplerShard that deals ``loader``'s batches to this process, or None (a loader
    Accelerate did not shard: not prepared, or one process)."""
    candidates = (getattr(loader, "batch_sampler", None), getattr(loader, "sampler", None))
    if getattr(loader, "skip_batches", 0) or any(isinstance(c, SkipBatchSampler) for c in candidates):
        raise ValueError(
            "loader: made by skip_first_batches (a resume inside the epoch), so the rows already "
            "seen are unknown; evaluate whole epochs, or resume at an epoch boundary"
        )
    for candidate in candidates:
        if isinstance(candidate, BatchSamplerShard):
            return candidate
    return None


def accelerate_layout(loader: Any) -> Optional[AccelerateShardLayout]:
    """The :class:`AccelerateShardLayout` of a prepared DataLoader, or None if Accelerate did not
    shard it. Raises ValueError for a sharding whose repeats cannot be located (see the module
    docstring) and warns (SamplerWarning) when samples are never yielded."""
    if isinstance(loader, DataLoaderDispatcher):
        raise ValueError(
            "loader: prepared with dispatch_batches=True (process 0 reads and slices every batch), "
            "whose repeats torchtally cannot locate; prepare it with "
            "Accelerator(dataloader_config=DataLoaderConfiguration(dispatch_batches=False)) and a "
            "map-style dataset"
        )
    if isinstance(getattr(loader, "dataset", None), IterableDatasetShard):
        raise ValueError(
            "loader: an IterableDataset sharded by Accelerate repeats samples torchtally cannot "
            "locate; use a map-style dataset (with __len__) for evaluation"
        )
    shard = find_batch_sampler_shard(loader)
    if shard is None:
        return None
    inner = shard.batch_sampler
    world, rank = int(shard.num_processes), int(shard.process_index)
    batch_size = shard.batch_size
    if not isinstance(batch_size, int) or batch_size < 1:
        if shard.even_batches and not shard.drop_last:
            raise ValueError(
                f"loader: its batch sampler ({type(inner).__name__}) has no batch_size, so the whole "
                "batches Accelerate repeats cannot be located; prepare it with even_batches=False"
            )
        raise ValueError(
            f"loader: its batch sampler ({type(inner).__name__}) has no batch_size; torchtally cannot "
            "count its rows. Use MetricHook(drop_padding=False): with even_batches=False nothing repeats"
        )
    sampler = getattr(inner, "sampler", None)
    try:
        n = len(sampler)  # type: ignore[arg-type]
        expected = n // batch_size if shard.drop_last else -(-n // batch_size)
        consistent = len(inner) == expected
    except TypeError:
        consistent = False
    if not consistent:
        raise ValueError(
            f"loader: its batch sampler ({type(inner).__name__}) does not draw fixed-size batches "
            "from a sampler with a length, so Accelerate's repeats cannot be located; use a "
            "DataLoader with batch_size and a map-style dataset"
        )
    rows = batch_size // world if shard.split_batches else batch_size
    layout = AccelerateShardLayout.build(
        n, world, rank, rows, padded=bool(shard.even_batches), drop_last=bool(shard.drop_last)
    )
    if layout.num_lost:
        warnings.warn(
            f"the loader's batch sampler has drop_last=True: Accelerate never yields {layout.num_lost} "
            f"of its {n} samples, so synced metrics will not cover them. Use drop_last=False for evaluation.",
            SamplerWarning,
            stacklevel=3,
        )
    return layout


class AccelerateMetricHook(MetricHook):
    """A :class:`~torchtally.adapters.hook.MetricHook` that drops the samples Accelerate repeats.

    Takes MetricHook's arguments, plus ``accelerator`` (optional): metric state and inputs go to
    ``accelerator.device``. Give :meth:`epoch` (or :meth:`start_epoch`) the prepared loader;
    a loader Accelerate did not shard falls back to MetricHook's DistributedSampler handling.
    Register the hook itself for ``save_state`` / ``load_state``; the checkpoint loads on any
    number of processes (see the module docstring).

    Example (under ``accelerate launch``)::

        accelerator = Accelerator()
        model, val_loader = accelerator.prepare(model, val_loader)
        hook = AccelerateMetricHook(
            {"acc": MulticlassAccuracy(num_classes=10), "auroc": MulticlassAUROC(num_classes=10)},
            accelerator=accelerator,
        )
        accelerator.register_for_checkpointing(hook)
        with hook.epoch(val_loader):
            for x, y in val_loader:
                hook.update(model(x), y)
        print(hook.result)    # every rank: the values of one process over the whole val set
        accelerator.save_state("ckpt")  # every process; load_state("ckpt") on any number of them
    """

    def __init__(self, metrics: Any, output_transform: Any = None, *, accelerator: Any = None, **kwargs: Any) -> None:
        device: Optional[Union[str, torch.device]] = kwargs.pop("device", None)
        if device is None and accelerator is not None:
            device = accelerator.device
        super().__init__(metrics, output_transform, device=device, **kwargs)

    def start_loader(self, loader: Any = None, *, sampler: Any = None, layout: Optional[ShardLayout] = None) -> None:
        if layout is None and sampler is None and loader is not None:
            layout = accelerate_layout(loader)
        super().start_loader(loader, sampler=sampler, layout=layout)
