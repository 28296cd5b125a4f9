"""``MatthewsCorrCoef``, ``BinaryMatthewsCorrCoef``, ``MulticlassMatthewsCorrCoef``,
``MultilabelMatthewsCorrCoef`` (torchmetrics.classification.matthews_corrcoef's names). The
task's MatthewsCorrCoef."""

from typing import Any, Optional

from ..functional.classification.finish import Request
from ..functional.tasks import check_task, check_task_count
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState, TaskWrapper, reject_options

__all__ = ["MatthewsCorrCoef", "BinaryMatthewsCorrCoef", "MulticlassMatthewsCorrCoef", "MultilabelMatthewsCorrCoef"]


class MatthewsCorrCoef(TaskWrapper):
    """The task's MatthewsCorrCoef.

    >>> import torch
    >>> from torchtally.classification import MatthewsCorrCoef
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MatthewsCorrCoef(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7000)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task)
        if task == "binary":
            return BinaryMatthewsCorrCoef(threshold, **kwargs)
        if task == "multiclass":
            return MulticlassMatthewsCorrCoef(check_task_count("num_classes", num_classes, task), **kwargs)
        return MultilabelMatthewsCorrCoef(check_task_count("num_labels", num_labels, task), threshold, **kwargs)


class BinaryMatthewsCorrCoef(BinaryConfmatState):
    """Matthews' correlation coefficient (torchmetrics' values for one-class targets or
    predictions; always float32, where torchmetrics returns an int64 1 or -1 when every sample is
    right or every one wrong). Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryMatthewsCorrCoef
        >>> BinaryMatthewsCorrCoef().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.5774)
    """

    def __init__(
        self, threshold: float = 0.5, ignore_index: Optional[int] = None, validate_args: bool = True, **kwargs: Any
    ) -> None:
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)

    def finish_request(self) -> Request:
        return Request("matthews_corrcoef", "micro")


class MulticlassMatthewsCorrCoef(MulticlassConfmatState):
    """Matthews' correlation coefficient of a [C, C] confusion matrix (0 when a variance is 0).
    Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassMatthewsCorrCoef
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassMatthewsCorrCoef(num_classes=3).update(preds, target).compute()
    tensor(0.7000)
    """

    def __init__(
        self, num_classes: int, ignore_index: Optional[int] = None, validate_args: bool = True, **kwargs: Any
    ) -> None:
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)

    def finish_request(self) -> Request:
        return Request("matthews_corrcoef", "micro")


class MultilabelMatthewsCorrCoef(MultilabelConfmatState):
    """Matthews' correlation coefficient of all labels' elements pooled into one 2 x 2 matrix.
    Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelMatthewsCorrCoef
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelMatthewsCorrCoef(num_labels=3).update(preds, target).compute()
    tensor(0.3333)
    """

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(num_labels, threshold, "global", ignore_index, validate_args, **kwargs)

    def finish_request(self) -> Request:
        return Request("matthews_corrcoef", "micro")
