"""The curves' operating points: PrecisionAtFixedRecall, RecallAtFixedPrecision,
SensitivityAtSpecificity and SpecificityAtSensitivity, binary, multiclass and multilabel; each
returns (value, threshold). They hold and share the curve metrics' state, as every readout
(metrics/curve_readouts.py, which says how and lists the differences from torchmetrics they
all have); their task wrappers are in metrics/curve_readout_tasks.py.
"""

from typing import Any, Optional, Tuple

from torch import Tensor

from ..functional.curves.readouts import check_fraction, precision_at_fixed_recall_from, recall_at_fixed_precision_from, sensitivity_at_specificity_from, specificity_at_sensitivity_from
from .base import BinaryCurveState, MulticlassCurveState, MultilabelCurveState
from .eer import Readout

__all__ = [
    f"{task}{name}"
    for name in (
        "PrecisionAtFixedRecall",
        "RecallAtFixedPrecision",
        "SensitivityAtSpecificity",
        "SpecificityAtSensitivity",
    )
    for task in ("Binary", "Multiclass", "Multilabel")
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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
    readout (torchtally.metrics.curve_readouts).
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
    readout (torchtally.metrics.curve_readouts).
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
    readout (torchtally.metrics.curve_readouts).
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


class BinarySensitivityAtSpecificity(Readout, BinaryCurveState):
    """(sensitivity, threshold): the highest TPR among the ROC points whose 1 - FPR is >=
    ``min_specificity``; ties: the higher threshold; (0, 1e6) where no point qualifies.

    >>> import torch
    >>> from torchtally.classification import BinarySensitivityAtSpecificity
    >>> m = BinarySensitivityAtSpecificity(min_specificity=0.5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    (tensor(1.), tensor(0.6000))

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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


class BinarySpecificityAtSensitivity(Readout, BinaryCurveState):
    """(specificity, threshold): the highest 1 - FPR among the ROC points whose TPR is >=
    ``min_sensitivity``; ties: the higher threshold; (0, 1e6) where no point qualifies.

    >>> import torch
    >>> from torchtally.classification import BinarySpecificityAtSensitivity
    >>> m = BinarySpecificityAtSensitivity(min_sensitivity=0.5)
    >>> m.update(torch.tensor([0.2, 0.7, 0.6, 0.9]), torch.tensor([0, 0, 1, 1])).compute()
    (tensor(1.), tensor(0.9000))

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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

    Differences from torchmetrics: those of every readout (torchtally.metrics.curve_readouts).
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
