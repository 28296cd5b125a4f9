"""The state of the curve metrics (AUROC, AveragePrecision, ROC, PrecisionRecallCurve), one
base class per task, and the base of the task wrappers (AUROC(task=...), ...).

Metrics of one task with the same ``thresholds`` and ``ignore_index`` (and num_classes /
num_labels, and the binary ``normalization``) declare the same ``state_key`` and the same
states, so a MetricCollection updates the histogram (binned) or the score/label rows (exact)
once per batch and syncs them once. Layout and bytes per sample: torchtally.functional.curves.update.

``validate_args`` is accepted for torchmetrics compatibility and kept as an attribute; inputs
are always validated (the checks cost little next to the update, and a skipped check would
let a wrong number through without a word).
"""
from typing import Any, Dict, Optional

from torch import Tensor

from ..functional.curves.update import check_num
from ..functional.curves.update import CurveTask
from ..metric import Metric


class CurveState(Metric):
    """Declares the CurveTask's states and updates them; ``self.thresholds`` is None (exact
    mode) or the thresholds tensor, as torchmetrics."""

    is_differentiable = False
    higher_is_better: Optional[bool] = None
    full_state_update = False

    def __init__(self, task: CurveTask, validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._curve = task
        self.thresholds = task.thresholds.values if task.binned else None
        self.ignore_index = task.ignore_index
        self.validate_args = validate_args
        self.state_key = task.state_key
        for name, default, reduce in task.declare():
            self.add_state(name, default, reduce=reduce)

    def update(self, preds: Tensor, target: Tensor) -> None:
        """Add a batch: preds probabilities or logits, target labels (shapes: the subclass)."""
        task = self._curve
        if task.binned:
            task.accumulate(self.hist, preds, target)
        else:
            scores, labels = task.rows(preds, target, self.device)
            self.append_state("scores", scores, copy=False)  # rows() made both: never the caller's memory
            self.append_state("labels", labels, copy=False)

    def _states(self) -> Dict[str, Tensor]:
        return {name: getattr(self, name) for name in self.state_names}

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """What an update never breaks, checked on loaded states (see Metric): histogram counts
        >= 0 (binned); as many label rows as score rows, labels in range and no NaN score (exact)."""
        super().check_state_invariants(states)
        self._curve.check_states(states)


class BinaryCurveState(CurveState):
    """preds [N, ...] float, target [N, ...] in {0, 1} (or ignore_index), int, bool or float."""

    def __init__(self, thresholds: Any = None, ignore_index: Optional[int] = None, validate_args: bool = True,
                 normalization: Optional[str] = "sigmoid", **kwargs: Any) -> None:
        super().__init__(CurveTask("binary", 1, thresholds, ignore_index, normalization), validate_args, **kwargs)
        self.normalization = normalization


class MulticlassCurveState(CurveState):
    """preds [N, C, ...] float, target [N, ...] integer class ids in [0, C) (or ignore_index)."""

    def __init__(self, num_classes: int, thresholds: Any = None, ignore_index: Optional[int] = None,
                 validate_args: bool = True, **kwargs: Any) -> None:
        task = CurveTask("multiclass", check_num("num_classes", num_classes, 2), thresholds, ignore_index)
        super().__init__(task, validate_args, **kwargs)
        self.num_classes = num_classes


class MultilabelCurveState(CurveState):
    """preds [N, L, ...] float, target [N, L, ...] in {0, 1} (or ignore_index), int, bool or float."""

    def __init__(self, num_labels: int, thresholds: Any = None, ignore_index: Optional[int] = None,
                 validate_args: bool = True, **kwargs: Any) -> None:
        task = CurveTask("multilabel", check_num("num_labels", num_labels, 1), thresholds, ignore_index)
        super().__init__(task, validate_args, **kwargs)
        self.num_labels = num_labels
