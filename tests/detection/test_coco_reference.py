"""The shared COCO reference runs: pycocotools and faster_coco_eval agree on synthetic sets, and the
rows read from evalImgs decode back to evalImgs' matches and ignore flags."""

import numpy as np
import pytest
import torch
from support.coco_reference import coco_evaluate, rows_from_evalimgs, synthetic_detections, unpack_outcomes


@pytest.mark.parametrize(("iou_type", "average"), [("bbox", "macro"), ("segm", "micro")])
def test_backends_agree(iou_type: str, average: str) -> None:
    preds, target = synthetic_detections(3, 12, 3, masks=iou_type == "segm", image_size=112)
    ref = coco_evaluate(preds, target, iou_type=iou_type, average=average)
    fast = coco_evaluate(preds, target, iou_type=iou_type, average=average, backend="faster_coco_eval")
    np.testing.assert_allclose(fast.eval["precision"], ref.eval["precision"], atol=1e-12)
    np.testing.assert_allclose(fast.eval["recall"], ref.eval["recall"], atol=1e-12)
    assert (ref.eval["precision"] > 0).any()


def test_synthetic_set_is_varied() -> None:
    preds, target = synthetic_detections(0, 40, 3, area_key=True)
    assert any(len(t["labels"]) == 0 for t in target) and any(len(p["labels"]) == 0 for p in preds)
    assert any(int(t["iscrowd"].sum()) > 0 for t in target)
    areas = torch.cat([(t["boxes"][:, 2] - t["boxes"][:, 0]) * (t["boxes"][:, 3] - t["boxes"][:, 1]) for t in target])
    assert (areas < 32**2).any() and ((areas > 32**2) & (areas < 96**2)).any() and (areas > 96**2).any()
    scores = torch.cat([p["scores"] for p in preds])
    assert len(scores.unique()) < len(scores)  # ties


@pytest.mark.parametrize("max_dets", [[1, 10, 100], [1, 2, 3]])
def test_rows_decode_to_evalimgs(max_dets: list) -> None:
    preds, target = synthetic_detections(1, 15, 3)
    iou = [0.5, 0.7, 0.9]
    ev = coco_evaluate(preds, target, iou_thresholds=iou, max_detection_thresholds=max_dets)
    det, gt = rows_from_evalimgs(ev, max_dets)
    assert det.dtype == torch.int32 and det.shape[1] == 4 and gt.shape == (sum(len(t["labels"]) for t in target), 2)
    outcomes = unpack_outcomes(det, len(iou))
    n_img, cats = len(ev.params.imgIds), ev.params.catIds
    i = 0
    for img in range(n_img):
        for k, cat in enumerate(cats):
            entries = [ev.evalImgs[(k * 4 + a) * n_img + img] for a in range(4)]
            if entries[0] is None:
                continue
            d = len(entries[0]["dtIds"])
            assert d <= max_dets[-1]
            for a, e in enumerate(entries):
                exp = np.where(e["dtIgnore"], 2, np.where(e["dtMatches"] > 0, 1, 0)).T
                np.testing.assert_array_equal(outcomes[i : i + d, :, a].numpy(), exp)
            got_labels = det[i : i + d, 1] & 0xFFFFFF
            assert (got_labels == cat).all()
            levels = (det[i : i + d, 1] >> 24).tolist()
            assert levels == [sum(r >= m for m in max_dets) for r in range(d)]
            assert det[i : i + d, 0].view(torch.float32).tolist() == pytest.approx(entries[0]["dtScores"])
            i += d
    assert i == det.shape[0]
    # gt rows: bit 0 set exactly for non-crowd gts
    crowd = torch.cat([t["iscrowd"] for t in target])
    assert ((gt[:, 1] & 1) == (crowd == 0).int()).all()
    assert (gt[:, 0] == torch.cat([t["labels"] for t in target])).all()


def test_no_images_gives_none() -> None:
    assert coco_evaluate([], []) is None
