"""MeanAveragePrecision against torchmetrics' own (pycocotools backend), on a couple of sets."""

import pytest
import torch
from support import coco_reference as cr
from torchmetrics.detection import MeanAveragePrecision as TMMeanAveragePrecision

from torchtally.detection import MeanAveragePrecision


@pytest.mark.parametrize(
    "kw",
    [dict(class_metrics=True), dict(average="micro", iou_thresholds=[0.5, 0.75], max_detection_thresholds=[1, 5, 100])],
    ids=["macro-class-metrics", "micro-custom"],
)
def test_same_result_as_torchmetrics(kw):
    preds, target = cr.synthetic_detections(11, 30, 4)
    ours, theirs = MeanAveragePrecision(**kw), TMMeanAveragePrecision(**kw)
    for s in range(0, 30, 10):
        ours.update(preds[s : s + 10], target[s : s + 10])
        theirs.update(preds[s : s + 10], target[s : s + 10])
    a, b = ours.compute(), theirs.compute()
    assert a.keys() == b.keys()
    for key in b:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        assert torch.allclose(a[key].double(), b[key].double(), atol=1e-6, rtol=0), key


def test_segm_same_result_as_torchmetrics():
    preds, target = cr.synthetic_detections(12, 8, 3, masks=True, image_size=40)
    a = MeanAveragePrecision(iou_type="segm").update(preds, target).compute()
    b = TMMeanAveragePrecision(iou_type="segm")
    b.update(preds, target)
    b = b.compute()
    for key in b:
        assert torch.allclose(a[key].double(), b[key].double(), atol=1e-6, rtol=0), key
