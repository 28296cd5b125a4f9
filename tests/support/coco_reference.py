"""pycocotools (or faster_coco_eval) run the way torchmetrics 1.9 runs it, the matcher's row format
read back from its per-image results, and realistic synthetic detections.

``coco_evaluate`` builds the two COCO datasets from torchmetrics' lists of dicts by the same rules
torchmetrics' MeanAveragePrecision follows (without torchvision: the box conversion to xywh is
done here with the same arithmetic, in the boxes' dtype), then runs COCOeval's evaluate and
accumulate. ``rows_from_evalimgs`` turns ``COCOeval.evalImgs`` into the detection and ground-truth
rows the matcher writes (the oracle of the matcher, and input for testing the accumulate alone).
``synthetic_detections`` makes (preds, target) with empty images on either side, overlapping
boxes of several classes, crowd ground truths, all three COCO area sizes, tied scores and masks.
"""

import contextlib
import io
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

# COCO's area ranges, in the order of the rows' area index: all, small, medium, large.
AREA_RANGES = ((0.0, 1e10), (0.0, 32.0**2), (32.0**2, 96.0**2), (96.0**2, 1e10))


def default_iou_thresholds() -> List[float]:
    """torchmetrics' default: a float32 linspace, read back as Python floats."""
    return torch.linspace(0.5, 0.95, round((0.95 - 0.5) / 0.05) + 1).tolist()


def default_rec_thresholds() -> List[float]:
    return torch.linspace(0.0, 1.00, round(1.00 / 0.01) + 1).tolist()


def to_xywh(boxes: torch.Tensor, box_format: str) -> torch.Tensor:
    """The conversion torchvision's box_convert does (through xyxy for cxcywh), in the boxes' dtype."""
    if boxes.numel() == 0:
        return boxes.reshape(-1, 4) if boxes.ndim == 1 else boxes
    if box_format == "xywh":
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if box_format == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    elif box_format != "xyxy":
        raise ValueError(f"unknown box_format {box_format!r}")
    return torch.stack((a, b, c - a, d - b), dim=-1)


def _backend(backend: str) -> Tuple[Any, Any, Any]:
    if backend == "pycocotools":
        import pycocotools.mask as mask_utils
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval

        return COCO, COCOeval, mask_utils
    if backend == "faster_coco_eval":
        from faster_coco_eval import COCO
        from faster_coco_eval import COCOeval_faster as COCOeval
        from faster_coco_eval.core import mask as mask_utils

        return COCO, COCOeval, mask_utils
    raise ValueError(f"unknown backend {backend!r}")


def _dataset(
    items: Sequence[Dict[str, torch.Tensor]],
    *,
    is_target: bool,
    iou_type: str,
    box_format: str,
    labels_of: List[List[int]],
    categories: List[int],
    mask_utils: Any,
    keep_unannotated: bool = False,
) -> Dict[str, Any]:
    """One COCO dataset dict (images, annotations, categories) as torchmetrics builds it."""
    images: List[Dict[str, Any]] = []
    annotations: List[Dict[str, Any]] = []
    next_id = 1  # annotation ids start at 1: 0 means "unmatched" in COCOeval
    for image_id, item in enumerate(items):
        labels = labels_of[image_id]
        if iou_type == "segm":
            rles = []
            for m in item["masks"].cpu().numpy():
                rle = mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))
                rles.append({"size": list(rle["size"]), "counts": rle["counts"]})
            if len(rles) == 0 and not keep_unannotated:
                continue  # torchmetrics leaves images without masks out of the dataset (segm alone)
            images.append({"id": image_id})
            if rles:
                images[-1].update(height=rles[0]["size"][0], width=rles[0]["size"][1])
        else:
            boxes = to_xywh(item["boxes"], box_format).cpu().tolist()
            images.append({"id": image_id})
        crowds = item.get("iscrowd") if is_target else None
        areas = item.get("area") if is_target else None
        for k, label in enumerate(labels):
            ann: Dict[str, Any] = {"id": next_id, "image_id": image_id, "category_id": label}
            if iou_type == "segm":
                ann["segmentation"] = rles[k]
                computed_area = float(mask_utils.area(rles[k]))
            else:
                ann["bbox"] = boxes[k]
                computed_area = boxes[k][2] * boxes[k][3]
            given = areas[k].cpu().tolist() if areas is not None else 0
            ann["area"] = given if given > 0 else computed_area
            ann["iscrowd"] = crowds[k].cpu().tolist() if crowds is not None else 0
            if not is_target:
                ann["score"] = item["scores"][k].cpu().tolist()
            annotations.append(ann)
            next_id += 1
    return {
        "images": images,
        "annotations": annotations,
        "categories": [{"id": c, "name": str(c)} for c in categories],
        "info": {"description": "torchtally test reference"},
    }


