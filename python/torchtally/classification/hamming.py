"""``HammingDistance``, ``BinaryHammingDistance``, ``MulticlassHammingDistance``,
``MultilabelHammingDistance`` (torchmetrics.classification.hamming's names). The task's
HammingDistance."""

from typing import Any, Optional

from ..functional.classification.finish import Request
from .base import TaskWrapper, stat_family
from .stat_scores import BinaryStatBase, MulticlassStatBase, MultilabelStatBase

__all__ = ["HammingDistance", "BinaryHammingDistance", "MulticlassHammingDistance", "MultilabelHammingDistance"]


class HammingDistance(TaskWrapper):
    """The task's HammingDistance.

    >>> import torch
    >>> from torchtally.classification import HammingDistance
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> HammingDistance(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.2500)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: str = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return stat_family(
            task,
            BinaryHammingDistance,
            MulticlassHammingDistance,
            MultilabelHammingDistance,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class BinaryHammingDistance(BinaryStatBase):
    """Share of wrong predictions, (fp + fn) / all: 1 - BinaryAccuracy.

    >>> import torch
    >>> from torchtally.classification import BinaryHammingDistance
    >>> BinaryHammingDistance().update(torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 0, 0])).compute()
    tensor(0.3333)
    """

    higher_is_better = False

    def finish_request(self) -> Request:
        return Request("hamming_distance", "micro")


class MulticlassHammingDistance(MulticlassStatBase):
    """1 - accuracy per class, averaged as MulticlassAccuracy ("micro": the share of wrong samples).

    >>> import torch
    >>> from torchtally.classification import MulticlassHammingDistance
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassHammingDistance(num_classes=3).update(preds, target).compute()
    tensor(0.1667)
    """

    higher_is_better = False

    def finish_request(self) -> Request:
        return Request("hamming_distance", self.average, top_k=self.top_k)


class MultilabelHammingDistance(MultilabelStatBase):
    """Share of wrong label decisions, per label and averaged as MultilabelAccuracy.

    >>> import torch
    >>> from torchtally.classification import MultilabelHammingDistance
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelHammingDistance(num_labels=3).update(preds, target).compute()
    tensor(0.3333)
    """

    higher_is_better = False

    def finish_request(self) -> Request:
        return Request("hamming_distance", self.average)
