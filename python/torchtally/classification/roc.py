"""``ROC``, ``BinaryROC``, ``MulticlassROC``, ``MultilabelROC`` (torchmetrics.classification.roc's
names). BinaryROC, MulticlassROC or MultilabelROC, by ``task`` (torchmetrics' wrapper takes no
``average``)."""

from typing import Any, Optional

from ..functional.curves.compute import Curve, roc_from
from ..functional.curves.update import check_average
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .precision_recall_curve import CURVE_AVERAGES, ROC_AXES

__all__ = ["ROC", "BinaryROC", "MulticlassROC", "MultilabelROC"]


class ROC(TaskWrapper):
    """BinaryROC, MulticlassROC or MultilabelROC, by ``task`` (torchmetrics' wrapper takes no ``average``).

    >>> from torchtally.classification import ROC
    >>> type(ROC(task="multilabel", num_labels=4)).__name__
    'MultilabelROC'
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
            return BinaryROC(**kwargs)
        if task == "multiclass":
            return MulticlassROC(check_task_count("num_classes", num_classes), **kwargs)
        return MultilabelROC(check_task_count("num_labels", num_labels), **kwargs)


class BinaryROC(BinaryCurveState):
    """(fpr, tpr, thresholds), thresholds descending; exact mode starts at (0, 0), threshold 1.

        >>> import torch
        >>> from torchtally.classification import BinaryROC
        >>> m = BinaryROC(thresholds=3)
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        (tensor([0.0000, 0.5000, 1.0000]), tensor([0., 1., 1.]), tensor([1.0000, 0.5000, 0.0000]))

    Differences from torchmetrics: those every curve metric has (torchtally.classification.precision_recall_curve).
    """

    _plot_curve_axes = ROC_AXES

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

    Differences from torchmetrics: those every curve metric has (torchtally.classification.precision_recall_curve).
    """

    _plot_curve_axes = ROC_AXES

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
        return roc_from(self._curve, self._states(), self._reduction)


class MultilabelROC(MultilabelCurveState):
    """ROC per label (binned: [L, T] tensors; exact: lists of tensors).

        >>> import torch
        >>> from torchtally.classification import MultilabelROC
        >>> fpr, tpr, thresholds = MultilabelROC(2).update(torch.eye(2), torch.eye(2, dtype=torch.long)).compute()
        >>> fpr
        [tensor([0., 0., 1.]), tensor([0., 0., 1.])]

    Differences from torchmetrics: those every curve metric has (torchtally.classification.precision_recall_curve).
    """

    _plot_curve_axes = ROC_AXES

    def compute(self) -> Curve:
        return roc_from(self._curve, self._states())
