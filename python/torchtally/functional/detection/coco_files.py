"""COCO json files to MeanAveragePrecision's inputs (package-internal: the class's
``coco_to_tm``).

A ground-truth file (COCO's dataset format) and a results file (a list of detections) become
torchmetrics' lists of per-image dicts, one per image with an annotation in the ground-truth
file, in the order of their first annotation; an image without detections gets empty ones, and
detections of images without annotations are not returned (as torchmetrics converts them).
Boxes stay (x, y, w, h) float32 (use ``box_format="xywh"``); masks are decoded with the
backend's COCO tools (pycocotools or faster_coco_eval), which must be installed for that.
"""

import contextlib
import io
from typing import Any, Dict, List, Tuple

import numpy as np
import torch
from torch import Tensor


def _coco_class(backend: str) -> Any:
    try:
        if backend == "faster_coco_eval":
            from faster_coco_eval import COCO  # type: ignore[import-untyped]
        else:
            from pycocotools.coco import COCO  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ModuleNotFoundError(
            f"coco_to_tm with backend={backend!r} reads the files with {backend}'s COCO class: install it "
            f"(pip install {'faster-coco-eval' if backend == 'faster_coco_eval' else 'pycocotools'})"
        ) from exc
    return COCO


def coco_to_lists(
    coco_preds: str, coco_target: str, iou_types: Tuple[str, ...], backend: str
) -> Tuple[List[Dict[str, Tensor]], List[Dict[str, Tensor]]]:
    """(preds, target) lists of dicts from a COCO results file and a COCO ground-truth file."""
    coco = _coco_class(backend)
    with contextlib.redirect_stdout(io.StringIO()):
        gt = coco(coco_target)
        dt = gt.loadRes(coco_preds)
    boxes, masks = "bbox" in iou_types, "segm" in iou_types
    target: Dict[Any, Dict[str, List[Any]]] = {}
    for ann in gt.dataset["annotations"]:
        entry = target.setdefault(ann["image_id"], {"labels": [], "iscrowd": [], "area": [], "boxes": [], "masks": []})
        entry["labels"].append(ann["category_id"])
        entry["iscrowd"].append(ann.get("iscrowd", 0))
        entry["area"].append(ann["area"])
        if boxes:
            entry["boxes"].append(ann["bbox"])
        if masks:
            entry["masks"].append(gt.annToMask(ann))
    preds: Dict[Any, Dict[str, List[Any]]] = {
        key: {"labels": [], "scores": [], "boxes": [], "masks": []} for key in target
    }
    for ann in dt.dataset["annotations"]:
        if ann["image_id"] not in preds:
            continue
        entry = preds[ann["image_id"]]
        entry["labels"].append(ann["category_id"])
        entry["scores"].append(ann["score"])
        if boxes:
            entry["boxes"].append(ann["bbox"])
        if masks:
            entry["masks"].append(gt.annToMask(ann))
    out_preds, out_target = [], []
    for key, t in target.items():
        p = preds[key]
        pd = {
            "scores": torch.tensor(p["scores"], dtype=torch.float32),
            "labels": torch.tensor(p["labels"], dtype=torch.int32),
        }
        td = {
            "labels": torch.tensor(t["labels"], dtype=torch.int32),
            "iscrowd": torch.tensor(t["iscrowd"], dtype=torch.int32),
            "area": torch.tensor(t["area"], dtype=torch.float32),
        }
        for d, src in ((pd, p), (td, t)):
            if boxes:
                d["boxes"] = torch.tensor(np.array(src["boxes"], dtype=np.float32).reshape(-1, 4))
            if masks:
                d["masks"] = torch.from_numpy(np.array(src["masks"], dtype=np.uint8))
        out_preds.append(pd)
        out_target.append(td)
    return out_preds, out_target
