"""The one routing point for the metric-state kernels (contract: csrc/API.md).

Each function has the kernel's positional arguments, with `mask` and `ignore_index` optional.
It detaches float inputs that may require grad (torch's `__dlpack__` refuses those) and calls
the C core `torchtally._C` when `out` / `state` is a CPU tensor and the extension is built, the
torch reference (`kernels.reference`) otherwise. This is the hot path of every `update`: no extra
allocation, copy or device sync on the way to the C core.

CUDA tensors go to `torchtally._C_cuda` (the CUDA kernels) on every device the kernels serve,
else to the reference: at a device's first use, `kernels.cuda.loader` compiles the kernels for
it with NVRTC (or takes them from its disk cache), loads them and runs the known-answer check;
a device they cannot serve warns once, saying why (TORCHTALLY_CUDA=0|1|auto chooses: never,
always or raise, where possible). `cuda_status()` says which path each device takes;
`cuda_backend()` / `set_cuda_backend()` say and choose for every device. The CPU test comes
first, so CPU calls pay nothing for the CUDA route.

CUDA value checks (out-of-range labels, NaN, bad weights) run on the device and never make an
update wait: a rejected batch is undone on the GPU and its ValueError raised at the next update
into the same state or by `raise_rejected_cuda_updates` (Metric.compute calls it, waiting). The
metrics made of torch ops (regression, aggregation) do the same in Python (kernels.deferred_checks).
`set_cuda_checks("immediate")` (or TORCHTALLY_CUDA_CHECKS=immediate) raises at the call itself,
at one host synchronisation per update. Shape, dtype and device errors always raise at the call.
The segmentation counts differ: label_counts_status / mask_counts_status hand a CUDA caller the
device status of its batch to gate on (kernels.segmentation_status).

`backend()` says which path CPU tensors take; `set_backend("reference")` forces the reference
(tests), `set_backend("c")` restores the C core. `thresholds` of binned_update has a None
default only because it follows optional arguments; None is rejected like any non-tensor.
"""

import os
from types import ModuleType
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import torch
from torch import Tensor

from . import reference as _reference

_C_MODULE: Optional[ModuleType]
_CUDA_MODULE: Optional[ModuleType]
try:
    from .. import _C as _C_MODULE
except ImportError:  # not built (or a platform without a compiler): the reference serves all devices
    _C_MODULE = None

try:
    from .. import _C_cuda as _CUDA_MODULE
except ImportError:  # a build without it (or a platform without a compiler): CUDA takes the reference
    _CUDA_MODULE = None

from . import deferred_checks  # noqa: E402
from . import ops as _ops  # noqa: E402
from .cuda.loader import DeviceStatus, Loader  # noqa: E402

_c = _C_MODULE  # the module CPU calls go to; None routes everything to the reference
_cuda = _CUDA_MODULE  # the module CUDA calls go to; None routes them to the reference
_loader = Loader(_CUDA_MODULE, _reference)
_served: Dict[int, Any] = {}  # device index -> the module its CUDA calls go to, decided at its first use


def has_c() -> bool:
    """True when the C extension torchtally._C is importable."""
    return _C_MODULE is not None


def backend() -> str:
    """`"c"` when CPU tensors go to torchtally._C, `"reference"` when they go to the torch reference."""
    return "c" if _c is not None else "reference"


def set_backend(name: str) -> str:
    """Route CPU tensors to `"c"` or `"reference"`; returns the previous backend's name."""
    global _c
    if name not in ("c", "reference"):
        raise ValueError(f"name: expected 'c' or 'reference', got {name!r}")
    if name == "c" and _C_MODULE is None:
        raise ImportError("torchtally._C is not built (run `make build`)")
    previous = backend()
    _c = _C_MODULE if name == "c" else None
    return previous


def has_cuda() -> bool:
    """True when torchtally._C_cuda is importable (whether its kernels serve a device: cuda_status())."""
    return _CUDA_MODULE is not None


