"""MetricTracker: a fresh copy of a metric (or collection) per epoch, and the best epoch."""

import copy
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union, cast

import torch
from torch.nn import ModuleList

from ..base.collection import MetricCollection
from ..base.metric import Metric
from ..base.plotting import plot_value
from ..base.resume import DcpStateDict, is_resumable, pack_record, unpack_record
from .abstract import warn_user
from .classwise import ClasswiseWrapper

Tracked = Union[Metric, MetricCollection]


class MetricTracker(DcpStateDict, ModuleList):
    """Track a Metric or MetricCollection over time: ``increment()`` starts a fresh copy (a step,
    e.g. an epoch), ``update`` / ``forward`` / ``compute`` / ``reset`` act on the latest copy,
    ``compute_all()`` stacks every step's result, ``best_metric(return_step=False)`` returns the
    best value (and its step), ``n_steps`` counts the steps. A ``torch.nn.ModuleList`` of the
    copies, as torchmetrics' is (item 0 is the metric given, never updated).

    Args:
        metric: a torchtally Metric or MetricCollection (TypeError otherwise).
        maximize: whether higher is better: a bool, a list of bools (one per metric of a
            collection), or None to read each metric's ``higher_is_better`` (AttributeError when
            one has none).

    Each step's metric syncs on its own ``compute()`` (one packed sync per step's metric; a step
    that was computed before and not updated since costs only the header exchange).

    Example:

        >>> import torch
        >>> from torchtally.classification import MulticlassAccuracy
        >>> from torchtally.wrappers import MetricTracker
        >>> tracker = MetricTracker(MulticlassAccuracy(num_classes=3, average="micro"))
        >>> for preds in ([0, 1, 2, 2], [0, 1, 1, 2], [2, 2, 2, 2]):
        ...     tracker.increment()
        ...     tracker.update(torch.tensor(preds), torch.tensor([0, 1, 1, 2]))
        >>> tracker.compute_all()
        tensor([0.7500, 1.0000, 0.2500])
        >>> tracker.best_metric(return_step=True)
        (1.0, 1)
    """

    __jit_unused_properties__ = ["n_steps"]  # torch.jit.script(tracker) leaves it out

    def __init__(self, metric: Tracked, maximize: Union[bool, List[bool], None] = None) -> None:
        super().__init__()
        if not isinstance(metric, (Metric, MetricCollection)):
            raise TypeError(
                f"Metric arg need to be an instance of a torchtally `Metric` or `MetricCollection` but got {metric}"
            )
        self._base_metric = metric
        self.maximize: Union[bool, List[bool]]
        if maximize is None:
            self.maximize = _higher_is_better(metric)
        else:
            if not isinstance(maximize, (bool, list)):
                raise ValueError("Argument `maximize` should either be a single bool or list of bool")
            if isinstance(maximize, list) and not all(isinstance(m, bool) for m in maximize):
                raise ValueError("Argument `maximize` is list but not type of bool.")
            if isinstance(maximize, list) and isinstance(metric, MetricCollection) and len(maximize) != len(metric):
                raise ValueError("The len of argument `maximize` should match the length of the metric collection")
            if isinstance(metric, Metric) and not isinstance(maximize, bool):
                raise ValueError("Argument `maximize` should be a single bool when `metric` is a single Metric")
            self.maximize = maximize
        self._increment_called = False

    @property
    def n_steps(self) -> int:
        """The number of steps (``increment()`` calls)."""
        return len(self) - 1

    def increment(self) -> None:
        """Start a new step: a fresh copy of the metric, updated from now on."""
        self._increment_called = True
        self.append(copy.deepcopy(self._base_metric))

    def resumable_state_dict(self) -> Dict[str, Any]:
        """Every step's metric state on every rank (each step's ``resumable_state_dict``), as
        ``{"torchtally_resume": bytes}``: loadable at any world size. A collective per step:
        every rank must call it (``dcp.save`` does)."""
        steps = [cast(Tracked, metric).resumable_state_dict() for metric in list(self)[1:]]
        return pack_record("MetricTracker", {"steps": steps})

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """nn.Module's load_state_dict; a resumable state dict goes to
        :meth:`load_resumable_state_dict` (None is returned)."""
        if is_resumable(state_dict):
            self.load_resumable_state_dict(state_dict)
            return None
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def load_resumable_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Into a tracker without steps (fresh): as many steps as were saved, each loaded as
        ``Metric.load_resumable_state_dict`` loads (rank 0 takes the saved ranks' total). Every
        step is loaded into a copy first, so a mismatch raises ValueError and adds no step."""
        record = unpack_record(state_dict, "MetricTracker")
        if self.n_steps:
            raise ValueError(
                f"MetricTracker.load_state_dict: expected a tracker without steps, this one has {self.n_steps}"
            )
        steps = []
        for i, saved in enumerate(record["steps"]):
            step = copy.deepcopy(self._base_metric)
            try:
                step.load_resumable_state_dict(saved)
            except ValueError as exc:
                raise ValueError(f"MetricTracker step {i}: {exc}") from None
            steps.append(step)
        for step in steps:
            self.append(step)
        self._increment_called = bool(steps)

    def _current(self, method: str) -> Tracked:
        if not self._increment_called:
            raise ValueError(f"`{method}` cannot be called before `.increment()` has been called.")
        return cast(Tracked, self[-1])

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The current step's forward: its value on this batch."""
        return self._current("forward")(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update the current step's metric."""
        self._current("update").update(*args, **kwargs)

    def compute(self) -> Any:
        """The current step's result."""
        return self._current("compute").compute()

    def compute_all(self) -> Any:
        """Every step's result, stacked along a new dim 0 (a dict of stacks for a collection; the
        plain list where the results cannot be stacked)."""
        self._current("compute_all")
        results: List[Any] = [cast(Tracked, metric).compute() for metric in list(self)[1:]]
        try:
            if isinstance(results[0], dict):
                return {k: torch.stack([r[k] for r in results], dim=0) for k in results[0]}
            if isinstance(results[0], list):
                return torch.stack([torch.stack(r, dim=0) for r in results], dim=0)
            return torch.stack(results, dim=0)
        except TypeError:
            return results

    def plot(self, val: Any = None, ax: Any = None) -> Tuple[Any, Any]:
        """Draw ``val`` (default: ``compute_all()``, one point per step; a dict: one series per
        metric) with matplotlib on ``ax`` (a new figure when None); returns (figure, axes)."""
        return plot_value(self.compute_all() if val is None else val, ax, type(self).__name__)

    def reset(self) -> None:
        """Reset the current step's metric."""
        cast(Tracked, self[-1]).reset()

    def reset_all(self) -> None:
        """Reset every step's metric."""
        for metric in self:
            cast(Tracked, metric).reset()

    def best_metric(self, return_step: bool = False) -> Any:
        """The best value over the steps (max or min as ``maximize`` says), with its step when
        ``return_step``; per key for a collection. None (with a warning) where there is no best."""
        res = self.compute_all()
        if isinstance(res, list):
            warn_user(
                "Encountered nested structure: a metric collection or wrapper inside a metric collection, which "
                "best_metric() does not support. Returning `None` instead."
            )
            return (None, None) if return_step else None
        if isinstance(self._base_metric, Metric) and not isinstance(self._base_metric, ClasswiseWrapper):
            fn = torch.max if self.maximize else torch.min
            try:
                value, idx = fn(res, 0)
                return (value.item(), idx.item()) if return_step else value.item()
            except (ValueError, RuntimeError) as error:
                warn_user(
                    f"Encountered the following error when trying to get the best metric: {error}. Returning `None`."
                )
                return (None, None) if return_step else None
        maximize = self.maximize if isinstance(self.maximize, list) else len(res) * [self.maximize]
        values: Dict[str, Optional[float]] = {}
        steps: Dict[str, Optional[float]] = {}
        for i, (k, v) in enumerate(res.items()):
            try:
                out = (torch.max if maximize[i] else torch.min)(v, 0)
                values[k], steps[k] = out[0].item(), out[1].item()
            except (ValueError, RuntimeError) as error:
                warn_user(f"Encountered the following error when trying to get the best metric for {k}: {error}.")
                values[k], steps[k] = None, None
        return (values, steps) if return_step else values


def _higher_is_better(metric: Tracked) -> Union[bool, List[bool]]:
    if isinstance(metric, Metric):
        if getattr(metric, "higher_is_better", None) is None:
            raise AttributeError(
                f"The metric '{type(metric).__name__}' does not have a 'higher_is_better' attribute."
                " Please provide the `maximize` argument explicitly."
            )
        return bool(metric.higher_is_better)
    found: List[bool] = []
    for name, m in metric.items():
        better: Optional[bool] = getattr(m, "higher_is_better", None)
        if better is None:
            raise AttributeError(
                f"The metric '{name}' in the MetricCollection does not have a 'higher_is_better' attribute."
                " Please provide the `maximize` argument explicitly."
            )
        classes = getattr(m.metric, "num_classes", None) if isinstance(m, ClasswiseWrapper) else None
        found.extend([better] * (classes if isinstance(classes, int) else 1))
    return found
