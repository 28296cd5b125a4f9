"""``NegativePredictiveValue``, ``BinaryNegativePredictiveValue``,
``MulticlassNegativePredictiveValue``, ``MultilabelNegativePredictiveValue``
(torchmetrics.classification.negative_predictive_value's names). The task's
NegativePredictiveValue (``zero_division`` through kwargs)."""

from typing import Any, Optional

from ..functional.classification.finish import Request
from .base import TaskWrapper, stat_family
from .stat_scores import BinaryStatBase, MulticlassStatBase, MultilabelStatBase

__all__ = [
    "NegativePredictiveValue",
    "BinaryNegativePredictiveValue",
    "MulticlassNegativePredictiveValue",
    "MultilabelNegativePredictiveValue",
]


class NegativePredictiveValue(TaskWrapper):
    """The task's NegativePredictiveValue (``zero_division`` through kwargs).

    >>> import torch
    >>> from torchtally.classification import NegativePredictiveValue
    >>> preds, target = torch.tensor([2, 0, 2, 1]), torch.tensor([1, 1, 2, 0])
    >>> NegativePredictiveValue(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.6250)
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
            BinaryNegativePredictiveValue,
            MulticlassNegativePredictiveValue,
            MultilabelNegativePredictiveValue,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class BinaryNegativePredictiveValue(BinaryStatBase):
    """tn / (tn + fn): the precision of the negative class (``zero_division`` where nothing is
    predicted negative). Shares the confusion matrix of the other stat-score metrics of the same
    options in a MetricCollection. Bad labels raise even with validate_args=False.

    Differences from torchmetrics: ``zero_division`` (through kwargs) is used, as by the
    functional form; torchmetrics' classes take it and return 0 whatever it is.

        >>> import torch
        >>> from torchtally.classification import BinaryNegativePredictiveValue
        >>> preds, target = torch.tensor([0.2, 0.7, 0.1, 0.4]), torch.tensor([0, 1, 1, 0])
        >>> BinaryNegativePredictiveValue().update(preds, target).compute()
        tensor(0.6667)
    """

    higher_is_better = None  # torchmetrics' attribute

    def finish_request(self) -> Request:
        return Request("negative_predictive_value", "micro", self.zero_division)


class MulticlassNegativePredictiveValue(MulticlassStatBase):
    """tn / (tn + fn) per class (one vs rest), averaged as MulticlassPrecision (``top_k`` > 1:
    "macro" leaves out classes without support). num_classes is required; bad labels raise even
    with validate_args=False. ``zero_division`` is used (torchmetrics' class ignores it).

    >>> import torch
    >>> from torchtally.classification import MulticlassNegativePredictiveValue
    >>> preds, target = torch.tensor([2, 1, 0, 1]), torch.tensor([2, 1, 0, 0])
    >>> MulticlassNegativePredictiveValue(num_classes=3, average=None).update(preds, target).compute()
    tensor([0.6667, 1.0000, 1.0000])
    """

    higher_is_better = None  # torchmetrics' attribute

    def finish_request(self) -> Request:
        return Request("negative_predictive_value", self.average, self.zero_division, top_k=self.top_k)


class MultilabelNegativePredictiveValue(MultilabelStatBase):
    """tn / (tn + fn) per label, averaged over labels (all labels count in "macro"). Bad labels
    raise even with validate_args=False. ``zero_division`` is used (torchmetrics' class ignores it).

    >>> import torch
    >>> from torchtally.classification import MultilabelNegativePredictiveValue
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelNegativePredictiveValue(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    higher_is_better = None  # torchmetrics' attribute

    def finish_request(self) -> Request:
        return Request("negative_predictive_value", self.average, self.zero_division)
