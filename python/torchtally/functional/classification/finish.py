"""Every value a count state gives, from one call: the "finish" of the confusion-matrix family.

A metric's value is a ``Request`` (metric, average, zero_division, beta, ignore_index) on a
count state laid out one of four ways (``LAYOUTS``: a [C, C] confusion matrix, top-k counts
[C, 3], a binary [2, 2] or a multilabel [L, 2, 2] matrix). ``finish(state, layout, requests)``
returns the requests' values together: on a CPU state one call into the C core
(``kernels.stat_finish``: the one-vs-rest counts formed once, every ratio divided once in
float64), elsewhere (a CUDA state, the reference backend) the torch functions of `compute`,
which stay the oracle. A metric class's compute is ``finish(...)`` of its own request, and a
collection asks once for all the metrics sharing a state (``Metric.value_request``), so a
collection's accuracy, precision, recall and F1 cost one call.

Values equal the torch functions' up to the order in which float64 sums are added (a macro or
weighted mean over classes): the same counts, the same divisions, one rounding to float32.
"""

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels
from . import compute

LAYOUTS = {"multiclass": 0, "topk": 1, "binary": 2, "multilabel": 3}
METRICS = {
    "accuracy": 0,
    "precision": 1,
    "recall": 2,
    "fbeta": 3,
    "specificity": 4,
    "hamming_distance": 5,
    "jaccard_index": 6,
    "matthews_corrcoef": 7,  # of the whole matrix: no average
    "cohen_kappa": 8,  # of the whole matrix: no average
    "negative_predictive_value": 9,
}
_WHOLE_MATRIX = ("matthews_corrcoef", "cohen_kappa")
KAPPA_WEIGHTS = {None: 0, "linear": 1, "quadratic": 2}
AVERAGES = {"micro": 0, "macro": 1, "weighted": 2, "none": 3}


class Request(NamedTuple):
    """One value of a count state. ``ignore_index``: Jaccard's class left out (multiclass), -1
    for none; ``top_k`` > 1 only with the "topk" layout (the torch path's Stats need it);
    ``weights``: Cohen's kappa's (None, "linear", "quadratic"). Matthews' correlation and
    kappa are of the whole matrix: their ``average`` is "micro"."""

    metric: str
    average: str
    zero_division: float = 0.0
    beta: float = 1.0
    ignore_index: int = -1
    top_k: int = 1
    weights: Optional[str] = None

    def per_class(self, layout: str) -> bool:
        """Whether its value is one per class ([C]: average "none" of a per-class metric, not
        binary) rather than one number (0-d)."""
        return self.average == "none" and layout != "binary" and self.metric not in _WHOLE_MATRIX


class _Plan(NamedTuple):
    table: Tensor  # float64 [R, 6]: the kernel's request rows
    spans: Tuple[Tuple[int, int], ...]  # each request's (offset, width) in the output
    template: Tensor  # float32 [total values], for torch.empty_like (half the cost of torch.empty)


_plans: Dict[Tuple[str, int, Tuple[Request, ...]], _Plan] = {}
_MAX_PLANS = 4096  # distinct (layout, classes, requests) seen; a process that makes more starts over


def classes_of(state: Tensor, layout: str) -> int:
    """The classes (labels) of a count state: the values of an average "none"."""
    return 1 if layout == "binary" else int(state.shape[0])


def _plan(layout: str, classes: int, requests: Tuple[Request, ...]) -> _Plan:
    key = (layout, classes, requests)
    plan = _plans.get(key)
    if plan is None:
        rows, spans, at = [], [], 0
        for r in requests:
            width = classes if r.per_class(layout) else 1
            ignored = r.ignore_index if 0 <= r.ignore_index < classes else -1
            parameter = KAPPA_WEIGHTS[r.weights] if r.metric == "cohen_kappa" else float(r.beta)
            rows.append([METRICS[r.metric], AVERAGES[r.average], float(r.zero_division), parameter, ignored, at])
            spans.append((at, width))
            at += width
        plan = _Plan(torch.tensor(rows, dtype=torch.float64), tuple(spans), torch.empty(at, dtype=torch.float32))
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[key] = plan
    return plan