def cuda_module() -> Optional[ModuleType]:
    """torchtally._C_cuda (the driver, the kernels' source and names), or None where it does not import."""
    return _CUDA_MODULE


def cuda_backend() -> str:
    """`"cuda"` when CUDA tensors go to torchtally._C_cuda, `"reference"` when they go to the torch reference."""
    return "cuda" if _cuda is not None else "reference"


def set_cuda_backend(name: str) -> str:
    """Route CUDA tensors to `"cuda"` (on the devices the kernels serve) or `"reference"`; returns the
    previous backend's name."""
    global _cuda
    if name not in ("cuda", "reference"):
        raise ValueError(f"name: expected 'cuda' or 'reference', got {name!r}")
    if name == "cuda" and _CUDA_MODULE is None:
        raise ImportError("torchtally._C_cuda is not importable (reinstall torchtally)")
    previous = cuda_backend()
    _cuda = _CUDA_MODULE if name == "cuda" else None
    return previous


CUDA_CHECK_MODES = ("deferred", "immediate")
_cuda_checks = "deferred"


def cuda_checks() -> str:
    """`"deferred"` (a bad CUDA batch raises later, no host sync) or `"immediate"` (at its call)."""
    return _cuda_checks


def set_cuda_checks(mode: str) -> str:
    """Choose when a CUDA batch rejected on the device raises; returns the previous mode.

    "deferred" (default): the update returns without waiting for the GPU; the rejected batch is
    undone on the device and its ValueError raised by the next update into the same state (which
    then does not run) or by compute(). "immediate": every CUDA update waits for its own check
    and raises at the call (one host synchronisation per update). Either way the state is left
    exactly as it was before the bad batch.
    """
    global _cuda_checks
    if mode not in CUDA_CHECK_MODES:
        raise ValueError(f"mode: expected one of {CUDA_CHECK_MODES}, got {mode!r}")
    previous, _cuda_checks = _cuda_checks, mode
    deferred_checks.set_deferred_mode(mode == "deferred")
    if _CUDA_MODULE is not None:
        _CUDA_MODULE.set_immediate_checks(mode == "immediate")
    return previous


def raise_rejected_cuda_updates(states: Iterable[Any]) -> None:
    """Wait for the CUDA updates into `states` and raise the ValueError of the first rejected one.

    A no-op for CPU tensors and where torchtally._C_cuda does not import (the torch reference raises
    at the call). It asks the CUDA module even while CUDA tensors are routed to the reference:
    updates made before the switch may still hold a rejection (the module answers without a CUDA
    call when no update ever ran on that device)."""
    states = list(states)
    deferred_checks.raise_all(states)  # the checks of the torch-op metrics (regression, aggregation)
    for device, begin, nbytes in _cuda_spans(states):
        _CUDA_MODULE.check(device, begin, nbytes, True)  # type: ignore[union-attr]  # spans only when built


def settled(state: Tensor) -> Tensor:
    """`state`, filled from scratch by one functional call, once its CUDA checks are done: a
    function that returns a result has no later update or compute to raise a rejection in."""
    raise_rejected_cuda_updates((state,))
    return state


def forget_rejected_cuda_updates(states: Iterable[Any]) -> None:
    """Drop the not yet raised rejections of CUDA updates into `states` (they are being reset)."""
    states = list(states)
    deferred_checks.forget(states)
    for device, begin, nbytes in _cuda_spans(states):
        _CUDA_MODULE.discard(device, begin, nbytes)  # type: ignore[union-attr]  # spans only when built


def _cuda_spans(states: Iterable[Any]) -> Iterator[Tuple[int, int, int]]:
    """(device index, first byte, bytes) of each non-empty CUDA tensor in `states`; nothing where
    torchtally._C_cuda does not import. States are contiguous: views of a part of one are updated by
    kernels too, and a span covering the whole state covers them."""
    if _CUDA_MODULE is None:
        return
    for t in states:
        if getattr(t, "is_cuda", False) and t.numel():
            yield t.device.index, t.data_ptr(), t.numel() * t.element_size()


