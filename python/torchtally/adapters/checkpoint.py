"""Checkpoints of a hook's metrics that give every rank its own state back (same world size).

Between syncs a metric's state is local: each rank holds what its own shard contributed.
Accelerate's ``save_state`` (objects given to ``register_for_checkpointing``) and Fabric's
``save`` ask every process for ``state_dict()`` but write only the main process's file, and their
``load`` hands that one dict to every process. A metric registered as is would come back on
every rank with rank 0's state, and the synced result would count rank 0's shard once per
rank (and a torchmetrics-style metric is not ``persistent``: nothing would be saved at all).

:class:`CheckpointedMetricHook` saves the states of every rank instead: its ``state_dict`` gathers
them (one ``all_gather_object`` on the default process group, so every rank must call it, as
both libraries do), and ``load_state_dict`` takes this rank's entry after checking that the
world size is the one it was saved at. Resuming at another world size is a different problem
(a rank's shard changes): this checkpoint refuses it instead of returning a wrong number.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

import torch
import torch.distributed

from ..base.collection import MetricCollection
from ..base.metric import Metric
from .hook import MetricHook

__all__ = ["CheckpointedMetricHook", "FORMAT"]

FORMAT = "torchtally.rankwise/1"  # the "format" entry of a saved state


def _world() -> tuple:
    td = torch.distributed
    if td.is_available() and td.is_initialized():
        return td.get_rank(), td.get_world_size()
    return 0, 1


def _on_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, list):
        return [_on_cpu(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _on_cpu(v) for k, v in value.items()}
    return value


def local_state_dict(metrics: Any) -> Dict[str, Any]:
    """This rank's states of a torchtally metric or collection, on the CPU, whatever their
    ``persistent`` flags (taken from a copy, so the metrics' own flags stay as they are)."""
    if not isinstance(metrics, (Metric, MetricCollection)):
        raise TypeError(
            "metrics: a rank-wise checkpoint needs torchtally metrics (a Metric, a MetricCollection "
            f"or a dict of Metric), got {type(metrics).__name__}"
        )
    copy = metrics.clone()
    copy.persistent(True)
    states = copy.state_dict()
    for key in list(states):  # in place: keeps the metadata that records the metrics' options
        states[key] = _on_cpu(states[key])
    return states


class CheckpointedMetricHook(MetricHook):
    """A :class:`~torchtally.adapters.hook.MetricHook` whose ``state_dict`` holds every rank's
    metric states (see the module docstring): register it, not the metrics, with a library
    that saves one file for all ranks. Takes MetricHook's arguments; the metrics must be
    torchtally's.

    >>> from torchtally import MulticlassAccuracy
    >>> hook = CheckpointedMetricHook(MulticlassAccuracy(num_classes=3, average="micro"))
    >>> with hook.epoch():
    ...     _ = hook.update(torch.tensor([0, 2, 1]), torch.tensor([0, 1, 1]))
    >>> saved = hook.state_dict()
    >>> saved["world_size"], len(saved["ranks"])
    (1, 1)
    >>> fresh = CheckpointedMetricHook(MulticlassAccuracy(num_classes=3, average="micro"))
    >>> fresh.load_state_dict(saved)
    >>> fresh.metrics.compute()
    tensor(0.6667)
    """

    def state_dict(self) -> Dict[str, Any]:
        """Every rank's metric states and last result. A collective under torch.distributed:
        every rank must call it (Accelerate's ``save_state`` and Fabric's ``save`` do)."""
        rank, world = _world()
        mine = {"metrics": local_state_dict(self.metrics), "result": _on_cpu(self.result)}
        entries: List[Any] = [mine]
        if world > 1:
            entries = [None] * world
            torch.distributed.all_gather_object(entries, mine)
        return {"format": FORMAT, "world_size": world, "ranks": entries}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Give this rank the states it had when ``state_dict`` was taken (same world size).

        Raises ValueError (and changes nothing) for a state saved at another world size or not
        by :meth:`state_dict`; the metrics check their own entries as ``load_state_dict`` does.
        """
        if not isinstance(state_dict, Mapping) or state_dict.get("format") != FORMAT:
            raise ValueError(
                f"state_dict: expected what CheckpointedMetricHook.state_dict() returns (format {FORMAT!r}), "
                f"got a {type(state_dict).__name__} without it"
            )
        rank, world = _world()
        saved_world = state_dict["world_size"]
        if saved_world != world or len(state_dict["ranks"]) != world:
            raise ValueError(
                f"state_dict: saved at world size {saved_world}, loaded at world size {world}; a rank-wise "
                "checkpoint resumes only at the world size it was saved at"
            )
        entry = state_dict["ranks"][rank]
        self.metrics.load_state_dict(entry["metrics"])
        self.result = entry["result"]
