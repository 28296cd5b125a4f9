"""``AUROC``, ``BinaryAUROC``, ``MulticlassAUROC``, ``MultilabelAUROC``
(torchmetrics.classification.auroc's names). BinaryAUROC, MulticlassAUROC or MultilabelAUROC, by
``task``."""

from typing import Any, Optional

from torch import Tensor

from ..functional.curves.compute import auroc_from
from ..functional.curves.update import check_average, check_max_fpr
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .precision_recall_curve import AVERAGES, LABEL_AVERAGES

__all__ = ["AUROC", "BinaryAUROC", "MulticlassAUROC", "MultilabelAUROC"]


class AUROC(TaskWrapper):
    """BinaryAUROC, MulticlassAUROC or MultilabelAUROC, by ``task``.

    >>> import torch
    >>> from torchtally.classification import AUROC
    >>> m = AUROC(task="multiclass", num_classes=3)
    >>> type(m).__name__
    'MulticlassAUROC'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "macro",
        max_fpr: Optional[float] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryAUROC(max_fpr, **kwargs)
        if task == "multiclass":
            return MulticlassAUROC(check_task_count("num_classes", num_classes), average, **kwargs)
        return MultilabelAUROC(check_task_count("num_labels", num_labels), average, **kwargs)


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
        reduction = check_average(average, AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), self._reduction)


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
        reduction = check_average(average, LABEL_AVERAGES)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return auroc_from(self._curve, self._states(), self._reduction)


_AUROC_DIFFERENCE = """
    Differences from torchmetrics: a {column} without positive or without negative samples has
    AUROC NaN, with a warning, where torchmetrics returns 0, and "macro"/"weighted" skip it. An
    AUROC of 0 is a real and alarming result (every negative ranked above every positive);
    reporting it for "undefined" misleads, and averaging it in lowers the average silently.
    scikit-learn also says NaN. Plus the differences every curve metric has
    (torchtally.classification.precision_recall_curve).
"""

BinaryAUROC.__doc__ = (BinaryAUROC.__doc__ or "") + _AUROC_DIFFERENCE.format(column="batch")  # None under -OO
MulticlassAUROC.__doc__ = (MulticlassAUROC.__doc__ or "") + _AUROC_DIFFERENCE.format(column="class")  # None under -OO
MultilabelAUROC.__doc__ = (MultilabelAUROC.__doc__ or "") + _AUROC_DIFFERENCE.format(column="label")  # None under -OO
