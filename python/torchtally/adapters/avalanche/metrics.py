"""Avalanche's accuracy and loss plugin metrics (``accuracy_metrics``, ``loss_metrics``, same
names and levels), on torchtally metrics synced across ranks (the package docstring says how).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch

from ...aggregation import MeanMetric
from .plugin import LEVELS, TallyPluginMetric

__all__ = ["AccuracyPlugin", "LossPlugin", "accuracy_metrics", "loss_metrics"]

# Avalanche's names for its accuracy and loss plugin metrics, per level
_ACCURACY_NAMES = {
    "minibatch": "Top1_Acc_MB",
    "epoch": "Top1_Acc_Epoch",
    "epoch_running": "Top1_RunningAcc_Epoch",
    "experience": "Top1_Acc_Exp",
    "stream": "Top1_Acc_Stream",
}
_LOSS_NAMES = {
    "minibatch": "Loss_MB",
    "epoch": "Loss_Epoch",
    "epoch_running": "RunningLoss_Epoch",
    "experience": "Loss_Exp",
    "stream": "Loss_Stream",
}


def top1_hits(strategy: Any) -> torch.Tensor:
    """Per sample, 1.0 where the top-1 prediction is the target (labels or one-hot/logits, as
    Avalanche's ``Accuracy`` takes them), else 0.0."""
    preds, target = torch.as_tensor(strategy.mb_output), torch.as_tensor(strategy.mb_y)
    if preds.dim() > 1:
        preds = preds.argmax(dim=1)
    if target.dim() > 1:
        target = target.argmax(dim=1)
    if preds.shape != target.shape:
        raise ValueError(
            f"strategy.mb_output, strategy.mb_y: expected one prediction per target, got shapes "
            f"{tuple(strategy.mb_output.shape)} and {tuple(strategy.mb_y.shape)}"
        )
    return (preds == target).to(torch.float64)


class AccuracyPlugin(TallyPluginMetric):
    """Top-1 accuracy at one level, as Avalanche's ``Top1_Acc_*``: the mean of per-sample hits
    (a count over a count, so exact at every world size); no number of classes needed, so it
    follows a class-incremental model whose output grows."""

    def __init__(
        self,
        level: str = "experience",
        *,
        mode: Optional[str] = None,
        split_by_task: bool = False,
        name: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            MeanMetric(),
            name or _ACCURACY_NAMES[_known(level)],
            level=level,
            mode=mode,
            update_from=top1_hits,
            split_by_task=split_by_task,
            **kwargs,
        )


class LossPlugin(TallyPluginMetric):
    """The strategy's loss at one level, as Avalanche's ``Loss_*``: the mean over batches of
    ``strategy.loss`` weighted by their sizes. On a batch that holds padding duplicates the
    loss is recomputed with the strategy's criterion over the real rows only (so a plugin's
    penalty added to ``strategy.loss`` is left out of that batch)."""

    def __init__(
        self,
        level: str = "experience",
        *,
        mode: Optional[str] = None,
        split_by_task: bool = False,
        name: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            MeanMetric(),
            name or _LOSS_NAMES[_known(level)],
            level=level,
            mode=mode,
            split_by_task=split_by_task,
            **kwargs,
        )

    def _batch_args(self, strategy: Any, rows: Optional[torch.Tensor], count: int) -> Tuple[tuple, dict]:
        if rows is None:
            return (strategy.loss.detach().reshape(()), count), {}
        if rows.numel() == 0:
            return (torch.zeros(0, dtype=strategy.loss.dtype), torch.zeros(0)), {}
        criterion = strategy._criterion  # Avalanche's template keeps its criterion here
        index = rows.to(strategy.mb_y.device)
        with torch.no_grad():
            loss = criterion(strategy.mb_output[index], strategy.mb_y[index])
        return (loss.detach().reshape(()), int(rows.numel())), {}


def _known(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level: expected one of {sorted(LEVELS)}, got {level!r}")
    return level


def _plugins(cls: type, flags: dict, kwargs: dict) -> List[TallyPluginMetric]:
    return [cls(level, **kwargs) for level in LEVELS if flags[level]]


def accuracy_metrics(
    *,
    minibatch: bool = False,
    epoch: bool = False,
    epoch_running: bool = False,
    experience: bool = False,
    stream: bool = False,
    **kwargs: Any,
) -> List[TallyPluginMetric]:
    """Avalanche's ``accuracy_metrics``, exact and synced under DDP: one :class:`AccuracyPlugin`
    per level asked for (``split_by_task=True``, ``device=...`` go to each)."""
    flags = dict(minibatch=minibatch, epoch=epoch, epoch_running=epoch_running, experience=experience, stream=stream)
    return _plugins(AccuracyPlugin, flags, kwargs)


def loss_metrics(
    *,
    minibatch: bool = False,
    epoch: bool = False,
    epoch_running: bool = False,
    experience: bool = False,
    stream: bool = False,
    **kwargs: Any,
) -> List[TallyPluginMetric]:
    """Avalanche's ``loss_metrics``, exact and synced under DDP: one :class:`LossPlugin` per
    level asked for."""
    flags = dict(minibatch=minibatch, epoch=epoch, epoch_running=epoch_running, experience=experience, stream=stream)
    return _plugins(LossPlugin, flags, kwargs)
