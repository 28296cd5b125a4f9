"""The kernels as torch custom operators (``torch.ops.torchtally.<kernel>``), for ``torch.compile``.

A call into a C extension is opaque to dynamo: it breaks the graph. Registered as a torch
operator (``define_op``), each kernel is one node of the graph instead, declared as mutating
its first argument (``out`` / ``state``), with a fake implementation that does nothing (the op
returns nothing and changes no shape), so ``metric.update(preds, target)`` inside a function
compiled with ``fullgraph=True`` traces without a break. At run time the node calls the same
route as an eager update (torchtally.kernels: the C core, the CUDA kernels or the reference), so
the compiled step counts exactly what the eager one counts, and a rejected batch raises the
kernel's ValueError from the compiled function, its state untouched.

torchtally.kernels calls these ops only while dynamo traces (``torch.compiler.is_compiling()``):
eagerly, an operator's dispatch costs ~2 us, half a small update.
"""

import importlib.abc
import importlib.util
import sys
from typing import Any, Callable, Optional

import torch
from torch import Tensor


def _never() -> bool:
    return False


# torch.compile support needs torch >= 2.4 (torch.library.register_fake, torch.compiler.is_compiling);
# with an older torch nothing is registered and ``compiling`` is always False: a C call inside a
# compiled function is then a graph break, as it is for any extension.
SUPPORTED = hasattr(torch.library, "register_fake") and hasattr(torch.compiler, "is_compiling")
compiling: Callable[[], bool] = torch.compiler.is_compiling if SUPPORTED else _never
"""Whether dynamo is tracing now (what every torchtally path that has a traced form asks)."""


class OutsideTheGraph:
    """``fn`` that dynamo does not trace: ``self.call`` is ``fn`` marked with
    ``torch.compiler.disable`` and ``reason`` (shown when ``fullgraph=True`` refuses the call).

    The mark imports dynamo, seconds of ``import torchtally`` (and of every process a job
    starts) for a function only a traced step calls; so it is made when ``torch._dynamo``
    finishes importing (at once if it already has), before any tracing can reach ``call``.
    Callers read ``.call`` at each call, so they get the marked function once it exists.
    """

    def __init__(self, fn: Callable[..., Any], reason: str) -> None:
        self.call = fn
        self._reason = reason
        _after_import("torch._dynamo", self._mark)

    def _mark(self) -> None:
        try:
            self.call = torch.compiler.disable(self.call, reason=self._reason)
        except TypeError:  # an older torch: no reason
            self.call = torch.compiler.disable(self.call)


def _after_import(name: str, callback: Callable[[], None]) -> None:
    """``callback()`` once module ``name`` is imported: now, or when its import finishes."""
    if name in sys.modules:
        callback()
        return
    for finder in sys.meta_path:
        if isinstance(finder, _AfterImport) and finder.name == name:
            finder.callbacks.append(callback)
            return
    sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    """A finder that finds nothing itself: for module ``name`` it takes the spec the other
    finders give and runs ``callbacks`` after the module's code has run."""

    def __init__(self, name: str, callback: Callable[[], None]) -> None:
        self.name = name
        self.callbacks = [callback]

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # once; and the lookup below must not find this finder again
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            for callback in self.callbacks:  # nothing to wait for: mark now (imports it)
                callback()
            return spec
        run_module = spec.loader.exec_module
        callbacks = self.callbacks

        def run_module_then_callbacks(module: Any) -> None:
            run_module(module)
            for callback in callbacks:
                callback()

        spec.loader.exec_module = run_module_then_callbacks  # type: ignore[method-assign]
        return spec


# One fragment of the "torchtally" operator namespace: the kernels' ops here, and others (the
# regression finiteness check) through define_op.
_LIBRARY = torch.library.Library("torchtally", "FRAGMENT")
_DEVICES = ("CPU", "CUDA")  # the devices the ops run on; others have no kernel (an error, not a fallback)
_LABELS = "Tensor(a!) out, Tensor preds, Tensor target, Tensor? mask, int? ignore_index"


