"""The IoU family (IntersectionOverUnion, GeneralizedIntersectionOverUnion,
DistanceIntersectionOverUnion, CompleteIntersectionOverUnion) and its functional forms: against
a plain torch oracle of torchmetrics' rule (support/detection_boxes.py) and hand-checked values,
through the shared life-cycle tester and one 3-rank run, and bad inputs that leave the state
unchanged. The comparison with torchmetrics itself is tests/with_torchvision/."""

import functools

import pytest
import torch
from support.detection_boxes import oracle, random_batches
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

import torchtally.functional.detection as F
from torchtally.detection import (
    CompleteIntersectionOverUnion,
    DistanceIntersectionOverUnion,
    GeneralizedIntersectionOverUnion,
    IntersectionOverUnion,
)
from torchtally.errors import InputTypeError

CLASSES = (
    IntersectionOverUnion,
    GeneralizedIntersectionOverUnion,
    DistanceIntersectionOverUnion,
    CompleteIntersectionOverUnion,
)
FORMS = (
    F.intersection_over_union,
    F.generalized_intersection_over_union,
    F.distance_intersection_over_union,
    F.complete_intersection_over_union,
)


def _case(name, kind, seed, **options):
    box_format = options.get("box_format", "xyxy")
    batches = random_batches(seed, box_format=box_format)
    return MetricCase(
        name,
        functools.partial(CLASSES[kind], **options),
        batches,
        reference=lambda bs: oracle(bs, kind, **options),
        reference_on_batches=True,
        rtol=1e-6,
        atol=1e-7,
    )


