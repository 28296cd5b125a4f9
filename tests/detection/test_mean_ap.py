"""MeanAveragePrecision / mean_average_precision against pycocotools' COCOeval (driven as
torchmetrics 1.9 drives it: tests/support/coco_reference.py), faster_coco_eval on one set, one
3-rank gloo run, and the life-cycle checks of the shared tester."""

import contextlib
import functools
import io
import json
import warnings

import numpy as np
import pytest
import torch
from support import coco_reference as cr
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases

from torchtally import MetricCollection
from torchtally.detection import MeanAveragePrecision
from torchtally.functional.detection import mean_average_precision

STATS = ["map", "map_50", "map_75", "map_small", "map_medium", "map_large"]


def _stat_names(mdt):
    return STATS + [f"mar_{m}" for m in mdt] + ["mar_small", "mar_medium", "mar_large"]


def expected(preds, target, *, iou_type="bbox", backend="pycocotools", class_metrics=False, prefix="", **kw):
    """torchmetrics' result keys computed with COCOeval itself (float64, as a dict of floats/arrays)."""
    mdt = sorted(kw.get("max_detection_thresholds") or [1, 10, 100])
    ev = cr.coco_evaluate(preds, target, iou_type=iou_type, backend=backend, **kw)
    if ev is None:
        return {prefix + k: -1.0 for k in _stat_names(mdt)}
    with contextlib.redirect_stdout(io.StringIO()):
        ev.summarize()
    out = {prefix + k: float(v) for k, v in zip(_stat_names(mdt), ev.stats)}
    if class_metrics:
        macro = dict(kw, average="macro")
        ev = cr.coco_evaluate(preds, target, iou_type=iou_type, backend=backend, **macro)
        per_class = []
        for cat in list(ev.params.catIds):
            ev.params.catIds = [cat]
            with contextlib.redirect_stdout(io.StringIO()):
                ev.evaluate()
                ev.accumulate()
                ev.summarize()
            per_class.append((ev.stats[0], ev.stats[8]))
        out[prefix + "map_per_class"] = np.array([p[0] for p in per_class])
        out[prefix + f"mar_{mdt[-1]}_per_class"] = np.array([p[1] for p in per_class])
    return out


def _compare(result, want, atol=1e-6):
    for key, value in want.items():
        got = result[key].double().numpy()
        assert np.allclose(got, value, atol=atol, rtol=0), (key, got, value)


def _batches(preds, target, sizes):
    out, start = [], 0
    for s in sizes:
        out.append((preds[start : start + s], target[start : start + s]))
        start += s
    return out


BBOX = cr.synthetic_detections(0, 48, 5)
SEGM = cr.synthetic_detections(1, 14, 3, masks=True, image_size=48)

CONFIGS = [  # (name, kwargs, data)
    ("bbox", {}, BBOX),
    (
        "bbox-custom",
        dict(
            iou_thresholds=[0.3, 0.5, 0.75], rec_thresholds=[0.0, 0.3, 0.7, 1.0], max_detection_thresholds=[2, 5, 100]
        ),
        BBOX,
    ),
    ("bbox-class-metrics-xywh", dict(class_metrics=True, box_format="xywh"), BBOX),
    ("bbox-micro-class-metrics", dict(average="micro", class_metrics=True), BBOX),
    ("segm", dict(iou_type="segm"), SEGM),
]


def _xywh(data):
    preds, target = data
    conv = [dict(d, boxes=torch.cat([d["boxes"][:, :2], d["boxes"][:, 2:] - d["boxes"][:, :2]], 1)) for d in preds]
    convt = [dict(d, boxes=torch.cat([d["boxes"][:, :2], d["boxes"][:, 2:] - d["boxes"][:, :2]], 1)) for d in target]
    return conv, convt


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c[0])
def test_equals_pycocotools_over_several_updates(config):
    _, kw, data = config
    preds, target = _xywh(data) if kw.get("box_format") == "xywh" else data
    metric = MeanAveragePrecision(**kw)
    for p, t in _batches(preds, target, [5, 0, 17, len(preds) - 22]):
        metric.update(p, t)
    result = metric.compute()
    _compare(result, expected(preds, target, **kw))
    assert result["map"].dtype == torch.float32 and result["map"].dim() == 0
    labels = torch.cat([d["labels"] for d in preds + target]).unique()
    assert torch.equal(result["classes"], labels.int())
    if not kw.get("class_metrics"):
        assert result["map_per_class"].item() == -1
    functional = mean_average_precision(preds, target, **kw)
    assert functional.keys() == result.keys()
    for key in result:
        assert torch.equal(functional[key], result[key]), key


def test_extended_summary_and_tuple_iou_type():
    preds, target = SEGM
    metric = MeanAveragePrecision(iou_type=("bbox", "segm"), extended_summary=True)
    metric.update(preds, target)
    result = metric.compute()
    ev = cr.coco_evaluate(preds, target, iou_type="segm", keep_unannotated=True)
    for key in ("precision", "recall", "scores"):
        assert torch.equal(result[f"segm_{key}"], torch.from_numpy(ev.eval[key])), key
    _compare(result, expected(preds, target, iou_type="segm", prefix="segm_"))
    # torchmetrics' bbox pass of a tuple keeps the ground truths' mask areas
    with_area = [dict(t, area=t["masks"].flatten(1).sum(1).float()) for t in target]
    _compare(result, expected(preds, with_area, prefix="bbox_"))
    assert_same(result["segm_ious"], _coco_ious(ev))


def _coco_ious(ev):
    """COCOeval.ious as torchmetrics returns them (float32 tensors, [] where a side is empty)."""
    return {(int(i), int(c)): torch.tensor(v, dtype=torch.float32) if len(v) else [] for (i, c), v in ev.ious.items()}


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_extended_summary_ious_equal_pycocotools(average):
    preds, target = BBOX
    metric = MeanAveragePrecision(extended_summary=True, average=average, max_detection_thresholds=[1, 2, 3])
    metric.warn_on_many_detections = False
    for p, t in _batches(preds, target, [5, 0, 17, len(preds) - 22]):
        metric.update(p, t)
    result = metric.compute()
    ev = cr.coco_evaluate(preds, target, average=average, max_detection_thresholds=[1, 2, 3])
    assert list(result["ious"]) == list(ev.ious)  # every (image, label), in pycocotools' order
    assert_same(result["ious"], _coco_ious(ev))  # bit-identical float32 matrices, cut at 3 detections
    assert any(isinstance(v, torch.Tensor) and v.shape[0] == 3 for v in result["ious"].values())
    for key in ("precision", "recall", "scores"):
        assert torch.equal(result[key], torch.from_numpy(ev.eval[key])), key
    state_bytes = sum(getattr(metric, n).numel() * getattr(metric, n).element_size() for n in ("bbox_iou_values",))
    assert state_bytes == 4 * sum(v.numel() for v in result["ious"].values() if isinstance(v, torch.Tensor))


def test_tuple_keeps_images_without_masks_in_segm():
    preds, target = cr.synthetic_detections(3, 10, 3, masks=True, image_size=40)
    target[2] = {"masks": torch.tensor([]), "boxes": torch.zeros(0, 4), "labels": torch.zeros(0, dtype=torch.long)}
    assert preds[2]["labels"].numel() > 0
    preds[2] = dict(preds[2], scores=torch.ones_like(preds[2]["scores"]))  # false positives ranked first
    both = mean_average_precision(preds, target, iou_type=("bbox", "segm"))
    segm = mean_average_precision(preds, target, iou_type="segm")
    kept = expected(preds, target, iou_type="segm", prefix="segm_", keep_unannotated=True)
    _compare(both, kept)
    _compare(segm, expected(preds, target, iou_type="segm"))
    assert segm["map"].item() != both["segm_map"].item()  # the image's detections count only in the tuple


def test_empty_mask_tensors_mean_no_objects():
    one = {"masks": torch.ones(1, 10, 10, dtype=torch.bool), "scores": torch.tensor([0.5]), "labels": torch.tensor([4])}
    for preds, target in (
        ([one], [{"masks": torch.tensor([]), "labels": torch.tensor([], dtype=torch.int32)}]),
        ([{"masks": torch.BoolTensor([]), "scores": torch.tensor([]), "labels": torch.IntTensor([])}], [dict(one)]),
    ):
        result = MeanAveragePrecision(iou_type="segm").update(preds, target).compute()
        assert all(v.item() == -1 for k, v in result.items() if k != "classes")
        assert result["classes"].item() == 4