_mode_from_env = os.environ.get("TORCHTALLY_CUDA_CHECKS", "").strip().lower()
if _mode_from_env:
    try:
        set_cuda_checks(_mode_from_env)
    except ValueError as exc:
        raise ValueError(f"TORCHTALLY_CUDA_CHECKS: {exc}") from None


def cuda_device_status(device: int) -> DeviceStatus:
    """How the CUDA kernels stand on cuda:`device` (prepared now if it was never used)."""
    return _loader.status(device)


# torch >= 2.10 hands tensors to C through its DLPack exchange table, which reads a tensor on any
# device; older torch's __dlpack__ refuses a CUDA tensor that is not on the current device, so
# there the calls into the CUDA module run with their tensors' device made current.
_EXCHANGE_API = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
_device_context = torch.cuda.device  # replaceable by the tests, which have no GPU


class _OnDevice:
    """`module`'s kernels, each called with cuda:`index` as the current device."""

    def __init__(self, module: ModuleType, index: int) -> None:
        self.module, self.index = module, index

    def __getattr__(self, name: str) -> Any:
        kernel = getattr(self.module, name)

        def on_device(*args: Any) -> Any:
            if torch.cuda.current_device() == self.index:
                return kernel(*args)
            with _device_context(self.index):
                return kernel(*args)

        return on_device


def cuda_devices_decided() -> List[int]:
    """The CUDA devices whose kernels were prepared (served or not)."""
    return _loader.decided()


def _cuda_route(device: int) -> Any:
    """The module CUDA calls on `device` go to, decided once (kernels.cuda.loader)."""
    route = _served.get(device)
    if route is None:
        if _capturing():
            # Deciding runs the known-answer check: copies and waits that would break the capture
            # (and the reference path synchronises the host, which a capture refuses too).
            raise ValueError(
                f"out: torchtally's first update on cuda:{device} cannot run inside CUDA graph capture: "
                "update the metric once outside the captured region first (or on the graph's outputs "
                "after replay())"
            )
        route = _cuda if _loader.serves(device) else _reference
        if route is _cuda and not _EXCHANGE_API:
            route = _OnDevice(_cuda, device)  # type: ignore[arg-type]  # route is _cuda: not None
        _served[device] = route
    return route


def _capturing() -> bool:
    """Whether torch's current CUDA stream is capturing a graph (False without CUDA)."""
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def forget_cuda_decisions() -> None:
    """Decide each device afresh at its next use (after a change of TORCHTALLY_CUDA; tests)."""
    _served.clear()
    _loader.forget()


def _impl(out: Any) -> Any:
    """torchtally._C for CPU tensors when it is active, torchtally._C_cuda for CUDA tensors on a
    device its kernels serve, else the reference (also for non-tensors)."""
    if _c is not None and getattr(out, "is_cpu", True):
        return _c
    if _cuda is not None and getattr(out, "is_cuda", False):
        return _served.get(out.get_device()) or _cuda_route(out.get_device())
    return _reference


def reads_cost_a_sync(t: Tensor) -> bool:
    """True when reading `t`'s values on the host (`.item()`, `bool(...)`) makes the host wait
    for the device: a CUDA tensor. The update paths that can decide on the device instead (the
    binned curves' probabilities-or-logits rule) ask this one predicate, which the tests replace
    to run the device-side decision on CPU tensors."""
    return t.is_cuda


def detached(t: Any) -> Any:
    """`t` without its autograd history (torch's `__dlpack__` refuses a tensor that requires grad)."""
    return t.detach() if getattr(t, "requires_grad", False) else t


def confmat_labels(
    out: Tensor, preds: Tensor, target: Tensor, mask: Optional[Tensor] = None, ignore_index: Optional[int] = None
) -> None:
    if _ops.compiling():
        return _ops.confmat_labels(out, preds, target, mask, ignore_index)
    _impl(out).confmat_labels(out, preds, target, mask, ignore_index)


