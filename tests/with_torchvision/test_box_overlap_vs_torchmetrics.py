"""torchtally's IoU family against torchmetrics 1.9's (which needs torchvision): every class over
several batches (class_metrics, respect_labels=False, iou_threshold, box formats, images without
predictions or targets), and every functional form (matrix, aggregate, threshold, empty sides)."""

import pytest
import torch
import torchmetrics.detection as tm
import torchmetrics.functional.detection as tmf
from support.detection_boxes import random_batches
from support.metric_tester import assert_same

import torchtally.detection as tt
import torchtally.functional.detection as ttf

NAMES = (
    "IntersectionOverUnion",
    "GeneralizedIntersectionOverUnion",
    "DistanceIntersectionOverUnion",
    "CompleteIntersectionOverUnion",
)
FORMS = (
    "intersection_over_union",
    "generalized_intersection_over_union",
    "distance_intersection_over_union",
    "complete_intersection_over_union",
)
OPTIONS = [
    {},
    {"class_metrics": True},
    {"class_metrics": True, "respect_labels": False},
    {"iou_threshold": 0.4},
    {"iou_threshold": 0.3, "class_metrics": True, "box_format": "xywh"},
    {"respect_labels": False, "box_format": "cxcywh"},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("name", NAMES)
def test_classes_match_torchmetrics(name, options):
    batches = random_batches(
        len(str(options)) + NAMES.index(name),
        box_format=options.get("box_format", "xyxy"),
        lone_preds=not options.get("class_metrics", False),  # torchmetrics raises IndexError on those
    )
    ours, theirs = getattr(tt, name)(**options), getattr(tm, name)(**options)
    for preds, target in batches:
        batch_ours, batch_theirs = ours(preds, target), theirs(preds, target)  # forward: the batch's value
        assert_same(batch_ours, batch_theirs, rtol=1e-5, atol=1e-6, what="forward")
    assert_same(ours.compute(), theirs.compute(), rtol=1e-5, atol=1e-6, what="compute")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("form", FORMS)
def test_functional_forms_match_torchmetrics(form, dtype):
    (preds, target), *_ = random_batches(FORMS.index(form), n_batches=1, images=1, empty=False, dtype=dtype)
    p, t = preds[0]["boxes"], target[0]["boxes"]
    ours, theirs = getattr(ttf, form), getattr(tmf, form)
    for kwargs in ({}, {"aggregate": False}, {"iou_threshold": 0.5, "replacement_val": -2.0}):
        a, b = ours(p, t, **kwargs), theirs(p, t, **kwargs)
        assert a.dtype == b.dtype and a.shape == b.shape, (kwargs, a, b)
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    for pp, tt_ in ((p[:0], t), (p, t[:0]), (p[:0], t[:0])):
        for aggregate in (True, False):
            a, b = ours(pp, tt_, aggregate=aggregate), theirs(pp, tt_, aggregate=aggregate)
            assert a.dtype == b.dtype and torch.equal(a, b), (pp.shape, tt_.shape, aggregate)
