"""MeanAveragePrecision's matcher: the C kernel coco_match and its torch reference against
pycocotools' own per-image evaluation (COCOeval.evalImgs read back as rows), through
match_images; and its checks: a bad batch names the argument and changes nothing."""

import math
import re

import pytest
import torch
from support.coco_reference import coco_evaluate, rows_from_evalimgs, synthetic_detections

from torchtally import kernels
from torchtally.functional.detection.coco_match import match_images

THR12 = [0.3 + 0.05 * i for i in range(12)]  # two words per row
CASES = [
    # iou_type, box_format, average, max_dets, iou_thresholds, area_key, seed
    ("bbox", "xyxy", "macro", [1, 10, 100], None, False, 0),
    ("bbox", "cxcywh", "micro", [1, 5, 50], [0.5, 0.75, 0.9], True, 1),
    ("bbox", "xywh", "macro", [1, 2, 3], THR12, False, 2),
    ("segm", "xyxy", "macro", [1, 10, 100], None, True, 3),
    ("segm", "xyxy", "micro", [1, 2, 3], THR12, False, 4),
]


@pytest.fixture(params=["c", "reference"])
def backend(request):
    previous = kernels.set_backend(request.param)
    yield request.param
    kernels.set_backend(previous)


def _match(preds, target, iou_type="bbox", box_format="xyxy", thr=None, max_dets=(1, 10, 100), agnostic=False):
    t = torch.tensor(thr if thr is not None else torch.linspace(0.5, 0.95, 10).tolist(), dtype=torch.float64)
    return match_images(
        preds,
        target,
        iou_type=iou_type,
        box_format=box_format,
        iou_thresholds=t,
        max_detection_thresholds=list(max_dets),
        class_agnostic=agnostic,
    )


@pytest.mark.parametrize(("iou_type", "box_format", "average", "max_dets", "thr", "area_key", "seed"), CASES)
def test_rows_equal_pycocotools(backend, iou_type, box_format, average, max_dets, thr, area_key, seed):
    n_images = 14 if backend == "c" else 8
    preds, target = synthetic_detections(
        seed, n_images, 3, masks=iou_type == "segm", image_size=112, area_key=area_key, box_format=box_format
    )
    ev = coco_evaluate(
        preds,
        target,
        iou_type=iou_type,
        box_format=box_format,
        average=average,
        max_detection_thresholds=max_dets,
        iou_thresholds=thr,
    )
    expected_det, expected_gt = rows_from_evalimgs(ev, max_dets)
    det, gt = _match(preds, target, iou_type, box_format, ev.params.iouThrs.tolist(), max_dets, average == "micro")
    assert det.dtype == gt.dtype == torch.int32
    assert det.shape[1] == 2 + 2 * math.ceil(len(ev.params.iouThrs) / 10)
    assert torch.equal(det, expected_det)
    assert torch.equal(gt, expected_gt)
    assert (expected_det[:, 2:] != 0).any()  # some true positives and ignored detections


def test_cut_at_max_dets_and_ties():
    """Three tied detections on one ground truth: rank order is input order; the third is cut."""
    box = torch.tensor([[10.0, 10.0, 50.0, 50.0]])
    preds = [{"boxes": box.repeat(3, 1), "scores": torch.tensor([0.5, 0.5, 0.5]), "labels": torch.tensor([1, 1, 1])}]
    target = [{"boxes": box, "labels": torch.tensor([1])}]
    det, gt = _match(preds, target, thr=[0.5], max_dets=(1, 2))
    assert det.shape == (2, 4)
    assert (det[:, 1] >> 24).tolist() == [0, 1] and (det[:, 1] & 0xFFFFFF).tolist() == [1, 1]
    # area 1600 is medium: digits (all, small, medium, large) = (tp, ignored, tp, ignored) for the
    # first; the second finds the ground truth taken: (fp, ignored, fp, ignored)
    assert det[:, 2].tolist() == [1 + 2 * 3 + 1 * 9 + 2 * 27, 2 * 3 + 2 * 27]
    assert det[:, 3].tolist() == [0, 0]
    assert gt.tolist() == [[1, 0b0101]]  # counts in "all" and "medium"


def test_empty_batches():
    det, gt = _match([], [])
    assert det.shape == (0, 4) and gt.shape == (0, 2)
    empty = {"boxes": torch.zeros(0, 4), "scores": torch.zeros(0), "labels": torch.zeros(0, dtype=torch.long)}
    det, gt = _match([empty], [{"boxes": torch.zeros(0), "labels": torch.zeros(0, dtype=torch.long)}])
    assert det.shape == (0, 4) and gt.shape == (0, 2)


def _good():
    return synthetic_detections(5, 3, 2, masks=True, image_size=40, area_key=True)


BAD = [
    # (side, index, key, new value or callable, iou_type, error, message part)
    (
        "preds",
        1,
        "boxes",
        lambda b: b[:, [2, 1, 0, 3]] if len(b) else torch.tensor([[5.0, 0, 1, 1]]),
        "bbox",
        ValueError,
        "x2 >= x1",
    ),
    ("preds", 1, "scores", lambda s: torch.full_like(s, float("nan")), "bbox", ValueError, "finite scores"),
    ("target", 0, "labels", lambda lab: lab.float(), "bbox", TypeError, "integer tensor"),
    ("preds", 1, "labels", lambda lab: lab[:-1], "bbox", ValueError, "one per box"),
    ("target", 2, "labels", lambda lab: lab + (1 << 24), "bbox", ValueError, "labels in [0, 16777216)"),
    ("target", 0, "iscrowd", lambda c: c + 2, "bbox", ValueError, "values 0 and 1"),
    ("target", 1, "boxes", lambda b: b[:, :3], "bbox", ValueError, "[N, 4]"),
    ("preds", 0, "masks", lambda m: m[:, :, :-1], "segm", ValueError, "size of target[0]['masks']"),
    ("target", 0, "masks", lambda m: m.float(), "segm", TypeError, "bool or uint8"),
    ("preds", 2, "masks", lambda m: m[0], "segm", ValueError, "[N, H, W]"),
]