def confmat_scores(
    out: Tensor, scores: Tensor, target: Tensor, mask: Optional[Tensor] = None, ignore_index: Optional[int] = None
) -> None:
    if _ops.compiling():
        return _ops.confmat_scores(out, detached(scores), target, mask, ignore_index)
    _impl(out).confmat_scores(out, detached(scores), target, mask, ignore_index)


def confmat_threshold(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor] = None,
    ignore_index: Optional[int] = None,
    threshold: float = 0.5,
    logit_threshold: Optional[float] = None,
) -> None:
    if _ops.compiling():
        return _ops.confmat_threshold(out, detached(preds), target, mask, ignore_index, threshold, logit_threshold)
    _impl(out).confmat_threshold(out, detached(preds), target, mask, ignore_index, threshold, logit_threshold)


def binned_update(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor] = None,
    ignore_index: Optional[int] = None,
    thresholds: Optional[Tensor] = None,
    uniform: bool = False,
) -> None:
    if _ops.compiling():
        return _ops.binned_update(out, detached(preds), target, mask, ignore_index, detached(thresholds), uniform)
    _impl(out).binned_update(out, detached(preds), target, mask, ignore_index, detached(thresholds), uniform)


def moments_update(state: Tensor, x: Tensor, weights: Optional[Tensor] = None) -> None:
    if _ops.compiling():
        return _ops.moments_update(state, detached(x), detached(weights))
    _impl(state).moments_update(state, detached(x), detached(weights))


def moments_merge(state: Tensor, other: Tensor) -> None:
    if _ops.compiling():
        return _ops.moments_merge(state, other)
    _impl(state).moments_merge(state, other)


def comoments_update(state: Tensor, x: Tensor, y: Tensor) -> None:
    if _ops.compiling():
        return _ops.comoments_update(state, detached(x), detached(y))
    _impl(state).comoments_update(state, detached(x), detached(y))


def comoments_merge(state: Tensor, other: Tensor) -> None:
    if _ops.compiling():
        return _ops.comoments_merge(state, other)
    _impl(state).comoments_merge(state, other)


def topk_update(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor] = None,
    ignore_index: Optional[int] = None,
    k: int = 1,
) -> None:
    if _ops.compiling():
        return _ops.topk_update(out, detached(preds), target, mask, ignore_index, k)
    _impl(out).topk_update(out, detached(preds), target, mask, ignore_index, k)


def finishes(state: Any) -> bool:
    """Whether `stat_finish` serves `state`: a CPU tensor while the C core is active (a CUDA
    state's values are formed by torch on its device, without a copy to the host)."""
    return _c is not None and getattr(state, "is_cpu", False)


def stat_finish(out: Tensor, state: Tensor, requests: Tensor, layout: int) -> bool:
    """The confusion-matrix family's values from a count state into `out` (csrc/API.md): True,
    or False, with nothing written, where the C core does not serve `state` (see `finishes`):
    the caller then forms them with torch."""
    if _c is None or not state.is_cpu:
        return False
    _c.stat_finish(out, state, requests, layout)
    return True


def binned_finish(out: Tensor, hist: Tensor, metric: int) -> bool:
    """AUROC (metric 0) or average precision (1) of every column of a binned histogram into `out`
    [R, 3] = (value, positives, negatives) (csrc/API.md): True, or False, with nothing written,
    where the C core does not serve `hist` (not a CPU tensor, or the reference backend)."""
    if _c is None or not hist.is_cpu:
        return False
    _c.binned_finish(out, hist, metric)
    return True


# -- host kernels: the C core serves CPU tensors; every other device takes the torch reference ----


def host_module(out: Any) -> Any:
    """torchtally._C for CPU tensors when it is active, else the reference (CUDA included: these
    kernels have no CUDA build). The route of every host-only kernel, here and in the family
    modules beside this one (kernels.retrieval, kernels.text)."""
    return _c if _c is not None and getattr(out, "is_cpu", True) else _reference


_ops.use_route(_impl, host_module)  # what the custom ops call


