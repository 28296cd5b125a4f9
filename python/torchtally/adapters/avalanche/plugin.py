"""The Avalanche plugin metric: a torchtally metric (or collection) at one of Avalanche's levels.

Imported by ``torchtally.adapters.avalanche`` once Avalanche is known to be installed; it
subclasses Avalanche's ``PluginMetric``, so ``EvaluationPlugin`` drives it like Avalanche's own
metrics and its loggers show its values under the same names.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import torch
from avalanche.evaluation import PluginMetric
from avalanche.evaluation.metric_results import MetricValue
from avalanche.evaluation.metric_utils import get_metric_name

from ...errors import NotComputableError
from ..dataparallel import check_no_metrics_inside, is_metric_like, metric_device
from .loaders import RowFilter, row_filter

__all__ = ["TallyPluginMetric", "LEVELS"]

# level -> (reset at, emit at, default mode), as Avalanche's accuracy_metrics / loss_metrics
LEVELS: Dict[str, Tuple[str, str, str]] = {
    "minibatch": ("iteration", "iteration", "train"),
    "epoch": ("epoch", "epoch", "train"),
    "epoch_running": ("epoch", "iteration", "train"),
    "experience": ("experience", "experience", "eval"),
    "stream": ("stream", "stream", "eval"),
}

UpdateFrom = Callable[[Any], Any]


def outputs_and_targets(strategy: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    """The default update arguments: the strategy's ``(mb_output, mb_y)``."""
    return strategy.mb_output, strategy.mb_y


def _as_args(value: Any) -> Tuple[tuple, dict]:
    if isinstance(value, dict):
        return (), value
    if isinstance(value, (tuple, list)):
        return tuple(value), {}
    return (value,), {}


def _rows(value: Any, rows: torch.Tensor, count: int) -> Any:
    """``value`` restricted to the given rows when it is a tensor with ``count`` rows."""
    if isinstance(value, torch.Tensor) and value.dim() >= 1:
        if value.shape[0] != count:
            raise ValueError(
                f"update arguments: expected every batched tensor to have {count} rows on dim "
                f"0 (one per sample), got shape {tuple(value.shape)}"
            )
        return value[rows.to(value.device)]
    return value


def _plain(value: Any) -> Any:
    """A 0-dim tensor as a Python number (as Avalanche's own metrics emit); others unchanged."""
    if isinstance(value, torch.Tensor) and value.dim() == 0:
        return value.item()
    return value


