"""The count states of the classification metrics, one per task, and their update.

Every classification metric of a task derives from one of these and differs only in compute.
Metrics with the same task and state options (num_classes / num_labels, threshold,
ignore_index, top_k) declare the same ``state_key`` and the same state, so a MetricCollection
accumulates it once per batch and syncs it once (one slot in the packed all_reduce).

``multidim_average`` and ``validate_args`` are accepted for torchmetrics compatibility: only
"global" (extra dims flattened into samples) is supported, and inputs are always validated
(the checks run in the kernels' single pass over the data).
"""
from typing import Any, Optional

import torch
from torch import Tensor

from ..functional import _classification_inputs as _in
from ..functional import _classification_reduce as _r
from ..metric import Metric


class BinaryConfmatState(Metric):
    """State ``confmat`` int64 [2, 2] (row = target, column = prediction)."""

    def __init__(self, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                 multidim_average: str = "global", validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _in.check_multidim_average(multidim_average)
        self.threshold = _in.check_threshold(threshold)
        self.ignore_index = _in.check_ignore_index(ignore_index)
        self.state_key = ("torchtally.binary_confmat", self.threshold, self.ignore_index)
        self.add_state("confmat", torch.zeros(2, 2, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: probabilities, logits or 0/1 labels; target: 0/1 labels; any one shape [...]."""
        _in.binary_update(self.confmat, preds, target, self.threshold, self.ignore_index)

    def _stats(self) -> _r.Stats:
        return _r.binary_stats(self.confmat)


class MulticlassConfmatState(Metric):
    """State ``confmat`` int64 [C, C] (row = target, column = prediction), or for top_k > 1
    (subclasses with ``_top_k_ok``) ``topk`` int64 [C, 3]: (in top k, hit, support) per class."""

    _top_k_ok = False

    def __init__(self, num_classes: int, *, top_k: int = 1, ignore_index: Optional[int] = None,
                 multidim_average: str = "global", validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _in.check_multidim_average(multidim_average)
        self.num_classes = _in.check_count("num_classes", num_classes)
        self.top_k = _in.check_top_k(top_k, self.num_classes)
        if self.top_k > 1 and not self._top_k_ok:
            raise ValueError(
                f"top_k: {type(self).__name__} supports only top_k = 1 (top_k > 1: MulticlassAccuracy, "
                f"MulticlassRecall), got {top_k}"
            )
        self.ignore_index = _in.check_ignore_index(ignore_index)
        c = self.num_classes
        if self.top_k == 1:
            self.state_key = ("torchtally.multiclass_confmat", c, self.ignore_index)
            self.add_state("confmat", torch.zeros(c, c, dtype=torch.int64), reduce="sum")
        else:
            self.state_key = ("torchtally.multiclass_topk", c, self.ignore_index, self.top_k)
            self.add_state("topk", torch.zeros(c, 3, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: scores [N, C, ...] (probabilities or logits) or labels [N, ...]; target: labels [N, ...]."""
        if self.top_k == 1:
            _in.multiclass_update(self.confmat, preds, target, self.ignore_index)
        else:
            _in.multiclass_topk_update(self.topk, preds, target, self.ignore_index, self.top_k)

    def _stats(self) -> _r.Stats:
        return _r.multiclass_stats(self.confmat) if self.top_k == 1 else _r.topk_stats(self.topk)


class MultilabelConfmatState(Metric):
    """State ``confmat`` int64 [L, 2, 2]: per label, row = target, column = prediction."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, ignore_index: Optional[int] = None,
                 multidim_average: str = "global", validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _in.check_multidim_average(multidim_average)
        self.num_labels = _in.check_count("num_labels", num_labels)
        self.threshold = _in.check_threshold(threshold)
        self.ignore_index = _in.check_ignore_index(ignore_index)
        self.state_key = ("torchtally.multilabel_confmat", self.num_labels, self.threshold, self.ignore_index)
        self.add_state("confmat", torch.zeros(self.num_labels, 2, 2, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: probabilities, logits or 0/1 labels [N, L, ...]; target: 0/1 labels of that shape."""
        _in.multilabel_update(self.confmat, preds, target, self.threshold, self.ignore_index)

    def _stats(self) -> _r.Stats:
        return _r.multilabel_stats(self.confmat)