def define_op(name: str, schema: str, run: Callable[..., None]) -> Any:
    """``torch.ops.torchtally.<name>`` with ``schema`` (its arguments), run by ``run`` on the CPU
    and CUDA, faked as doing nothing. Defined through torch.library.Library rather than
    ``torch.library.custom_op``: its dispatch costs 2 us a call against 16 us, in a compiled
    step as eagerly. The mutated argument is marked ``(a!)`` in the schema."""
    if not SUPPORTED:
        return None
    _LIBRARY.define(f"{name}({schema}) -> ()")
    for device in _DEVICES:
        _LIBRARY.impl(name, run, device)
    torch.library.register_fake(f"torchtally::{name}", _nothing, lib=_LIBRARY)
    return getattr(torch.ops.torchtally, name).default


def _nothing(*args: object) -> None:
    """The fake implementation: the kernels write into their first argument and return None."""
    return None


def _unset_route(out: Tensor) -> Any:
    raise RuntimeError("torchtally.kernels.ops: no route set (torchtally.kernels sets it on import)")


_route: Callable[[Tensor], Any] = _unset_route
_host_route: Callable[[Tensor], Any] = _unset_route


def use_route(route: Callable[[Tensor], Any], host_route: Callable[[Tensor], Any]) -> None:
    """Set what the ops call: ``route(out)`` gives the module an eager call of the kernel takes
    (torchtally.kernels passes its own choice: the C core, the CUDA kernels or the reference);
    ``host_route(out)`` the same for the kernels that have no CUDA build (calibration, ranking and
    the detection and segmentation kernels: the C core or the reference)."""
    global _route, _host_route
    _route, _host_route = route, host_route


def _confmat_labels(
    out: Tensor, preds: Tensor, target: Tensor, mask: Optional[Tensor], ignore_index: Optional[int]
) -> None:
    _route(out).confmat_labels(out, preds, target, mask, ignore_index)


def _confmat_scores(
    out: Tensor, scores: Tensor, target: Tensor, mask: Optional[Tensor], ignore_index: Optional[int]
) -> None:
    _route(out).confmat_scores(out, scores, target, mask, ignore_index)


def _confmat_threshold(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor],
    ignore_index: Optional[int],
    threshold: float,
    logit_threshold: Optional[float],
) -> None:
    _route(out).confmat_threshold(out, preds, target, mask, ignore_index, threshold, logit_threshold)


def _binned_update(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor],
    ignore_index: Optional[int],
    thresholds: Tensor,
    uniform: bool,
) -> None:
    _route(out).binned_update(out, preds, target, mask, ignore_index, thresholds, uniform)


def _topk_update(
    out: Tensor, preds: Tensor, target: Tensor, mask: Optional[Tensor], ignore_index: Optional[int], k: int
) -> None:
    _route(out).topk_update(out, preds, target, mask, ignore_index, k)


def _moments_update(state: Tensor, x: Tensor, weights: Optional[Tensor]) -> None:
    _route(state).moments_update(state, x, weights)


def _moments_merge(state: Tensor, other: Tensor) -> None:
    _route(state).moments_merge(state, other)


def _comoments_update(state: Tensor, x: Tensor, y: Tensor) -> None:
    _route(state).comoments_update(state, x, y)


def _comoments_merge(state: Tensor, other: Tensor) -> None:
    _route(state).comoments_merge(state, other)


def _calibration_update(counts: Tensor, sums: Tensor, conf: Tensor, hit: Tensor, boundaries: Tensor) -> None:
    _host_route(counts).calibration_update(counts, sums, conf, hit, boundaries)


def _ranking_update(out: Tensor, preds: Tensor, target: Tensor) -> None:
    _host_route(out).ranking_update(out, preds, target)


def _coco_match(
    rows: Tensor, groups: Tensor, dets: Tensor, gts: Tensor, iou_thresholds: Tensor, ious: Optional[Tensor]
) -> None:
    _host_route(rows).coco_match(rows, groups, dets, gts, iou_thresholds, ious)


confmat_labels = define_op("confmat_labels", _LABELS, _confmat_labels)
confmat_scores = define_op("confmat_scores", _LABELS, _confmat_scores)
confmat_threshold = define_op(
    "confmat_threshold", _LABELS + ", float threshold, float? logit_threshold", _confmat_threshold
)
binned_update = define_op("binned_update", _LABELS + ", Tensor thresholds, bool uniform", _binned_update)
topk_update = define_op("topk_update", _LABELS + ", int k", _topk_update)
moments_update = define_op("moments_update", "Tensor(a!) state, Tensor x, Tensor? weights", _moments_update)
moments_merge = define_op("moments_merge", "Tensor(a!) state, Tensor other", _moments_merge)
comoments_update = define_op("comoments_update", "Tensor(a!) state, Tensor x, Tensor y", _comoments_update)
comoments_merge = define_op("comoments_merge", "Tensor(a!) state, Tensor other", _comoments_merge)
calibration_update = define_op(
    "calibration_update",
    "Tensor(a!) counts, Tensor(b!) sums, Tensor conf, Tensor hit, Tensor boundaries",
    _calibration_update,
)
ranking_update = define_op("ranking_update", "Tensor(a!) out, Tensor preds, Tensor target", _ranking_update)
coco_match = define_op(
    "coco_match",
    "Tensor(a!) rows, Tensor groups, Tensor dets, Tensor gts, Tensor iou_thresholds, Tensor? ious",
    _coco_match,
)


def _box_overlap_matrix(out: Tensor, preds: Tensor, target: Tensor, kind: int) -> None:
    _host_route(out).box_overlap_matrix(out, preds, target, kind)


def _box_overlap_sums(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    sizes: Tensor,
    pred_labels: Optional[Tensor],
    target_labels: Optional[Tensor],
    kind: int,
    threshold: Optional[float],
) -> None:
    _host_route(out).box_overlap_sums(out, preds, target, sizes, pred_labels, target_labels, kind, threshold)


box_overlap_matrix = define_op(
    "box_overlap_matrix", "Tensor(a!) out, Tensor preds, Tensor target, int kind", _box_overlap_matrix
)
box_overlap_sums = define_op(
    "box_overlap_sums",
    "Tensor(a!) out, Tensor preds, Tensor target, Tensor sizes, Tensor? pred_labels, Tensor? target_labels, "
    "int kind, float? threshold",
    _box_overlap_sums,
)


def _coco_accumulate(
    precision: Tensor,
    recall: Tensor,
    scores: Tensor,
    detections: Tensor,
    groundtruths: Tensor,
    labels: Tensor,
    rec_thresholds: Tensor,
) -> None:
    _host_route(precision).coco_accumulate(precision, recall, scores, detections, groundtruths, labels, rec_thresholds)


def _panoptic_update(
    iou_sum: Tensor,
    true_positives: Tensor,
    false_positives: Tensor,
    false_negatives: Tensor,
    preds: Tensor,
    target: Tensor,
    categories: Tensor,
    allow_unknown_preds: bool,
) -> None:
    _host_route(iou_sum).panoptic_update(
        iou_sum, true_positives, false_positives, false_negatives, preds, target, categories, allow_unknown_preds
    )


def _surface_distance(
    out: Tensor, preds: Tensor, target: Tensor, metric: int, row_spacing: float, col_spacing: float, directed: bool
) -> None:
    _host_route(out).surface_distance(out, preds, target, metric, row_spacing, col_spacing, directed)


def _mask_counts(out: Tensor, preds: Tensor, target: Tensor) -> None:
    _host_route(out).mask_counts(out, preds, target)


def _class_argmax(out: Tensor, scores: Tensor) -> None:
    _host_route(out).class_argmax(out, scores)


def _label_counts(out: Tensor, preds: Tensor, target: Tensor, from_scores: int) -> None:
    _host_route(out).label_counts(out, preds, target, from_scores)


