"""Precision, Recall, FBetaScore, F1Score and Dice: binary, multiclass, multilabel.

All read the task's confusion matrix (see classification/base.py). ``zero_division`` (0 or 1)
is the value of a ratio whose denominator is 0, as torchmetrics' option of that name
(Precision and Recall take it through ``**kwargs``, as torchmetrics does). Deliberate
differences from torchmetrics: those of stat_scores.py (bad labels raise even with
``validate_args=False``; multiclass needs num_classes). Dice is torchtally's name for F1 on the
same state (torchmetrics 1.9 has no classification Dice).
"""

from typing import Any, Optional

from ..functional.classification.finish import Request
from .base import TaskWrapper, stat_family
from .stat_scores import BinaryStatBase, MulticlassStatBase, MultilabelStatBase

__all__ = [
    "BinaryPrecision",
    "BinaryRecall",
    "MulticlassPrecision",
    "MulticlassRecall",
    "MultilabelPrecision",
    "MultilabelRecall",
    "Precision",
    "Recall",
]


class BinaryPrecision(BinaryStatBase):
    """tp / (tp + fp). Bad labels raise even with validate_args=False (module docstring).

    >>> import torch
    >>> from torchtally.classification import BinaryPrecision, BinaryRecall
    >>> preds, target = torch.tensor([0.9, 0.8, 0.2, 0.7]), torch.tensor([1, 0, 1, 1])
    >>> BinaryPrecision().update(preds, target).compute(), BinaryRecall().update(preds, target).compute()
    (tensor(0.6667), tensor(0.6667))
    """

    def finish_request(self) -> Request:
        return Request("precision", "micro", self.zero_division)


class BinaryRecall(BinaryStatBase):
    """tp / (tp + fn) (sensitivity). Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import BinaryRecall
    >>> preds, target = torch.tensor([0.9, 0.2, 0.7, 0.4]), torch.tensor([1, 0, 0, 1])
    >>> BinaryRecall().update(preds, target).compute()
    tensor(0.5000)
    """

    def finish_request(self) -> Request:
        return Request("recall", "micro", self.zero_division)


class MulticlassPrecision(MulticlassStatBase):
    """tp / (tp + fp) per class, averaged: "micro" (pooled counts), "macro" (mean over classes
    present in target or preds), "weighted" (by support) or "none". ``top_k``: a sample predicts
    its target when that is among its k highest scores, else its best class (torchmetrics' rule).
    num_classes is required; bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import MulticlassPrecision
        >>> m = MulticlassPrecision(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([1.0000, 1.0000, 0.5000])
    """

    def finish_request(self) -> Request:
        return Request("precision", self.average, self.zero_division, top_k=self.top_k)


class MulticlassRecall(MulticlassStatBase):
    """tp / (tp + fn) per class, averaged as MulticlassPrecision. ``top_k``: a sample counts as
    recalled when its class is among the k highest scores (as MulticlassAccuracy). num_classes
    is required; bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassRecall
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassRecall(num_classes=3).update(preds, target).compute()
    tensor(0.8333)
    """

    def finish_request(self) -> Request:
        return Request("recall", self.average, self.zero_division, top_k=self.top_k)


class MultilabelPrecision(MultilabelStatBase):
    """tp / (tp + fp) per label, averaged over labels (all labels count in "macro"). Bad labels
    raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelPrecision
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelPrecision(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def finish_request(self) -> Request:
        return Request("precision", self.average, self.zero_division)


class MultilabelRecall(MultilabelStatBase):
    """tp / (tp + fn) per label, averaged over labels. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelRecall
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelRecall(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def finish_request(self) -> Request:
        return Request("recall", self.average, self.zero_division)


class Precision(TaskWrapper):
    """The task's Precision (``zero_division`` through kwargs, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import Precision
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Precision(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7500)
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
            BinaryPrecision,
            MulticlassPrecision,
            MultilabelPrecision,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class Recall(TaskWrapper):
    """The task's Recall (``zero_division`` through kwargs, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import Recall
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Recall(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7500)
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
            BinaryRecall,
            MulticlassRecall,
            MultilabelRecall,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )
