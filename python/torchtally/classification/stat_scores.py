"""StatScores, Accuracy, HammingDistance, Specificity and NegativePredictiveValue: binary,
multiclass, multilabel (state: the confusion matrix).

The three ``_*StatBase`` classes hold torchmetrics' constructor of its stat-score family
(StatScores, Accuracy, Precision, Recall, Specificity share one signature per task); the
public classes differ only in ``compute``.

Deliberate differences from torchmetrics, for every class here and in precision_recall.py:

* bad input raises even with ``validate_args=False`` (an out-of-range or non-0/1 label, a
  float target holding another value, NaN scores): ValueError naming the argument, where
  torchmetrics raises RuntimeError or, with validation off, returns a wrong number;
* multiclass ``num_classes=None`` (torchmetrics: allowed with ``average="micro"``) raises
  ValueError: the state is an exact per-class count.
"""

from typing import Any, Optional

from torch import Tensor

from ..functional.classification import compute as clf_compute
from ..functional.classification import update as clf_update
from .base import (
    BinaryConfmatState,
    MulticlassConfmatState,
    MultilabelConfmatState,
    TaskWrapper,
    pop_zero_division,
    stat_family,
)

__all__ = ["BinaryStatScores", "MulticlassStatScores", "MultilabelStatScores", "StatScores"]


class BinaryStatBase(BinaryConfmatState):
    """torchmetrics' Binary stat-score signature (``zero_division`` through kwargs)."""

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = pop_zero_division(kwargs)
        super().__init__(threshold, multidim_average, ignore_index, validate_args, **kwargs)
        self.zero_division = zero_division


class MulticlassStatBase(MulticlassConfmatState):
    """torchmetrics' Multiclass stat-score signature (``zero_division`` through kwargs)."""

    def __init__(
        self,
        num_classes: Optional[int] = None,
        top_k: int = 1,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = pop_zero_division(kwargs)
        average = clf_update.check_average(average)
        super().__init__(num_classes, top_k, multidim_average, ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division


class MultilabelStatBase(MultilabelConfmatState):
    """torchmetrics' Multilabel stat-score signature (``zero_division`` through kwargs)."""

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = pop_zero_division(kwargs)
        average = clf_update.check_average(average)
        super().__init__(num_labels, threshold, multidim_average, ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division


class BinaryStatScores(BinaryStatBase):
    """[tp, fp, tn, fn, support] (int64) of binary predictions; samplewise [N, 5].
    Bad labels raise even with validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import BinaryStatScores
        >>> m = BinaryStatScores()
        >>> m.update(torch.tensor([0.8, 0.3, 0.6, 0.1]), torch.tensor([1, 1, 0, 0])).compute()
        tensor([1, 1, 1, 1, 2])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None

    def compute(self) -> Tensor:
        return clf_compute.stat_scores(self._stats(), "micro")


class MulticlassStatScores(MulticlassStatBase):
    """[tp, fp, tn, fn, support] per class ([C, 5], average "none"), summed ("micro", int64),
    or their mean over classes ("macro") / support-weighted mean ("weighted"), float32;
    samplewise: one such result per sample. num_classes is required; bad labels raise even
    with validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import MulticlassStatScores
        >>> m = MulticlassStatScores(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([[1, 0, 3, 0, 1],
                [1, 0, 2, 1, 2],
                [1, 1, 2, 0, 1]])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None
    plot_legend_name = None

    def compute(self) -> Tensor:
        if self.average == "micro" and not self._samplewise and self.top_k == 1:
            return clf_compute.multiclass_micro_stat_scores(self.confmat)
        return clf_compute.stat_scores(self._stats(), self.average)


class MultilabelStatScores(MultilabelStatBase):
    """[tp, fp, tn, fn, support] per label ([L, 5]), summed ("micro") or averaged, as
    MulticlassStatScores. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelStatScores
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelStatScores(num_labels=3).update(preds, target).compute()
    tensor([0.6667, 0.3333, 0.6667, 0.3333, 1.0000])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None
    plot_legend_name = None

    def compute(self) -> Tensor:
        return clf_compute.stat_scores(self._stats(), self.average)


class StatScores(TaskWrapper):
    """The task's StatScores.

    >>> import torch
    >>> from torchtally.classification import StatScores
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> StatScores(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor([3, 1, 7, 1, 4])
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
            BinaryStatScores,
            MulticlassStatScores,
            MultilabelStatScores,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )
