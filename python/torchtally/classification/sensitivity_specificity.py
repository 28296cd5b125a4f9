"""``SensitivityAtSpecificity``, ``BinarySensitivityAtSpecificity``,
``MulticlassSensitivityAtSpecificity``, ``MultilabelSensitivityAtSpecificity``
(torchmetrics.classification.sensitivity_specificity's names). BinarySensitivityAtSpecificity,
MulticlassSensitivityAtSpecificity or MultilabelSensitivityAtSpecificity, by ``task``."""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fraction, sensitivity_at_specificity_from
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .eer import Readout

__all__ = [
    "SensitivityAtSpecificity",
    "BinarySensitivityAtSpecificity",
    "MulticlassSensitivityAtSpecificity",
    "MultilabelSensitivityAtSpecificity",
]


class SensitivityAtSpecificity(TaskWrapper):
    """BinarySensitivityAtSpecificity, MulticlassSensitivityAtSpecificity or
    MultilabelSensitivityAtSpecificity, by ``task``.

    >>> from torchtally.classification import SensitivityAtSpecificity
    >>> type(SensitivityAtSpecificity(task="multiclass", min_specificity=0.8, num_classes=3)).__name__
    'MulticlassSensitivityAtSpecificity'
    """

    def __new__(
        cls,
        task: str,
        min_specificity: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinarySensitivityAtSpecificity(min_specificity, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassSensitivityAtSpecificity(
                count, min_specificity, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelSensitivityAtSpecificity(
            count, min_specificity, thresholds, ignore_index, validate_args, **kwargs
        )


class BinarySensitivityAtSpecificity(Readout, BinaryCurveState):
    """(sensitivity, threshold): the highest TPR among the ROC points whose 1 - FPR is >=
    ``min_specificity``; ties: the higher threshold; (0, 1e6) where no point qualifies.

    >>> import torch
    >>> from torchtally.classification import BinarySensitivityAtSpecificity
    >>> m = BinarySensitivityAtSpecificity(min_specificity=0.5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    (tensor(1.), tensor(0.6000))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    def __init__(
        self,
        min_specificity: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_specificity", min_specificity)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_specificity = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return sensitivity_at_specificity_from(self._curve, self._states(), self.min_specificity)


class MulticlassSensitivityAtSpecificity(Readout, MulticlassCurveState):
    """One-vs-rest, per class ([C] tensors): (sensitivity, threshold): the highest TPR among the ROC
    points whose 1 - FPR is >= ``min_specificity``.

    >>> import torch
    >>> from torchtally.classification import MulticlassSensitivityAtSpecificity
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassSensitivityAtSpecificity(3, min_specificity=0.5).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    (tensor([1., 1., 1.]), tensor([0.7000, 0.4000, 0.3000]))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        min_specificity: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_specificity", min_specificity)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.min_specificity = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return sensitivity_at_specificity_from(self._curve, self._states(), self.min_specificity)


class MultilabelSensitivityAtSpecificity(Readout, MultilabelCurveState):
    """Per label ([L] tensors): (sensitivity, threshold): the highest TPR among the ROC points whose 1
    - FPR is >= ``min_specificity``.

    >>> import torch
    >>> from torchtally.classification import MultilabelSensitivityAtSpecificity
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelSensitivityAtSpecificity(2, min_specificity=0.5).update(preds, target).compute()
    (tensor([1., 1.]), tensor([0.7000, 0.3000]))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        min_specificity: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_specificity", min_specificity)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_specificity = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return sensitivity_at_specificity_from(self._curve, self._states(), self.min_specificity)
