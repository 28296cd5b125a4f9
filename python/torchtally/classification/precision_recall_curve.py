"""AUROC, AveragePrecision, ROC and PrecisionRecallCurve: binary, multiclass, multilabel (their
task wrappers, ``AUROC(task="binary")`` returning a BinaryAUROC, ...: metrics/curve_tasks.py).

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
* binary and multilabel targets may be float tensors holding 0/1 in every class (torchmetrics
  takes them only in BinaryAUROC, and with ``validate_args=False``); a float target holding
  anything else raises ValueError, and wrong dtypes raise TypeError (torchmetrics: ValueError);
* state names are ``hist`` (binned) and ``scores``/``labels`` (exact), not torchmetrics'
  ``confmat`` and ``preds``/``target``; they hold the same information in O(T) and 5 bytes per
  sample and column.
"""

from typing import Any, Optional

from torch import Tensor

from ..functional.curves.compute import Curve, auroc_from, average_precision_from, precision_recall_curve_from, roc_from
from ..functional.curves.update import check_average, check_max_fpr
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState

__all__ = [
    f"{task}{name}"
    for name in ("AUROC", "AveragePrecision", "ROC", "PrecisionRecallCurve")
    for task in ("Binary", "Multiclass", "Multilabel")
]

_AVERAGES = ("macro", "weighted", "none", None)
_LABEL_AVERAGES = ("micro",) + _AVERAGES
_CURVE_AVERAGES = (None, "micro", "macro")
_AUROC_DIFFERENCE = """
    Differences from torchmetrics: a {column} without positive or without negative samples has
    AUROC NaN, with a warning, where torchmetrics returns 0, and "macro"/"weighted" skip it. An
    AUROC of 0 is a real and alarming result (every negative ranked above every positive);
    reporting it for "undefined" misleads, and averaging it in lowers the average silently.
    scikit-learn also says NaN. Plus the differences every curve metric has (torchtally.metrics.curves).
"""


# What plot() draws of a curve's (first, second, thresholds): x index, y index and their labels.
_ROC_AXES = (0, 1, "false positive rate", "true positive rate")
_PR_AXES = (1, 0, "recall", "precision")


class BinaryAUROC(BinaryCurveState):
    """Area under the ROC curve; ``max_fpr`` gives the McClish-standardised partial AUC.

    >>> import torch
    >>> from torchtally.classification import BinaryAUROC
    >>> m = BinaryAUROC()
    >>> _ = m.update(torch.tensor([0.2, 0.7]), torch.tensor([0, 0]))
    >>> m.update(torch.tensor([0.6, 0.9]), torch.tensor([1.0, 1.0])).compute()  # float 0/1 targets too
    tensor(0.7500)
    """

    higher_is_better = True

    def __init__(
        self,
        max_fpr: Optional[float] = None,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        max_fpr = check_max_fpr(max_fpr)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.max_fpr = max_fpr

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), None, self.max_fpr)


BinaryAUROC.__doc__ = (BinaryAUROC.__doc__ or "") + _AUROC_DIFFERENCE.format(column="batch")  # None under -OO


class MulticlassAUROC(MulticlassCurveState):
    """One-vs-rest AUROC per class, averaged: "macro" (default), "weighted" (by support), "none".

    >>> import torch
    >>> from torchtally.classification import MulticlassAUROC
    >>> m = MulticlassAUROC(3, thresholds=100)
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> m.update(preds, torch.tensor([0, 2, 2, 1])).compute()
    tensor(0.8889)
    """

    higher_is_better = True

    def __init__(
        self,
        num_classes: int,
        average: Optional[str] = "macro",
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), self._reduction)


MulticlassAUROC.__doc__ = (MulticlassAUROC.__doc__ or "") + _AUROC_DIFFERENCE.format(column="class")  # None under -OO


class MultilabelAUROC(MultilabelCurveState):
    """AUROC per label, averaged: "micro" (labels pooled), "macro" (default), "weighted", "none".

    >>> import torch
    >>> from torchtally.classification import MultilabelAUROC
    >>> m = MultilabelAUROC(2, average="none")
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> m.update(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])).compute()
    tensor([1.0000, 0.7500])
    """

    higher_is_better = True

    def __init__(
        self,
        num_labels: int,
        average: Optional[str] = "macro",
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _LABEL_AVERAGES)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), self._reduction)


MultilabelAUROC.__doc__ = (MultilabelAUROC.__doc__ or "") + _AUROC_DIFFERENCE.format(column="label")  # None under -OO


