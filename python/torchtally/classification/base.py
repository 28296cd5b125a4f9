"""Each family's per-task bases, on which every metric class of the family is built, and the
base of torchmetrics' task wrappers.

Classification counts: every classification metric of a task derives from one of these and
differs only in compute. Metrics with the same task and state options (num_classes /
num_labels, threshold, ignore_index, top_k, multidim_average) declare the same ``state_key``
and the same state, so a MetricCollection accumulates it once per batch and syncs it once (one
slot in the packed all_reduce). States (see functional/classification/update.py for the kernels):

    binary       confmat int64 [2, 2]          samplewise: sample_confmat [N, 2, 2] ("cat")
    multiclass   confmat int64 [C, C]          top_k > 1: topk [C, 3] (predicted, hit, support)
                                               samplewise: sample_stats [N, C, 4] ("cat")
    multilabel   confmat int64 [L, 2, 2]       samplewise: sample_confmat [N, L, 2, 2] ("cat")

Curves (AUROC, AveragePrecision, ROC, PrecisionRecallCurve): metrics of one task with the same
``thresholds`` and ``ignore_index`` (and num_classes / num_labels, and the binary
``normalization``) declare the same ``state_key`` and the same states, so a MetricCollection
updates the histogram (binned) or the score/label rows (exact) once per batch and syncs them
once. Layout and bytes per sample: torchtally.functional.curves.update.

``validate_args`` is accepted for torchmetrics compatibility and kept as an attribute, but
inputs are always checked: the checks run in the kernels' single pass over the data, so turning
them off would save little, and without them a bad label would be a wrong number.

Task wrappers (``Accuracy``, ``AUROC``, ...): their ``__new__`` returns the task's metric
(``Accuracy(task="binary")`` is a BinaryAccuracy), so a wrapper itself is never made.
"""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.classification import compute as clf_compute
from ..functional.classification import finish as clf_finish
from ..functional.classification import update as clf_update
from ..functional.curves.update import CurveTask, check_num
from ..functional.tasks import check_task, check_task_count

_COUNT_STATE = {"multiclass": "confmat", "topk": "topk", "binary": "confmat", "multilabel": "confmat"}  # by layout


class _CountState(Metric):
    """torchmetrics' class attributes of the count metrics (subclasses override where they differ)."""

    is_differentiable = False
    higher_is_better: Optional[bool] = True
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0

    fresh_compute_results = True  # every compute here makes its own tensors (see base/states.py)
    # How the task base lays out its counts for the finish (functional/classification/finish.py):
    # a key of clf_finish.LAYOUTS, or None for per-sample counts (the torch functions then).
    _finish_layout: Optional[str] = None

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Loaded counts must be >= 0, as every update leaves them (see Metric)."""
        super().check_state_invariants(states)
        check_nonnegative(states, *states)

    def finish_request(self) -> clf_finish.Request:
        """This metric's value as a request on its counts (the metrics whose compute is the finish)."""
        raise NotImplementedError(f"{type(self).__name__} computes its value itself")

    def compute(self) -> Tensor:
        layout = self._finish_layout
        if layout is None:
            return self.finish_values(None, (self.finish_request(),))[0]
        d = self.__dict__
        state = d[_COUNT_STATE[layout]]
        # Prepared once per declaration version (an assigned option changes it) and state shape.
        # (Options are tracked from the first update on: before it, nothing is kept.)
        prepared = d.get("_finish_prepared")
        if prepared is None or prepared[0] != d["_spec_version"] or prepared[1] != state.shape or d["_options"] is None:
            prepared = (d["_spec_version"], state.shape, clf_finish.prepare(state, layout, self.finish_request()))
            if d["_options"] is not None:
                d["_finish_prepared"] = prepared
        return prepared[2].run(state)

    def finish_values(
        self, states: Optional[Dict[str, Tensor]], requests: Sequence[clf_finish.Request]
    ) -> List[Tensor]:
        """The values of ``requests`` on ``states`` (this metric's own when None): one finish
        call for all of them."""
        layout = self._finish_layout
        if layout is None:  # per-sample counts (compute_on has swapped any states in)
            s = self._stats()
            return [clf_finish.value_from_stats(s, r) for r in requests]
        name = _COUNT_STATE[layout]
        state = self.__dict__[name] if states is None else states[name]
        return clf_finish.finish(state, layout, requests)

    def value_request(self) -> Optional[Tuple[Callable[..., List[Any]], Any]]:
        """(finisher, request) while this metric's compute is its finish request (a subclass that
        overrides compute computes alone): a collection finishes a shared state's requests at once."""
        if type(self).compute is not _CountState.compute or self._finish_layout is None:
            return None
        return _finish_members, self.finish_request()

    def _stats(self) -> clf_compute.Stats:
        raise NotImplementedError