def coco_evaluate(
    preds: Sequence[Dict[str, torch.Tensor]],
    target: Sequence[Dict[str, torch.Tensor]],
    *,
    iou_type: str = "bbox",
    box_format: str = "xyxy",
    iou_thresholds: Optional[Sequence[float]] = None,
    rec_thresholds: Optional[Sequence[float]] = None,
    max_detection_thresholds: Optional[Sequence[int]] = None,
    average: str = "macro",
    backend: str = "pycocotools",
    keep_unannotated: bool = False,
) -> Any:
    """A COCOeval with evaluate() and accumulate() run, datasets built as torchmetrics 1.9 builds them.

    Returns None where torchmetrics does not run COCOeval at all (no image in the prediction or
    in the target dataset: every stat is -1 there). Thresholds default to torchmetrics' defaults;
    max_detection_thresholds is sorted as torchmetrics sorts it. ``keep_unannotated``: segm
    keeps the images without masks (torchmetrics' segm pass when boxes are evaluated too).
    """
    coco_cls, cocoeval_cls, mask_utils = _backend(backend)
    micro = average == "micro"
    pred_labels = [[0 if micro else int(v) for v in p["labels"].cpu().tolist()] for p in preds]
    gt_labels = [[0 if micro else int(v) for v in t["labels"].cpu().tolist()] for t in target]
    categories = [0] if micro else sorted({v for ls in pred_labels + gt_labels for v in ls})
    kw = {"iou_type": iou_type, "box_format": box_format, "categories": categories, "mask_utils": mask_utils}
    kw["keep_unannotated"] = keep_unannotated
    coco_gt, coco_dt = coco_cls(), coco_cls()
    coco_gt.dataset = _dataset(target, is_target=True, labels_of=gt_labels, **kw)
    coco_dt.dataset = _dataset(preds, is_target=False, labels_of=pred_labels, **kw)
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt.createIndex()
        coco_dt.createIndex()
        if len(coco_gt.imgs) == 0 or len(coco_dt.imgs) == 0:
            return None
        ev = cocoeval_cls(coco_gt, coco_dt, iouType=iou_type)
        ev.params.iouThrs = np.array(
            default_iou_thresholds() if iou_thresholds is None else list(iou_thresholds), dtype=np.float64
        )
        ev.params.recThrs = np.array(
            default_rec_thresholds() if rec_thresholds is None else list(rec_thresholds), dtype=np.float64
        )
        ev.params.maxDets = sorted(int(m) for m in (max_detection_thresholds or [1, 10, 100]))
        ev.evaluate()
        ev.accumulate()
    return ev