CASES = [
    _case("iou", 0, 1),
    _case("giou-classes", 1, 2, class_metrics=True),
    _case("diou-all-pairs-classes", 2, 3, class_metrics=True, respect_labels=False),
    _case("ciou-threshold-xywh", 3, 4, iou_threshold=0.3, box_format="xywh"),
    _case("iou-cxcywh-threshold-classes", 0, 5, iou_threshold=0.2, box_format="cxcywh", class_metrics=True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_against_the_oracle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_equals_one_process():
    run_distributed_cases(CASES)


def _image(boxes, labels):
    return {"boxes": torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4), "labels": torch.tensor(labels)}


def test_hand_checked_values():
    # IoU([0,0,10,10], [0,0,10,5]) = 50 / 100; IoU([5,5,15,15], [5,5,10,10]) = 25 / 100;
    # the cross pairs: [0,0,10,10] x [5,5,10,10] = 25 / 100, [5,5,15,15] x [0,0,10,5] = 0
    preds = [_image([[0, 0, 10, 10], [5, 5, 15, 15]], [1, 2])]
    target = [_image([[0, 0, 10, 5], [5, 5, 10, 10]], [1, 2])]
    assert IntersectionOverUnion().update(preds, target).compute()["iou"].item() == pytest.approx(0.375)
    every = IntersectionOverUnion(respect_labels=False, class_metrics=True).update(preds, target).compute()
    assert {k: round(v.item(), 6) for k, v in every.items()} == {"iou": 0.25, "iou/cl_1": 0.25, "iou/cl_2": 0.25}
    # a threshold drops the pairs below it from the mean (not counted as 0)
    assert IntersectionOverUnion(iou_threshold=0.3).update(preds, target).compute()["iou"].item() == 0.5
    # an image without predictions counts a 0 per target; one without targets a 0 per prediction
    m = IntersectionOverUnion(class_metrics=True)
    m.update(
        preds + [_image([], []), _image([[1, 1, 2, 2]], [7])], target + [_image([[0, 0, 4, 4]], [2]), _image([], [])]
    )
    got = {k: round(v.item(), 6) for k, v in m.compute().items()}
    assert got == {"iou": round(0.75 / 4, 6), "iou/cl_1": 0.5, "iou/cl_2": 0.125, "iou/cl_7": 0.0}
    # GIoU of disjoint boxes: -(enclosing - union) / enclosing = -(200 - 150) / 200
    g = F.generalized_intersection_over_union(torch.tensor([[10.0, 0, 20, 10]]), torch.tensor([[0.0, 0, 10, 5]]))
    assert g.item() == pytest.approx(-0.25)
    # DIoU: centres (5, 5) and (5, 2.5), enclosing diagonal^2 = 200
    d = F.distance_intersection_over_union(torch.tensor([[0.0, 0, 10, 10]]), torch.tensor([[0.0, 0, 10, 5]]))
    assert d.item() == pytest.approx(0.5 - 6.25 / (200 + 1e-7), rel=1e-6)


def test_results_follow_the_metric_dtype_and_empty_compute():
    preds, target = [_image([[0, 0, 10, 10]], [1])], [_image([[0, 0, 10, 5]], [1])]
    assert IntersectionOverUnion().update(preds, target).compute()["iou"].dtype == torch.float32
    m = IntersectionOverUnion(class_metrics=True)
    m.set_dtype(torch.float64)
    assert m.update(preds, target).compute()["iou/cl_1"].dtype == torch.float64
    with pytest.warns(UserWarning):
        assert IntersectionOverUnion(class_metrics=True).compute() == {"iou": torch.tensor(0.0)}


@pytest.mark.parametrize("kind", range(4))
def test_functional_forms_match_the_reference_matrix(kind):
    from torchtally.kernels.reference.box_overlap import pairwise

    (preds, target), *_ = random_batches(kind, n_batches=1, images=1, empty=False)
    p, t = preds[0]["boxes"], target[0]["boxes"]
    want = pairwise(p.double(), t.double(), kind)
    got = FORMS[kind](p, t, aggregate=False)
    assert got.dtype == torch.float32 and got.shape == want.shape
    torch.testing.assert_close(got.double(), want, rtol=1e-6, atol=1e-6)
    k = min(p.shape[0], t.shape[0])
    assert FORMS[kind](p.double(), t.double()).item() == pytest.approx(want.diagonal()[:k].mean().item(), rel=1e-12)
    low = FORMS[kind](p.double(), t.double(), iou_threshold=0.5, replacement_val=-3.0, aggregate=False)
    assert torch.equal(low, torch.where(want < 0.5, -3.0, want))
    # no boxes on one side: torchmetrics' square matrix of zeros
    assert torch.equal(FORMS[kind](p[:0], t, aggregate=False), torch.zeros(t.shape[0], t.shape[0]))
    assert FORMS[kind](p, t[:0]).item() == 0.0


BAD_UPDATES = [
    (
        ([{"boxes": torch.zeros(1, 4)}], [{"boxes": torch.zeros(1, 4), "labels": torch.tensor([0])}]),
        ValueError,
        "`preds` to contain the `labels` key \\(preds\\[0\\] lacks it\\)",
    ),
    (([_image([[0, 0, 1, 1]], [0])], []), ValueError, "`preds` and `target` to have the same length"),
    (
        ([_image([[0, 0, 1, 1]], [0])], [{"boxes": torch.zeros(1, 4), "labels": torch.tensor([0.0])}]),
        TypeError,
        "target\\[0\\]\\['labels'\\]",
    ),
    (
        ([_image([[0, 0, 1, 1]], [0, 1])], [_image([[0, 0, 1, 1]], [0])]),
        ValueError,
        "preds\\[0\\]\\['labels'\\]: expected 1 labels",
    ),
    (
        ([{"boxes": torch.zeros(2, 3), "labels": torch.tensor([0, 1])}], [_image([[0, 0, 1, 1]], [0])]),
        ValueError,
        "Expected preds\\[0\\]\\['boxes'\\] to be of shape \\[N, 4\\]",
    ),
    (([_image([[0, 0, 1, float("nan")]], [0])], [_image([[0, 0, 1, 1]], [0])]), ValueError, "preds: image 0, box 0"),
    (
        ([_image([[0, 0, 1, 1]], [0])], [_image([[0, 0, 1, 1], [5, 0, 4, 1]], [0, 0])]),
        ValueError,
        "target: image 0, box 1 .* x1 <= x2",
    ),
    (
        ([_image([[0, 0, 1, 1]], [0])], _image([[0, 0, 1, 1]], [0])),
        ValueError,
        "Expected argument `target` to be of type Sequence",
    ),
    (([torch.zeros(1, 4)], [_image([[0, 0, 1, 1]], [0])]), TypeError, "preds\\[0\\]: expected a dict"),
    (
        ([{"boxes": [[0, 0, 1, 1]], "labels": torch.tensor([0])}], [_image([[0, 0, 1, 1]], [0])]),
        TypeError,
        "preds\\[0\\]\\['boxes'\\]",
    ),
    # 0 / 0: two boxes of zero area with equal labels
    (
        ([_image([[1, 1, 1, 1]], [0])], [_image([[2, 2, 2, 2]], [0])]),
        ValueError,
        "image 0: the IoU of prediction 0 and target 0 is undefined",
    ),
]


@pytest.mark.parametrize("args,exc,match", BAD_UPDATES, ids=range(len(BAD_UPDATES)))
def test_bad_updates_raise_and_leave_the_state(args, exc, match):
    m = IntersectionOverUnion(class_metrics=True)
    m.update(*random_batches(9, n_batches=1)[0])
    assert_rejects(m, args, exc, match)


def test_bad_options_and_functional_inputs():
    with pytest.raises(ValueError, match="box_format"):
        IntersectionOverUnion(box_format="yxyx")
    with pytest.raises(ValueError, match="class_metrics"):
        GeneralizedIntersectionOverUnion(class_metrics=1)
    with pytest.raises(ValueError, match="respect_labels"):
        DistanceIntersectionOverUnion(respect_labels="no")
    with pytest.raises(TypeError, match="iou_threshold"):
        CompleteIntersectionOverUnion(iou_threshold="0.5")
    box = torch.tensor([[0.0, 0, 1, 1]])
    with pytest.raises(ValueError, match="preds: box 0"):
        F.intersection_over_union(torch.tensor([[0.0, 0, float("inf"), 1]]), box)
    with pytest.raises(ValueError, match="target: box 0 .* x1 <= x2"):
        F.complete_intersection_over_union(box, torch.tensor([[3.0, 0, 1, 1]]))
    with pytest.raises(ValueError, match="Expected preds to be of shape \\[N, 4\\]"):
        F.generalized_intersection_over_union(torch.zeros(2, 5), box)
    with pytest.raises(TypeError, match="target: expected a floating or integer tensor"):
        F.distance_intersection_over_union(box, box.bool())
    with pytest.raises(TypeError, match="replacement_val"):
        F.intersection_over_union(box, box, 0.5, None)


NOT_TENSORS = [
    ("preds", "boxes", [[0.0, 0, 1, 1]]),
    ("target", "boxes", None),
    ("preds", "labels", [0]),
    ("target", "labels", None),
]


@pytest.mark.parametrize(
    "cls",
    [
        IntersectionOverUnion,
        GeneralizedIntersectionOverUnion,
        DistanceIntersectionOverUnion,
        CompleteIntersectionOverUnion,
    ],
)
@pytest.mark.parametrize("side,key,value", NOT_TENSORS)
def test_boxes_or_labels_that_are_not_tensors_raise_both_type_and_value_error(cls, side, key, value):
    """torchmetrics raises ValueError there ("Expected all boxes in `preds` to be of type Tensor"):
    code catching ValueError, or TypeError (torchtally's rule for a wrong type), catches it."""
    good = [_image([[0, 0, 1, 1]], [0])]
    bad = [{**good[0], key: value}]
    args = (bad, good) if side == "preds" else (good, bad)
    m = cls()
    m.update(*random_batches(9, n_batches=1)[0])
    for exc in (InputTypeError, TypeError, ValueError):
        assert_rejects(
            m, args, exc, rf"^{side}\[0\]\['{key}'\]: .* \(Expected all {key} in `{side}` to be of type Tensor\)$"
        )


@pytest.mark.parametrize(
    "fn",
    [
        "intersection_over_union",
        "generalized_intersection_over_union",
        "distance_intersection_over_union",
        "complete_intersection_over_union",
    ],
)
def test_functional_boxes_that_are_not_tensors_raise_both_type_and_value_error(fn):
    box = torch.tensor([[0.0, 0, 1, 1]])
    for args, name in (((box.tolist(), box), "preds"), ((box, None), "target")):
        for exc in (TypeError, ValueError):
            with pytest.raises(exc, match=f"^{name}: expected a tensor of boxes"):
                getattr(F, fn)(*args)
    assert issubclass(InputTypeError, TypeError) and issubclass(InputTypeError, ValueError)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32])
def test_reference_backend_forward_and_box_dtypes(dtype):
    from support.metric_tester import assert_same

    from torchtally import kernels

    batches = random_batches(21, n_batches=2, dtype=torch.float64)
    if dtype == torch.int32:
        batches = [([{**d, "boxes": d["boxes"].round().to(dtype)} for d in p], t) for p, t in batches]
        batches = [(p, [{**d, "boxes": d["boxes"].round().to(dtype)} for d in t]) for p, t in batches]
    results = []
    for backend in ("c", "reference"):
        previous = kernels.set_backend(backend)
        try:
            m = GeneralizedIntersectionOverUnion(class_metrics=True, iou_threshold=-0.5)
            first = m(*batches[0])  # forward: the first batch's value
            assert_same(first, oracle(batches[:1], 1, iou_threshold=-0.5, class_metrics=True), 1e-6, 1e-7)
            m(*batches[1])
            results.append(m.compute())
        finally:
            kernels.set_backend(previous)
    want = oracle(batches, 1, iou_threshold=-0.5, class_metrics=True)
    assert_same(results[0], want, 1e-6, 1e-7)
    assert_same(results[1], results[0], 1e-12, 1e-12)
