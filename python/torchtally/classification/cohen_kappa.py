"""``CohenKappa``, ``BinaryCohenKappa``, ``MulticlassCohenKappa``
(torchmetrics.classification.cohen_kappa's names). The task's CohenKappa ("binary" or
"multiclass"."""

from typing import Any, Optional

from ..functional.classification import update as clf_update
from ..functional.classification.finish import Request
from ..functional.tasks import check_task, check_task_count
from .base import BinaryConfmatState, MulticlassConfmatState, TaskWrapper, reject_options

__all__ = ["CohenKappa", "BinaryCohenKappa", "MulticlassCohenKappa"]


class CohenKappa(TaskWrapper):
    """The task's CohenKappa ("binary" or "multiclass": torchmetrics has no multilabel kappa).

    >>> import torch
    >>> from torchtally.classification import CohenKappa
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> CohenKappa(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.6364)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        weights: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(weights=weights, ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task, ("binary", "multiclass"))
        if task == "binary":
            return BinaryCohenKappa(threshold, **kwargs)
        return MulticlassCohenKappa(check_task_count("num_classes", num_classes, task), **kwargs)


class BinaryCohenKappa(BinaryConfmatState):
    """Cohen's kappa between target and thresholded predictions; ``weights`` None, "linear" or
    "quadratic" (disagreement weights ``|i - j|`` or ``(i - j)^2``). Bad labels raise even with
    validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryCohenKappa
        >>> BinaryCohenKappa().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.5000)
    """

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        weights: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        weights = clf_update.check_kappa_weights(weights)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)
        self.weights = weights

    def finish_request(self) -> Request:
        return Request("cohen_kappa", "micro", weights=self.weights)


class MulticlassCohenKappa(MulticlassConfmatState):
    """Cohen's kappa of a [C, C] confusion matrix; ``weights`` as BinaryCohenKappa. Bad labels
    raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassCohenKappa
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassCohenKappa(num_classes=3).update(preds, target).compute()
    tensor(0.6364)
    """

    def __init__(
        self,
        num_classes: int,
        ignore_index: Optional[int] = None,
        weights: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        weights = clf_update.check_kappa_weights(weights)
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)
        self.weights = weights

    def finish_request(self) -> Request:
        return Request("cohen_kappa", "micro", weights=self.weights)
