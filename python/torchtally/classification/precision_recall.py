"""Precision, Recall, FBetaScore, F1Score and Dice: binary, multiclass, multilabel.

All read the task's confusion matrix (see metrics/bases.py). ``zero_division`` (0 or 1)
is the value of a ratio whose denominator is 0, as torchmetrics' option of that name
(Precision and Recall take it through ``**kwargs``, as torchmetrics does). Deliberate
differences from torchmetrics: those of stat_scores.py (bad labels raise even with
``validate_args=False``; multiclass needs num_classes). Dice is torchtally's name for F1 on the
same state (torchmetrics 1.9 has no classification Dice).
"""

from typing import Any, Optional

from ..functional.classification import update as clf_update
from ..functional.classification.finish import Request
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState
from .stat_scores import BinaryStatBase, MulticlassStatBase, MultilabelStatBase

__all__ = [
    "BinaryDice",
    "BinaryF1Score",
    "BinaryFBetaScore",
    "BinaryPrecision",
    "BinaryRecall",
    "MulticlassDice",
    "MulticlassF1Score",
    "MulticlassFBetaScore",
    "MulticlassPrecision",
    "MulticlassRecall",
    "MultilabelDice",
    "MultilabelF1Score",
    "MultilabelFBetaScore",
    "MultilabelPrecision",
    "MultilabelRecall",
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


class BinaryDice(BinaryF1Score):
    """Dice coefficient 2 tp / (2 tp + fp + fn), which is the F1 score (same options, same value).
    torchtally's own name: torchmetrics 1.9 has no classification Dice.

    >>> import torch
    >>> from torchtally.classification import BinaryDice
    >>> preds, target = torch.tensor([0.9, 0.2, 0.7, 0.4]), torch.tensor([1, 0, 0, 1])
    >>> BinaryDice().update(preds, target).compute()
    tensor(0.5000)
    """


class MulticlassDice(MulticlassF1Score):
    """Dice coefficient per class (= F1), averaged as MulticlassPrecision. torchtally's own name.

    >>> import torch
    >>> from torchtally.classification import MulticlassDice
    >>> MulticlassDice(3, average="micro").update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
    tensor(0.7500)
    """


class MultilabelDice(MultilabelF1Score):
    """Dice coefficient per label (= F1), averaged over labels. torchtally's own name.

    >>> import torch
    >>> from torchtally.classification import MultilabelDice
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelDice(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """
