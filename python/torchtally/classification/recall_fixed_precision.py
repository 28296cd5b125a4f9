"""``RecallAtFixedPrecision``, ``BinaryRecallAtFixedPrecision``,
``MulticlassRecallAtFixedPrecision``, ``MultilabelRecallAtFixedPrecision``
(torchmetrics.classification.recall_fixed_precision's names). BinaryRecallAtFixedPrecision,
MulticlassRecallAtFixedPrecision or MultilabelRecallAtFixedPrecision, by ``task``."""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fraction, recall_at_fixed_precision_from
from ..functional.tasks import check_task, check_task_count
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState, TaskWrapper
from .eer import Readout

__all__ = [
    "RecallAtFixedPrecision",
    "BinaryRecallAtFixedPrecision",
    "MulticlassRecallAtFixedPrecision",
    "MultilabelRecallAtFixedPrecision",
]


class RecallAtFixedPrecision(TaskWrapper):
    """BinaryRecallAtFixedPrecision, MulticlassRecallAtFixedPrecision or MultilabelRecallAtFixedPrecision, by ``task``.

    >>> from torchtally.classification import RecallAtFixedPrecision
    >>> type(RecallAtFixedPrecision(task="binary", min_precision=0.8)).__name__
    'BinaryRecallAtFixedPrecision'
    """

    def __new__(
        cls,
        task: str,
        min_precision: float,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        if task == "binary":
            return BinaryRecallAtFixedPrecision(min_precision, thresholds, ignore_index, validate_args, **kwargs)
        if task == "multiclass":
            count = check_task_count("num_classes", num_classes)
            return MulticlassRecallAtFixedPrecision(
                count, min_precision, thresholds, ignore_index, validate_args, **kwargs
            )
        count = check_task_count("num_labels", num_labels)
        return MultilabelRecallAtFixedPrecision(count, min_precision, thresholds, ignore_index, validate_args, **kwargs)


class BinaryRecallAtFixedPrecision(Readout, BinaryCurveState):
    """(recall, threshold): the highest recall among the points whose precision is >=
    ``min_precision``; ties: the higher precision, then the higher threshold; threshold NaN where
    the recall is 0.

    >>> import torch
    >>> from torchtally.classification import BinaryRecallAtFixedPrecision
    >>> m = BinaryRecallAtFixedPrecision(min_precision=0.5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    (tensor(1.), tensor(0.6000))

    Differences from torchmetrics: a batch without positive samples gives (0, NaN) also for
    ``min_precision=0`` (torchmetrics raises IndexError there in binned mode). Plus those of every
    readout (torchtally.classification.eer).
    """

    def __init__(
        self,
        min_precision: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_precision", min_precision)
        super().__init__(thresholds, ignore_index, validate_args, **kwargs)
        self.min_precision = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return recall_at_fixed_precision_from(self._curve, self._states(), self.min_precision)


class MulticlassRecallAtFixedPrecision(Readout, MulticlassCurveState):
    """One-vs-rest, per class ([C] tensors): (recall, threshold): the highest recall among the points
    whose precision is >= ``min_precision``.

    >>> import torch
    >>> from torchtally.classification import MulticlassRecallAtFixedPrecision
    >>> preds = torch.tensor([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> MulticlassRecallAtFixedPrecision(3, min_precision=0.5).update(preds, torch.tensor([0, 2, 2, 1])).compute()
    (tensor([1., 1., 1.]), tensor([0.7000, 0.4000, 0.3000]))

    Differences from torchmetrics: a class without positive samples gives (0, NaN) also for
    ``min_precision=0`` (torchmetrics raises IndexError there in binned mode). Plus those of every
    readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        min_precision: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_precision", min_precision)
        super().__init__(num_classes, thresholds, ignore_index, validate_args, **kwargs)
        self.min_precision = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return recall_at_fixed_precision_from(self._curve, self._states(), self.min_precision)


class MultilabelRecallAtFixedPrecision(Readout, MultilabelCurveState):
    """Per label ([L] tensors): (recall, threshold): the highest recall among the points whose
    precision is >= ``min_precision``.

    >>> import torch
    >>> from torchtally.classification import MultilabelRecallAtFixedPrecision
    >>> preds = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.1, 0.6]])
    >>> target = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelRecallAtFixedPrecision(2, min_precision=0.5).update(preds, target).compute()
    (tensor([1., 1.]), tensor([0.7000, 0.3000]))

    Differences from torchmetrics: a label without positive samples gives (0, NaN) also for
    ``min_precision=0`` (torchmetrics raises IndexError there in binned mode). Plus those of every
    readout (torchtally.classification.eer).
    """

    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        min_precision: float,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        checked = check_fraction("min_precision", min_precision)
        super().__init__(num_labels, thresholds, ignore_index, validate_args, **kwargs)
        self.min_precision = checked

    def compute(self) -> Tuple[Tensor, Tensor]:
        return recall_at_fixed_precision_from(self._curve, self._states(), self.min_precision)