def _finish_members(
    metric: _CountState, states: Optional[Dict[str, Tensor]], requests: Sequence[clf_finish.Request]
) -> List[Tensor]:
    """The finisher of ``_CountState.value_request``: the requests of metrics sharing ``metric``'s state."""
    return metric.finish_values(states, requests)


def pop_zero_division(kwargs: dict) -> float:
    """torchmetrics' stat-score classes take ``zero_division`` through ``**kwargs`` (checked, and
    used by precision and recall); it is not a base-class option."""
    return clf_update.check_zero_division(kwargs.pop("zero_division", 0))


def reject_options(kwargs: dict, names: tuple, owner: str) -> None:
    """A state option the metric does not take (e.g. ``top_k`` for a confusion matrix), passed
    through ``**kwargs``: ValueError, as torchmetrics' base class gives for unknown arguments."""
    unexpected = [name for name in names if name in kwargs]
    if unexpected:
        raise ValueError(f"{owner}: unexpected keyword arguments {unexpected}")


class BinaryConfmatState(_CountState):
    """State ``confmat`` int64 [2, 2] (row = target, column = prediction); samplewise:
    ``sample_confmat`` [N, 2, 2], one matrix per sample."""

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.threshold = clf_update.check_threshold(threshold)
        self.multidim_average = clf_update.check_multidim_average(multidim_average)
        self.ignore_index = clf_update.check_ignore_index(ignore_index)
        self.validate_args = bool(validate_args)
        self._samplewise = self.multidim_average == "samplewise"
        if self._samplewise:
            self.state_key = ("torchtally.binary_sample_confmat", self.threshold, self.ignore_index)
            self.add_state("sample_confmat", torch.zeros(0, 2, 2, dtype=torch.int64), reduce="cat")
        else:
            self.state_key = ("torchtally.binary_confmat", self.threshold, self.ignore_index)
            self.add_state("confmat", torch.zeros(2, 2, dtype=torch.int64), reduce="sum")
            self._finish_layout = "binary"

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: probabilities, logits or 0/1 labels; target: 0/1 labels (integer, bool or float);
        any one shape [...] ([N, ...] for samplewise)."""
        if self._samplewise:
            rows = clf_update.binary_sample_confmats(preds, target, self.threshold, self.ignore_index)
            self.append_state("sample_confmat", rows, copy=False)  # a fresh tensor
        else:
            clf_update.binary_update(self.confmat, preds, target, self.threshold, self.ignore_index)

    def _stats(self) -> clf_compute.Stats:
        return clf_compute.binary_stats(self.sample_confmat if self._samplewise else self.confmat)


class MulticlassConfmatState(_CountState):
    """State ``confmat`` int64 [C, C] (row = target, column = prediction); for top_k > 1
    ``topk`` int64 [C, 3]: (predicted, hit, support) per class; samplewise ``sample_stats``
    [N, C, 4] = (tp, fp, tn, fn) per sample and class."""

    plot_legend_name: Optional[str] = "Class"

    def __init__(
        self,
        num_classes: Optional[int],
        top_k: int = 1,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = clf_update.check_num_classes(num_classes)
        self.top_k = clf_update.check_top_k(top_k, self.num_classes)
        self.multidim_average = clf_update.check_multidim_average(multidim_average)
        self.ignore_index = clf_update.check_ignore_index(ignore_index)
        self.validate_args = bool(validate_args)
        self._samplewise = self.multidim_average == "samplewise"
        c = self.num_classes
        if self._samplewise:
            self.state_key = ("torchtally.multiclass_sample_stats", c, self.ignore_index, self.top_k)
            self.add_state("sample_stats", torch.zeros(0, c, 4, dtype=torch.int64), reduce="cat")
        elif self.top_k == 1:
            self.state_key = ("torchtally.multiclass_confmat", c, self.ignore_index)
            self.add_state("confmat", torch.zeros(c, c, dtype=torch.int64), reduce="sum")
            self._finish_layout = "multiclass"
        else:
            self.state_key = ("torchtally.multiclass_topk", c, self.ignore_index, self.top_k)
            self.add_state("topk", torch.zeros(c, 3, dtype=torch.int64), reduce="sum")
            self._finish_layout = "topk"

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: scores [N, C, ...] (probabilities or logits) or labels [N, ...]; target: labels [N, ...]."""
        if self._samplewise:
            rows = clf_update.multiclass_sample_stats(preds, target, self.num_classes, self.top_k, self.ignore_index)
            self.append_state("sample_stats", rows, copy=False)  # a fresh tensor
        elif self.top_k == 1:
            clf_update.multiclass_update(self.confmat, preds, target, self.ignore_index)
        else:
            clf_update.multiclass_topk_update(self.topk, preds, target, self.ignore_index, self.top_k)

    def _stats(self) -> clf_compute.Stats:
        if self._samplewise:
            return clf_compute.sample_stats(self.sample_stats, self.top_k)
        if self.top_k == 1:
            return clf_compute.multiclass_stats(self.confmat)
        return clf_compute.topk_stats(self.topk, self.top_k)


