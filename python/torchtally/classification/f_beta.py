"""``FBetaScore``, ``F1Score``, ``BinaryFBetaScore``, ``MulticlassFBetaScore``,
``MultilabelFBetaScore``, ``BinaryF1Score``, ``MulticlassF1Score``, ``MultilabelF1Score``
(torchmetrics.classification.f_beta's names). The task's FBetaScore."""

from typing import Any, Optional

from ..functional.classification import update as clf_update
from ..functional.classification.finish import Request
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState, TaskWrapper, stat_family

__all__ = [
    "FBetaScore",
    "F1Score",
    "BinaryFBetaScore",
    "MulticlassFBetaScore",
    "MultilabelFBetaScore",
    "BinaryF1Score",
    "MulticlassF1Score",
    "MultilabelF1Score",
]


class FBetaScore(TaskWrapper):
    """The task's FBetaScore.

    >>> import torch
    >>> from torchtally.classification import FBetaScore
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> FBetaScore(task="multiclass", beta=2.0, num_classes=3).update(preds, target).compute()
    tensor(0.7500)
    """

    def __new__(
        cls,
        task: str,
        beta: float = 1.0,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
        )
        return stat_family(
            task,
            BinaryFBetaScore,
            MulticlassFBetaScore,
            MultilabelFBetaScore,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
            lead=(beta,),
        )


class F1Score(TaskWrapper):
    """The task's F1Score.

    >>> import torch
    >>> from torchtally.classification import F1Score
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> F1Score(task="multiclass", num_classes=3).update(preds, target).compute()
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
        zero_division: float = 0,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
        )
        return stat_family(
            task,
            BinaryF1Score,
            MulticlassF1Score,
            MultilabelF1Score,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class BinaryFBetaScore(BinaryConfmatState):
    """(1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp). Bad labels raise even with
    validate_args=False (module docstring).

        >>> import torch
        >>> from torchtally.classification import BinaryFBetaScore
        >>> m = BinaryFBetaScore(beta=2.0)
        >>> m.update(torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1])).compute()
        tensor(0.6667)
    """

    def __init__(
        self,
        beta: float,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(threshold, multidim_average, ignore_index, validate_args, **kwargs)
        self.beta = clf_update.check_beta(beta)
        self.zero_division = clf_update.check_zero_division(zero_division)

    def finish_request(self) -> Request:
        return Request("fbeta", "micro", self.zero_division, self.beta)


class MulticlassFBetaScore(MulticlassConfmatState):
    """F-beta per class, averaged as MulticlassPrecision (top_k as there). num_classes is
    required; bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import MulticlassF1Score
        >>> MulticlassF1Score(3).update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor(0.7778)
    """

    def __init__(
        self,
        beta: float,
        num_classes: int,
        top_k: int = 1,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        average = clf_update.check_average(average)
        super().__init__(num_classes, top_k, multidim_average, ignore_index, validate_args, **kwargs)
        self.beta = clf_update.check_beta(beta)
        self.average = average
        self.zero_division = clf_update.check_zero_division(zero_division)

    def finish_request(self) -> Request:
        return Request("fbeta", self.average, self.zero_division, self.beta, top_k=self.top_k)


class MultilabelFBetaScore(MultilabelConfmatState):
    """F-beta per label, averaged over labels. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelFBetaScore
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelFBetaScore(beta=2.0, num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def __init__(
        self,
        beta: float,
        num_labels: int,
        threshold: float = 0.5,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        average = clf_update.check_average(average)
        super().__init__(num_labels, threshold, multidim_average, ignore_index, validate_args, **kwargs)
        self.beta = clf_update.check_beta(beta)
        self.average = average
        self.zero_division = clf_update.check_zero_division(zero_division)

    def finish_request(self) -> Request:
        return Request("fbeta", self.average, self.zero_division, self.beta)


class BinaryF1Score(BinaryFBetaScore):
    """2 tp / (2 tp + fp + fn): F-beta with beta = 1. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import BinaryF1Score
    >>> preds, target = torch.tensor([0.9, 0.2, 0.7, 0.4]), torch.tensor([1, 0, 0, 1])
    >>> BinaryF1Score().update(preds, target).compute()
    tensor(0.5000)
    """

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(1.0, threshold, multidim_average, ignore_index, validate_args, zero_division, **kwargs)


class MulticlassF1Score(MulticlassFBetaScore):
    """F1 per class, averaged as MulticlassPrecision. num_classes is required; bad labels raise
    even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassF1Score
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassF1Score(num_classes=3).update(preds, target).compute()
    tensor(0.7778)
    """

    def __init__(
        self,
        num_classes: int,
        top_k: int = 1,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            1.0, num_classes, top_k, average, multidim_average, ignore_index, validate_args, zero_division, **kwargs
        )


class MultilabelF1Score(MultilabelFBetaScore):
    """F1 per label, averaged over labels. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelF1Score
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelF1Score(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            1.0, num_labels, threshold, average, multidim_average, ignore_index, validate_args, zero_division, **kwargs
        )
