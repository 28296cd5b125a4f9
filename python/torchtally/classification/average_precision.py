"""``AveragePrecision``, ``BinaryAveragePrecision``, ``MulticlassAveragePrecision``,
``MultilabelAveragePrecision`` (torchmetrics.classification.average_precision's names).
BinaryAveragePrecision, MulticlassAveragePrecision or MultilabelAveragePrecision, by ``task``."""

from typing import Any, Optional

from torch import Tensor

from ..functional.curves.compute import average_precision_from
from ..functional.curves.update import check_average
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .precision_recall_curve import AVERAGES, LABEL_AVERAGES

__all__ = ["AveragePrecision", "BinaryAveragePrecision", "MulticlassAveragePrecision", "MultilabelAveragePrecision"]


class AveragePrecision(TaskWrapper):
    """BinaryAveragePrecision, MulticlassAveragePrecision or MultilabelAveragePrecision, by ``task``.

    >>> from torchtally.classification import AveragePrecision
    >>> type(AveragePrecision(task="binary", thresholds=10)).__name__
    'BinaryAveragePrecision'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryAveragePrecision(**kwargs)
        if task == "multiclass":
            return MulticlassAveragePrecision(check_task_count("num_classes", num_classes), average, **kwargs)
        return MultilabelAveragePrecision(check_task_count("num_labels", num_labels), average, **kwargs)


class BinaryAveragePrecision(BinaryCurveState):
    """Average precision: sum over thresholds of (recall step) x precision; 0 without positives.

        >>> import torch
        >>> from torchtally.classification import BinaryAveragePrecision
        >>> m = BinaryAveragePrecision()
        >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
        tensor(0.8333)

    Differences from torchmetrics: those every curve metric has (torchtally.classification.precision_recall_curve).
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
    every curve metric has (torchtally.classification.precision_recall_curve).
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
        reduction = check_average(average, AVERAGES)
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

    Differences from torchmetrics: those every curve metric has (torchtally.classification.precision_recall_curve).
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
        reduction = check_average(average, LABEL_AVERAGES)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return average_precision_from(self._curve, self._states(), self._reduction)
