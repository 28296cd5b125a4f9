"""AUROC, AveragePrecision, ROC and PrecisionRecallCurve: binary, multiclass, multilabel.

Names and options as torchmetrics'. ``thresholds=None``: exact mode (scores as float32 and
labels as uint8, 5 bytes per sample and column; values as scikit-learn); ``thresholds`` an int,
a list or a tensor: binned mode (O(T) histogram state, values as torchmetrics' binned mode).
Policies (logits, NaN, undefined values): torchtally.functional.curves.
"""
from typing import Any, Optional

from torch import Tensor

from ..functional._curve_args import check_average, check_max_fpr
from ..functional._curve_compute import Curve, auroc_from, average_precision_from, precision_recall_curve_from, roc_from
from ._curve_state import BinaryCurveState, MulticlassCurveState, MultilabelCurveState

_AVERAGES = ("macro", "weighted", "none", None)
_LABEL_AVERAGES = ("micro",) + _AVERAGES
_CURVE_AVERAGES = (None, "micro", "macro")


class BinaryAUROC(BinaryCurveState):
    """Area under the ROC curve; ``max_fpr`` gives the McClish-standardised partial AUC.

        >>> import torch
        >>> from torchtally.metrics import BinaryAUROC
        >>> m = BinaryAUROC()
        >>> m.update(torch.tensor([0.2, 0.7]), torch.tensor([0, 0]))
        BinaryAUROC()
        >>> m.update(torch.tensor([0.6, 0.9]), torch.tensor([1, 1])).compute()
        tensor(0.7500)
    """

    def __init__(self, *, max_fpr: Optional[float] = None, thresholds: Any = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.max_fpr = check_max_fpr(max_fpr)
        super().__init__(thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), None, self.max_fpr)


class MulticlassAUROC(MulticlassCurveState):
    """One-vs-rest AUROC per class, averaged: "macro" (default), "weighted" (by support), "none".

        >>> import torch
        >>> from torchtally.metrics import MulticlassAUROC
        >>> m = MulticlassAUROC(3, thresholds=100)
        >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
        >>> m.update(preds, torch.tensor([0, 2, 2, 1])).compute()
        tensor(0.8889)
    """

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", thresholds: Any = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.average = check_average(average, _AVERAGES)
        super().__init__(num_classes, thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), self.average)


class MultilabelAUROC(MultilabelCurveState):
    """AUROC per label, averaged: "micro" (labels pooled), "macro" (default), "weighted", "none".

        >>> import torch
        >>> from torchtally.metrics import MultilabelAUROC
        >>> m = MultilabelAUROC(2, average="none")
        >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
        >>> m.update(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])).compute()
        tensor([1.0000, 0.7500])
    """

    def __init__(self, num_labels: int, *, average: Optional[str] = "macro", thresholds: Any = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.average = check_average(average, _LABEL_AVERAGES)
        super().__init__(num_labels, thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), self.average)


class BinaryAveragePrecision(BinaryCurveState):
    """Average precision: sum over thresholds of (recall step) x precision.

        >>> import torch
        >>> from torchtally.metrics import BinaryAveragePrecision
        >>> m = BinaryAveragePrecision()
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        tensor(0.8333)
    """

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), None)


class MulticlassAveragePrecision(MulticlassCurveState):
    """One-vs-rest average precision per class, averaged: "macro", "weighted", "none".

        >>> import torch
        >>> from torchtally.metrics import MulticlassAveragePrecision
        >>> m = MulticlassAveragePrecision(3, average="none")
        >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
        >>> m.update(preds, torch.tensor([0, 2, 2, 1])).compute()
        tensor([1.0000, 0.5000, 1.0000])
    """

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", thresholds: Any = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.average = check_average(average, _AVERAGES)
        super().__init__(num_classes, thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), self.average)


class MultilabelAveragePrecision(MultilabelCurveState):
    """Average precision per label, averaged: "micro", "macro", "weighted", "none".

        >>> import torch
        >>> from torchtally.metrics import MultilabelAveragePrecision
        >>> m = MultilabelAveragePrecision(2, average="micro")
        >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
        >>> m.update(preds, torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])).compute()
        tensor(0.9500)
    """

    def __init__(self, num_labels: int, *, average: Optional[str] = "macro", thresholds: Any = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.average = check_average(average, _LABEL_AVERAGES)
        super().__init__(num_labels, thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), self.average)


