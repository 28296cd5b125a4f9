"""Calibration error metrics: state declarations; the math lives in
torchtally.functional.classification.calibration_error.

State: per bin (n_bins + 1 of them, torchmetrics' bins), ``bin_counts`` int64 [B] and
``bin_sums`` float64 [B, 2] (confidence sum, accuracy sum); both sum-reduced, so a sync is one
all_reduce of a fixed 24 * (n_bins + 1) bytes. torchmetrics keeps every confidence and accuracy
(8 bytes per sample, a "cat" state gathered at every sync) and bins them at compute: the bins
hold the same numbers, exactly.
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.classification.calibration_error import (
    binary_confidences,
    calibration_from_bins,
    calibration_update,
    check_n_bins,
    check_norm,
    multiclass_confidences,
)
from ..functional.classification.update import check_count, check_ignore_index
from ..functional.tasks import check_task, check_task_count
from .base import SCORE_TASKS as TASKS
from .base import TaskWrapper

__all__ = ["BinaryCalibrationError", "MulticlassCalibrationError", "CalibrationError"]


class _CalibrationBase(Metric):
    is_differentiable = False
    traceable_update = False  # probabilities or logits, and the checks, read the values: eager inside torch.compile
    higher_is_better = False
    full_state_update = False
    if TYPE_CHECKING:  # declared states, read as attributes
        bin_counts: Tensor
        bin_sums: Tensor

    def _declare(self, n_bins: object, norm: object, ignore_index: object, validate_args: bool) -> None:
        self.n_bins = check_n_bins(n_bins)
        self.norm = check_norm(norm)
        self.ignore_index = check_ignore_index(ignore_index)
        self.validate_args = validate_args
        b = self.n_bins + 1
        self.add_state("bin_counts", torch.zeros(b, dtype=torch.int64), reduce="sum")
        self.add_state("bin_sums", torch.zeros(b, 2, dtype=torch.float64), reduce="sum")

    def compute(self) -> Tensor:
        return self.in_result_dtype(calibration_from_bins(self.bin_counts, self.bin_sums, self.norm))

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "bin_counts", "bin_sums")


class BinaryCalibrationError(_CalibrationBase):
    """Calibration error of a binary task: probabilities binned into ``n_bins`` equal bins of
    [0, 1], each bin's mean probability against its share of positive targets, reduced by
    ``norm`` ("l1": expected calibration error, "l2": root mean square, "max": maximum).
    preds [N, ...] probabilities or logits (sigmoid when a batch lies outside [0, 1]), target
    [N, ...] in {0, 1}.

    State: per-bin counts and float64 sums, 24 * (n_bins + 1) bytes whatever the number of
    samples (torchmetrics keeps every confidence and accuracy).

    Differences from torchmetrics: results are in ``self.dtype`` (float32; torchmetrics' follow
    float64 preds), "l2" with no error gives a float 0 (torchmetrics: an int64 0); NaN scores and
    bad targets raise ValueError with ``validate_args=False`` too; no gradient.

        >>> import torch
        >>> from torchtally.classification import BinaryCalibrationError
        >>> m = BinaryCalibrationError(n_bins=2, norm="l1")
        >>> m.update(torch.tensor([0.25, 0.25, 0.55, 0.75, 0.75]), torch.tensor([0, 0, 1, 1, 1])).compute()
        tensor(0.2900)
    """

    def __init__(
        self,
        n_bins: int = 15,
        norm: str = "l1",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._declare(n_bins, norm, ignore_index, validate_args)

    def update(self, preds: Tensor, target: Tensor) -> None:
        conf, hits = binary_confidences(preds, target, self.ignore_index, self.device)
        calibration_update(self.bin_counts, self.bin_sums, conf, hits)


class MulticlassCalibrationError(_CalibrationBase):
    """Top-label calibration error of a multiclass task: each sample's highest probability
    (float32, as torchmetrics) binned, each bin's mean confidence against its accuracy, reduced
    by ``norm`` as BinaryCalibrationError. preds [N, C, ...] probabilities or logits (softmax
    when a batch lies outside [0, 1]), target [N, ...] class ids.

    State and differences from torchmetrics as BinaryCalibrationError.

        >>> import torch
        >>> from torchtally.classification import MulticlassCalibrationError
        >>> preds = torch.tensor([[0.25, 0.20, 0.55], [0.55, 0.05, 0.40], [0.10, 0.30, 0.60], [0.90, 0.05, 0.05]])
        >>> m = MulticlassCalibrationError(num_classes=3, n_bins=3, norm="l1")
        >>> m.update(preds, torch.tensor([0, 1, 2, 0])).compute()
        tensor(0.2000)
    """

    def __init__(
        self,
        num_classes: int,
        n_bins: int = 15,
        norm: str = "l1",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = check_count("num_classes", num_classes)
        self._declare(n_bins, norm, ignore_index, validate_args)

    def update(self, preds: Tensor, target: Tensor) -> None:
        conf, hits = multiclass_confidences(preds, target, self.num_classes, self.ignore_index, self.device)
        calibration_update(self.bin_counts, self.bin_sums, conf, hits)


class CalibrationError(TaskWrapper):
    """BinaryCalibrationError or MulticlassCalibrationError, by ``task``.

    >>> from torchtally.classification import CalibrationError
    >>> type(CalibrationError(task="binary", n_bins=10)).__name__
    'BinaryCalibrationError'
    """

    def __new__(
        cls,
        task: str,
        n_bins: int = 15,
        norm: str = "l1",
        num_classes: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task, TASKS)
        kwargs.update(n_bins=n_bins, norm=norm, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryCalibrationError(**kwargs)
        return MulticlassCalibrationError(check_task_count("num_classes", num_classes, task), **kwargs)
