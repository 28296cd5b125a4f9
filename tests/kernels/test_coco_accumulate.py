"""COCO accumulate: the C kernel == its torch reference == pycocotools' own accumulate, bit for bit,
on rows read from pycocotools' evalImgs (tests/support/coco_reference.py)."""

import pytest
import torch
from support import coco_reference as cr

from torchtally import _C
from torchtally.kernels import reference as ref

CASES = [  # (name, seed, iou thresholds, rec thresholds, maxDets, average)
    ("defaults", 0, None, None, [1, 10, 100], "macro"),
    (
        "custom",
        1,
        [0.5, 0.75, 0.3] + [0.05 * i for i in range(1, 10)],
        [0.0, 0.25, 0.5, 0.9, 1.0],
        [2, 5, 100],
        "macro",
    ),
    ("unsorted-rec-small-maxdets", 2, [0.5, 0.6], [0.5, 0.1, 0.95, 0.0], [1, 2, 3], "macro"),
    ("micro", 3, None, None, [1, 10, 100], "micro"),
]


def _run(fn, det, gt, labels, t, r, m, thr):
    k = len(labels)
    p = torch.full((t, r, k, 4 * m), 7.0, dtype=torch.float64)
    s, rc = torch.full_like(p, 7.0), torch.full((t, k, 4 * m), 7.0, dtype=torch.float64)
    fn(p, rc, s, det, gt, torch.tensor(labels, dtype=torch.int64), torch.tensor(thr, dtype=torch.float64))
    return p.view(t, r, k, 4, m), rc.view(t, k, 4, m), s.view(t, r, k, 4, m)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_equals_pycocotools(case):
    _, seed, iou, rec, mdt, average = case
    preds, target = cr.synthetic_detections(seed, 40, 6, max_boxes=8)
    preds[5] = {k: v[:0] for k, v in preds[5].items()}  # an image with ground truths only
    target[7] = {k: v[:0] for k, v in target[7].items()}  # one with detections only
    preds[9]["labels"] = torch.full_like(preds[9]["labels"], 17)  # a class without ground truths
    ev = cr.coco_evaluate(
        preds, target, iou_thresholds=iou, rec_thresholds=rec, max_detection_thresholds=mdt, average=average
    )
    det, gt = cr.rows_from_evalimgs(ev, mdt)
    t, r, m = len(ev.params.iouThrs), len(ev.params.recThrs), len(mdt)
    want = [torch.from_numpy(ev.eval[key]) for key in ("precision", "recall", "scores")]
    for fn in (_C.coco_accumulate, ref.coco_accumulate):
        got = _run(fn, det, gt, list(ev.params.catIds), t, r, m, list(ev.params.recThrs))
        for g, w in zip(got, want):
            assert torch.equal(g, w), (fn, (g != w).sum())
    if average == "macro":
        assert (want[0][:, :, list(ev.params.catIds).index(17)] == -1).all()


def test_empty_and_permuted_rows():
    """No rows at all: -1 everywhere. Shuffling the rows of different labels changes nothing."""
    got = _run(
        _C.coco_accumulate,
        torch.zeros(0, 4, dtype=torch.int32),
        torch.zeros(0, 2, dtype=torch.int32),
        [3],
        10,
        5,
        3,
        [0.0, 0.2, 0.4, 0.6, 1.0],
    )
    assert all((g == -1).all() for g in got)
    preds, target = cr.synthetic_detections(4, 20, 3)
    ev = cr.coco_evaluate(preds, target)
    det, gt = cr.rows_from_evalimgs(ev, [1, 10, 100])
    labels = det[:, 1] & 0xFFFFFF
    order = torch.sort(labels, stable=True).indices  # label-major, each label's rows in order
    args = (list(ev.params.catIds), 10, 101, 3, list(ev.params.recThrs))
    for a, b in zip(_run(_C.coco_accumulate, det, gt, *args), _run(_C.coco_accumulate, det[order], gt.flip(0), *args)):
        assert torch.equal(a, b)


@pytest.mark.parametrize("fn", [_C.coco_accumulate, ref.coco_accumulate], ids=["c", "reference"])
def test_bad_rows_write_nothing(fn):
    det = torch.tensor([[0, 2 | (1 << 24), 0, 0]], dtype=torch.int32)
    gt = torch.tensor([[2, 15]], dtype=torch.int32)
    thr = torch.tensor([0.0, 1.0], dtype=torch.float64)
    p, s, rc = (
        torch.zeros(1, 2, 1, 8, dtype=torch.float64),
        torch.zeros(1, 2, 1, 8, dtype=torch.float64),
        torch.zeros(1, 1, 8, dtype=torch.float64),
    )
    with pytest.raises(ValueError, match="label 2 is not in labels"):
        fn(p, rc, s, det, gt, torch.tensor([1]), thr)
    with pytest.raises(ValueError, match="maxDets level 1"):
        fn(p[..., :4].clone(), rc[..., :4].clone(), s[..., :4].clone(), det, gt, torch.tensor([2]), thr)
    with pytest.raises(ValueError, match="detections"):
        fn(p, rc, s, det[:, :3], gt, torch.tensor([2]), thr)
    with pytest.raises(TypeError, match="groundtruths"):
        fn(p, rc, s, det, gt.long(), torch.tensor([2]), thr)
    assert not p.any() and not s.any() and not rc.any()
