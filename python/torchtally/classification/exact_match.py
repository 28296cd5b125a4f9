"""MulticlassExactMatch, MultilabelExactMatch and their task wrapper ExactMatch(task=...).

State (functional/classification/exact_match.py says what a sample is for each task):

    global       counts int64 [2] = (matched samples, samples), "sum"
    samplewise   sample_counts int64 [N, 2] = (matched, positions) per sample, "cat": 16 bytes per sample

Metrics of one task with the same options declare the same ``state_key``, so two of them in a
MetricCollection share one state.

Differences from torchmetrics:

* bad input raises even with ``validate_args=False`` (ValueError naming the argument for an
  out-of-range or non-0/1 label, NaN scores), as the other classification metrics;
* multilabel samplewise: each sample is divided by its own number of positions;
  torchmetrics keeps the last batch's number and divides every sample by it, which differs when
  batches have different extra dims.
"""

from typing import Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.classification import update as clf_update
from ..functional.classification.exact_match import match_ratio, multiclass_match_counts, multilabel_match_counts
from ..functional.tasks import check_task, check_task_count
from .base import TaskWrapper

__all__ = ["MulticlassExactMatch", "MultilabelExactMatch", "ExactMatch"]


class _ExactMatchState(Metric):
    is_differentiable = False
    higher_is_better: Optional[bool] = True
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0
    fresh_compute_results = True  # compute makes its own tensors

    def _declare(self, key: tuple) -> None:
        self._samplewise = self.multidim_average == "samplewise"
        self.state_key = key + (self._samplewise,)
        if self._samplewise:
            self.add_state("sample_counts", torch.zeros(0, 2, dtype=torch.int64), reduce="cat")
        else:
            self.add_state("counts", torch.zeros(2, dtype=torch.int64), reduce="sum")

    def _add(self, counts: Tensor) -> None:
        if self._samplewise:
            self.append_state("sample_counts", counts, copy=False)  # a fresh tensor
        else:
            self.counts += counts

    def compute(self) -> Tensor:
        return match_ratio(self.sample_counts if self._samplewise else self.counts)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Counts >= 0 and no more matches than samples (see Metric)."""
        super().check_state_invariants(states)
        check_nonnegative(states, *states)
        for name, value in states.items():
            if value.numel() and bool((value[..., 0] > value[..., 1]).any()):
                raise ValueError(f"'{name}': expected matches <= samples in every row, got {value.tolist()}")


class MulticlassExactMatch(_ExactMatchState):
    """Share of samples whose every position is predicted right (preds labels [N, ...] or scores
    [N, C, ...], target [N, ...]); samplewise: 1.0 or 0.0 per sample. Elements whose target is
    ``ignore_index`` count as right. num_classes is required; bad labels raise even with
    validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassExactMatch
    >>> target = torch.tensor([[0, 1, 2], [2, 1, 0]])
    >>> preds = torch.tensor([[0, 1, 2], [2, 0, 0]])
    >>> MulticlassExactMatch(num_classes=3).update(preds, target).compute()
    tensor(0.5000)
    >>> MulticlassExactMatch(num_classes=3, multidim_average="samplewise").update(preds, target).compute()
    tensor([1., 0.])
    """

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: int,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = clf_update.check_num_classes(num_classes)
        self.multidim_average = clf_update.check_multidim_average(multidim_average)
        self.ignore_index = clf_update.check_ignore_index(ignore_index)
        self.validate_args = bool(validate_args)
        self._declare(("torchtally.multiclass_exact_match", self.num_classes, self.ignore_index))

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: labels [N, ...] or scores [N, C, ...]; target: labels [N, ...]."""
        self._add(multiclass_match_counts(preds, target, self.num_classes, self.ignore_index, self._samplewise))


class MultilabelExactMatch(_ExactMatchState):
    """Share of samples whose every label is predicted right (preds and target [N, L, ...]: each
    position of extra dims is a sample of its own); samplewise: per sample, the share of its
    positions matched. Elements whose target is ``ignore_index`` count as right.

    >>> import torch
    >>> from torchtally.classification import MultilabelExactMatch
    >>> target = torch.tensor([[0, 1, 0], [1, 0, 1]])
    >>> preds = torch.tensor([[0.1, 0.8, 0.3], [0.9, 0.6, 0.7]])
    >>> MultilabelExactMatch(num_labels=3).update(preds, target).compute()
    tensor(0.5000)
    """

    plot_legend_name: Optional[str] = "Label"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_labels = clf_update.check_count("num_labels", num_labels)
        self.threshold = clf_update.check_threshold(threshold)
        self.multidim_average = clf_update.check_multidim_average(multidim_average)
        self.ignore_index = clf_update.check_ignore_index(ignore_index)
        self.validate_args = bool(validate_args)
        self._declare(("torchtally.multilabel_exact_match", self.num_labels, self.threshold, self.ignore_index))

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: probabilities, logits or 0/1 labels [N, L, ...]; target: 0/1 labels of that shape."""
        counts = multilabel_match_counts(
            preds, target, self.num_labels, self.threshold, self.ignore_index, self._samplewise
        )
        self._add(counts)


class ExactMatch(TaskWrapper):
    """``task`` "multiclass" -> MulticlassExactMatch, "multilabel" -> MultilabelExactMatch (a
    "binary" task is a ValueError, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import ExactMatch
    >>> target = torch.tensor([[0, 1, 2], [2, 1, 0]])
    >>> ExactMatch(task="multiclass", num_classes=3).update(torch.tensor([[0, 1, 2], [2, 0, 0]]), target).compute()
    tensor(0.5000)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task, ("multiclass", "multilabel"))
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        if task == "multiclass":
            return MulticlassExactMatch(check_task_count("num_classes", num_classes, task), **kwargs)
        return MultilabelExactMatch(check_task_count("num_labels", num_labels, task), threshold, **kwargs)