def calibration_update(counts: Tensor, sums: Tensor, conf: Tensor, hit: Tensor, boundaries: Tensor) -> None:
    """Calibration bins (csrc/API.md): counts int64 [B] and sums float64 [B, 2] (confidence, hit)
    of the bin each confidence falls in, bins bounded by the float64 `boundaries` [B]."""
    if _ops.compiling():
        return _ops.calibration_update(counts, sums, detached(conf), hit, boundaries)
    host_module(counts).calibration_update(counts, sums, detached(conf), hit, boundaries)


def ranking_update(out: Tensor, preds: Tensor, target: Tensor) -> None:
    """Ranking sums (csrc/API.md): out float64 [3] += the rows' (coverage, ranking average
    precision, ranking loss); target 0, 1 or 2 (ignored)."""
    if _ops.compiling():
        return _ops.ranking_update(out, detached(preds), target)
    host_module(out).ranking_update(out, detached(preds), target)


def coco_accumulate(
    precision: Tensor,
    recall: Tensor,
    scores: Tensor,
    detections: Tensor,
    groundtruths: Tensor,
    labels: Tensor,
    rec_thresholds: Tensor,
) -> None:
    """COCO accumulate (csrc/API.md): pycocotools' precision / scores [T, R, K, 4*M] and recall
    [T, K, 4*M] from MeanAveragePrecision's rows."""
    if _ops.compiling():
        return _ops.coco_accumulate(precision, recall, scores, detections, groundtruths, labels, rec_thresholds)
    host_module(precision).coco_accumulate(precision, recall, scores, detections, groundtruths, labels, rec_thresholds)


def coco_match(
    rows: Tensor, groups: Tensor, dets: Tensor, gts: Tensor, iou_thresholds: Tensor, ious: Optional[Tensor] = None
) -> None:
    """COCO matching (csrc/API.md): columns 2.. of the detection rows int32 [D, 2 + 2W] get the
    packed outcomes of pycocotools' evaluateImg per (image, label) group of `groups`; the IoUs
    come from the boxes of `dets` / `gts` (pycocotools' bbIou) or, for masks, from `ious`."""
    if _ops.compiling():
        return _ops.coco_match(rows, groups, dets, gts, iou_thresholds, ious)
    host_module(rows).coco_match(rows, groups, dets, gts, iou_thresholds, ious)


def box_overlap_matrix(out: Tensor, preds: Tensor, target: Tensor, kind: int) -> None:
    """Box overlap (csrc/API.md): out [N, M] = IoU (kind 0), GIoU (1), DIoU (2) or CIoU (3) of every
    pair of boxes preds [N, 4] and target [M, 4] (x1, y1, x2, y2); out [K]: of the pairs (i, i)."""
    if _ops.compiling():
        return _ops.box_overlap_matrix(out, detached(preds), detached(target), kind)
    host_module(out).box_overlap_matrix(out, detached(preds), detached(target), kind)


def box_overlap_sums(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    sizes: Tensor,
    pred_labels: Optional[Tensor],
    target_labels: Optional[Tensor],
    kind: int,
    threshold: Optional[float] = None,
) -> None:
    """Box overlap sums (csrc/API.md): out float64 [T, 2] += (sum, count) of the counted values of each
    target box, over the images of a batch (sizes int64 [B, 2]: predictions and targets per image)."""
    if _ops.compiling():
        return _ops.box_overlap_sums(
            out, detached(preds), detached(target), sizes, pred_labels, target_labels, kind, threshold
        )
    host_module(out).box_overlap_sums(
        out, detached(preds), detached(target), sizes, pred_labels, target_labels, kind, threshold
    )


def panoptic_update(
    iou_sum: Tensor,
    true_positives: Tensor,
    false_positives: Tensor,
    false_negatives: Tensor,
    preds: Tensor,
    target: Tensor,
    categories: Tensor,
    allow_unknown_preds: bool,
) -> None:
    """Panoptic segment matching (csrc/API.md): the per-category IoU sum (float64 [C]) and true
    positive, false positive and false negative counts (int64 [C]) of the images of preds and
    target (integer [B, N, 2], (category, instance) per pixel); categories int64 [C, 2] = (id, kind)."""
    args = (iou_sum, true_positives, false_positives, false_negatives, preds, target, categories, allow_unknown_preds)
    if _ops.compiling():
        return _ops.panoptic_update(*args)
    host_module(iou_sum).panoptic_update(*args)


