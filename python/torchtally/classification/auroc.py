"""torchmetrics' task wrappers of the curves and their readouts: ``AUROC(task="binary")`` makes
(and returns) a ``BinaryAUROC``, ..., as torchmetrics' ``__new__`` does (the other task
wrappers: tasks.py, where the rules are said).
"""

from typing import Any, Optional

from ..functional.tasks import check_task, check_task_count
from .base import TaskWrapper
from .precision_recall_curve import BinaryAUROC, BinaryAveragePrecision, BinaryPrecisionRecallCurve, BinaryROC, MulticlassAUROC, MulticlassAveragePrecision, MulticlassPrecisionRecallCurve, MulticlassROC, MultilabelAUROC, MultilabelAveragePrecision, MultilabelPrecisionRecallCurve, MultilabelROC

__all__ = ["AUROC", "AveragePrecision", "ROC", "PrecisionRecallCurve"]


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
