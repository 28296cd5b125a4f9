"""``SpecificityAtSensitivity``, ``BinarySpecificityAtSensitivity``,
``MulticlassSpecificityAtSensitivity``, ``MultilabelSpecificityAtSensitivity``
(torchmetrics.classification.specificity_sensitivity's names). BinarySpecificityAtSensitivity,
MulticlassSpecificityAtSensitivity or MultilabelSpecificityAtSensitivity, by ``task``."""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fraction, specificity_at_sensitivity_from
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .eer import Readout

__all__ = [
    "SpecificityAtSensitivity",
    "BinarySpecificityAtSensitivity",
    "MulticlassSpecificityAtSensitivity",
    "MultilabelSpecificityAtSensitivity",
]


class SpecificityAtSensitivity(TaskWrapper):
    """BinarySpecificityAtSensitivity, MulticlassSpecificityAtSensitivity or
    MultilabelSpecificityAtSensitivity, by ``task``.

    >>> from torchtally.classification import SpecificityAtSensitivity
    >>> type(SpecificityAtSensitivity(task="binary", min_sensitivity=0.8, thresholds=50)).__name__
    'BinarySpecificityAtSensitivity'
    """

    def __new__(
        cls,
        task: str,
        min_sensitivity: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinarySpecificityAtSensitivity(min_sensitivity, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassSpecificityAtSensitivity(
                count, min_sensitivity, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelSpecificityAtSensitivity(
            count, min_sensitivity, thresholds, ignore_index, validate_args, **kwargs
        )


class BinarySpecificityAtSensitivity(Readout, BinaryCurveState):
    """(specificity, threshold): the highest 1 - FPR among the ROC points whose TPR is >=
    ``min_sensitivity``; ties: the higher threshold; (0, 1e6) where no point qualifies.

    >>> import torch
    >>> from torchtally.classification import BinarySpecificityAtSensitivity
    >>> m = BinarySpecificityAtSensitivity(min_sensitivity=0.5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    (tensor(1.), tensor(0.9000))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    def __init__(
        self,
        min_sensitivity: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_sensitivity", min_sensitivity)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_sensitivity = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return specificity_at_sensitivity_from(self._curve, self._states(), self.min_sensitivity)


class MulticlassSpecificityAtSensitivity(Readout, MulticlassCurveState):
    """One-vs-rest, per class ([C] tensors): (specificity, threshold): the highest 1 - FPR among the
    ROC points whose TPR is >= ``min_sensitivity``.

    >>> import torch
    >>> from torchtally.classification import MulticlassSpecificityAtSensitivity
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassSpecificityAtSensitivity(3, min_sensitivity=0.5).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    (tensor([1.0000, 0.6667, 1.0000]), tensor([0.7000, 0.4000, 0.6000]))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        min_sensitivity: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_sensitivity", min_sensitivity)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.min_sensitivity = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return specificity_at_sensitivity_from(self._curve, self._states(), self.min_sensitivity)


class MultilabelSpecificityAtSensitivity(Readout, MultilabelCurveState):
    """Per label ([L] tensors): (specificity, threshold): the highest 1 - FPR among the ROC points
    whose TPR is >= ``min_sensitivity``.

    >>> import torch
    >>> from torchtally.classification import MultilabelSpecificityAtSensitivity
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelSpecificityAtSensitivity(2, min_sensitivity=0.5).update(preds, target).compute()
    (tensor([1., 1.]), tensor([0.9000, 0.8000]))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        min_sensitivity: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_sensitivity", min_sensitivity)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_sensitivity = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return specificity_at_sensitivity_from(self._curve, self._states(), self.min_sensitivity)
