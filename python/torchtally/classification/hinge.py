"""Hinge loss metrics: state declarations; the math lives in torchtally.functional.classification.hinge.

State: ``measures``, a float64 sum of the per-sample losses (0-d, or [C] for multiclass
"one-vs-all"), and ``total``, an int64 sample count; both sum-reduced. Results are in
``self.dtype`` (float32 by default, as torchmetrics' float32 state gives).

Differences from torchmetrics: float64 sums; NaN scores, and targets outside {0, 1} / [0, C)
(other than ignore_index), raise ValueError with ``validate_args=False`` too; results carry no
gradient.
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, cast

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.classification import hinge as hinge_fn
from ..functional.classification.update import check_count, check_ignore_index
from ..functional.tasks import check_task, check_task_count
from .base import SCORE_TASKS as TASKS
from .base import TaskWrapper

__all__ = ["BinaryHingeLoss", "MulticlassHingeLoss", "HingeLoss"]


class _HingeBase(Metric):
    is_differentiable = False
    traceable_update = False  # probabilities or logits, and the checks, read the values: eager inside torch.compile
    higher_is_better = False
    full_state_update = False
    if TYPE_CHECKING:  # declared states, read as attributes
        measures: Tensor
        total: Tensor

    def _declare(self, shape: tuple) -> None:
        self.add_state("measures", torch.zeros(shape, dtype=torch.float64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def compute(self) -> Tensor:
        return hinge_fn.hinge_result(self.measures, self.total, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "measures", "total")


class BinaryHingeLoss(_HingeBase):
    """Mean hinge loss of a binary task, max(0, 1 - m) with m = p for target 1 and -p for target 0
    (``squared=True``: its square). preds [N, ...] probabilities or logits (sigmoid when a batch
    lies outside [0, 1], as torchmetrics), target [N, ...] in {0, 1}.

        >>> import torch
        >>> from torchtally.classification import BinaryHingeLoss
        >>> m = BinaryHingeLoss()
        >>> m.update(torch.tensor([0.25, 0.25, 0.55, 0.75, 0.75]), torch.tensor([0, 0, 1, 1, 1])).compute()
        tensor(0.6900)
    """

    def __init__(
        self, squared: bool = False, ignore_index: Optional[int] = None, validate_args: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.squared = hinge_fn.check_squared(squared)
        self.ignore_index = check_ignore_index(ignore_index)
        self.validate_args = validate_args
        self._declare(())

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, n, _ = hinge_fn.binary_hinge_sums(preds, target, self.squared, self.ignore_index, self.device)
        self.measures += total
        self.total += n


class MulticlassHingeLoss(_HingeBase):
    """Mean hinge loss of a multiclass task. ``multiclass_mode="crammer-singer"``:
    max(0, 1 - p_y + max_{j != y} p_j); ``"one-vs-all"``: one binary hinge loss per class (a [C]
    result). preds [N, C, ...] probabilities or logits (softmax when a batch lies outside
    [0, 1]), target [N, ...] class ids.

        >>> import torch
        >>> from torchtally.classification import MulticlassHingeLoss
        >>> preds = torch.tensor([[0.25, 0.20, 0.55], [0.55, 0.05, 0.40], [0.10, 0.30, 0.60], [0.90, 0.05, 0.05]])
        >>> MulticlassHingeLoss(num_classes=3).update(preds, torch.tensor([0, 1, 2, 0])).compute()
        tensor(0.9125)
        >>> m = MulticlassHingeLoss(num_classes=3, multiclass_mode="one-vs-all")
        >>> m.update(preds, torch.tensor([0, 1, 2, 0])).compute()
        tensor([0.8750, 1.1250, 1.1000])
    """

    def __init__(
        self,
        num_classes: int,
        squared: bool = False,
        multiclass_mode: str = "crammer-singer",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = check_count("num_classes", num_classes)
        self.squared = hinge_fn.check_squared(squared)
        self.multiclass_mode = hinge_fn.check_multiclass_mode(multiclass_mode)
        self.ignore_index = check_ignore_index(ignore_index)
        self.validate_args = validate_args
        self._declare(() if self.multiclass_mode == "crammer-singer" else (self.num_classes,))

    def update(self, preds: Tensor, target: Tensor) -> None:
        total, n, _ = hinge_fn.multiclass_hinge_sums(
            preds, target, self.num_classes, self.squared, self.multiclass_mode, self.ignore_index, self.device
        )
        self.measures += total
        self.total += n


class HingeLoss(TaskWrapper):
    """BinaryHingeLoss or MulticlassHingeLoss, by ``task``.

    >>> from torchtally.classification import HingeLoss
    >>> type(HingeLoss(task="multiclass", num_classes=3)).__name__
    'MulticlassHingeLoss'
    """

    def __new__(
        cls,
        task: str,
        num_classes: Optional[int] = None,
        squared: bool = False,
        multiclass_mode: Optional[str] = "crammer-singer",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task, TASKS)
        kwargs.update(squared=squared, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryHingeLoss(**kwargs)
        return MulticlassHingeLoss(
            check_task_count("num_classes", num_classes, task), multiclass_mode=cast(str, multiclass_mode), **kwargs
        )
