"""ConfusionMatrix, JaccardIndex, MatthewsCorrCoef and CohenKappa: metrics of the whole matrix.

Constructors take torchmetrics' arguments in its order. Deliberate differences from torchmetrics,
for every class here: bad input raises even with ``validate_args=False`` (out-of-range or
non-0/1 labels, a float target holding another value, NaN scores): ValueError naming the
argument, where torchmetrics raises RuntimeError or, with validation off, returns a wrong number.
"""

from typing import Any, Optional

from torch import Tensor

from ..functional.classification import compute as clf_compute
from ..functional.classification import update as clf_update
from ..functional.classification.finish import Request
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState, reject_options

__all__ = [
    "BinaryCohenKappa",
    "BinaryConfusionMatrix",
    "BinaryJaccardIndex",
    "BinaryMatthewsCorrCoef",
    "MulticlassCohenKappa",
    "MulticlassConfusionMatrix",
    "MulticlassJaccardIndex",
    "MulticlassMatthewsCorrCoef",
    "MultilabelConfusionMatrix",
    "MultilabelJaccardIndex",
    "MultilabelMatthewsCorrCoef",
]


class BinaryConfusionMatrix(BinaryConfmatState):
    """[2, 2] counts, row = target, column = prediction (int64); ``normalize`` "true" (over
    rows), "pred" (over columns) or "all" gives float32 shares, 0 where a row/column is empty
    (with torchmetrics' warning). Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryConfusionMatrix
        >>> BinaryConfusionMatrix().update(torch.tensor([0.7, 0.2, 0.9]), torch.tensor([1, 1, 0])).compute()
        tensor([[0, 1],
                [1, 1]])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        normalize: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        normalize = clf_update.check_normalize(normalize)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)
        self.normalize = normalize

    def compute(self) -> Tensor:
        return clf_compute.confusion_matrix(self.confmat, self.normalize)


class MulticlassConfusionMatrix(MulticlassConfmatState):
    """[C, C] counts, row = target, column = prediction; ``normalize`` as BinaryConfusionMatrix.
    Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import MulticlassConfusionMatrix
        >>> m = MulticlassConfusionMatrix(3, normalize="true")
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([[1.0000, 0.0000, 0.0000],
                [0.0000, 0.5000, 0.5000],
                [0.0000, 0.0000, 1.0000]])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None
    plot_legend_name = None

    def __init__(
        self,
        num_classes: int,
        ignore_index: Optional[int] = None,
        normalize: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        normalize = clf_update.check_normalize(normalize)
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)
        self.normalize = normalize

    def compute(self) -> Tensor:
        return clf_compute.confusion_matrix(self.confmat, self.normalize)


