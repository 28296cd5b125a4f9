"""Readouts of the curves: EER, LogAUC, PrecisionAtFixedRecall, RecallAtFixedPrecision,
SensitivityAtSpecificity and SpecificityAtSensitivity, binary, multiclass and multilabel (their
task wrappers: metrics/curve_readout_tasks.py).

Each class holds exactly the state of the curve metrics with the same task and options
(metrics/curves.py: the O(T) histogram for ``thresholds`` an int, list or tensor, 5 bytes per
sample and column for ``thresholds=None``) and declares the same ``state_key``, so inside a
MetricCollection a BinaryEER, a BinaryAUROC and a BinaryROC of the same options update and
sync ONE state. compute() reads the value off the ROC or precision-recall curve that state
gives (torchtally.functional.curves.readouts: the rules, torchmetrics 1.9's, ties and the
threshold returned included).

Names, arguments (in torchmetrics' order, with its defaults: BinaryLogAUC's ``validate_args``
is False there) and class attributes as torchmetrics'. Differences from torchmetrics shared by
every class here:

* ``min_recall``, ``min_precision``, ``min_specificity``, ``min_sensitivity`` and
  ``fpr_range`` are checked at construction whatever ``validate_args`` says: a value outside
  [0, 1] (or a range not 0 <= low < high <= 1) raises ValueError, a non-number TypeError
  (torchmetrics lets any float through, e.g. ``min_recall=1.5``, and skips the ``fpr_range``
  check when ``validate_args`` is False, BinaryLogAUC's default);
* the curve's warnings (a column without positive or negative samples, where the value is a
  convention) come prefixed with the readout's name;
* those of the curve metrics (torchtally.metrics.curves): float32 scores in exact mode (so the
  thresholds returned are float32), sorted ``thresholds``, inputs always checked.
"""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fpr_range, check_logauc_average, eer_from, logauc_from
from ..functional.curves.update import check_average
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState

__all__ = [f"{task}{name}" for name in ("EER", "LogAUC") for task in ("Binary", "Multiclass", "Multilabel")]

_EER_AVERAGES = (None, "micro", "macro")
_RANGE = (0.001, 0.1)


class Readout:
    """torchmetrics' plot bounds of the readouts (mixed in before the curve state, whose other
    class attributes are the readouts' too)."""

    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0


class BinaryEER(Readout, BinaryCurveState):
    """Equal error rate: on the ROC curve, (FPR + FNR) / 2 where FPR and FNR = 1 - TPR are closest.

    >>> import torch
    >>> from torchtally.classification import BinaryEER
    >>> m = BinaryEER(thresholds=5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    tensor(0.2500)

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
    """

    def compute(self) -> Tensor:
        return eer_from(self._curve, self._states())


class MulticlassEER(Readout, MulticlassCurveState):
    """One-vs-rest EER per class [C], or of the pooled ("micro") or averaged ("macro") ROC curve.

    >>> import torch
    >>> from torchtally.classification import MulticlassEER
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassEER(3).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    tensor([0.0000, 0.1667, 0.0000])

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        thresholds: Any = None,
        average: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reduction = check_average(average, _EER_AVERAGES)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.average, self._reduction = average, reduction  # as given (torchmetrics), as computed

    def compute(self) -> Tensor:
        return eer_from(self._curve, self._states(), self._reduction)


class MultilabelEER(Readout, MultilabelCurveState):
    """EER per label [L].

    >>> import torch
    >>> from torchtally.classification import MultilabelEER
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelEER(2).update(preds, target).compute()
    tensor([0.0000, 0.5000])

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
    """

    plot_legend_name: Optional[str] = "Label"

    def compute(self) -> Tensor:
        return eer_from(self._curve, self._states())


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
    readout (torchtally.metrics.curve_readouts).
    """

    higher_is_better: Optional[bool] = True

    def __init__(
        self,
        fpr_range: Tuple[float, float] = _RANGE,
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
    (torchtally.metrics.curve_readouts).
    """

    higher_is_better: Optional[bool] = True
    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        fpr_range: Tuple[float, float] = _RANGE,
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
    (torchtally.metrics.curve_readouts).
    """

    higher_is_better: Optional[bool] = True
    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        fpr_range: Tuple[float, float] = _RANGE,
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