@pytest.mark.parametrize(("side", "index", "key", "change", "iou_type", "error", "message"), BAD)
def test_bad_input_names_the_argument(side, index, key, change, iou_type, error, message):
    preds, target = _good()
    for lists in (preds, target):
        for d in lists:
            if iou_type == "bbox":
                d.pop("masks")
    seq = preds if side == "preds" else target
    while len(seq[index]["labels"]) == 0:  # the change needs a box there
        index = (index + 1) % len(seq)
    seq[index][key] = change(seq[index][key])
    before = [{k: v.clone() for k, v in d.items()} for d in preds + target]
    with pytest.raises(error, match=re.escape(f"{side}[{index}]['{key}']") + ".*" + re.escape(message)):
        _match(preds, target, iou_type=iou_type)
    after = preds + target
    for b, a in zip(before, after):
        for k in b:
            torch.testing.assert_close(a[k], b[k], rtol=0, atol=0, equal_nan=True)


def test_bad_options_and_lists():
    preds, target = _good()
    with pytest.raises(ValueError, match="preds, target: expected lists of equal length"):
        _match(preds, target[:2])
    with pytest.raises(ValueError, match="expected the key 'scores'"):
        _match([{"boxes": torch.zeros(0, 4), "labels": torch.zeros(0, dtype=torch.long)}], target[:1])
    with pytest.raises(ValueError, match="box_format"):
        _match(preds, target, box_format="yxyx")
    with pytest.raises(ValueError, match="max_detection_thresholds"):
        _match(preds, target, max_dets=(10, 1))


def test_kernel_checks_leave_rows_untouched(impl):
    rows = torch.full((2, 4), 7, dtype=torch.int32)
    dets = torch.tensor([[0, 0, 2, 2, 4.0], [1, 1, 2, 2, 4.0]], dtype=torch.float64)
    gts = torch.tensor([[0, 0, 2, 2, 4.0, 0.0]], dtype=torch.float64)
    thr = torch.tensor([0.5], dtype=torch.float64)
    good = torch.tensor([[0, 2, 0, 1]])
    cases = [
        (torch.tensor([[0, 1, 0, 1]]), "groups"),  # does not cover the detections
        (torch.tensor([[1, 2, 0, 1], [0, 1, 1, 1]]), "groups"),  # out of order
    ]
    for groups, name in cases:
        with pytest.raises(ValueError, match=name):
            impl.coco_match(rows, groups, dets, gts, thr, None)
        assert (rows == 7).all()
    bad_gts = gts.clone()
    bad_gts[0, 5] = 0.5
    with pytest.raises(ValueError, match="gts"):
        impl.coco_match(rows, good, dets, bad_gts, thr, None)
    with pytest.raises((TypeError, ValueError), match="rows"):
        impl.coco_match(rows[:, :3].contiguous(), good, dets, gts, thr, None)
    with pytest.raises(ValueError, match="ious"):
        impl.coco_match(rows, good, dets, gts, thr, torch.tensor([0.5, 1.5], dtype=torch.float64))
    assert (rows == 7).all()
    impl.coco_match(rows, good, dets, gts, thr, torch.tensor([0.2, 0.9], dtype=torch.float64))
    assert (
        rows[:, :2].eq(7).all() and rows[:, 2].tolist() == [18 + 54, 1 + 3 + 18 + 54] and rows[:, 3].tolist() == [0, 0]
    )


def test_c_equals_reference_on_given_ious(c_core):
    g = torch.Generator().manual_seed(0)
    sizes = [(3, 4), (0, 2), (5, 0), (6, 6)]
    groups, d_at, g_at = [], 0, 0
    for nd, ng in sizes:
        groups.append([d_at, d_at + nd, g_at, g_at + ng])
        d_at, g_at = d_at + nd, g_at + ng
    dets = torch.rand(d_at, 5, generator=g, dtype=torch.float64) * 100
    dets[:, 4] = torch.rand(d_at, generator=g, dtype=torch.float64) * 12000
    gts = torch.rand(g_at, 6, generator=g, dtype=torch.float64) * 100
    gts[:, 4] = torch.rand(g_at, generator=g, dtype=torch.float64) * 12000
    gts[:, 5] = (torch.rand(g_at, generator=g) < 0.3).double()
    ious = (torch.rand(sum(a * b for a, b in sizes), generator=g, dtype=torch.float64) * 4).round() / 4
    thr = torch.linspace(0.1, 0.95, 13, dtype=torch.float64)
    from torchtally.kernels import reference

    for given in (ious, None):
        a = torch.zeros(d_at, 6, dtype=torch.int32)
        b = torch.zeros(d_at, 6, dtype=torch.int32)
        c_core.coco_match(a, torch.tensor(groups), dets, gts, thr, given)
        reference.coco_match(b, torch.tensor(groups), dets, gts, thr, given)
        assert torch.equal(a, b)