def finish(state: Tensor, layout: str, requests: Sequence[Request]) -> List[Tensor]:
    """The float32 value of each request on ``state`` (0-d, or [C] for average "none")."""
    requests = tuple(requests)
    if not kernels.finishes(state):
        return [torch_value(state, layout, r) for r in requests]
    if len(requests) == 1:  # the value is the whole output: no views
        return [prepare(state, layout, requests[0]).run(state)]
    plan = _plan(layout, classes_of(state, layout), requests)
    out = torch.empty_like(plan.template)
    kernels.stat_finish(out, state, plan.table, LAYOUTS[layout])
    return [out[at : at + width] if r.per_class(layout) else out[at] for r, (at, width) in zip(requests, plan.spans)]


class Prepared(NamedTuple):
    """One request on one layout, laid out once: what a metric's compute keeps between calls
    (``prepare``), so that a compute costs one allocation and one call."""

    request: Request
    layout: str
    classes: int
    code: int  # the layout's code
    table: Tensor
    template: Tensor  # float32 of the value's shape, () or (C,): torch.empty_like of it costs half of torch.empty

    def run(self, state: Tensor) -> Tensor:
        """The request's float32 value on ``state`` (a count state of this layout and size)."""
        out = torch.empty_like(self.template)
        if kernels.stat_finish(out, state, self.table, self.code):
            return out
        return torch_value(state, self.layout, self.request)


def prepare(state: Tensor, layout: str, request: Request) -> Prepared:
    classes = classes_of(state, layout)
    template = torch.empty((classes,) if request.per_class(layout) else (), dtype=torch.float32)
    return Prepared(request, layout, classes, LAYOUTS[layout], _plan(layout, classes, (request,)).table, template)


# -- the torch path: the oracle, and what non-CPU states take ------------------------------------


def stats_of(state: Tensor, layout: str, top_k: int = 1) -> compute.Stats:
    """The one-vs-rest counts of a count state."""
    if layout == "multiclass":
        return compute.multiclass_stats(state)
    if layout == "topk":
        return compute.topk_stats(state, top_k)
    if layout == "binary":
        return compute.binary_stats(state.reshape(2, 2))
    return compute.multilabel_stats(state)


def torch_value(state: Tensor, layout: str, r: Request) -> Tensor:
    """``r``'s value on ``state`` by the torch functions of `compute`."""
    if r.metric in _WHOLE_MATRIX:
        if layout == "topk" or (r.metric == "cohen_kappa" and layout == "multilabel"):
            raise ValueError(f"request: {r.metric} is not a value of {layout} counts")
        confmat = state.reshape(2, 2) if layout == "binary" else state
        if r.metric == "matthews_corrcoef":
            return compute.matthews_corrcoef(confmat)
        return compute.cohen_kappa(confmat, r.weights)
    if r.metric == "jaccard_index":
        if layout == "topk":  # no metric asks for it: MulticlassJaccardIndex takes no top_k
            raise ValueError(
                "request: the torch functions form jaccard_index from a confusion matrix, not top-k counts"
            )
        kind = "multiclass" if layout == "multiclass" else layout
        confmat = state.reshape(2, 2) if layout == "binary" else state
        ignore_index = r.ignore_index if r.ignore_index >= 0 else None
        return compute.jaccard_index(confmat, kind, r.average, ignore_index, r.zero_division)
    return value_from_stats(stats_of(state, layout, r.top_k), r)


def value_from_stats(s: compute.Stats, r: Request) -> Tensor:
    """``r``'s value (not Jaccard's) from counts, also per sample (samplewise Stats)."""
    if r.metric == "accuracy":
        return compute.accuracy(s, r.average)
    if r.metric == "precision":
        return compute.precision(s, r.average, r.zero_division)
    if r.metric == "recall":
        return compute.recall(s, r.average, r.zero_division)
    if r.metric == "fbeta":
        return compute.fbeta(s, r.beta, r.average, r.zero_division)
    if r.metric == "specificity":
        return compute.specificity(s, r.average)
    if r.metric == "hamming_distance":
        return compute.hamming_distance(s, r.average)
    if r.metric == "negative_predictive_value":
        return compute.negative_predictive_value(s, r.average, r.zero_division)
    raise ValueError(f"request: {r.metric!r} is not a value of per-class counts")