class MultilabelConfmatState(_CountState):
    """State ``confmat`` int64 [L, 2, 2]: per label, row = target, column = prediction;
    samplewise ``sample_confmat`` [N, L, 2, 2]."""

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
        self._samplewise = self.multidim_average == "samplewise"
        n = self.num_labels
        if self._samplewise:
            self.state_key = ("torchtally.multilabel_sample_confmat", n, self.threshold, self.ignore_index)
            self.add_state("sample_confmat", torch.zeros(0, n, 2, 2, dtype=torch.int64), reduce="cat")
        else:
            self.state_key = ("torchtally.multilabel_confmat", n, self.threshold, self.ignore_index)
            self.add_state("confmat", torch.zeros(n, 2, 2, dtype=torch.int64), reduce="sum")
            self._finish_layout = "multilabel"

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds: probabilities, logits or 0/1 labels [N, L, ...]; target: 0/1 labels of that shape."""
        if self._samplewise:
            rows = clf_update.multilabel_sample_confmats(
                preds, target, self.num_labels, self.threshold, self.ignore_index
            )
            self.append_state("sample_confmat", rows, copy=False)  # a fresh tensor
        else:
            clf_update.multilabel_update(self.confmat, preds, target, self.threshold, self.ignore_index)

    def _stats(self) -> clf_compute.Stats:
        return clf_compute.multilabel_stats(self.sample_confmat if self._samplewise else self.confmat)


class CurveState(Metric):
    """Declares the CurveTask's states and updates them; ``self.thresholds`` is None (exact
    mode) or the thresholds tensor, as torchmetrics."""

    is_differentiable = False
    higher_is_better: Optional[bool] = None
    full_state_update = False
    traceable_update = False  # probabilities or logits is decided from the values: eager inside torch.compile

    def __init__(self, task: CurveTask, validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._curve = task
        # binned: thresholds set
        self.thresholds = task.thresholds.values if task.binned else None  # type: ignore[union-attr]
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

    def __init__(
        self,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        normalization: Optional[str] = "sigmoid",
        **kwargs: Any,
    ) -> None:
        super().__init__(CurveTask("binary", 1, thresholds, ignore_index, normalization), validate_args, **kwargs)
        self.normalization = normalization


class MulticlassCurveState(CurveState):
    """preds [N, C, ...] float, target [N, ...] integer class ids in [0, C) (or ignore_index)."""

    def __init__(
        self,
        num_classes: int,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        task = CurveTask("multiclass", check_num("num_classes", num_classes, 2), thresholds, ignore_index)
        super().__init__(task, validate_args, **kwargs)
        self.num_classes = num_classes


class MultilabelCurveState(CurveState):
    """preds [N, L, ...] float, target [N, L, ...] in {0, 1} (or ignore_index), int, bool or float."""

    def __init__(
        self,
        num_labels: int,
        thresholds: Any = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        task = CurveTask("multilabel", check_num("num_labels", num_labels, 1), thresholds, ignore_index)
        super().__init__(task, validate_args, **kwargs)
        self.num_labels = num_labels


# The tasks of hinge loss and calibration error (no multilabel form in torchmetrics).
SCORE_TASKS = ("binary", "multiclass")


class TaskWrapper(Metric):
    """torchmetrics' task wrappers: ``Accuracy(task="multiclass", num_classes=5)`` makes (and
    returns) a ``MulticlassAccuracy(5, ...)``, as torchmetrics' ``__new__`` does. Same names,
    arguments, defaults (note ``average="micro"`` in the stat-score wrappers where the task
    classes default to "macro") and errors as torchmetrics: an unknown task, or a missing
    ``num_classes`` / ``num_labels`` / ``top_k`` for its task, is a ValueError. The wrapper
    classes themselves are never instantiated; their ``update`` / ``compute`` raise, as
    torchmetrics'."""

    def update(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no update(): use the metric its task names")

    def compute(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no compute(): use the metric its task names")


def stat_family(
    task: str,
    binary: type,
    multiclass: type,
    multilabel: type,
    threshold: float,
    num_classes: Optional[int],
    num_labels: Optional[int],
    average: Optional[str],
    top_k: Optional[int],
    kwargs: dict,
    lead: tuple = (),
) -> Metric:
    """The task's metric of a stat-score family (Accuracy, Precision, ..., StatScores); ``lead``:
    arguments before the task's own (beta)."""
    task = check_task(task)
    if task == "binary":
        return binary(*lead, threshold, **kwargs)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        check_task_count("top_k", top_k, task)
        return multiclass(*lead, num_classes, top_k, average, **kwargs)
    check_task_count("num_labels", num_labels, task)
    return multilabel(*lead, num_labels, threshold, average, **kwargs)
