"""torchmetrics' task wrappers of the curve readouts: ``EER(task="binary")`` makes (and returns)
a ``BinaryEER``, ..., as torchmetrics' ``__new__`` does (the rules: tasks.py).
"""

from typing import Any, Optional, Tuple

from ..functional.tasks import check_task, check_task_count
from .base import TaskWrapper
from .precision_fixed_recall import BinaryPrecisionAtFixedRecall, BinaryRecallAtFixedPrecision, BinarySensitivityAtSpecificity, BinarySpecificityAtSensitivity, MulticlassPrecisionAtFixedRecall, MulticlassRecallAtFixedPrecision, MulticlassSensitivityAtSpecificity, MulticlassSpecificityAtSensitivity, MultilabelPrecisionAtFixedRecall, MultilabelRecallAtFixedPrecision, MultilabelSensitivityAtSpecificity, MultilabelSpecificityAtSensitivity
from .eer import BinaryEER, BinaryLogAUC, MulticlassEER, MulticlassLogAUC, MultilabelEER, MultilabelLogAUC

__all__ = [
    "EER",
    "LogAUC",
    "PrecisionAtFixedRecall",
    "RecallAtFixedPrecision",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
]


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


class LogAUC(TaskWrapper):
    """BinaryLogAUC, MulticlassLogAUC or MultilabelLogAUC, by ``task`` (an ``average`` goes through
    ``**kwargs``, as torchmetrics').

    >>> from torchtally.classification import LogAUC
    >>> type(LogAUC(task="binary", fpr_range=(0.01, 0.5))).__name__
    'BinaryLogAUC'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        fpr_range: Optional[Tuple[float, float]] = (0.001, 0.1),
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(
            thresholds=thresholds, fpr_range=fpr_range, ignore_index=ignore_index, validate_args=validate_args
        )
        if task == "binary":
            return BinaryLogAUC(**kwargs)
        if task == "multiclass":
            return MulticlassLogAUC(check_task_count("num_classes", num_classes), **kwargs)
        return MultilabelLogAUC(check_task_count("num_labels", num_labels), **kwargs)


class PrecisionAtFixedRecall(TaskWrapper):
    """BinaryPrecisionAtFixedRecall, MulticlassPrecisionAtFixedRecall or MultilabelPrecisionAtFixedRecall, by ``task``.

    >>> from torchtally.classification import PrecisionAtFixedRecall
    >>> type(PrecisionAtFixedRecall(task="multilabel", min_recall=0.8, num_labels=4)).__name__
    'MultilabelPrecisionAtFixedRecall'
    """

    def __new__(
        cls,
        task: str,
        min_recall: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinaryPrecisionAtFixedRecall(min_recall, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassPrecisionAtFixedRecall(
                count, min_recall, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelPrecisionAtFixedRecall(count, min_recall, thresholds, ignore_index, validate_args, **kwargs)


class RecallAtFixedPrecision(TaskWrapper):
    """BinaryRecallAtFixedPrecision, MulticlassRecallAtFixedPrecision or MultilabelRecallAtFixedPrecision, by ``task``.

    >>> from torchtally.classification import RecallAtFixedPrecision
    >>> type(RecallAtFixedPrecision(task="binary", min_precision=0.8)).__name__
    'BinaryRecallAtFixedPrecision'
    """

    def __new__(
        cls,
        task: str,
        min_precision: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinaryRecallAtFixedPrecision(min_precision, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassRecallAtFixedPrecision(
                count, min_precision, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelRecallAtFixedPrecision(count, min_precision, thresholds, ignore_index, validate_args, **kwargs)


class SensitivityAtSpecificity(TaskWrapper):
    """BinarySensitivityAtSpecificity, MulticlassSensitivityAtSpecificity or
    MultilabelSensitivityAtSpecificity, by ``task``.

    >>> from torchtally.classification import SensitivityAtSpecificity
    >>> type(SensitivityAtSpecificity(task="multiclass", min_specificity=0.8, num_classes=3)).__name__
    'MulticlassSensitivityAtSpecificity'
    """

    def __new__(
        cls,
        task: str,
        min_specificity: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinarySensitivityAtSpecificity(min_specificity, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassSensitivityAtSpecificity(
                count, min_specificity, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelSensitivityAtSpecificity(
            count, min_specificity, thresholds, ignore_index, validate_args, **kwargs
        )


class SpecificityAtSensitivity(TaskWrapper):
    """BinarySpecificityAtSensitivity, MulticlassSpecificityAtSensitivity or
    MultilabelSpecificityAtSensitivity, by ``task``.

    >>> from torchtally.classification import SpecificityAtSensitivity
    >>> type(SpecificityAtSensitivity(task="binary", min_sensitivity=0.8, thresholds=50)).__name__
    'BinarySpecificityAtSensitivity'
    """

    def __new__(
        cls,
        task: str,
        min_sensitivity: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinarySpecificityAtSensitivity(min_sensitivity, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassSpecificityAtSensitivity(
                count, min_sensitivity, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelSpecificityAtSensitivity(
            count, min_sensitivity, thresholds, ignore_index, validate_args, **kwargs
        )
