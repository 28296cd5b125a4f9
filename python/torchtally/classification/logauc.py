"""``LogAUC``, ``BinaryLogAUC``, ``MulticlassLogAUC``, ``MultilabelLogAUC``
(torchmetrics.classification.logauc's names). BinaryLogAUC, MulticlassLogAUC or
MultilabelLogAUC, by ``task`` (an ``average`` goes through ``**kwargs``, as torchmetrics')."""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fpr_range, check_logauc_average, logauc_from
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .eer import RANGE, Readout

__all__ = ["LogAUC", "BinaryLogAUC", "MulticlassLogAUC", "MultilabelLogAUC"]


class LogAUC(TaskWrapper):
    """BinaryLogAUC, MulticlassLogAUC or MultilabelLogAUC, by ``task`` (an ``average`` goes through
    ``**kwargs``, as torchmetrics').

    >>> from torchtally.classification import LogAUC
    >>> type(LogAUC(task="binary", fpr_range=(0.01, 0.5))).__name__
    'BinaryLogAUC'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        fpr_range: Optional[Tuple[float, float]] = (0.001, 0.1),
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(
            thresholds=thresholds, fpr_range=fpr_range, ignore_index=ignore_index, validate_args=validate_args
        )
        if task == "binary":
            return BinaryLogAUC(**kwargs)
        if task == "multiclass":
            return MulticlassLogAUC(check_task_count("num_classes", num_classes), **kwargs)
        return MultilabelLogAUC(check_task_count("num_labels", num_labels), **kwargs)


class BinaryLogAUC(Readout, BinaryCurveState):
    """Area under TPR over log10(FPR) within ``fpr_range``, divided by the range's log10 width.

    >>> import torch
    >>> from torchtally.classification import BinaryLogAUC
    >>> m = BinaryLogAUC(fpr_range=(0.1, 1.0))
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9, 0.3]), torch.tensor([0, 0, 1, 1, 0])).compute()
    tensor(0.7386)

    Differences from torchmetrics: a curve that stops short of an FPR of ``fpr_range`` on a
    vertical stretch (no negative sample) gives NaN with a warning (torchmetrics: inf); tied FPRs
    are read in the curve's order (torchmetrics: an unstable sort's order, so its value at a
    vertical stretch is arbitrary); see torchtally.functional.curves.readouts. Plus those of every
    readout (torchtally.classification.eer).
    """

    higher_is_better: Optional[bool] = True

    def __init__(
        self,
        fpr_range: Tuple[float, float] = RANGE,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = False,
        **kwargs: Any,
    ) -> None:
        checked = check_fpr_range(fpr_range)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.fpr_range = checked

    def compute(self) -> Tensor:
        return logauc_from(self._curve, self._states(), self.fpr_range)


class MulticlassLogAUC(Readout, MulticlassCurveState):
    """One-vs-rest LogAUC per class (``average`` None or "none"), or their mean ("macro"; classes
    whose value is NaN left out, with a warning).

    >>> import torch
    >>> from torchtally.classification import MulticlassLogAUC
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassLogAUC(3, fpr_range=(0.1, 1.0)).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    tensor([1.0000, 0.4771, 1.0000])

    Differences from torchmetrics: ``average`` is checked at construction (torchmetrics: at
    compute) and kept as ``self.average`` (torchmetrics: ``average2``); a curve that stops short
    of an FPR of ``fpr_range`` (no negative sample) gives NaN, left out of "macro" (torchmetrics:
    inf); tied FPRs read in the curve's order (as BinaryLogAUC). Plus those of every readout
    (torchtally.classification.eer).
    """

    higher_is_better: Optional[bool] = True
    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        fpr_range: Tuple[float, float] = RANGE,
        average: Optional[str] = None,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fpr_range(fpr_range)
        average = check_logauc_average(average)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.fpr_range, self.average = checked, average

    def compute(self) -> Tensor:
        return logauc_from(self._curve, self._states(), self.fpr_range, self.average)


class MultilabelLogAUC(Readout, MultilabelCurveState):
    """LogAUC per label (``average`` None or "none"), or their mean ("macro").

    >>> import torch
    >>> from torchtally.classification import MultilabelLogAUC
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelLogAUC(2, fpr_range=(0.1, 1.0)).update(preds, target).compute()
    tensor([1.0000, 0.6505])

    Differences from torchmetrics: ``average`` is checked at construction (torchmetrics: at
    compute) and kept as ``self.average`` (torchmetrics: ``average2``); a curve that stops short
    of an FPR of ``fpr_range`` (no negative sample) gives NaN, left out of "macro" (torchmetrics:
    inf); tied FPRs read in the curve's order (as BinaryLogAUC). Plus those of every readout
    (torchtally.classification.eer).
    """

    higher_is_better: Optional[bool] = True
    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        fpr_range: Tuple[float, float] = RANGE,
        average: Optional[str] = None,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fpr_range(fpr_range)
        average = check_logauc_average(average)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.fpr_range, self.average = checked, average

    def compute(self) -> Tensor:
        return logauc_from(self._curve, self._states(), self.fpr_range, self.average)