class BinaryROC(BinaryCurveState):
    """(fpr, tpr, thresholds), thresholds descending; exact mode starts at (0, 0), threshold 1.

        >>> import torch
        >>> from torchtally.metrics import BinaryROC
        >>> m = BinaryROC(thresholds=3)
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        (tensor([0.0000, 0.5000, 1.0000]), tensor([0., 1., 1.]), tensor([1.0000, 0.5000, 0.0000]))
    """

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states())


class MulticlassROC(MulticlassCurveState):
    """One-vs-rest ROC per class (binned: [C, T] tensors; exact: lists), or pooled ("micro"),
    or averaged over classes ("macro", interpolated).

        >>> import torch
        >>> from torchtally.metrics import MulticlassROC
        >>> m = MulticlassROC(3, thresholds=3, average="micro")
        >>> m.update(torch.eye(3), torch.tensor([0, 1, 2])).compute()
        (tensor([0., 0., 1.]), tensor([1., 1., 1.]), tensor([1.0000, 0.5000, 0.0000]))
    """

    def __init__(self, num_classes: int, *, thresholds: Any = None, average: Optional[str] = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.average = check_average(average, _CURVE_AVERAGES)
        super().__init__(num_classes, thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states(), self.average)


class MultilabelROC(MultilabelCurveState):
    """ROC per label (binned: [L, T] tensors; exact: lists of tensors).

        >>> import torch
        >>> from torchtally.metrics import MultilabelROC
        >>> fpr, tpr, thresholds = MultilabelROC(2).update(torch.eye(2), torch.eye(2, dtype=torch.long)).compute()
        >>> fpr
        [tensor([0., 0., 1.]), tensor([0., 0., 1.])]
    """

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states())


class BinaryPrecisionRecallCurve(BinaryCurveState):
    """(precision, recall, thresholds): thresholds ascending, then the end point (1, 0).

        >>> import torch
        >>> from torchtally.metrics import BinaryPrecisionRecallCurve
        >>> m = BinaryPrecisionRecallCurve(thresholds=3)
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        (tensor([0.5000, 0.6667,    nan, 1.0000]), tensor([1., 1., 0., 0.]), tensor([0.0000, 0.5000, 1.0000]))
    """

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states())


class MulticlassPrecisionRecallCurve(MulticlassCurveState):
    """One-vs-rest precision-recall curve per class (binned: [C, T + 1]; exact: lists), or
    pooled ("micro"), or averaged over classes ("macro", interpolated).

        >>> import torch
        >>> from torchtally.metrics import MulticlassPrecisionRecallCurve
        >>> m = MulticlassPrecisionRecallCurve(3, thresholds=3)
        >>> precision, recall, thresholds = m.update(torch.eye(3), torch.tensor([0, 1, 2])).compute()
        >>> precision.shape
        torch.Size([3, 4])
    """

    def __init__(self, num_classes: int, *, thresholds: Any = None, average: Optional[str] = None,
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        self.average = check_average(average, _CURVE_AVERAGES)
        super().__init__(num_classes, thresholds=thresholds, ignore_index=ignore_index, **kwargs)

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states(), self.average)


class MultilabelPrecisionRecallCurve(MultilabelCurveState):
    """Precision-recall curve per label (binned: [L, T + 1] tensors; exact: lists).

        >>> import torch
        >>> from torchtally.metrics import MultilabelPrecisionRecallCurve
        >>> m = MultilabelPrecisionRecallCurve(2)
        >>> precision, recall, thresholds = m.update(torch.eye(2), torch.eye(2, dtype=torch.long)).compute()
        >>> recall
        [tensor([1., 1., 0.]), tensor([1., 1., 0.])]
    """

    def compute(self) -> Curve:
        return precision_recall_curve_from(self._curve, self._states())


__all__ = [name for name in dir() if name.startswith(("Binary", "Multiclass", "Multilabel")) and "State" not in name]
