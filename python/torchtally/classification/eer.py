"""Readouts of the curves: EER, LogAUC, PrecisionAtFixedRecall, RecallAtFixedPrecision,
SensitivityAtSpecificity and SpecificityAtSensitivity, binary, multiclass and multilabel (their
task wrappers: each in its metric's file, EER's here).

Each class holds exactly the state of the curve metrics with the same task and options
(classification/base.py: the O(T) histogram for ``thresholds`` an int, list or tensor, 5 bytes per
sample and column for ``thresholds=None``) and declares the same ``state_key``, so inside a
MetricCollection a BinaryEER, a BinaryAUROC and a BinaryROC of the same options update and
sync ONE state. compute() reads the value off the ROC or precision-recall curve that state
gives (torchtally.functional.curves.readouts: the rules, torchmetrics 1.9's, ties and the
threshold returned included).

Names, arguments (in torchmetrics' order, with its defaults: BinaryLogAUC's ``validate_args``
is False there) and class attributes as torchmetrics'. Differences from torchmetrics shared by
every class here:

* ``min_recall``, ``min_precision``, ``min_specificity``, ``min_sensitivity`` and
  ``fpr_range`` are checked at construction whatever ``validate_args`` says: a value outside
  [0, 1] (or a range not 0 <= low < high <= 1) raises ValueError, a non-number TypeError
  (torchmetrics lets any float through, e.g. ``min_recall=1.5``, and skips the ``fpr_range``
  check when ``validate_args`` is False, BinaryLogAUC's default);
* the curve's warnings (a column without positive or negative samples, where the value is a
  convention) come prefixed with the readout's name;
* those of the curve metrics (torchtally.classification.precision_recall_curve): float32 scores
  in exact mode (so the thresholds returned are float32), sorted ``thresholds``, inputs always
  checked.
"""

from typing import Any, Optional

from torch import Tensor

from ..functional.curves.readouts import eer_from
from ..functional.curves.update import check_average
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper

__all__ = ["BinaryEER", "MulticlassEER", "MultilabelEER", "EER"]

_EER_AVERAGES = (None, "micro", "macro")
RANGE = (0.001, 0.1)


class Readout:
    """torchmetrics' plot bounds of the readouts (mixed in before the curve state, whose other
    class attributes are the readouts' too)."""

    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0


class BinaryEER(Readout, BinaryCurveState):
    """Equal error rate: on the ROC curve, (FPR + FNR) / 2 where FPR and FNR = 1 - TPR are closest.

    >>> import torch
    >>> from torchtally.classification import BinaryEER
    >>> m = BinaryEER(thresholds=5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    tensor(0.2500)

    Differences from torchmetrics: those of every readout (this module's docstring).
    """

    def compute(self) -> Tensor:
        return eer_from(self._curve, self._states())


class MulticlassEER(Readout, MulticlassCurveState):
    """One-vs-rest EER per class [C], or of the pooled ("micro") or averaged ("macro") ROC curve.

    >>> import torch
    >>> from torchtally.classification import MulticlassEER
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassEER(3).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    tensor([0.0000, 0.1667, 0.0000])

    Differences from torchmetrics: those of every readout (this module's docstring).
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        thresholds: Any = None,
        average: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _EER_AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return eer_from(self._curve, self._states(), self._reduction)


class MultilabelEER(Readout, MultilabelCurveState):
    """EER per label [L].

    >>> import torch
    >>> from torchtally.classification import MultilabelEER
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelEER(2).update(preds, target).compute()
    tensor([0.0000, 0.5000])

    Differences from torchmetrics: those of every readout (this module's docstring).
    """

    plot_legend_name: Optional[str] = "Label"

    def compute(self) -> Tensor:
        return eer_from(self._curve, self._states())


class EER(TaskWrapper):
    """BinaryEER, MulticlassEER or MultilabelEER, by ``task`` (``average``: multiclass only).

    >>> from torchtally.classification import EER
    >>> type(EER(task="multiclass", num_classes=3)).__name__
    'MulticlassEER'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryEER(**kwargs)
        if task == "multiclass":
            return MulticlassEER(check_task_count("num_classes", num_classes), average=average, **kwargs)
        return MultilabelEER(check_task_count("num_labels", num_labels), **kwargs)
