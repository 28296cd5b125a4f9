"""``Specificity``, ``BinarySpecificity``, ``MulticlassSpecificity``, ``MultilabelSpecificity``
(torchmetrics.classification.specificity's names). The task's Specificity."""

from typing import Any, Optional

from ..functional.classification.finish import Request
from .base import TaskWrapper, stat_family
from .stat_scores import BinaryStatBase, MulticlassStatBase, MultilabelStatBase

__all__ = ["Specificity", "BinarySpecificity", "MulticlassSpecificity", "MultilabelSpecificity"]


class Specificity(TaskWrapper):
    """The task's Specificity.

    >>> import torch
    >>> from torchtally.classification import Specificity
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Specificity(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.8750)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return stat_family(
            task,
            BinarySpecificity,
            MulticlassSpecificity,
            MultilabelSpecificity,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class BinarySpecificity(BinaryStatBase):
    """tn / (tn + fp): the recall of the negative class. Bad labels raise even with
    validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import BinarySpecificity
        >>> BinarySpecificity().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.6667)
    """

    higher_is_better = None

    def finish_request(self) -> Request:
        return Request("specificity", "micro")


class MulticlassSpecificity(MulticlassStatBase):
    """tn / (tn + fp) per class (one vs rest), averaged as MulticlassAccuracy. num_classes is
    required; bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassSpecificity
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassSpecificity(num_classes=3).update(preds, target).compute()
    tensor(0.8889)
    """

    higher_is_better = None

    def finish_request(self) -> Request:
        return Request("specificity", self.average, top_k=self.top_k)


class MultilabelSpecificity(MultilabelStatBase):
    """tn / (tn + fp) per label, averaged over labels. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelSpecificity
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelSpecificity(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    higher_is_better = None

    def finish_request(self) -> Request:
        return Request("specificity", self.average)