def _pack_outcomes(outcomes: np.ndarray) -> np.ndarray:
    """outcomes [D, T, A=4] in {0, 1, 2} -> int32 [D, 2*W]: W base-3 uint64 words as (low, high) int32."""
    n, t_count, a_count = outcomes.shape
    w_count = max(1, math.ceil(t_count / 10))
    words = np.zeros((n, w_count), dtype=np.uint64)
    for t in range(t_count):
        for a in range(a_count):
            digit = (t % 10) * 4 + a
            words[:, t // 10] += outcomes[:, t, a].astype(np.uint64) * np.uint64(3**digit)
    return words.view(np.int32).reshape(n, 2 * w_count)


def rows_from_evalimgs(coco_eval: Any, max_detection_thresholds: Sequence[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    """(detection_rows int32 [N, 2+2W], groundtruth_rows int32 [G, 2]) read from COCOeval.evalImgs.

    Rows follow the matcher's order: images ascending (the input order), within an image labels
    ascending and detections in rank order; ground truths in input order. Under average="micro"
    every label is 0 already (the datasets were built that way).
    """
    p = coco_eval.params
    max_dets = sorted(int(m) for m in max_detection_thresholds)
    cat_ids = list(p.catIds) if p.useCats else [-1]
    img_ids = list(p.imgIds)
    n_area, n_img = len(p.areaRng), len(img_ids)
    assert n_area == 4, "COCO's four area ranges expected"
    t_count = len(p.iouThrs)
    w_count = max(1, math.ceil(t_count / 10))
    det_rows: List[np.ndarray] = []
    gt_rows: List[np.ndarray] = []
    for i, _img in enumerate(img_ids):
        gt_in_image: Dict[int, List[int]] = {}  # gt id -> [label, bitmask]
        for k, cat in enumerate(cat_ids):
            entries = [coco_eval.evalImgs[(k * n_area + a) * n_img + i] for a in range(n_area)]
            if entries[0] is None:
                continue
            label = 0 if cat == -1 else int(cat)
            for a, e in enumerate(entries):
                for gid, ig in zip(e["gtIds"], e["gtIgnore"]):
                    row = gt_in_image.setdefault(int(gid), [label, 0])
                    if not ig:
                        row[1] |= 1 << a
            d_count = len(entries[0]["dtIds"])
            if d_count == 0:
                continue
            outcomes = np.zeros((d_count, t_count, n_area), dtype=np.int64)
            for a, e in enumerate(entries):
                matched = np.asarray(e["dtMatches"]).reshape(t_count, d_count) > 0
                ignored = np.asarray(e["dtIgnore"]).reshape(t_count, d_count).astype(bool)
                outcomes[:, :, a] = np.where(ignored, 2, np.where(matched, 1, 0)).T
            scores = np.asarray(entries[0]["dtScores"], dtype=np.float32).view(np.int32)
            ranks = np.arange(d_count)
            levels = np.searchsorted(np.asarray(max_dets), ranks, side="right")
            rows = np.zeros((d_count, 2 + 2 * w_count), dtype=np.int32)
            rows[:, 0] = scores
            rows[:, 1] = (label | (levels.astype(np.int64) << 24)).astype(np.uint32).view(np.int32)
            rows[:, 2:] = _pack_outcomes(outcomes)
            det_rows.append(rows)
        gt_rows.append(np.array([gt_in_image[g] for g in sorted(gt_in_image)], dtype=np.int64).reshape(-1, 2))
    det = np.concatenate(det_rows) if det_rows else np.zeros((0, 2 + 2 * w_count), dtype=np.int32)
    gt = np.concatenate(gt_rows).astype(np.int32) if gt_rows else np.zeros((0, 2), dtype=np.int32)
    return torch.from_numpy(np.ascontiguousarray(det)), torch.from_numpy(np.ascontiguousarray(gt))


def unpack_outcomes(rows: torch.Tensor, t_count: int) -> torch.Tensor:
    """Detection rows -> outcomes int64 [N, T, 4] (0 fp, 1 tp, 2 ignored): the inverse of the packing."""
    w_count = (rows.shape[1] - 2) // 2
    words = rows[:, 2:].contiguous().view(torch.int64).reshape(-1, w_count).numpy().view(np.uint64)
    out = np.zeros((rows.shape[0], t_count, 4), dtype=np.int64)
    for t in range(t_count):
        for a in range(4):
            out[:, t, a] = ((words[:, t // 10] // np.uint64(3 ** ((t % 10) * 4 + a))) % np.uint64(3)).astype(np.int64)
    return torch.from_numpy(out)


def _random_box(g: torch.Generator, size: int) -> List[float]:
    """xyxy inside [0, size]^2, its area drawn from COCO's small, medium or large range."""
    kind = int(torch.randint(0, 3, (1,), generator=g))
    lo, hi = [(4.0, 30.0), (34.0, 90.0), (100.0, size * 0.95)][kind]
    w = lo + float(torch.rand(1, generator=g)) * (hi - lo)
    h = max(2.0, min(size - 1.0, w * (0.7 + 0.6 * float(torch.rand(1, generator=g)))))
    if kind == 2:
        h = max(h, 9300.0 / w)
    h = min(h, size - 1.0)
    x = float(torch.rand(1, generator=g)) * (size - w)
    y = float(torch.rand(1, generator=g)) * (size - h)
    return [x, y, x + w, y + h]


def _jitter(g: torch.Generator, box: List[float], amount: float, size: int) -> List[float]:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    d = (torch.rand(4, generator=g) * 2 - 1).tolist()
    nx1 = min(max(0.0, x1 + d[0] * amount * w), size - 2.0)
    ny1 = min(max(0.0, y1 + d[1] * amount * h), size - 2.0)
    nx2 = min(max(nx1 + 1.0, x2 + d[2] * amount * w), float(size))
    ny2 = min(max(ny1 + 1.0, y2 + d[3] * amount * h), float(size))
    return [nx1, ny1, nx2, ny2]


def _mask(g: torch.Generator, box: List[float], size: int, ellipse: bool) -> torch.Tensor:
    """A [size, size] bool mask filling the box (an ellipse in it, or the rectangle with a notch)."""
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    x2, y2 = max(x2, x1 + 1), max(y2, y1 + 1)
    m = torch.zeros(size, size, dtype=torch.bool)
    if ellipse:
        ys = torch.arange(size, dtype=torch.float32)[:, None]
        xs = torch.arange(size, dtype=torch.float32)[None, :]
        cx, cy, rx, ry = (x1 + x2) / 2, (y1 + y2) / 2, max((x2 - x1) / 2, 0.6), max((y2 - y1) / 2, 0.6)
        m = ((xs + 0.5 - cx) / rx) ** 2 + ((ys + 0.5 - cy) / ry) ** 2 <= 1.0
    else:
        m[y1:y2, x1:x2] = True
        nw = int(torch.randint(0, max(1, (x2 - x1) // 3), (1,), generator=g))
        m[y1 : y1 + max(0, (y2 - y1) // 3), x1 : x1 + nw] = False
    return m


def synthetic_detections(
    seed: int,
    n_images: int,
    n_classes: int,
    *,
    max_boxes: int = 6,
    masks: bool = False,
    image_size: int = 128,
    area_key: bool = False,
    box_format: str = "xyxy",
) -> Tuple[List[Dict[str, torch.Tensor]], List[Dict[str, torch.Tensor]]]:
    """Realistic (preds, target) lists of dicts.

    Per image 0..max_boxes ground truths (about one image in seven has none) of random classes,
    small, medium and large, about one in eight a crowd; predictions are jittered copies of most
    ground truths (some with a wrong class, some duplicated), plus random false positives (about
    one image in seven has no prediction). Scores are rounded to 0.1 so ties happen. With
    ``masks=True`` every dict also has "masks" [N, image_size, image_size] bool matching its boxes.
    ``area_key=True`` gives each target an "area" tensor, zero (meaning "compute it") for some.
    Boxes are float32 in ``box_format``.
    """
    g = torch.Generator().manual_seed(seed)
    preds: List[Dict[str, torch.Tensor]] = []
    target: List[Dict[str, torch.Tensor]] = []

    def rnd() -> float:
        return float(torch.rand(1, generator=g))

    for _ in range(n_images):
        n_gt = 0 if rnd() < 0.15 else int(torch.randint(1, max_boxes + 1, (1,), generator=g))
        gt_boxes = [_random_box(g, image_size) for _ in range(n_gt)]
        gt_labels = torch.randint(0, n_classes, (n_gt,), generator=g).tolist()
        crowd = [int(rnd() < 0.12) for _ in range(n_gt)]
        dt_boxes: List[List[float]] = []
        dt_labels: List[int] = []
        if rnd() >= 0.15:
            for b, lab in zip(gt_boxes, gt_labels):
                for _copy in range(1 + int(rnd() < 0.25)):
                    if rnd() < 0.8:
                        dt_boxes.append(_jitter(g, b, 0.25 * rnd(), image_size))
                        dt_labels.append(lab if rnd() < 0.85 else int(torch.randint(0, n_classes, (1,), generator=g)))
            for _fp in range(int(torch.randint(0, 4, (1,), generator=g))):
                dt_boxes.append(_random_box(g, image_size))
                dt_labels.append(int(torch.randint(0, n_classes, (1,), generator=g)))
        n_dt = len(dt_boxes)
        scores = (torch.rand(n_dt, generator=g) * 10).round() / 10
        gt_t = torch.tensor(gt_boxes, dtype=torch.float32).reshape(-1, 4)
        dt_t = torch.tensor(dt_boxes, dtype=torch.float32).reshape(-1, 4)
        p: Dict[str, torch.Tensor] = {
            "boxes": _from_xyxy(dt_t, box_format),
            "scores": scores.float(),
            "labels": torch.tensor(dt_labels, dtype=torch.int64),
        }
        t: Dict[str, torch.Tensor] = {
            "boxes": _from_xyxy(gt_t, box_format),
            "labels": torch.tensor(gt_labels, dtype=torch.int64),
            "iscrowd": torch.tensor(crowd, dtype=torch.int64),
        }
        if masks:
            p["masks"] = (
                torch.stack([_mask(g, b, image_size, rnd() < 0.5) for b in dt_boxes]).reshape(
                    n_dt, image_size, image_size
                )
                if n_dt
                else torch.zeros(0, image_size, image_size, dtype=torch.bool)
            )
            t["masks"] = (
                torch.stack([_mask(g, b, image_size, rnd() < 0.5) for b in gt_boxes]).reshape(
                    n_gt, image_size, image_size
                )
                if n_gt
                else torch.zeros(0, image_size, image_size, dtype=torch.bool)
            )
        if area_key:
            given = torch.tensor([(x2 - x1) * (y2 - y1) * (0.5 + rnd()) for x1, y1, x2, y2 in gt_boxes])
            keep = torch.rand(n_gt, generator=g) < 0.6
            t["area"] = torch.where(keep, given, torch.zeros_like(given)).float().reshape(n_gt)
        preds.append(p)
        target.append(t)
    return preds, target


def _from_xyxy(boxes: torch.Tensor, box_format: str) -> torch.Tensor:
    if box_format == "xyxy" or boxes.numel() == 0:
        return boxes
    x1, y1, x2, y2 = boxes.unbind(-1)
    if box_format == "xywh":
        return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)
    if box_format == "cxcywh":
        return torch.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1), dim=-1)
    raise ValueError(f"unknown box_format {box_format!r}")