coco_accumulate = define_op(
    "coco_accumulate",
    "Tensor(a!) precision, Tensor(b!) recall, Tensor(c!) scores, Tensor detections, Tensor groundtruths, "
    "Tensor labels, Tensor rec_thresholds",
    _coco_accumulate,
)
panoptic_update = define_op(
    "panoptic_update",
    "Tensor(a!) iou_sum, Tensor(b!) true_positives, Tensor(c!) false_positives, Tensor(d!) false_negatives, "
    "Tensor preds, Tensor target, Tensor categories, bool allow_unknown_preds",
    _panoptic_update,
)
surface_distance = define_op(
    "surface_distance",
    "Tensor(a!) out, Tensor preds, Tensor target, int metric, float row_spacing, float col_spacing, bool directed",
    _surface_distance,
)
mask_counts = define_op("mask_counts", "Tensor(a!) out, Tensor preds, Tensor target", _mask_counts)
class_argmax = define_op("class_argmax", "Tensor(a!) out, Tensor scores", _class_argmax)
label_counts = define_op("label_counts", "Tensor(a!) out, Tensor preds, Tensor target, int from_scores", _label_counts)


def _levenshtein(out: Tensor, tokens: Tensor, offsets: Tensor, substitution_cost: int) -> None:
    _host_route(out).levenshtein(out, tokens, offsets, substitution_cost)


levenshtein = define_op(
    "levenshtein", "Tensor(a!) out, Tensor tokens, Tensor offsets, int substitution_cost", _levenshtein
)


def _bleu_update(out: Tensor, tokens: Tensor, bounds: Tensor, groups: Tensor) -> None:
    _host_route(out).bleu_update(out, tokens, bounds, groups)


def _chrf_update(
    out: Tensor,
    sentence: Optional[Tensor],
    tokens: Tensor,
    bounds: Tensor,
    groups: Tensor,
    n_char_order: int,
    beta: float,
) -> None:
    _host_route(out).chrf_update(out, sentence, tokens, bounds, groups, n_char_order, beta)


bleu_update = define_op("bleu_update", "Tensor(a!) out, Tensor tokens, Tensor bounds, Tensor groups", _bleu_update)
chrf_update = define_op(
    "chrf_update",
    "Tensor(a!) out, Tensor(b!)? sentence, Tensor tokens, Tensor bounds, Tensor groups, int n_char_order, float beta",
    _chrf_update,
)


def _lcs(out: Tensor, a: Tensor, a_offsets: Tensor, b: Tensor, b_offsets: Tensor) -> None:
    _host_route(out).lcs(out, a, a_offsets, b, b_offsets)


def _perplexity_update(
    total: Tensor, count: Tensor, preds: Tensor, target: Tensor, ignore_index: Optional[int]
) -> None:
    _host_route(total).perplexity_update(total, count, preds, target, ignore_index)


lcs = define_op("lcs", "Tensor(a!) out, Tensor a, Tensor a_offsets, Tensor b, Tensor b_offsets", _lcs)
perplexity_update = define_op(
    "perplexity_update",
    "Tensor(a!) total, Tensor(b!) count, Tensor preds, Tensor target, int? ignore_index",
    _perplexity_update,
)


def _ssim_moments(out: Tensor, x: Tensor, y: Tensor, wh: Tensor, ww: Tensor, pad_h: int, pad_w: int) -> None:
    _host_route(out).ssim_moments(out, x, y, wh, ww, pad_h, pad_w)


ssim_moments = define_op(
    "ssim_moments", "Tensor(a!) out, Tensor x, Tensor y, Tensor wh, Tensor ww, int pad_h, int pad_w", _ssim_moments
)


def _squared_error(out: Tensor, x: Tensor, y: Tensor, bounds: Optional[Tensor]) -> None:
    _host_route(out).squared_error(out, x, y, bounds)


squared_error = define_op("squared_error", "Tensor(a!) out, Tensor x, Tensor y, Tensor? bounds", _squared_error)


def _spectral_angles(out: Tensor, x: Tensor, y: Tensor) -> None:
    _host_route(out).spectral_angles(out, x, y)