class TallyPluginMetric(PluginMetric):
    """A torchtally metric or collection evaluated at one Avalanche level, exact under DDP.

    Args:
        metric: a torchtally ``Metric`` or ``MetricCollection`` (anything with ``reset``,
            ``update`` and ``compute`` works; torchtally's sync in one packed step per level).
        name: the metric name in Avalanche's naming (``"Top1_Acc_Exp"`` ->
            ``"Top1_Acc_Exp/eval_phase/test_stream/Task000/Exp000"``). A dict result (a
            collection) is emitted as ``name + "_" + key`` per entry (or just the key when
            ``name`` is empty).
        level: ``"minibatch"``, ``"epoch"``, ``"epoch_running"`` (training), ``"experience"``
            or ``"stream"`` (evaluation): when the metric resets and emits, as Avalanche's
            ``accuracy_metrics(minibatch=..., epoch=..., ...)``.
        mode: ``"train"`` or ``"eval"``: which phase the metric follows (default per level).
        update_from: ``strategy -> update arguments`` (a tuple, a dict of keyword arguments or
            one tensor; one row per sample on dim 0). Default ``(strategy.mb_output,
            strategy.mb_y)``.
        split_by_task: one result per task label (Avalanche's ``...PerTask`` metrics), named
            with that label; else one result named with the experience's task label.
        device: where metric state lives and inputs go; default: where the strategy's model
            delivers its outputs (``DataParallel``'s output device).

    Each rank accumulates its own rows (padding duplicates of Avalanche's distributed loaders
    dropped, see ``loaders``) and the metric syncs once when its level ends, on every
    rank, so every rank emits the value a single process over the same data would emit.
    """

    supports_distributed = True

    def __init__(
        self,
        metric: Any,
        name: str,
        *,
        level: str = "experience",
        mode: Optional[str] = None,
        update_from: Optional[UpdateFrom] = None,
        split_by_task: bool = False,
        device: Optional[Union[str, torch.device]] = None,
    ) -> None:
        super().__init__()
        if not is_metric_like(metric):
            raise TypeError(
                f"metric: expected a torchtally Metric or MetricCollection (reset/update/"
                f"compute), got {type(metric).__name__}"
            )
        if level not in LEVELS:
            raise ValueError(f"level: expected one of {sorted(LEVELS)}, got {level!r}")
        self._reset_at, self._emit_at, default_mode = LEVELS[level]
        mode = default_mode if mode is None else mode
        if mode not in ("train", "eval"):
            raise ValueError(f"mode: expected 'train' or 'eval', got {mode!r}")
        if mode == "eval" and self._reset_at == "epoch":
            raise ValueError(f"level: {level!r} is a training level; evaluation has no epochs")
        if update_from is not None and not callable(update_from):
            raise TypeError(f"update_from: expected a callable, got {type(update_from).__name__}")
        self.template = metric
        self.name = name
        self.level = level
        self.mode = mode
        self.update_from = update_from or outputs_and_targets
        self.split_by_task = bool(split_by_task)
        self.device: Optional[torch.device] = None if device is None else torch.device(device)
        self._fixed_device = device is not None
        self.metrics: Dict[Optional[int], Any] = {}
        self._filter: Optional[RowFilter] = None
        self.last_result: Any = None

    def __str__(self) -> str:
        return self.name

    # ---- state --------------------------------------------------------------------------

    def reset(self) -> None:
        """Drop every accumulated value (all task labels)."""
        for metric in self.metrics.values():
            metric.reset()
        self.metrics = {}

    def _metric_for(self, task: Optional[int]) -> Any:
        metric = self.metrics.get(task)
        if metric is None:
            metric = self.template if not self.metrics and task is None else copy.deepcopy(self.template)
            metric.reset()
            if self.device is not None and callable(getattr(metric, "to", None)):
                metric.to(self.device)
            self.metrics[task] = metric
        return metric

    def place_for(self, strategy: Any) -> None:
        """Put state on the model's output device (DataParallel: its output device)."""
        model = getattr(strategy, "model", None)
        if self._fixed_device or not isinstance(model, torch.nn.Module):
            return
        check_no_metrics_inside(model)
        device = metric_device(model)
        if device != self.device:
            self.device = device
            for metric in self.metrics.values():
                if callable(getattr(metric, "to", None)):
                    metric.to(device)

    def _task_labels(self, strategy: Any) -> List[int]:
        """This level's task labels so far: the same on every rank (from the experiences)."""
        labels = getattr(strategy.experience, "task_labels", None) or [0]
        return sorted(int(t) for t in labels)

    # ---- one batch ----------------------------------------------------------------------

    def update(self, strategy: Any) -> None:
        """Update from the strategy's current minibatch, without padding duplicates."""
        if self._filter is None:  # a new pass over the loader: placement is checked once per pass
            self.place_for(strategy)  # (it walks a DataParallel model's modules)
            self._filter = row_filter(strategy.dataloader)
        count = len(strategy.mb_y)
        keep = self._filter.next_batch(count)
        groups = self._row_groups(strategy, keep, count)  # checked before any update
        for task, rows in groups:
            metric = self._metric_for(task)  # every rank holds the same task labels
            if rows is not None and rows.numel() == 0 and task is not None:
                continue
            args, kwargs = self._batch_args(strategy, rows, count)
            metric.update(*self._to_device(args), **self._to_device(kwargs))

    def _row_groups(
        self, strategy: Any, keep: Optional[torch.Tensor], count: int
    ) -> List[Tuple[Optional[int], Optional[torch.Tensor]]]:
        """(task label or None, the batch rows it takes or None for all) for this batch."""
        if not self.split_by_task:
            return [(None, keep)]
        labels = self._task_labels(strategy)
        tasks = torch.as_tensor(strategy.mb_task_id).cpu()
        if tasks.dim() == 0:
            tasks = tasks.expand(count)
        unknown = set(tasks.unique().tolist()) - set(labels)
        if unknown:
            raise ValueError(
                f"strategy.mb_task_id: task label(s) {sorted(unknown)} are not among the "
                f"experience's task_labels {labels}"
            )
        kept = torch.ones(count, dtype=torch.bool)
        if keep is not None:
            kept = torch.zeros(count, dtype=torch.bool)
            kept[keep] = True
        groups: List[Tuple[Optional[int], Optional[torch.Tensor]]] = []
        for task in labels:
            mask = kept & (tasks == task)
            groups.append((task, None if bool(mask.all()) else torch.nonzero(mask).flatten()))
        return groups

    def _batch_args(self, strategy: Any, rows: Optional[torch.Tensor], count: int) -> Tuple[tuple, dict]:
        """``update``'s arguments for the given rows of the batch (None: all of them)."""
        args, kwargs = _as_args(self.update_from(strategy))
        if rows is None:
            return args, kwargs
        return tuple(_rows(a, rows, count) for a in args), {k: _rows(v, rows, count) for k, v in kwargs.items()}

    def _to_device(self, values: Any) -> Any:
        device = self.device
        if device is None:
            return values

        def move(v: Any) -> Any:
            return v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v

        if isinstance(values, dict):
            return {k: move(v) for k, v in values.items()}
        return tuple(move(v) for v in values)

    # ---- results ------------------------------------------------------------------------

    def result(self) -> Any:
        """The synced result: ``{task: value}`` with ``split_by_task``, else the value (None
        before any update). Every rank must call it (it syncs)."""
        results = {}
        for task in sorted(self.metrics, key=lambda t: -1 if t is None else t):
            metric = self.metrics[task]
            try:
                raising = getattr(metric, "raising_if_never_updated", None)
                if raising is None:
                    results[task] = metric.compute()
                else:
                    with raising():
                        results[task] = metric.compute()
            except NotComputableError:  # no rank saw this task: the same on every rank
                continue
        if not self.split_by_task:
            return results.get(None)
        return results

    def _emit(self, strategy: Any) -> List[MetricValue]:
        result = self.result()
        self.last_result = result
        x = strategy.clock.train_iterations
        add_exp = self._emit_at == "experience"
        per_task = result.items() if self.split_by_task else [(True, result)]
        values = []
        for task, value in per_task:
            if value is None:
                continue
            entries = value.items() if isinstance(value, dict) else [(None, value)]
            for key, entry in entries:
                label = self.name if key is None else (f"{self.name}_{key}" if self.name else str(key))
                full = get_metric_name(label, strategy, add_experience=add_exp, add_task=task)
                values.append(MetricValue(self, full, _plain(entry), x))
        return values

    # ---- Avalanche's callbacks ----------------------------------------------------------

    def _reset_if(self, at: str, mode: str) -> None:
        if self._reset_at == at and self.mode == mode:
            self.reset()

    def _emit_if(self, at: str, mode: str, strategy: Any) -> Optional[List[MetricValue]]:
        if self._emit_at == at and self.mode == mode:
            return self._emit(strategy)
        return None

    def before_training(self, strategy: Any) -> None:
        self._reset_if("stream", "train")

    def before_training_exp(self, strategy: Any) -> None:
        self._reset_if("experience", "train")

    def before_training_epoch(self, strategy: Any) -> None:
        if self.mode == "train":  # a new pass over the training loader (not for a periodic
            self._filter = None  # evaluation's metrics, whose loader pass may be elsewhere)
        self._reset_if("epoch", "train")

    def before_training_iteration(self, strategy: Any) -> None:
        self._reset_if("iteration", "train")

    def after_training_iteration(self, strategy: Any) -> Optional[List[MetricValue]]:
        if self.mode == "train":
            self.update(strategy)
        return self._emit_if("iteration", "train", strategy)

    def after_training_epoch(self, strategy: Any) -> Optional[List[MetricValue]]:
        return self._emit_if("epoch", "train", strategy)

    def after_training_exp(self, strategy: Any) -> Optional[List[MetricValue]]:
        return self._emit_if("experience", "train", strategy)

    def after_training(self, strategy: Any) -> Optional[List[MetricValue]]:
        return self._emit_if("stream", "train", strategy)

    def before_eval(self, strategy: Any) -> None:
        self._reset_if("stream", "eval")

    def before_eval_exp(self, strategy: Any) -> None:
        if self.mode == "eval":  # a new pass over this experience's evaluation loader; a
            self._filter = None  # training metric keeps its place in the interrupted epoch
        self._reset_if("experience", "eval")

    def before_eval_iteration(self, strategy: Any) -> None:
        self._reset_if("iteration", "eval")

    def after_eval_iteration(self, strategy: Any) -> Optional[List[MetricValue]]:
        if self.mode == "eval":
            self.update(strategy)
        return self._emit_if("iteration", "eval", strategy)

    def after_eval_exp(self, strategy: Any) -> Optional[List[MetricValue]]:
        return self._emit_if("experience", "eval", strategy)

    def after_eval(self, strategy: Any) -> Optional[List[MetricValue]]:
        return self._emit_if("stream", "eval", strategy)
