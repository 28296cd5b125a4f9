"""The curves' operating points: PrecisionAtFixedRecall, RecallAtFixedPrecision,
SensitivityAtSpecificity and SpecificityAtSensitivity, binary, multiclass and multilabel; each
returns (value, threshold). They hold and share the curve metrics' state, as every readout
(classification/eer.py, which says how and lists the differences from torchmetrics they
all have); each task wrapper is in its metric's file.
"""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fraction, precision_at_fixed_recall_from
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .eer import Readout

__all__ = [
    "BinaryPrecisionAtFixedRecall",
    "MulticlassPrecisionAtFixedRecall",
    "MultilabelPrecisionAtFixedRecall",
    "PrecisionAtFixedRecall",
]


class BinaryPrecisionAtFixedRecall(Readout, BinaryCurveState):
    """(precision, threshold): the highest precision among the points whose recall is >=
    ``min_recall``; ties: the higher recall, then the higher threshold; threshold NaN where the
    precision is 0.

    >>> import torch
    >>> from torchtally.classification import BinaryPrecisionAtFixedRecall
    >>> m = BinaryPrecisionAtFixedRecall(min_recall=0.5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    (tensor(1.), tensor(0.9000))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    def __init__(
        self,
        min_recall: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_recall", min_recall)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_recall = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return precision_at_fixed_recall_from(self._curve, self._states(), self.min_recall)


class MulticlassPrecisionAtFixedRecall(Readout, MulticlassCurveState):
    """One-vs-rest, per class ([C] tensors): (precision, threshold): the highest precision among the
    points whose recall is >= ``min_recall``.

    >>> import torch
    >>> from torchtally.classification import MulticlassPrecisionAtFixedRecall
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassPrecisionAtFixedRecall(3, min_recall=0.5).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    (tensor([1.0000, 0.5000, 1.0000]), tensor([0.7000, 0.4000, 0.3000]))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        min_recall: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_recall", min_recall)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.min_recall = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return precision_at_fixed_recall_from(self._curve, self._states(), self.min_recall)


class MultilabelPrecisionAtFixedRecall(Readout, MultilabelCurveState):
    """Per label ([L] tensors): (precision, threshold): the highest precision among the points whose
    recall is >= ``min_recall``.

    >>> import torch
    >>> from torchtally.classification import MultilabelPrecisionAtFixedRecall
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelPrecisionAtFixedRecall(2, min_recall=0.5).update(preds, target).compute()
    (tensor([1., 1.]), tensor([0.7000, 0.8000]))

    Differences from torchmetrics: those of every readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        min_recall: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_recall", min_recall)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_recall = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return precision_at_fixed_recall_from(self._curve, self._states(), self.min_recall)


class PrecisionAtFixedRecall(TaskWrapper):
    """BinaryPrecisionAtFixedRecall, MulticlassPrecisionAtFixedRecall or MultilabelPrecisionAtFixedRecall, by ``task``.

    >>> from torchtally.classification import PrecisionAtFixedRecall
    >>> type(PrecisionAtFixedRecall(task="multilabel", min_recall=0.8, num_labels=4)).__name__
    'MultilabelPrecisionAtFixedRecall'
    """

    def __new__(
        cls,
        task: str,
        min_recall: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinaryPrecisionAtFixedRecall(min_recall, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassPrecisionAtFixedRecall(
                count, min_recall, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelPrecisionAtFixedRecall(count, min_recall, thresholds, ignore_index, validate_args, **kwargs)
