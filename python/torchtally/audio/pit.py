"""PermutationInvariantTraining (torchmetrics.audio.pit's name): the mean over mixtures of the
best ``metric_func`` value under a permutation of the predicted speakers
(torchtally.functional.audio.pit).

State (torchtally.audio.utterance_mean): ``sum_pit_metric`` float64 [] and ``total`` int64 [],
16 bytes; a sync is one all_reduce per dtype. Results in ``self.dtype``.

Differences from torchmetrics: the sum is float64 (torchmetrics: a float32 state); the keyword
arguments that torchtally's Metric takes (``sync_on_compute``, ``compute_on_cpu``, ``device``,
...) configure the metric, every other one goes to ``metric_func`` (torchmetrics keeps only
``dist_sync_on_step``, ``process_group`` and ``dist_sync_fn`` for itself); ``mode`` and
``eval_func`` are checked when the metric is made (torchmetrics: at the first update); bad
inputs raise TypeError / ValueError with the state unchanged; no gradient.
"""

from typing import TYPE_CHECKING, Any, Callable, Optional

from torch import Tensor

from ..functional.audio.pit import check_pit_options, permutation_invariant_training
from .utterance_mean import UtteranceMean

__all__ = ["PermutationInvariantTraining"]

# Metric's own keyword arguments (torchtally.base.metric and .options); the rest is metric_func's
METRIC_KWARGS = (
    "sync_on_compute",
    "process_group",
    "sync_timeout",
    "recipient_rank",
    "device",
    "compute_on_cpu",
    "dist_sync_on_step",
    "compute_with_cache",
    "dist_sync_fn",
    "distributed_available_fn",
)


class PermutationInvariantTraining(UtteranceMean):
    """Mean over mixtures of the best ``metric_func(preds[:, i], target[:, j])`` score under a
    permutation of the predicted speakers ("speaker-wise"; "permutation-wise" scores whole
    permuted mixtures), the best being the largest (``eval_func="max"``) or smallest ("min").
    ``preds``, ``target``: ``(batch, spk, ...)``. Extra keyword arguments go to ``metric_func``.

    State: ``sum_pit_metric`` float64 [], ``total`` int64 [] (16 bytes; one all_reduce per dtype
    to sync). Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import PermutationInvariantTraining
        >>> from torchtally.functional.audio import scale_invariant_signal_distortion_ratio
        >>> target = torch.tensor([[[3.0, -0.5, 2.0, 7.0], [1.0, 2.0, -1.0, 0.5]]])
        >>> pit = PermutationInvariantTraining(scale_invariant_signal_distortion_ratio)
        >>> pit.update(target.flip(1) + 0.1, target).compute()
        tensor(29.4487)
    """

    higher_is_better: Optional[bool] = None  # eval_func says which way is better
    traceable_update = False  # the assignment runs on the CPU (scipy) for 3 speakers or more
    if TYPE_CHECKING:
        sum_pit_metric: Tensor
        total: Tensor

    def __init__(
        self, metric_func: Callable[..., Tensor], mode: str = "speaker-wise", eval_func: str = "max", **kwargs: Any
    ) -> None:
        metric_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k not in METRIC_KWARGS}
        super().__init__(**kwargs)
        check_pit_options(metric_func, mode, eval_func)
        self.metric_func = metric_func
        self.mode = mode
        self.eval_func = eval_func
        self.kwargs = metric_kwargs
        self._add_states("sum_pit_metric", "total")

    def update(self, preds: Tensor, target: Tensor) -> None:
        best, _ = permutation_invariant_training(
            preds, target, self.metric_func, self.mode, self.eval_func, **self.kwargs
        )
        self._add_values(best, (preds, target))