def surface_distance(
    out: Tensor, preds: Tensor, target: Tensor, metric: int, row_spacing: float, col_spacing: float, directed: bool
) -> None:
    """Surface distance (csrc/API.md): out float64 [N, C] = the (directed) Hausdorff distance between
    the edges of the 2-D masks preds[n, c] and target[n, c] ([N, C, H, W]); metric 0 euclidean,
    1 chessboard, 2 taxicab. HausdorffDistance does not trace its update: no custom op."""
    if _ops.compiling():
        return _ops.surface_distance(out, preds, target, metric, row_spacing, col_spacing, directed)
    host_module(out).surface_distance(out, preds, target, metric, row_spacing, col_spacing, directed)


def mask_counts(out: Tensor, preds: Tensor, target: Tensor) -> None:
    """Mask counts (csrc/API.md): out int64 [N, C, 3] = (intersection, prediction, target pixels) of
    the 0/1 masks preds[n, c] and target[n, c] ([N, C, P]); other values are a ValueError. The
    segmentation metrics do not trace their update: no custom op."""
    if _ops.compiling():
        return _ops.mask_counts(out, preds, target)
    host_module(out).mask_counts(out, preds, target)


def class_argmax(out: Tensor, scores: Tensor) -> None:
    """Class argmax (csrc/API.md): out int64 [N, P] = the class of the largest of scores[n, :, p]
    ([N, C, P], the first on ties), -1 where one of them is NaN. CUDA kernel on a served device."""
    if _ops.compiling():
        return _ops.class_argmax(out, detached(scores))
    _impl(out).class_argmax(out, detached(scores))


def _status_call(kernel: str, out: Tensor, *args: Any) -> Optional[Tensor]:
    """``kernel`` of torchtally._C_cuda with a status where it serves out's device (the status
    returned, nothing raised for a bad value), else of the C core / the reference (raising at
    the call; None returned)."""
    impl = _impl(out)
    if impl is _CUDA_MODULE and impl is not None:
        status = torch.empty(1, dtype=torch.int64, device=out.device)
        getattr(impl, kernel)(out, status, *args)
        return status
    getattr(impl, kernel)(out, *args)
    return None


def label_counts_status(out: Tensor, preds: Tensor, target: Tensor, from_scores: int = 0) -> Optional[Tensor]:
    """label_counts whose value checks a CUDA caller gates on: on a device the CUDA kernels serve,
    returns int64 [1] on that device, ``segmentation_status.CLEAR`` when every label passed, else
    the key of the first bad one (``out`` then partial; segmentation_status explains it), with no
    host read; elsewhere raises at the call, as label_counts, and returns None."""
    if _ops.compiling():
        _ops.label_counts(out, preds, target, from_scores)
        return None
    return _status_call("label_counts", out, preds, target, from_scores)


def mask_counts_status(out: Tensor, preds: Tensor, target: Tensor) -> Optional[Tensor]:
    """mask_counts whose 0/1 check a CUDA caller gates on (as label_counts_status)."""
    if _ops.compiling():
        _ops.mask_counts(out, preds, target)
        return None
    return _status_call("mask_counts", out, preds, target)


def label_counts(out: Tensor, preds: Tensor, target: Tensor, from_scores: int = 0) -> None:
    """Label counts (csrc/API.md): out int64 [N, C, 3] = (intersection, prediction, target pixels)
    per sample and class of the index maps preds and target ([N, P]); a label outside [0, C) is a
    ValueError. ``from_scores`` bit 0 / bit 1: preds / target is the argmax of scores with -1 where
    a pixel's scores held a NaN (raised as "NaN in the scores")."""
    if _ops.compiling():
        return _ops.label_counts(out, preds, target, from_scores)
    host_module(out).label_counts(out, preds, target, from_scores)