spectral_angles = define_op("spectral_angles", "Tensor(a!) out, Tensor x, Tensor y", _spectral_angles)


def _total_variation(out: Tensor, img: Tensor) -> None:
    _host_route(out).total_variation(out, img)


total_variation = define_op("total_variation", "Tensor(a!) out, Tensor img", _total_variation)


def _toeplitz_solve(out: Tensor, r: Tensor, b: Tensor) -> None:
    _host_route(out).toeplitz_solve(out, r, b)


toeplitz_solve = define_op("toeplitz_solve", "Tensor(a!) out, Tensor r, Tensor b", _toeplitz_solve)


def _signal_sums(out: Tensor, preds: Tensor, target: Tensor, zero_mean: bool, group: int, eps: float) -> None:
    _host_route(out).signal_sums(out, preds, target, zero_mean, group, eps)


signal_sums = define_op(
    "signal_sums", "Tensor(a!) out, Tensor preds, Tensor target, bool zero_mean, int group, float eps", _signal_sums
)


def _contingency_rows(out: Tensor, size: Tensor, table: Optional[Tensor], preds: Tensor, target: Tensor) -> None:
    _host_route(out).contingency_rows(out, size, table, preds, target)


contingency_rows = define_op(
    "contingency_rows", "Tensor(a!) out, Tensor(b!) size, Tensor? table, Tensor preds, Tensor target", _contingency_rows
)


def _cluster_moments(out: Tensor, size: Tensor, block: Tensor, data: Tensor, labels: Tensor) -> None:
    _host_route(out).cluster_moments(out, size, block, data, labels)


cluster_moments = define_op(
    "cluster_moments", "Tensor(a!) out, Tensor(b!) size, Tensor block, Tensor data, Tensor labels", _cluster_moments
)


def _cluster_distances(out: Tensor, data: Tensor, labels: Tensor, keys: Tensor, centroids: Tensor, p: float) -> None:
    _host_route(out).cluster_distances(out, data, labels, keys, centroids, p)


cluster_distances = define_op(
    "cluster_distances",
    "Tensor(a!) out, Tensor data, Tensor labels, Tensor keys, Tensor centroids, float p",
    _cluster_distances,
)


def _host_op(name: str, schema: str, routed_by: int = 0) -> Any:
    """An op of a kernel with no CUDA build, run by the module ``_host_route`` gives for its
    argument at position ``routed_by`` (the C core for a CPU tensor, else the reference)."""
    return define_op(name, schema, lambda *args: getattr(_host_route(args[routed_by]), name)(*args))


error_sums = _host_op(
    "error_sums",
    "Tensor(a!)? sums, Tensor(b!)? count, Tensor(c!)? rows, Tensor x, Tensor y, int kind, float param",
    routed_by=3,
)
residual_moments = _host_op("residual_moments", "Tensor(a!) state, Tensor x, Tensor y", routed_by=1)
threshold_counts = _host_op("threshold_counts", "Tensor(a!) counts, Tensor x, Tensor y, float threshold", routed_by=1)
rating_sums = _host_op("rating_sums", "Tensor(a!) out, Tensor ratings")
rating_update = _host_op("rating_update", "Tensor(a!) totals, Tensor(b!) sums, Tensor(c!) bounds, Tensor ratings")
average_ranks = _host_op("average_ranks", "Tensor(a!) out, Tensor x")
feature_rows = _host_op("feature_rows", "Tensor(a!) out, Tensor x")
kendall_counts = _host_op("kendall_counts", "Tensor(a!) out, Tensor pairs")
rank_pairs = _host_op("rank_pairs", "Tensor(a!) out, Tensor preds, Tensor target")
crps_scores = _host_op("crps_scores", "Tensor(a!) out, Tensor preds, Tensor target")
retrieval_rows = _host_op(
    "retrieval_rows",
    "Tensor(a!) query_out, Tensor(b!) score_out, Tensor(c!) relevance_out, Tensor indexes, Tensor preds, Tensor target",
)