def test_warning_on_many_detections():
    box = {"boxes": torch.tensor([[0.0, 0.0, 1.0, 1.0]]), "labels": torch.tensor([0])}
    many = dict(box, boxes=box["boxes"].repeat(101, 1), scores=torch.ones(101), labels=torch.zeros(101).long())
    metric = MeanAveragePrecision()
    with pytest.warns(UserWarning, match=r"Encountered more than 100 detections in a single image \(preds\[1\]"):
        metric.update([dict(box, scores=torch.ones(1)), many], [box, box])
    metric.warn_on_many_detections = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric.update([many], [box])
        MeanAveragePrecision(max_detection_thresholds=[1, 10, 101]).update([many], [box])


def test_torchmetrics_error_wording_and_state_unchanged():
    preds, target = BBOX
    metric = MeanAveragePrecision()
    metric.update(preds[:3], target[:3])
    cases = [
        ((torch.zeros(1), target[:1]), "Expected argument `preds` to be of type Sequence"),
        ((preds[:1], torch.zeros(1)), "Expected argument `target` to be of type Sequence"),
        ((preds[:1], target[:2]), "Expected argument `preds` and `target` to have the same length"),
        (([{"scores": torch.ones(0), "labels": torch.ones(0)}], target[:1]), r"contain the `boxes` key: preds\[0\]"),
        ((preds[:1], [{"boxes": torch.ones(0, 4)}]), r"`target` to contain the `labels` key: target\[0\]"),
        (([dict(preds[0], scores=[0.5])], target[:1]), r"all scores in `preds` to be of type Tensor: preds\[0\]"),
    ]
    for args, match in cases:
        assert_rejects(metric, args, ValueError, match)
    for kwargs, match in (
        (dict(class_metrics=0), "Expected argument `class_metrics` to be a boolean"),
        (dict(max_detection_thresholds=[1, 10]), "When providing a list of max detection thresholds it should have"),
        (dict(iou_thresholds=0.5), "Expected argument `iou_thresholds` to either be `None` or a list of floats"),
    ):
        with pytest.raises(ValueError, match=match):
            MeanAveragePrecision(**kwargs)


def test_coco_files_round_trip(tmp_path):
    preds, target = BBOX[0][:6], BBOX[1][:6]
    images = [i for i, t in enumerate(target) if len(t["labels"])]
    gt = {"images": [{"id": i} for i in images], "categories": [{"id": c} for c in range(5)], "annotations": []}
    dt = []
    for i in images:
        for k, (box, label) in enumerate(
            zip(cr.to_xywh(target[i]["boxes"], "xyxy").tolist(), target[i]["labels"].tolist())
        ):
            gt["annotations"].append(
                {
                    "id": len(gt["annotations"]) + 1,
                    "image_id": i,
                    "bbox": box,
                    "category_id": label,
                    "area": 1.0 + k,
                    "iscrowd": 0,
                }
            )
        for box, label, score in zip(
            cr.to_xywh(preds[i]["boxes"], "xyxy").tolist(), preds[i]["labels"].tolist(), preds[i]["scores"].tolist()
        ):
            dt.append({"image_id": i, "bbox": box, "category_id": label, "score": score})
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dt))
    p2, t2 = MeanAveragePrecision().coco_to_tm(str(tmp_path / "dt.json"), str(tmp_path / "gt.json"))
    assert len(p2) == len(t2) == len(images)
    for j, i in enumerate(images):
        assert torch.equal(t2[j]["boxes"], cr.to_xywh(target[i]["boxes"], "xyxy").float())
        assert torch.equal(t2[j]["labels"], target[i]["labels"].int()) and t2[j]["area"][0].item() == 1.0
        assert torch.equal(p2[j]["scores"], preds[i]["scores"].float()) and p2[j]["boxes"].shape == (
            len(p2[j]["scores"]),
            4,
        )
    with pytest.raises(NotImplementedError, match="keeps no boxes"):
        MeanAveragePrecision().tm_to_coco("x")


