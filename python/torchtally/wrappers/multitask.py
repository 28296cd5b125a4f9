"""MultitaskWrapper: one metric (or collection) per task, fed from dicts of predictions and targets."""

import copy
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from torch import nn

from ..base.collection import MetricCollection
from .abstract import WrapperMetric, check_wrapped, updating


def _affix(value: Optional[str], name: str) -> str:
    if value is not None and not isinstance(value, str):
        raise ValueError(
            f"Expected argument `{name}` to either be `None` or a string but got {value} "
            f"(Expected input `{name}` to be a string, but got {type(value)})"
        )
    return value or ""


class MultitaskWrapper(WrapperMetric):
    """Different metrics for different tasks: ``update(task_preds, task_targets)`` takes two dicts
    keyed by task name and updates each task's Metric or MetricCollection with its
    ``(preds, target)``; ``compute()`` returns ``{"<prefix><task><postfix>": result}``.

    Args:
        task_metrics: ``{task name: Metric or MetricCollection}`` (TypeError otherwise).
        prefix / postfix: put before / after each task name in the results (not in the input keys).

    Every task's state is this metric's (torchtally.wrappers.abstract): all tasks sync in
    one packed sync, and a batch one task refuses leaves every task unchanged.

    Example:

        >>> import torch
        >>> from torchtally.classification import BinaryAccuracy
        >>> from torchtally.regression import MeanSquaredError
        >>> from torchtally.wrappers import MultitaskWrapper
        >>> metrics = MultitaskWrapper({"Classification": BinaryAccuracy(), "Regression": MeanSquaredError()})
        >>> metrics.update(
        ...     {"Classification": torch.tensor([0, 1, 0]), "Regression": torch.tensor([2.5, 0.0, 2.0])},
        ...     {"Classification": torch.tensor([0, 0, 1]), "Regression": torch.tensor([3.0, -0.5, 2.0])},
        ... ).compute()
        {'Classification': tensor(0.3333), 'Regression': tensor(0.1667)}
    """

    is_differentiable = False

    def __init__(
        self, task_metrics: Dict[str, Any], prefix: Optional[str] = None, postfix: Optional[str] = None
    ) -> None:
        super().__init__()
        if not isinstance(task_metrics, dict):
            raise TypeError(f"Expected argument `task_metrics` to be a dict. Found task_metrics = {task_metrics}")
        for metric in task_metrics.values():
            check_wrapped(metric, "task_metrics", collections=True, error=TypeError)
        self.task_metrics = nn.ModuleDict(task_metrics)
        self._prefix = _affix(prefix, "prefix")
        self._postfix = _affix(postfix, "postfix")
        self._tasks = list(self.task_metrics.keys())
        for i, metric in enumerate(task_metrics.values()):
            self.add_slot(f"t{i}", metric)

    @property
    def described_options(self) -> Dict[str, str]:
        """The wrapped metrics' options, the task names and the affixes: ranks whose tasks differ
        (``b`` on one, ``c`` on another) must not merge them."""
        return {
            **super().described_options,
            "tasks": repr(self._tasks),
            "prefix": repr(self._prefix),
            "postfix": repr(self._postfix),
        }

    def _name(self, task: str) -> str:
        return f"{self._prefix}{task}{self._postfix}"

    def items(self, flatten: bool = True) -> Iterable[Tuple[str, nn.Module]]:
        """(name, metric) per task; with ``flatten``, a collection's metrics one by one."""
        for task, metric in self.task_metrics.items():
            if flatten and isinstance(metric, MetricCollection):
                for key, sub in metric.items():
                    yield f"{self._prefix}{task}_{key}{self._postfix}", sub
            else:
                yield self._name(task), metric

    def keys(self, flatten: bool = True) -> Iterable[str]:
        """The names ``items(flatten)`` yields."""
        for name, _ in self.items(flatten):
            yield name

    def values(self, flatten: bool = True) -> Iterable[nn.Module]:
        """The metrics ``items(flatten)`` yields."""
        for _, metric in self.items(flatten):
            yield metric

    def update(self, task_preds: Dict[str, Any], task_targets: Dict[str, Any]) -> None:
        """Update each task's metric with ``task_preds[task]`` and ``task_targets[task]``."""
        if not isinstance(task_preds, dict) or not isinstance(task_targets, dict):
            raise TypeError(
                "Expected arguments `task_preds` and `task_targets` to be dicts keyed by task, got "
                f"{type(task_preds).__name__} and {type(task_targets).__name__}"
            )
        if not self.task_metrics.keys() == task_preds.keys() == task_targets.keys():
            raise ValueError(
                "Expected arguments `task_preds` and `task_targets` to have the same keys as the wrapped `task_metrics`"
                f". Found task_preds.keys() = {task_preds.keys()}, task_targets.keys() = {task_targets.keys()} "
                f"and self.task_metrics.keys() = {self.task_metrics.keys()}"
            )

        def steps() -> None:
            for i, task in enumerate(self._tasks):
                pred, target = task_preds[task], task_targets[task]
                try:
                    self.update_slot(f"t{i}", updating(pred, target))
                except (TypeError, ValueError) as exc:  # the task's metric names preds or target: say which task
                    raise type(exc)(f"task_preds[{task!r}], task_targets[{task!r}]: {exc}") from exc

        self.atomically(steps)

    def compute(self) -> Dict[str, Any]:
        return {self._name(task): self.slot_value(f"t{i}") for i, task in enumerate(self._tasks)}

    def plot(  # type: ignore[override]  # one plot per task, as torchmetrics' MultitaskWrapper.plot
        self, val: Any = None, axes: Optional[Sequence[Any]] = None
    ) -> List[Tuple[Any, Any]]:
        """Each task's plot (its metric's ``plot``), one (figure, axes) per task, as torchmetrics.

        Args:
            val: a result of ``compute()`` / ``forward`` (a dict keyed by result name), a sequence of
                them (drawn over the steps), or None for ``compute()``.
            axes: one matplotlib axes per task to draw on, or None for new figures.
        """
        if axes is not None:
            if not isinstance(axes, Sequence):
                raise TypeError(f"Expected argument `axes` to be a Sequence. Found type(axes) = {type(axes)}")
            if len(axes) != len(self._tasks):
                raise ValueError(
                    "Expected argument `axes` to be a Sequence of the same length as the number of tasks."
                    f"Found len(axes) = {len(axes)} and {len(self._tasks)} tasks"
                )
        val = self.compute() if val is None else val
        if not isinstance(val, (dict, Sequence)) or isinstance(val, str):
            raise TypeError(
                f"Expected argument `val` to be None or of type Dict or Sequence[Dict]. Found type(val)= {type(val)}"
            )
        out = []
        for i, (task, module) in enumerate(self.task_metrics.items()):
            metric: Any = module  # a Metric or a MetricCollection (checked in __init__)
            ax = axes[i] if axes is not None else None
            if isinstance(val, dict):
                out.append(metric.plot(self._task_value(val, task), ax))
            else:
                out.append(metric.plot([self._task_value(v, task) for v in val], ax))
        return out

    def _task_value(self, val: Dict[str, Any], task: str) -> Any:
        """Task ``task``'s entry of a result: under its result name, or under the task name."""
        if not isinstance(val, dict):
            raise TypeError(f"Expected each value in argument `val` to be a dict keyed by task, got {type(val)}")
        name = self._name(task)
        return val[name] if name in val else val[task]

    def clone(self, prefix: Optional[str] = None, postfix: Optional[str] = None) -> "MultitaskWrapper":
        """A deep copy, with ``prefix`` and ``postfix`` for its result names."""
        new = copy.deepcopy(self)
        new._prefix = _affix(prefix, "prefix")
        new._postfix = _affix(postfix, "postfix")
        new.drop_cached_result()  # its names changed
        return new