class MultilabelConfusionMatrix(MultilabelConfmatState):
    """[L, 2, 2]: per label, row = target, column = prediction; ``normalize`` per label. Bad
    labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelConfusionMatrix
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelConfusionMatrix(num_labels=3).update(preds, target).compute()
    tensor([[[1, 0],
             [0, 1]],
    <BLANKLINE>
            [[1, 0],
             [0, 1]],
    <BLANKLINE>
            [[0, 1],
             [1, 0]]])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None
    plot_legend_name = None

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        normalize: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        normalize = clf_update.check_normalize(normalize)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(num_labels, threshold, "global", ignore_index, validate_args, **kwargs)
        self.normalize = normalize

    def compute(self) -> Tensor:
        return clf_compute.confusion_matrix(self.confmat, self.normalize)


class BinaryJaccardIndex(BinaryConfmatState):
    """Intersection over union of the positive class, tp / (tp + fp + fn). Bad labels raise
    even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryJaccardIndex
        >>> BinaryJaccardIndex().update(torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1])).compute()
        tensor(0.5000)
    """

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        zero_division = clf_update.check_zero_division(zero_division)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)
        self.zero_division = zero_division

    def finish_request(self) -> Request:
        return Request("jaccard_index", "micro", self.zero_division)


class MulticlassJaccardIndex(MulticlassConfmatState):
    """tp / (tp + fp + fn) per class; "macro" leaves out classes absent from target and preds
    and the class ``ignore_index``; "weighted" weights by support; "micro" pools the counts.
    Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import MulticlassJaccardIndex
        >>> m = MulticlassJaccardIndex(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([1.0000, 0.5000, 0.5000])
    """

    def __init__(
        self,
        num_classes: int,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        average, zero_division = clf_update.check_average(average), clf_update.check_zero_division(zero_division)
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division

    def finish_request(self) -> Request:
        return Request(
            "jaccard_index",
            self.average,
            self.zero_division,
            ignore_index=-1 if self.ignore_index is None else self.ignore_index,
        )


class MultilabelJaccardIndex(MultilabelConfmatState):
    """tp / (tp + fp + fn) per label, averaged over labels. Bad labels raise even with
    validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelJaccardIndex
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelJaccardIndex(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        average, zero_division = clf_update.check_average(average), clf_update.check_zero_division(zero_division)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(num_labels, threshold, "global", ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division

    def finish_request(self) -> Request:
        return Request("jaccard_index", self.average, self.zero_division)


class BinaryMatthewsCorrCoef(BinaryConfmatState):
    """Matthews' correlation coefficient (torchmetrics' values for one-class targets or
    predictions; always float32, where torchmetrics returns an int64 1 or -1 when every sample is
    right or every one wrong). Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryMatthewsCorrCoef
        >>> BinaryMatthewsCorrCoef().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.5774)
    """

    def __init__(
        self, threshold: float = 0.5, ignore_index: Optional[int] = None, validate_args: bool = True, **kwargs: Any
    ) -> None:
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)

    def finish_request(self) -> Request:
        return Request("matthews_corrcoef", "micro")


class MulticlassMatthewsCorrCoef(MulticlassConfmatState):
    """Matthews' correlation coefficient of a [C, C] confusion matrix (0 when a variance is 0).
    Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassMatthewsCorrCoef
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassMatthewsCorrCoef(num_classes=3).update(preds, target).compute()
    tensor(0.7000)
    """

    def __init__(
        self, num_classes: int, ignore_index: Optional[int] = None, validate_args: bool = True, **kwargs: Any
    ) -> None:
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)

    def finish_request(self) -> Request:
        return Request("matthews_corrcoef", "micro")


class MultilabelMatthewsCorrCoef(MultilabelConfmatState):
    """Matthews' correlation coefficient of all labels' elements pooled into one 2 x 2 matrix.
    Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelMatthewsCorrCoef
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelMatthewsCorrCoef(num_labels=3).update(preds, target).compute()
    tensor(0.3333)
    """

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(num_labels, threshold, "global", ignore_index, validate_args, **kwargs)

    def finish_request(self) -> Request:
        return Request("matthews_corrcoef", "micro")


class BinaryCohenKappa(BinaryConfmatState):
    """Cohen's kappa between target and thresholded predictions; ``weights`` None, "linear" or
    "quadratic" (disagreement weights ``|i - j|`` or ``(i - j)^2``). Bad labels raise even with
    validate_args=False.

        >>> import torch
        >>> from torchtally.classification import BinaryCohenKappa
        >>> BinaryCohenKappa().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.5000)
    """

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        weights: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        weights = clf_update.check_kappa_weights(weights)
        reject_options(kwargs, ("multidim_average",), type(self).__name__)
        super().__init__(threshold, "global", ignore_index, validate_args, **kwargs)
        self.weights = weights

    def finish_request(self) -> Request:
        return Request("cohen_kappa", "micro", weights=self.weights)


class MulticlassCohenKappa(MulticlassConfmatState):
    """Cohen's kappa of a [C, C] confusion matrix; ``weights`` as BinaryCohenKappa. Bad labels
    raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassCohenKappa
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassCohenKappa(num_classes=3).update(preds, target).compute()
    tensor(0.6364)
    """

    def __init__(
        self,
        num_classes: int,
        ignore_index: Optional[int] = None,
        weights: Optional[str] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        weights = clf_update.check_kappa_weights(weights)
        reject_options(kwargs, ("top_k", "multidim_average"), type(self).__name__)
        super().__init__(num_classes, 1, "global", ignore_index, validate_args, **kwargs)
        self.weights = weights

    def finish_request(self) -> Request:
        return Request("cohen_kappa", "micro", weights=self.weights)