def test_faster_coco_eval_backend():
    preds, target = BBOX
    result = mean_average_precision(preds, target, backend="faster_coco_eval")
    _compare(result, expected(preds, target, backend="faster_coco_eval"))


def test_empty():
    metric = MeanAveragePrecision(class_metrics=True)
    result = metric.update([], []).compute()
    assert all(result[k].item() == -1 for k in _stat_names([1, 10, 100]))
    assert "map_per_class" not in result and result["classes"].numel() == 0
    no_gt = [{"boxes": torch.zeros(0, 4), "labels": torch.zeros(0, dtype=torch.long)}]
    no_dt = [{"boxes": torch.zeros(0, 4), "scores": torch.zeros(0), "labels": torch.zeros(0, dtype=torch.long)}]
    result = metric.update(no_dt, no_gt).compute()
    assert result["map"].item() == -1 and result["map_per_class"].numel() == 0


def test_bad_input_leaves_state_unchanged():
    preds, target = BBOX
    metric = MeanAveragePrecision(average="micro", class_metrics=True)
    metric.update(preds[:4], target[:4])
    nan_scores = dict(preds[4], scores=torch.full((len(preds[4]["labels"]),), float("nan")))
    nan_scores = (
        nan_scores
        if len(preds[4]["labels"])
        else dict(preds[4], scores=torch.tensor([float("nan")]), boxes=torch.ones(1, 4), labels=torch.ones(1).long())
    )
    assert_rejects(metric, (preds[2:4] + [nan_scores], target[2:5]), ValueError, "scores")
    assert_rejects(metric, (preds[2:4], target[2:5]), ValueError, "")
    one_gt = [{"boxes": torch.tensor([[0.0, 0, 10, 10]]), "labels": torch.tensor([0])}]
    huge_score = [
        {
            "boxes": torch.tensor([[0.0, 0, 10, 10]]),
            "scores": torch.tensor([1e300], dtype=torch.float64),
            "labels": torch.tensor([0]),
        }
    ]
    assert_rejects(metric, (huge_score, one_gt), ValueError, r"preds\[0\]\['scores'\]: .*float32's range")
    overflowing = [
        {"boxes": torch.tensor([[-3e38, 0, 3e38, 10]]), "scores": torch.tensor([0.5]), "labels": torch.tensor([0])}
    ]
    assert_rejects(metric, (overflowing, one_gt), ValueError, r"preds\[0\]\['boxes'\]: .*fit the boxes' dtype")
    with pytest.raises(ValueError, match="iou_type"):
        MeanAveragePrecision(iou_type="keypoints")
    with pytest.raises(ValueError, match="max_detection_thresholds"):
        MeanAveragePrecision(max_detection_thresholds=[1, 10])
    with pytest.raises(ValueError, match="box_format"):
        MeanAveragePrecision(box_format="xy")
    with pytest.raises(ValueError, match="backend"):
        MeanAveragePrecision(backend="detectron")


def test_collection_state_dict_reset():
    preds, target = BBOX

    def make():
        return MetricCollection({"macro": MeanAveragePrecision(), "micro": MeanAveragePrecision(average="micro")})

    col = make()
    col.persistent(True)
    col.update(preds[:20], target[:20])
    fresh = make()
    fresh.persistent(True)
    fresh.load_state_dict(col.state_dict())
    a, b = col.compute(), fresh.compute()
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    col.reset()
    col.update(preds[20:], target[20:])
    result = col.compute()
    _compare(
        {k[len("macro_") :]: v for k, v in result.items() if k.startswith("macro_")}, expected(preds[20:], target[20:])
    )
    want = expected(preds[20:], target[20:], average="micro")
    _compare({k[len("micro_") :]: v for k, v in result.items() if k.startswith("micro_")}, want)


def _reference(batches, **kw):
    preds = [p for b in batches for p in b[0]]
    target = [t for b in batches for t in b[1]]
    want = {k: torch.tensor(v, dtype=torch.float32).squeeze() for k, v in expected(preds, target, **kw).items()}
    want["classes"] = torch.cat([d["labels"] for d in preds + target]).unique().int()
    return want


TIES = ([dict(p, scores=(p["scores"] * 2).round() / 2) for p in BBOX[0]], BBOX[1])  # scores 0, 0.5, 1: many ties