class BinaryAveragePrecision(BinaryCurveState):
    """Average precision: sum over thresholds of (recall step) x precision; 0 without positives.

        >>> import torch
        >>> from torchtally.classification import BinaryAveragePrecision
        >>> m = BinaryAveragePrecision()
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        tensor(0.8333)

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
    """

    higher_is_better = True

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), None)


class MulticlassAveragePrecision(MulticlassCurveState):
    """One-vs-rest average precision per class, averaged: "macro", "weighted", "none".

        >>> import torch
        >>> from torchtally.classification import MulticlassAveragePrecision
        >>> m = MulticlassAveragePrecision(3, average="none")
        >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
        >>> m.update(preds, torch.tensor([0, 2, 2, 1])).compute()
        tensor([1.0000, 0.5000, 1.0000])

    Differences from torchmetrics: in exact mode a class without positive samples has AP 0,
    with a warning, and averages count it, as in torchmetrics' binned mode, its binary and
    multilabel forms and scikit-learn; torchmetrics' exact multiclass mode alone gives NaN and
    skips the class, so its macro value would change with ``thresholds``. Plus the differences
    every curve metric has (torchtally.metrics.curves).
    """

    higher_is_better = True

    def __init__(
        self,
        num_classes: int,
        average: Optional[str] = "macro",
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), self._reduction)


class MultilabelAveragePrecision(MultilabelCurveState):
    """Average precision per label, averaged: "micro", "macro", "weighted", "none".

        >>> import torch
        >>> from torchtally.classification import MultilabelAveragePrecision
        >>> m = MultilabelAveragePrecision(2, average="micro")
        >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
        >>> m.update(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])).compute()
        tensor(0.9500)

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
    """

    higher_is_better = True

    def __init__(
        self,
        num_labels: int,
        average: Optional[str] = "macro",
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _LABEL_AVERAGES)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), self._reduction)


class BinaryROC(BinaryCurveState):
    """(fpr, tpr, thresholds), thresholds descending; exact mode starts at (0, 0), threshold 1.

        >>> import torch
        >>> from torchtally.classification import BinaryROC
        >>> m = BinaryROC(thresholds=3)
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        (tensor([0.0000, 0.5000, 1.0000]), tensor([0., 1., 1.]), tensor([1.0000, 0.5000, 0.0000]))

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
    """

    _plot_curve_axes = _ROC_AXES

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states())


class MulticlassROC(MulticlassCurveState):
    """One-vs-rest ROC per class (binned: [C, T] tensors; exact: lists), or pooled ("micro"),
    or averaged over classes ("macro", interpolated).

        >>> import torch
        >>> from torchtally.classification import MulticlassROC
        >>> m = MulticlassROC(3, thresholds=3, average="micro")
        >>> m.update(torch.eye(3), torch.tensor([0, 1, 2])).compute()
        (tensor([0., 0., 1.]), tensor([1., 1., 1.]), tensor([1.0000, 0.5000, 0.0000]))

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
    """

    _plot_curve_axes = _ROC_AXES

    def __init__(
        self,
        num_classes: int,
        thresholds: Any = None,
        average: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _CURVE_AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states(), self._reduction)


class MultilabelROC(MultilabelCurveState):
    """ROC per label (binned: [L, T] tensors; exact: lists of tensors).

        >>> import torch
        >>> from torchtally.classification import MultilabelROC
        >>> fpr, tpr, thresholds = MultilabelROC(2).update(torch.eye(2), torch.eye(2, dtype=torch.long)).compute()
        >>> fpr
        [tensor([0., 0., 1.]), tensor([0., 0., 1.])]

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
    """

    _plot_curve_axes = _ROC_AXES

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states())


class BinaryPrecisionRecallCurve(BinaryCurveState):
    """(precision, recall, thresholds): thresholds ascending, then the end point (1, 0).

        >>> import torch
        >>> from torchtally.classification import BinaryPrecisionRecallCurve
        >>> m = BinaryPrecisionRecallCurve(thresholds=3)
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        (tensor([0.5000, 0.6667,    nan, 1.0000]), tensor([1., 1., 0., 0.]), tensor([0.0000, 0.5000, 1.0000]))

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
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

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
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
        reduction = check_average(average, _CURVE_AVERAGES)
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

    Differences from torchmetrics: those every curve metric has (torchtally.metrics.curves).
    """

    _plot_curve_axes = _PR_AXES

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states())
