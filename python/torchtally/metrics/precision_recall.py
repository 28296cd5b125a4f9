"""Precision, Recall, FBetaScore, F1Score and Dice: binary, multiclass, multilabel.

All read the task's confusion matrix (see _classification_state). ``zero_division`` (0 or 1)
is the value of a ratio whose denominator is 0, as torchmetrics' option of that name.
"""
from typing import Any, Optional

from torch import Tensor

from ..functional import _classification_inputs as _in
from ..functional import _classification_reduce as _r
from ._classification_state import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState


class _Averaged:
    """Mixin: ``average`` and ``zero_division`` options, checked once."""

    def _options(self, average: Optional[str], zero_division: float) -> None:
        self.average = _in.check_average(average)
        self.zero_division = _in.check_zero_division(zero_division)


class BinaryPrecision(BinaryConfmatState):
    """tp / (tp + fp).

        >>> import torch
        >>> from torchtally.metrics import BinaryPrecision, BinaryRecall
        >>> preds, target = torch.tensor([0.9, 0.8, 0.2, 0.7]), torch.tensor([1, 0, 1, 1])
        >>> BinaryPrecision().update(preds, target).compute(), BinaryRecall().update(preds, target).compute()
        (tensor(0.6667), tensor(0.6667))
    """

    def __init__(self, *, threshold: float = 0.5, ignore_index: Optional[int] = None, zero_division: float = 0,
                 **kwargs: Any) -> None:
        super().__init__(threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.zero_division = _in.check_zero_division(zero_division)

    def compute(self) -> Tensor:
        return _r.precision(self._stats(), "micro", self.zero_division)


class BinaryRecall(BinaryPrecision):
    """tp / (tp + fn) (sensitivity)."""

    def compute(self) -> Tensor:
        return _r.recall(self._stats(), "micro", self.zero_division)


class MulticlassPrecision(_Averaged, MulticlassConfmatState):
    """tp / (tp + fp) per class, averaged: "micro" (pooled counts), "macro" (mean over classes
    present in target or preds), "weighted" (by support) or "none".

        >>> import torch
        >>> from torchtally.metrics import MulticlassPrecision
        >>> m = MulticlassPrecision(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([1.0000, 1.0000, 0.5000])
    """

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                 zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self._options(average, zero_division)

    def compute(self) -> Tensor:
        return _r.precision(self._stats(), self.average, self.zero_division)


class MulticlassRecall(_Averaged, MulticlassConfmatState):
    """tp / (tp + fn) per class, averaged as MulticlassPrecision. ``top_k``: a sample counts as
    recalled when its class is among the k highest scores (as MulticlassAccuracy)."""

    _top_k_ok = True

    def __init__(self, num_classes: int, *, top_k: int = 1, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_classes, top_k=top_k, ignore_index=ignore_index, **kwargs)
        self._options(average, zero_division)

    def compute(self) -> Tensor:
        return _r.recall(self._stats(), self.average, self.zero_division)


class MultilabelPrecision(_Averaged, MultilabelConfmatState):
    """tp / (tp + fp) per label, averaged over labels (all labels count in "macro")."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self._options(average, zero_division)

    def compute(self) -> Tensor:
        return _r.precision(self._stats(), self.average, self.zero_division)


class MultilabelRecall(MultilabelPrecision):
    """tp / (tp + fn) per label, averaged over labels."""

    def compute(self) -> Tensor:
        return _r.recall(self._stats(), self.average, self.zero_division)


class BinaryFBetaScore(BinaryConfmatState):
    """(1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp).

        >>> import torch
        >>> from torchtally.metrics import BinaryFBetaScore
        >>> m = BinaryFBetaScore(beta=2.0)
        >>> m.update(torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1])).compute()
        tensor(0.6667)
    """

    def __init__(self, beta: float, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                 zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.beta = _in.check_beta(beta)
        self.zero_division = _in.check_zero_division(zero_division)

    def compute(self) -> Tensor:
        return _r.fbeta(self._stats(), self.beta, "micro", self.zero_division)


class MulticlassFBetaScore(_Averaged, MulticlassConfmatState):
    """F-beta per class, averaged as MulticlassPrecision.

        >>> import torch
        >>> from torchtally.metrics import MulticlassF1Score
        >>> MulticlassF1Score(3).update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor(0.7778)
    """

    def __init__(self, beta: float, num_classes: int, *, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self.beta = _in.check_beta(beta)
        self._options(average, zero_division)

    def compute(self) -> Tensor:
        return _r.fbeta(self._stats(), self.beta, self.average, self.zero_division)


class MultilabelFBetaScore(_Averaged, MultilabelConfmatState):
    """F-beta per label, averaged over labels."""

    def __init__(self, beta: float, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.beta = _in.check_beta(beta)
        self._options(average, zero_division)

    def compute(self) -> Tensor:
        return _r.fbeta(self._stats(), self.beta, self.average, self.zero_division)


class BinaryF1Score(BinaryFBetaScore):
    """2 tp / (2 tp + fp + fn): F-beta with beta = 1."""

    def __init__(self, *, threshold: float = 0.5, ignore_index: Optional[int] = None, zero_division: float = 0,
                 **kwargs: Any) -> None:
        super().__init__(1.0, threshold=threshold, ignore_index=ignore_index, zero_division=zero_division, **kwargs)


class MulticlassF1Score(MulticlassFBetaScore):
    """F1 per class, averaged as MulticlassPrecision."""

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                 zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(1.0, num_classes, average=average, ignore_index=ignore_index, zero_division=zero_division,
                         **kwargs)


class MultilabelF1Score(MultilabelFBetaScore):
    """F1 per label, averaged over labels."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(1.0, num_labels, threshold=threshold, average=average, ignore_index=ignore_index,
                         zero_division=zero_division, **kwargs)


class BinaryDice(BinaryF1Score):
    """Dice coefficient 2 tp / (2 tp + fp + fn), which is the F1 score (same options, same value)."""


class MulticlassDice(MulticlassF1Score):
    """Dice coefficient per class (= F1), averaged as MulticlassPrecision.

        >>> import torch
        >>> from torchtally.metrics import MulticlassDice
        >>> MulticlassDice(3, average="micro").update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor(0.7500)
    """


class MultilabelDice(MultilabelF1Score):
    """Dice coefficient per label (= F1), averaged over labels."""