def _interleaved(shards):
    """The images of the shards (one list of batches per rank) in torchmetrics' gathered order:
    image i of rank 0, image i of rank 1, ..., as a DistributedSampler deals them."""
    per_rank = [[(p, t) for batch in shard for p, t in zip(*batch)] for shard in shards]
    pairs = [r[i] for i in range(max(map(len, per_rank), default=0)) for r in per_rank if i < len(r)]
    return [p for p, _ in pairs], [t for _, t in pairs]


def _sharded_extended(shards, **kw):
    preds, target = _interleaved(shards)
    want = _reference([(preds, target)], **kw)
    ev = cr.coco_evaluate(preds, target, **kw)
    want.update({k: torch.from_numpy(ev.eval[k]) for k in ("precision", "recall", "scores")})
    want["ious"] = _coco_ious(ev)
    want["map_per_class"] = want[f"mar_{kw['max_detection_thresholds'][-1]}_per_class"] = torch.tensor(-1.0)
    return want


def _sharded_reference(shards, **kw):
    return _reference([_interleaved(shards)], **kw)


def test_ties_across_ranks_follow_the_interleaved_order(monkeypatch):
    shards = [_batches(*TIES, [4, 3]), [(TIES[0][7:20], TIES[1][7:20])], [(TIES[0][20:30], TIES[1][20:30])]]
    parts = []
    for rank, shard in enumerate(shards):
        monkeypatch.setattr(MeanAveragePrecision, "_rank", lambda self, r=rank: r)
        parts.append(feed_all(MeanAveragePrecision(class_metrics=True), shard))
    assert parts[2].images[:, 0].div(2, rounding_mode="floor").eq(2).all()  # the rank that updated
    parts[0].merge_state(parts[1:])  # rank after rank, as a sync concatenates
    result = parts[0].compute()
    want = _sharded_reference(shards, class_metrics=True)
    _compare(result, {k: v.numpy() for k, v in want.items()})
    rank_major = _reference([b for shard in shards for b in shard], class_metrics=True)
    assert any(not torch.allclose(rank_major[k], want[k], atol=1e-6) for k in STATS), "no tie decided by the order"


def feed_all(metric, batches):
    for p, t in batches:
        metric.update(p, t)
    return metric


def _ranked(state, rank):
    """The state rank ``rank`` holds: each image's row records the rank (column 0: rank * 2 + has a gt)."""
    images = state["images"].clone()
    images[:, 0] += 2 * rank
    return dict(state, images=images)


def _quiet_micro_extended():
    metric = MeanAveragePrecision(average="micro", extended_summary=True, max_detection_thresholds=[1, 2, 3])
    metric.warn_on_many_detections = False
    return metric


_DIST_BATCHES = _batches(*TIES, [3, 7, 1, 9, 4, 8, 5, 11])
DIST_CASES = [
    MetricCase(
        "map-class-metrics-ties",
        functools.partial(MeanAveragePrecision, class_metrics=True),
        batches=_DIST_BATCHES,
        sharded_reference=functools.partial(_sharded_reference, class_metrics=True),
        local_state_of_rank=_ranked,
        rtol=0,
        atol=1e-6,
    ),
    MetricCase(
        "map-micro-extended-ties",
        functools.partial(
            MeanAveragePrecision, average="micro", extended_summary=True, max_detection_thresholds=[1, 2, 3]
        ),
        batches=_DIST_BATCHES,
        sharded_reference=functools.partial(_sharded_extended, average="micro", max_detection_thresholds=[1, 2, 3]),
        local_state_of_rank=_ranked,
        rtol=0,
        atol=1e-6,
    ),
]
LIFECYCLE_CASES = [
    MetricCase(
        "map-class-metrics",
        functools.partial(MeanAveragePrecision, class_metrics=True),
        batches=_batches(*BBOX, [3, 7, 1, 9, 4, 8, 5, 11]),
        reference=functools.partial(_reference, class_metrics=True),
        reference_on_batches=True,
        rtol=0,
        atol=1e-6,
    )
]


def test_lifecycle():
    for case in LIFECYCLE_CASES:
        check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(DIST_CASES)
