"""MeanAveragePrecision's update: COCO's per-image matching, reduced to one compact row per
detection and per ground truth (the package's own interface, not a public function).

``match_images`` checks the whole batch first (every error names the argument, as
``preds[3]['boxes']``, and says what was expected), then prepares the inputs on the host as
torchmetrics 1.9 prepares pycocotools': boxes converted to (x, y, w, h) in their own dtype with
torchvision's arithmetic, then widened to float64; areas are the box's w * h (float64), or the
mask's pixel count for ``iou_type="segm"``, or the target's "area" where it is above 0; a crowd
ground truth ("iscrowd" 1) is ignored and its IoU is taken over the detection's area. Detections
are ranked per (image, label) by score, descending, ties in input order (pycocotools' mergesort
order), and cut at the largest of ``max_detection_thresholds``; the matching itself is the C
kernel's (``kernels.coco_match``, the torch reference off the CPU).

Mask IoUs are computed here from the dense masks: the intersections are one matrix product of
the flattened masks per image (float32 where an image has at most 2**24 pixels, so every count
is exact; float64 beyond), taken in chunks of detections on the masks' device; the masks are
never kept. As torchmetrics builds its datasets, with ``iou_type="segm"`` an image without any
ground-truth mask is left out of the evaluation, so its detections get no row.

Detection rows: int32 [N, 2 + 2W], W = ceil(T / 10): the score's float32 bits; ``label | level
<< 24`` (level: the index of the smallest max-detection threshold above the detection's rank);
then W base-3 words of outcomes (0 false positive, 1 true positive, 2 ignored), digit
(t % 10) * 4 + a of word t // 10 for IoU threshold t and area range a (all, small, medium,
large). Ground-truth rows: int32 [G, 2]: label, and bit a set where the ground truth counts in
area range a. Both on the CPU; rows of one image together, in input order of the images.
"""

import math
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels
from .boxes import BOX_FORMATS, IOU_TYPES, to_xywh

LABEL_LIMIT = 1 << 24
_FLOAT32_EXACT_COUNT = 1 << 24  # float32 counts pixels exactly up to 2**24: the masks' matmul
AREA_RANGES = ((0.0, 1e10), (0.0, 1024.0), (1024.0, 9216.0), (9216.0, 1e10))
_MASK_CHUNK = 32  # detections per matrix product of the mask intersections


def _name(side: str, i: int, key: str) -> str:
    return f"{side}[{i}][{key!r}]"