def _lip_errors(out: Tensor, vertices_pred: Tensor, vertices_gt: Tensor, lips: Tensor) -> None:
    _host_route(out).lip_errors(out, vertices_pred, vertices_gt, lips)


lip_errors = define_op(
    "lip_errors", "Tensor(a!) out, Tensor vertices_pred, Tensor vertices_gt, Tensor lips", _lip_errors
)


def _ter_sentences(
    out: Tensor, hyp: Tensor, hyp_offsets: Tensor, refs: Tensor, ref_offsets: Tensor, groups: Tensor
) -> None:
    _host_route(out).ter_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups)


def _eed_sentences(
    out: Tensor, hyp: Tensor, hyp_offsets: Tensor, refs: Tensor, ref_offsets: Tensor, groups: Tensor, costs: Tensor
) -> None:
    _host_route(out).eed_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups, costs)


_PACKED = "Tensor hyp, Tensor hyp_offsets, Tensor refs, Tensor ref_offsets, Tensor groups"
ter_sentences = define_op("ter_sentences", f"Tensor(a!) out, {_PACKED}", _ter_sentences)
eed_sentences = define_op("eed_sentences", f"Tensor(a!) out, {_PACKED}, Tensor costs", _eed_sentences)


def _retrieval_scores(
    out: Tensor, query: Tensor, preds: Tensor, target: Tensor, metric: int, top_k: int, adaptive_k: bool
) -> None:
    _host_route(out).retrieval_scores(out, query, preds, target, metric, top_k, adaptive_k)


retrieval_scores = define_op(
    "retrieval_scores",
    "Tensor(a!) out, Tensor query, Tensor preds, Tensor target, int metric, int top_k, bool adaptive_k",
    _retrieval_scores,
)


def _retrieval_order(
    query_out: Tensor, score_out: Tensor, relevance_out: Tensor, query: Tensor, preds: Tensor, target: Tensor
) -> None:
    _host_route(query_out).retrieval_order(query_out, score_out, relevance_out, query, preds, target)


retrieval_order = define_op(
    "retrieval_order",
    "Tensor(a!) query_out, Tensor(b!) score_out, Tensor(c!) relevance_out, Tensor query, Tensor preds, Tensor target",
    _retrieval_order,
)


def _exact_curve_points(points: Tensor, size: Tensor, scores: Tensor, labels: Tensor, task: int, column: int) -> None:
    _host_route(points).exact_curve_points(points, size, scores, labels, task, column)


exact_curve_points = define_op(
    "exact_curve_points",
    "Tensor(a!) points, Tensor(b!) size, Tensor scores, Tensor labels, int task, int column",
    _exact_curve_points,
)


def _exact_curve_rates(curves: Tensor, sizes: Tensor, scores: Tensor, labels: Tensor, task: int, kind: int) -> None:
    _host_route(curves).exact_curve_rates(curves, sizes, scores, labels, task, kind)


exact_curve_rates = define_op(
    "exact_curve_rates",
    "Tensor(a!) curves, Tensor(b!) sizes, Tensor scores, Tensor labels, int task, int kind",
    _exact_curve_rates,
)


def _exact_curve_finish(out: Tensor, scores: Tensor, labels: Tensor, task: int, metric: int, level: float) -> None:
    _host_route(out).exact_curve_finish(out, scores, labels, task, metric, level)


exact_curve_finish = define_op(
    "exact_curve_finish",
    "Tensor(a!) out, Tensor scores, Tensor labels, int task, int metric, float level",
    _exact_curve_finish,
)


def _curve_rows(
    scores: Tensor,
    labels: Tensor,
    size: Tensor,
    preds: Tensor,
    target: Tensor,
    task: int,
    ignore_index: Optional[int],
    convert: bool,
) -> None:
    _host_route(scores).curve_rows(scores, labels, size, preds, target, task, ignore_index, convert)


curve_rows = define_op(
    "curve_rows",
    "Tensor(a!) scores, Tensor(b!) labels, Tensor(c!) size, Tensor preds, Tensor target, int task, "
    "int? ignore_index, bool convert",
    _curve_rows,
)
