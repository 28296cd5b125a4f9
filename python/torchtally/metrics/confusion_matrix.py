"""ConfusionMatrix, JaccardIndex, MatthewsCorrCoef and CohenKappa: metrics of the whole matrix."""
from typing import Any, Optional

from torch import Tensor

from ..functional import _classification_inputs as _in
from ..functional import _classification_reduce as _r
from ._classification_state import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState


class BinaryConfusionMatrix(BinaryConfmatState):
    """[2, 2] counts, row = target, column = prediction (int64); ``normalize`` "true" (over
    rows), "pred" (over columns) or "all" gives float32 shares, 0 where a row/column is empty.

        >>> import torch
        >>> from torchtally.metrics import BinaryConfusionMatrix
        >>> BinaryConfusionMatrix().update(torch.tensor([0.7, 0.2, 0.9]), torch.tensor([1, 1, 0])).compute()
        tensor([[0, 1],
                [1, 1]])
    """

    def __init__(self, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                 normalize: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.normalize = _in.check_normalize(normalize)

    def compute(self) -> Tensor:
        return _r.confusion_matrix(self.confmat, self.normalize)


class MulticlassConfusionMatrix(MulticlassConfmatState):
    """[C, C] counts, row = target, column = prediction; ``normalize`` as BinaryConfusionMatrix.

        >>> import torch
        >>> from torchtally.metrics import MulticlassConfusionMatrix
        >>> m = MulticlassConfusionMatrix(3, normalize="true")
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([[1.0000, 0.0000, 0.0000],
                [0.0000, 0.5000, 0.5000],
                [0.0000, 0.0000, 1.0000]])
    """

    def __init__(self, num_classes: int, *, ignore_index: Optional[int] = None, normalize: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self.normalize = _in.check_normalize(normalize)

    def compute(self) -> Tensor:
        return _r.confusion_matrix(self.confmat, self.normalize)


class MultilabelConfusionMatrix(MultilabelConfmatState):
    """[L, 2, 2]: per label, row = target, column = prediction; ``normalize`` per label."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                 normalize: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.normalize = _in.check_normalize(normalize)

    def compute(self) -> Tensor:
        return _r.confusion_matrix(self.confmat, self.normalize)


class BinaryJaccardIndex(BinaryConfmatState):
    """Intersection over union of the positive class, tp / (tp + fp + fn).

        >>> import torch
        >>> from torchtally.metrics import BinaryJaccardIndex
        >>> BinaryJaccardIndex().update(torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1])).compute()
        tensor(0.5000)
    """

    def __init__(self, *, threshold: float = 0.5, ignore_index: Optional[int] = None, zero_division: float = 0,
                 **kwargs: Any) -> None:
        super().__init__(threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.zero_division = _in.check_zero_division(zero_division)

    def compute(self) -> Tensor:
        return _r.jaccard_index(self.confmat, "binary", "micro", zero_division=self.zero_division)


class MulticlassJaccardIndex(MulticlassConfmatState):
    """tp / (tp + fp + fn) per class; "macro" leaves out classes absent from target and preds
    and the class ``ignore_index``; "weighted" weights by support; "micro" pools the counts.

        >>> import torch
        >>> from torchtally.metrics import MulticlassJaccardIndex
        >>> m = MulticlassJaccardIndex(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([1.0000, 0.5000, 0.5000])
    """

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                 zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)
        self.zero_division = _in.check_zero_division(zero_division)

    def compute(self) -> Tensor:
        return _r.jaccard_index(self.confmat, "multiclass", self.average, self.ignore_index, self.zero_division)


class MultilabelJaccardIndex(MultilabelConfmatState):
    """tp / (tp + fp + fn) per label, averaged over labels."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, zero_division: float = 0, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)
        self.zero_division = _in.check_zero_division(zero_division)

    def compute(self) -> Tensor:
        return _r.jaccard_index(self.confmat, "multilabel", self.average, zero_division=self.zero_division)


class BinaryMatthewsCorrCoef(BinaryConfmatState):
    """Matthews' correlation coefficient (torchmetrics' values for one-class targets or predictions).

        >>> import torch
        >>> from torchtally.metrics import BinaryMatthewsCorrCoef
        >>> BinaryMatthewsCorrCoef().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.5774)
    """

    def compute(self) -> Tensor:
        return _r.matthews_corrcoef(self.confmat)


class MulticlassMatthewsCorrCoef(MulticlassConfmatState):
    """Matthews' correlation coefficient of a [C, C] confusion matrix (0 when a variance is 0)."""

    def compute(self) -> Tensor:
        return _r.matthews_corrcoef(self.confmat)


class MultilabelMatthewsCorrCoef(MultilabelConfmatState):
    """Matthews' correlation coefficient of all labels' elements pooled into one 2 x 2 matrix."""

    def compute(self) -> Tensor:
        return _r.matthews_corrcoef(self.confmat)


class BinaryCohenKappa(BinaryConfmatState):
    """Cohen's kappa between target and thresholded predictions; ``weights`` None, "linear" or
    "quadratic" (disagreement weights |i - j| or (i - j)^2).

        >>> import torch
        >>> from torchtally.metrics import BinaryCohenKappa
        >>> BinaryCohenKappa().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.5000)
    """

    def __init__(self, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                 weights: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.weights = _in.check_kappa_weights(weights)

    def compute(self) -> Tensor:
        return _r.cohen_kappa(self.confmat, self.weights)


class MulticlassCohenKappa(MulticlassConfmatState):
    """Cohen's kappa of a [C, C] confusion matrix; ``weights`` as BinaryCohenKappa."""

    def __init__(self, num_classes: int, *, ignore_index: Optional[int] = None, weights: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self.weights = _in.check_kappa_weights(weights)

    def compute(self) -> Tensor:
        return _r.cohen_kappa(self.confmat, self.weights)