def _describe(t: Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')} [{', '.join(str(s) for s in t.shape)}]"


def _check_options(
    iou_type: str, box_format: str, iou_thresholds: Tensor, max_detection_thresholds: Sequence[int]
) -> List[int]:
    if iou_type not in IOU_TYPES:
        raise ValueError(f"iou_type: expected one of {IOU_TYPES}, got {iou_type!r}")
    if box_format not in BOX_FORMATS:
        raise ValueError(f"box_format: expected one of {BOX_FORMATS}, got {box_format!r}")
    if not isinstance(iou_thresholds, Tensor) or iou_thresholds.dtype != torch.float64 or iou_thresholds.ndim != 1:
        raise TypeError(f"iou_thresholds: expected a float64 tensor [T], got {iou_thresholds!r}")
    if iou_thresholds.numel() < 1 or not bool(torch.isfinite(iou_thresholds).all()):
        raise ValueError("iou_thresholds: expected at least one threshold, all finite")
    mdt = list(max_detection_thresholds)
    if not mdt or len(mdt) > 128 or any(isinstance(m, bool) or not isinstance(m, int) or m < 1 for m in mdt):
        raise ValueError(f"max_detection_thresholds: expected 1 to 128 positive ints, got {max_detection_thresholds}")
    if mdt != sorted(mdt):
        raise ValueError(f"max_detection_thresholds: expected ascending values, got {mdt}")
    return mdt


def _tensor(item: Mapping[str, Any], side: str, i: int, key: str) -> Tensor:
    if key not in item:
        raise ValueError(f"{side}[{i}]: expected the key {key!r}, got keys {sorted(item)}")
    t = item[key]
    if not isinstance(t, Tensor):
        raise TypeError(f"{_name(side, i, key)}: expected a tensor, got {type(t).__name__}")
    return t


def _vector(item: Mapping[str, Any], side: str, i: int, key: str, n: int, kind: str) -> Tensor:
    """A 1-D tensor of n values: kind "label" (integer or bool), "float" (floating) or "number"."""
    t = _tensor(item, side, i, key)
    ok = {
        "label": not t.is_floating_point() and not t.is_complex(),
        "float": t.is_floating_point(),
        "number": not t.is_complex(),
    }[kind]
    what = {"label": "an integer tensor", "float": "a floating tensor", "number": "a real tensor"}[kind]
    if not ok:
        raise TypeError(f"{_name(side, i, key)}: expected {what} [{n}], got {_describe(t)}")
    if t.ndim != 1 or t.shape[0] != n:
        raise ValueError(f"{_name(side, i, key)}: expected {what} [{n}] (one per box), got {_describe(t)}")
    return t


def _check_item(item: Any, side: str, i: int, iou_type: str) -> Dict[str, Tensor]:
    """The tensors of one dict, shapes and dtypes checked (values are checked batch-wide)."""
    if not isinstance(item, Mapping):
        raise TypeError(f"{side}[{i}]: expected a dict of tensors, got {type(item).__name__}")
    out: Dict[str, Tensor] = {}
    if iou_type == "bbox":
        boxes = _tensor(item, side, i, "boxes")
        if boxes.numel() == 0 and boxes.ndim == 1:
            boxes = boxes.reshape(0, 4)  # torchmetrics accepts an empty 1-D tensor
        if boxes.dtype == torch.bool or boxes.is_complex():
            raise TypeError(f"{_name(side, i, 'boxes')}: expected a real tensor [N, 4], got {_describe(boxes)}")
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(f"{_name(side, i, 'boxes')}: expected a tensor [N, 4], got {_describe(boxes)}")
        out["boxes"], n = boxes, boxes.shape[0]
    else:
        masks = _tensor(item, side, i, "masks")
        if masks.dtype not in (torch.bool, torch.uint8):
            raise TypeError(
                f"{_name(side, i, 'masks')}: expected a bool or uint8 tensor [N, H, W], got {_describe(masks)}"
            )
        if masks.ndim != 3:
            raise ValueError(f"{_name(side, i, 'masks')}: expected a tensor [N, H, W], got {_describe(masks)}")
        out["masks"], n = masks, masks.shape[0]
    out["labels"] = _vector(item, side, i, "labels", n, "label")
    if side == "preds":
        out["scores"] = _vector(item, side, i, "scores", n, "float")
    else:
        for key in ("iscrowd", "area"):
            if key in item:
                out[key] = _vector(item, side, i, key, n, "number")
    return out


def _first_bad(bad: Tensor, counts: List[int]) -> Optional[Tuple[int, int]]:
    """(image, index in the image) of the first True of a batch-wide flag vector, or None."""
    where = torch.nonzero(bad)
    if where.numel() == 0:
        return None
    flat = int(where[0, 0])
    for img, c in enumerate(counts):
        if flat < c:
            return img, flat
        flat -= c
    raise AssertionError("index outside the batch")


def _cat(parts: List[Tensor], shape: Tuple[int, ...], dtype: torch.dtype) -> Tensor:
    parts = [p.detach().to("cpu") for p in parts]
    return torch.cat(parts) if parts else torch.zeros(shape, dtype=dtype)


def _check_values(side: str, key: str, values: Tensor, counts: List[int], bad: Tensor, expected: str) -> None:
    at = _first_bad(bad if bad.ndim == 1 else bad.flatten(1).any(dim=1), counts)
    if at is not None:
        img, k = at
        raise ValueError(
            f"{_name(side, img, key)}: expected {expected}, got {values[sum(counts[:img]) + k].tolist()} at {k}"
        )


def _boxes(items: List[Dict[str, Tensor]], side: str, box_format: str, counts: List[int]) -> Tensor:
    """float64 [N, 4] (x, y, w, h) of a side, every box checked: finite, w and h >= 0."""
    boxes = [it["boxes"].detach().to("cpu") for it in items]
    if len({b.dtype for b in boxes}) <= 1:
        xywh = to_xywh(_cat(boxes, (0, 4), torch.float32), box_format).double()
    else:
        xywh = torch.cat([to_xywh(b, box_format).double() for b in boxes])
    raw = _cat(boxes, (0, 4), torch.float64).double()
    _check_values(side, "boxes", raw, counts, ~torch.isfinite(raw), "finite coordinates")
    corners = {"xyxy": "x2 >= x1 and y2 >= y1", "xywh": "w >= 0 and h >= 0", "cxcywh": "w >= 0 and h >= 0"}
    _check_values(side, "boxes", raw, counts, xywh[:, 2:] < 0, f"boxes with {corners[box_format]}")
    # finite coordinates whose conversion overflows the boxes' dtype (a width of 6e38 in float32)
    _check_values(side, "boxes", raw, counts, ~torch.isfinite(xywh), "a width and height that fit the boxes' dtype")
    return xywh


def _mask_ious(det_masks: Tensor, gt_masks: Tensor, det_area: Tensor, gt_area: Tensor, crowd: Tensor) -> Tensor:
    """float64 [D, G]: one image's mask IoUs as pycocotools' rleIou gives them: the intersection
    over the union (over the detection's area for a crowd), 0 without overlap. Areas are pixel
    counts (float64, on the CPU)."""
    d_flat, g_flat = det_masks.flatten(1), gt_masks.flatten(1)
    dtype = torch.float32 if d_flat.shape[1] <= _FLOAT32_EXACT_COUNT else torch.float64
    g = g_flat.to(dtype).T
    parts = [d_flat[s : s + _MASK_CHUNK].to(dtype) @ g for s in range(0, d_flat.shape[0], _MASK_CHUNK)]
    inter = torch.cat(parts).to("cpu", torch.float64)
    union = torch.where(crowd[None, :], det_area[:, None], det_area[:, None] + gt_area[None, :] - inter)
    return torch.where(inter > 0, inter / union.clamp_min(1), torch.zeros_like(inter))


def _check_masks(p_items: List[Dict[str, Tensor]], t_items: List[Dict[str, Tensor]]) -> None:
    """Masks of one image share their size (pycocotools compares no masks of two sizes), and a
    uint8 mask holds 0 and 1 only."""
    for i, (p, t) in enumerate(zip(p_items, t_items)):
        pm, tm = p["masks"], t["masks"]
        if pm.shape[0] and tm.shape[0] and pm.shape[1:] != tm.shape[1:]:
            raise ValueError(
                f"{_name('preds', i, 'masks')}: expected masks of the size of target[{i}]['masks'] "
                f"({tm.shape[1]} x {tm.shape[2]}), got {_describe(pm)}"
            )
        for side, m in (("preds", pm), ("target", tm)):
            if m.dtype == torch.uint8 and m.numel() and bool((m > 1).any()):
                raise ValueError(f"{_name(side, i, 'masks')}: expected values 0 and 1, got {int(m.max())}")


def _labels(items: List[Dict[str, Tensor]], side: str, counts: List[int]) -> Tensor:
    labels = _cat([it["labels"].long() for it in items], (0,), torch.int64)
    _check_values(
        side, "labels", labels, counts, (labels < 0) | (labels >= LABEL_LIMIT), f"labels in [0, {LABEL_LIMIT})"
    )
    return labels


def _optional(items: List[Dict[str, Tensor]], key: str, counts: List[int]) -> Tensor:
    return _cat(
        [it[key].double() if key in it else torch.zeros(c, dtype=torch.float64) for it, c in zip(items, counts)],
        (0,),
        torch.float64,
    )


def _owner(counts: List[int]) -> Tensor:
    """int64 [sum(counts)]: the index of the part each element belongs to (a repeat_interleave of
    arange by counts, written as a search: repeat_interleave was measured at milliseconds here)."""
    ends = torch.cumsum(torch.tensor(counts, dtype=torch.int64), 0)
    total = int(ends[-1]) if len(counts) else 0
    return torch.searchsorted(ends, torch.arange(total), right=True)


def match_images(
    preds: Sequence[Mapping[str, Tensor]],
    target: Sequence[Mapping[str, Tensor]],
    *,
    iou_type: str,
    box_format: str,
    iou_thresholds: Tensor,
    max_detection_thresholds: Sequence[int],
    class_agnostic: bool,
) -> Tuple[Tensor, Tensor]:
    """(detection rows int32 [N, 2 + 2W], ground-truth rows int32 [G, 2]) of one batch (see the
    module's docstring); nothing is changed, and a bad batch raises before any work."""
    found = match_details(
        preds,
        target,
        iou_type=iou_type,
        box_format=box_format,
        iou_thresholds=iou_thresholds,
        max_detection_thresholds=max_detection_thresholds,
        class_agnostic=class_agnostic,
    )
    return found.detections, found.groundtruths


class Matched(NamedTuple):
    """What ``match_details`` finds in one batch: the two row tensors; the number of detection
    rows of each image (int64 [images]); with ``with_ious``, the IoU matrices pycocotools keeps
    in ``COCOeval.ious`` for the (image, label) pairs with a detection and a ground truth, as
    float64 blocks [D, G] row-major one after the other (detections in rank order, ground
    truths in input order), and their int64 [P, 4] index (image in the batch, label, D, G)."""

    detections: Tensor
    groundtruths: Tensor
    image_detections: Tensor
    iou_values: Optional[Tensor]
    iou_index: Optional[Tensor]


def match_details(
    preds: Sequence[Mapping[str, Tensor]],
    target: Sequence[Mapping[str, Tensor]],
    *,
    iou_type: str,
    box_format: str,
    iou_thresholds: Tensor,
    max_detection_thresholds: Sequence[int],
    class_agnostic: bool,
    keep_unannotated: bool = False,
    with_ious: bool = False,
) -> Matched:
    """``match_images`` with more: see Matched. ``keep_unannotated``: with ``iou_type="segm"``,
    the detections of an image without ground truth are kept (false positives), as torchmetrics
    evaluates masks when boxes are evaluated with them; alone, it leaves such images out."""
    mdt = _check_options(iou_type, box_format, iou_thresholds, max_detection_thresholds)
    for name, seq in (("preds", preds), ("target", target)):
        if not isinstance(seq, Sequence) or isinstance(seq, (str, bytes)):
            raise TypeError(f"{name}: expected a list of dicts of tensors, got {type(seq).__name__}")
    if len(preds) != len(target):
        raise ValueError(f"preds, target: expected lists of equal length, got {len(preds)} and {len(target)}")
    p_items = [_check_item(p, "preds", i, iou_type) for i, p in enumerate(preds)]
    t_items = [_check_item(t, "target", i, iou_type) for i, t in enumerate(target)]
    d_counts = [len(p["labels"]) for p in p_items]
    g_counts = [len(t["labels"]) for t in t_items]
    d_labels = _labels(p_items, "preds", d_counts)
    g_labels = _labels(t_items, "target", g_counts)
    scores = _cat([p["scores"].double() for p in p_items], (0,), torch.float64)
    _check_values("preds", "scores", scores, d_counts, ~torch.isfinite(scores), "finite scores")
    # the rows keep float32 scores: a float64 score beyond float32's range would become inf
    _check_values("preds", "scores", scores, d_counts, ~torch.isfinite(scores.float()), "scores within float32's range")
    crowd = _optional(t_items, "iscrowd", g_counts)
    _check_values("target", "iscrowd", crowd, g_counts, (crowd != 0) & (crowd != 1), "values 0 and 1")
    given_area = _optional(t_items, "area", g_counts)
    _check_values("target", "area", given_area, g_counts, ~torch.isfinite(given_area), "finite areas")
    if iou_type == "bbox":
        d_box = _boxes(p_items, "preds", box_format, d_counts)
        g_box = _boxes(t_items, "target", box_format, g_counts)
        d_area, g_area = d_box[:, 2] * d_box[:, 3], g_box[:, 2] * g_box[:, 3]
    else:
        _check_masks(p_items, t_items)
        d_box, g_box = (
            torch.zeros(sum(d_counts), 4, dtype=torch.float64),
            torch.zeros(sum(g_counts), 4, dtype=torch.float64),
        )
        d_area = _cat([p["masks"].flatten(1).count_nonzero(dim=1) for p in p_items], (0,), torch.int64).double()
        g_area = _cat([t["masks"].flatten(1).count_nonzero(dim=1) for t in t_items], (0,), torch.int64).double()
        d_pixels, g_pixels = d_area, g_area
    # -- every input checked: from here on nothing raises for the caller's data --
    g_area = torch.where(given_area > 0, given_area, g_area)
    d_img, g_img = _owner(d_counts), _owner(g_counts)
    d_lab = torch.zeros_like(d_labels) if class_agnostic else d_labels
    g_lab = torch.zeros_like(g_labels) if class_agnostic else g_labels
    d_key, g_key = d_img * LABEL_LIMIT + d_lab, g_img * LABEL_LIMIT + g_lab
    # rank per (image, label): score descending, ties in input order, then a stable sort by group
    by_score = torch.sort(scores, descending=True, stable=True).indices
    order = by_score[torch.sort(d_key[by_score], stable=True).indices]
    keys = d_key[order]
    _, group_sizes = torch.unique_consecutive(keys, return_counts=True)
    ends = torch.cumsum(group_sizes, 0)
    position = torch.arange(len(order))
    rank = position - (ends - group_sizes)[torch.searchsorted(ends, position, right=True)]
    keep = rank < mdt[-1]
    if iou_type == "segm" and not keep_unannotated:  # torchmetrics leaves images without masks out
        keep &= torch.tensor(g_counts, dtype=torch.int64)[d_img[order]] > 0
    order, keys, rank = order[keep], keys[keep], rank[keep]
    g_order = torch.sort(g_key, stable=True).indices
    g_keys = g_key[g_order]
    union = torch.unique(torch.cat([keys, g_keys]))
    groups = torch.stack(
        [
            torch.searchsorted(keys, union),
            torch.searchsorted(keys, union, right=True),
            torch.searchsorted(g_keys, union),
            torch.searchsorted(g_keys, union, right=True),
        ],
        dim=1,
    ).contiguous()
    dets = torch.cat([d_box[order], d_area[order, None]], dim=1).contiguous()
    gts = torch.cat([g_box[g_order], g_area[g_order, None], crowd[g_order, None]], dim=1).contiguous()
    ious = None
    if iou_type == "segm":
        ious = _segm_ious(p_items, t_items, groups, order, g_order, d_counts, g_counts, (d_pixels, g_pixels, crowd))
    w_count = math.ceil(iou_thresholds.numel() / 10)
    rows = torch.zeros(len(order), 2 + 2 * w_count, dtype=torch.int32)
    score_bits = _cat([p["scores"].float() for p in p_items], (0,), torch.float32).view(torch.int32)
    rows[:, 0] = score_bits[order]
    level = torch.searchsorted(torch.tensor(mdt, dtype=torch.int64), rank, right=True)
    packed = d_lab[order] | (level << 24)
    rows[:, 1] = torch.where(packed >= 1 << 31, packed - (1 << 32), packed).to(torch.int32)
    kernels.coco_match(rows, groups, dets, gts, iou_thresholds.detach().to("cpu").contiguous(), ious)
    image_detections = torch.bincount(d_img[order], minlength=len(d_counts))
    iou_index = None
    if with_ious:
        sizes = groups[:, 1::2] - groups[:, 0::2]
        full = (sizes > 0).all(dim=1)
        iou_index = torch.stack(
            [union[full] // LABEL_LIMIT, union[full] % LABEL_LIMIT, sizes[full, 0], sizes[full, 1]], dim=1
        )
        if iou_type == "bbox":  # the kernel computes its own; these are for the caller only
            ious = _box_ious(groups, dets, gts)
    return Matched(rows, _gt_rows(g_lab, g_area, crowd), image_detections, ious if with_ious else None, iou_index)


def _box_ious(groups: Tensor, dets: Tensor, gts: Tensor) -> Tensor:
    """float64 [S]: the IoU blocks [D_p, G_p] (row-major) of the groups with both, in order, as
    pycocotools' bbIou computes them in double (over the detection's area for a crowd)."""
    sizes = groups[:, 1::2] - groups[:, 0::2]
    full = (sizes > 0).all(dim=1)
    d0, g0, dn, gn = groups[full, 0], groups[full, 2], sizes[full, 0], sizes[full, 1]
    pairs = dn * gn
    offset = torch.arange(int(pairs.sum())) - torch.repeat_interleave(torch.cumsum(pairs, 0) - pairs, pairs)
    d_idx = torch.repeat_interleave(d0, pairs) + torch.div(
        offset, torch.repeat_interleave(gn, pairs), rounding_mode="floor"
    )
    g_idx = torch.repeat_interleave(g0, pairs) + offset % torch.repeat_interleave(gn, pairs)
    d, g = dets[d_idx], gts[g_idx]
    w = torch.minimum(d[:, 2] + d[:, 0], g[:, 2] + g[:, 0]) - torch.maximum(d[:, 0], g[:, 0])
    h = torch.minimum(d[:, 3] + d[:, 1], g[:, 3] + g[:, 1]) - torch.maximum(d[:, 1], g[:, 1])
    inter = w * h
    d_area, g_area = d[:, 2] * d[:, 3], g[:, 2] * g[:, 3]
    union = torch.where(g[:, 5] != 0, d_area, d_area + g_area - inter)
    return torch.where((w > 0) & (h > 0), inter / union, torch.zeros_like(inter))


def _gt_rows(labels: Tensor, area: Tensor, crowd: Tensor) -> Tensor:
    """int32 [G, 2]: label, and bit a set where the ground truth counts in area range a."""
    bits = torch.zeros_like(labels)
    for a, (lo, hi) in enumerate(AREA_RANGES):
        bits |= ((crowd == 0) & (area >= lo) & (area <= hi)).long() << a
    return torch.stack([labels, bits], dim=1).to(torch.int32)


def _segm_ious(
    p_items: List[Dict[str, Tensor]],
    t_items: List[Dict[str, Tensor]],
    groups: Tensor,
    order: Tensor,
    g_order: Tensor,
    d_counts: List[int],
    g_counts: List[int],
    areas: Tuple[Tensor, Tensor, Tensor],
) -> Tensor:
    """float64 [S]: the IoU blocks [D_p, G_p] of the groups, in order (csrc/API.md)."""
    d_start = [0] + list(torch.cumsum(torch.tensor(d_counts), 0).tolist())
    g_start = [0] + list(torch.cumsum(torch.tensor(g_counts), 0).tolist())
    per_image: Dict[int, Tensor] = {}
    blocks: List[Tensor] = []
    for d0, d1, g0, g1 in groups.tolist():
        if d1 == d0 or g1 == g0:
            continue
        d_idx, g_idx = order[d0:d1], g_order[g0:g1]
        img = int(torch.searchsorted(torch.tensor(d_start[1:]), d_idx[0], right=True))
        if img not in per_image:
            d_sl, g_sl = slice(d_start[img], d_start[img + 1]), slice(g_start[img], g_start[img + 1])
            d_pixels, g_pixels, crowd = areas
            per_image[img] = _mask_ious(
                p_items[img]["masks"], t_items[img]["masks"], d_pixels[d_sl], g_pixels[g_sl], crowd[g_sl] != 0
            )
        block = per_image[img][d_idx - d_start[img]][:, g_idx - g_start[img]]
        blocks.append(block.reshape(-1))
    return torch.cat(blocks) if blocks else torch.zeros(0, dtype=torch.float64)
