"""AUROC, AveragePrecision, ROC and PrecisionRecallCurve: binary, multiclass, multilabel (their
task wrappers, ``AUROC(task="binary")`` returning a BinaryAUROC, ...: each in its metric's file).

Names, arguments (in torchmetrics' order) and class attributes as torchmetrics'.
``thresholds=None``: exact mode (scores as float32 and labels as uint8, 5 bytes per sample and
column; values as scikit-learn); ``thresholds`` an int, a list or a tensor: binned mode (O(T)
histogram state, values as torchmetrics' binned mode). Policies (logits, NaN, undefined
values): torchtally.functional.curves.

Differences from torchmetrics shared by every class here (each class lists its own):

* a column (class or label) without positive samples, or a batch of them, gives a warning
  wherever torchmetrics' value is a convention (ROC rates 0, PR recall 1 or NaN);
* exact mode keeps scores as float32: float64 scores that differ only beyond float32's
  precision count as tied, and the thresholds returned are float32 (torchmetrics: the input's
  dtype). Keeping 4 bytes per score is what lets exact mode hold a whole epoch;
* compute() in exact mode without a sample raises ValueError (torchmetrics raises too, from
  inside torch);
* ``thresholds`` given as a list or tensor must be non-decreasing (the histogram kernel needs
  sorted bin edges; torchmetrics takes any order, and its AUROC of unsorted thresholds is wrong);
* ``validate_args=False`` does not skip the input checks (they are part of the update's pass):
  a label out of range or a NaN score always raises ValueError (torchmetrics: RuntimeError for
  bad labels when it validates, garbage when it does not; it never checks for NaN);
* a multiclass batch of logits with a +inf logit (or a row of -inf only) raises ValueError:
  its softmax is NaN, which torchmetrics stores and computes over;
* binned mode on CUDA decides probabilities or logits on the device (no host synchronisation
  per update): a NaN score or an undefined softmax is refused by the kernel's deferred check,
  raised by the next update or compute() as every CUDA value error (see the README, "On the GPU");
* binary and multilabel targets may be float tensors holding 0/1 in every class (torchmetrics
  takes them only in BinaryAUROC, and with ``validate_args=False``); a float target holding
  anything else raises ValueError, and wrong dtypes raise TypeError (torchmetrics: ValueError);
* state names are ``hist`` (binned) and ``scores``/``labels`` (exact), not torchmetrics'
  ``confmat`` and ``preds``/``target``; they hold the same information in O(T) and 5 bytes per
  sample and column.
"""

from typing import Any, Optional

from ..functional.curves.compute import Curve, precision_recall_curve_from
from ..functional.curves.update import check_average
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper

__all__ = [
    "BinaryPrecisionRecallCurve",
    "MulticlassPrecisionRecallCurve",
    "MultilabelPrecisionRecallCurve",
    "PrecisionRecallCurve",
]

AVERAGES = ("macro", "weighted", "none", None)
LABEL_AVERAGES = ("micro",) + AVERAGES
CURVE_AVERAGES = (None, "micro", "macro")


# What plot() draws of a curve's (first, second, thresholds): x index, y index and their labels.
ROC_AXES = (0, 1, "false positive rate", "true positive rate")
_PR_AXES = (1, 0, "recall", "precision")


class BinaryPrecisionRecallCurve(BinaryCurveState):
    """(precision, recall, thresholds): thresholds ascending, then the end point (1, 0).

        >>> import torch
        >>> from torchtally.classification import BinaryPrecisionRecallCurve
        >>> m = BinaryPrecisionRecallCurve(thresholds=3)
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        (tensor([0.5000, 0.6667,    nan, 1.0000]), tensor([1., 1., 0., 0.]), tensor([0.0000, 0.5000, 1.0000]))

    Differences from torchmetrics: those every curve metric has (this module's docstring).
    """

    _plot_curve_axes = _PR_AXES

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states())


class MulticlassPrecisionRecallCurve(MulticlassCurveState):
    """One-vs-rest precision-recall curve per class (binned: [C, T + 1]; exact: lists), or
    pooled ("micro"), or averaged over classes ("macro", interpolated).

        >>> import torch
        >>> from torchtally.classification import MulticlassPrecisionRecallCurve
        >>> m = MulticlassPrecisionRecallCurve(3, thresholds=3)
        >>> precision, recall, thresholds = m.update(torch.eye(3), torch.tensor([0, 1, 2])).compute()
        >>> precision.shape
        torch.Size([3, 4])

    Differences from torchmetrics: those every curve metric has (this module's docstring).
    torchmetrics' exact mode sets the recall of every class to 1 when all targets are class 0;
    here only a class without positives has undefined (NaN) recall.
    """

    _plot_curve_axes = _PR_AXES

    def __init__(
        self,
        num_classes: int,
        thresholds: Any = None,
        average: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, CURVE_AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states(), self._reduction)


class MultilabelPrecisionRecallCurve(MultilabelCurveState):
    """Precision-recall curve per label (binned: [L, T + 1] tensors; exact: lists).

        >>> import torch
        >>> from torchtally.classification import MultilabelPrecisionRecallCurve
        >>> m = MultilabelPrecisionRecallCurve(2)
        >>> precision, recall, thresholds = m.update(torch.eye(2), torch.eye(2, dtype=torch.long)).compute()
        >>> recall
        [tensor([1., 1., 0.]), tensor([1., 1., 0.])]

    Differences from torchmetrics: those every curve metric has (this module's docstring).
    """

    _plot_curve_axes = _PR_AXES

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states())


class PrecisionRecallCurve(TaskWrapper):
    """BinaryPrecisionRecallCurve, MulticlassPrecisionRecallCurve or MultilabelPrecisionRecallCurve, by ``task``.

    >>> from torchtally.classification import PrecisionRecallCurve
    >>> type(PrecisionRecallCurve(task="binary")).__name__
    'BinaryPrecisionRecallCurve'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryPrecisionRecallCurve(**kwargs)
        if task == "multiclass":
            return MulticlassPrecisionRecallCurve(check_task_count("num_classes", num_classes), **kwargs)
        return MultilabelPrecisionRecallCurve(check_task_count("num_labels", num_labels), **kwargs)
