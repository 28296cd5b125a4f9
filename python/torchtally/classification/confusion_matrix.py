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
from ..functional.tasks import check_task, check_task_count
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState, TaskWrapper, reject_options

__all__ = ["BinaryConfusionMatrix", "MulticlassConfusionMatrix", "MultilabelConfusionMatrix", "ConfusionMatrix"]


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


class ConfusionMatrix(TaskWrapper):
    """The task's ConfusionMatrix.

    >>> import torch
    >>> from torchtally.classification import ConfusionMatrix
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> ConfusionMatrix(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor([[1, 0, 0],
            [0, 1, 1],
            [0, 0, 1]])
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        normalize: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(normalize=normalize, ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task)
        if task == "binary":
            return BinaryConfusionMatrix(threshold, **kwargs)
        if task == "multiclass":
            return MulticlassConfusionMatrix(check_task_count("num_classes", num_classes, task), **kwargs)
        return MultilabelConfusionMatrix(check_task_count("num_labels", num_labels, task), threshold, **kwargs)
