"""``JaccardIndex``, ``BinaryJaccardIndex``, ``MulticlassJaccardIndex``, ``MultilabelJaccardIndex``
(torchmetrics.classification.jaccard's names). The task's JaccardIndex (``zero_division``
through kwargs, as torchmetrics)."""

from typing import Any, Optional

from ..functional.classification import update as clf_update
from ..functional.classification.finish import Request
from ..functional.tasks import check_task, check_task_count
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState, TaskWrapper, reject_options

__all__ = ["JaccardIndex", "BinaryJaccardIndex", "MulticlassJaccardIndex", "MultilabelJaccardIndex"]


class JaccardIndex(TaskWrapper):
    """The task's JaccardIndex (``zero_division`` through kwargs, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import JaccardIndex
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> JaccardIndex(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task)
        if task == "binary":
            return BinaryJaccardIndex(threshold, **kwargs)
        if task == "multiclass":
            return MulticlassJaccardIndex(check_task_count("num_classes", num_classes, task), average, **kwargs)
        return MultilabelJaccardIndex(check_task_count("num_labels", num_labels, task), threshold, average, **kwargs)


class BinaryJaccardIndex(BinaryConfmatState):
    """Intersection over union of the positive class, tp / (tp + fp + fn). Bad labels raise
    even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryJaccardIndex
        >>> BinaryJaccardIndex().update(torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1])).compute()
        tensor(0.5000)
    """

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        zero_division = clf_update.check_zero_division(zero_division)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)
        self.zero_division = zero_division

    def finish_request(self) -> Request:
        return Request("jaccard_index", "micro", self.zero_division)


class MulticlassJaccardIndex(MulticlassConfmatState):
    """tp / (tp + fp + fn) per class; "macro" leaves out classes absent from target and preds
    and the class ``ignore_index``; "weighted" weights by support; "micro" pools the counts.
    Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import MulticlassJaccardIndex
        >>> m = MulticlassJaccardIndex(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([1.0000, 0.5000, 0.5000])
    """

    def __init__(
        self,
        num_classes: int,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        average, zero_division = clf_update.check_average(average), clf_update.check_zero_division(zero_division)
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division

    def finish_request(self) -> Request:
        return Request(
            "jaccard_index",
            self.average,
            self.zero_division,
            ignore_index=-1 if self.ignore_index is None else self.ignore_index,
        )


class MultilabelJaccardIndex(MultilabelConfmatState):
    """tp / (tp + fp + fn) per label, averaged over labels. Bad labels raise even with
    validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelJaccardIndex
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelJaccardIndex(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        average, zero_division = clf_update.check_average(average), clf_update.check_zero_division(zero_division)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(num_labels, threshold, "global", ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division

    def finish_request(self) -> Request:
        return Request("jaccard_index", self.average, self.zero_division)
