"""torchmetrics' task wrappers of hinge loss and calibration error: ``HingeLoss(task="binary")``
makes (and returns) a ``BinaryHingeLoss``, ..., as torchmetrics' ``__new__`` does (the rules:
tasks.py). Only "binary" and "multiclass" are tasks of these metrics.
"""

from typing import Any, Optional, cast

from ..functional.tasks import check_task, check_task_count
from .base import TaskWrapper
from .calibration_error import BinaryCalibrationError, MulticlassCalibrationError
from .hinge import BinaryHingeLoss, MulticlassHingeLoss

__all__ = ["HingeLoss", "CalibrationError"]

_TASKS = ("binary", "multiclass")


class HingeLoss(TaskWrapper):
    """BinaryHingeLoss or MulticlassHingeLoss, by ``task``.

    >>> from torchtally.classification import HingeLoss
    >>> type(HingeLoss(task="multiclass", num_classes=3)).__name__
    'MulticlassHingeLoss'
    """

    def __new__(
        cls,
        task: str,
        num_classes: Optional[int] = None,
        squared: bool = False,
        multiclass_mode: Optional[str] = "crammer-singer",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task, _TASKS)
        kwargs.update(squared=squared, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryHingeLoss(**kwargs)
        return MulticlassHingeLoss(
            check_task_count("num_classes", num_classes, task), multiclass_mode=cast(str, multiclass_mode), **kwargs
        )


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
        task = check_task(task, _TASKS)
        kwargs.update(n_bins=n_bins, norm=norm, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryCalibrationError(**kwargs)
        return MulticlassCalibrationError(check_task_count("num_classes", num_classes, task), **kwargs)
