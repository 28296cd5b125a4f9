"""torchtally.segmentation (MeanIoU, DiceScore, GeneralizedDiceScore, HausdorffDistance) and the
functional forms: against torchmetrics 1.9, scipy / scikit-image for the Hausdorff distance, on 3
gloo ranks, and on bad input."""

import functools
import warnings

import numpy as np
import pytest
import torch
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases

import torchtally.functional.segmentation as TF
import torchtally.segmentation as TS

tm_seg = pytest.importorskip("torchmetrics.segmentation")
tm_fseg = pytest.importorskip("torchmetrics.functional.segmentation")

C = 4
_G = torch.Generator().manual_seed(7)


def _onehot_batches():
    out = []
    for i, n in enumerate((3, 1, 4, 2)):
        preds = torch.randn(n, C, 9, 9, generator=_G) if i == 1 else torch.randint(0, 2, (n, C, 9, 9), generator=_G)
        target = torch.randint(0, 2, (n, C, 9, 9), generator=_G)
        target[0, 2] = 0  # a class absent from one sample's target
        out.append((preds, target))
    return out


def _index_batches():
    return [
        (torch.randint(0, C, (n, 9, 9), generator=_G), torch.randint(0, C - 1, (n, 9, 9), generator=_G))
        for n in (3, 1, 4, 2)
    ]


ONEHOT, INDEX = _onehot_batches(), _index_batches()


def _torchmetrics_on(name, kwargs, batches):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DiceScore(average="micro") warns of a past default change
        metric = getattr(tm_seg, name)(**kwargs)
        for preds, target in batches:
            metric.update(preds, target)
        return metric.compute()


def _case(name, batches, **kwargs):
    label = f"{name}-" + "-".join(f"{k}={v}" for k, v in kwargs.items())
    return MetricCase(
        label,
        functools.partial(getattr(TS, name), **kwargs),
        batches,
        reference=functools.partial(_torchmetrics_on, name, kwargs),
        reference_on_batches=True,
        rtol=1e-5,
        atol=1e-6,
    )


CASES = [
    _case("MeanIoU", ONEHOT, num_classes=C),
    _case("MeanIoU", ONEHOT, per_class=True, include_background=False),  # C from the first batch ("merge")
    _case("MeanIoU", INDEX, num_classes=C, include_background=False, per_class=True, input_format="index"),
    _case("MeanIoU", ONEHOT, include_background=False),
    _case("DiceScore", ONEHOT, num_classes=C, average="micro"),
    _case("DiceScore", INDEX, num_classes=C, average="weighted", input_format="index"),
    _case("DiceScore", ONEHOT, num_classes=C, average="none", include_background=False),
    _case("DiceScore", INDEX, num_classes=C, average="macro", aggregation_level="global", input_format="index"),
    _case("GeneralizedDiceScore", ONEHOT, num_classes=C),
    _case("GeneralizedDiceScore", INDEX, num_classes=C, per_class=True, weight_type="simple", input_format="index"),
    _case("HausdorffDistance", INDEX, num_classes=C, input_format="index"),
    _case(
        "HausdorffDistance",
        INDEX,
        num_classes=C,
        distance_metric="chessboard",
        spacing=[2.0, 0.5],
        input_format="index",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle_against_torchmetrics(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_equals_one_process():
    run_distributed_cases(CASES)


def _mixed():
    preds = torch.randn(3, C, 9, 9, generator=_G)
    target = torch.randint(0, C, (3, 9, 9), generator=_G)
    return preds, target


FUNCTIONAL = [
    ("mean_iou", ONEHOT[0], dict(num_classes=C, per_class=True)),
    ("mean_iou", INDEX[0], dict(num_classes=C, include_background=False, input_format="index")),
    ("mean_iou", _mixed(), dict(input_format="mixed")),
    ("dice_score", ONEHOT[0], dict(num_classes=C, average="weighted")),
    ("dice_score", INDEX[2], dict(num_classes=C, average="none", input_format="index")),
    ("dice_score", _mixed(), dict(num_classes=C, average="micro", aggregation_level="global", input_format="mixed")),
    ("generalized_dice_score", ONEHOT[2], dict(num_classes=C, weight_type="square")),
    ("generalized_dice_score", INDEX[0], dict(num_classes=C, per_class=True, input_format="index")),
    ("generalized_dice_score", _mixed()[::-1], dict(num_classes=C, weight_type="linear", input_format="mixed")),
    ("hausdorff_distance", INDEX[0], dict(num_classes=C, input_format="index")),
    (
        "hausdorff_distance",
        INDEX[2],
        dict(num_classes=C, directed=True, distance_metric="taxicab", input_format="index"),
    ),
    ("hausdorff_distance", _mixed(), dict(num_classes=C, spacing=[0.5, 2.0], input_format="mixed")),
]


@pytest.mark.parametrize("name,batch,kwargs", FUNCTIONAL, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(FUNCTIONAL)])
def test_functional_against_torchmetrics(name, batch, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(tm_fseg, name)(*batch, **kwargs)
    actual = getattr(TF, name)(*batch, **kwargs)
    assert actual.dtype == expected.dtype
    assert_same(actual, expected, rtol=1e-5, atol=1e-6, what=name)


def _edge_points(mask):
    m = np.pad(mask, 1)
    inner = m[:-2, 1:-1] & m[2:, 1:-1] & m[1:-1, :-2] & m[1:-1, 2:]
    return np.argwhere(mask & ~inner)


def test_hausdorff_against_scipy_and_skimage():
    """Euclidean, unit spacing: the edge point sets' Hausdorff distance (scipy), and scikit-image's
    hausdorff_distance of the edge images; also on images that are not square."""
    directed_hausdorff = pytest.importorskip("scipy.spatial.distance").directed_hausdorff
    skimage_metrics = pytest.importorskip("skimage.metrics")
    g = torch.Generator().manual_seed(3)
    for h, w in ((12, 12), (7, 15)):
        preds = torch.randint(0, 3, (4, h, w), generator=g)
        target = torch.randint(0, 3, (4, h, w), generator=g)
        both = TF.hausdorff_distance(preds, target, 3, include_background=True, input_format="index")
        one_way = TF.hausdorff_distance(preds, target, 3, include_background=True, directed=True, input_format="index")
        for n in range(4):
            for c in range(3):
                pe, te = _edge_points((preds[n] == c).numpy()), _edge_points((target[n] == c).numpy())
                forward = directed_hausdorff(pe, te)[0]
                assert abs(float(one_way[n, c]) - forward) < 1e-5
                symmetric = max(forward, directed_hausdorff(te, pe)[0])
                assert abs(float(both[n, c]) - symmetric) < 1e-5
                edge_p = np.zeros((h, w), bool)
                edge_t = np.zeros((h, w), bool)
                edge_p[tuple(pe.T)] = True
                edge_t[tuple(te.T)] = True
                assert abs(float(both[n, c]) - skimage_metrics.hausdorff_distance(edge_p, edge_t)) < 1e-5


def test_hausdorff_empty_masks():
    """One empty mask: inf; both empty: NaN in the functional form, left out of the class's mean."""
    preds = torch.zeros(2, 2, 5, 5, dtype=torch.long)
    target = torch.zeros(2, 2, 5, 5, dtype=torch.long)
    preds[0, 1, 1:3, 1:3] = 1
    target[0, 1, 2:4, 2:4] = 1
    preds[1, 1, 0, 0] = 1
    d = TF.hausdorff_distance(preds, target, 2, include_background=True)
    assert torch.isnan(d[:, 0]).all() and d[1, 1] == float("inf") and d[0, 1] == pytest.approx(2**0.5)
    metric = TS.HausdorffDistance(2, include_background=True).update(preds[:1], target[:1])
    assert metric.pairs == 1 and float(metric.compute()) == pytest.approx(2**0.5)


def test_mean_iou_without_num_classes_refuses_another_c():
    metric = TS.MeanIoU(per_class=True)
    preds, target = ONEHOT[0]
    metric.update(preds, target)
    before = metric.iou_sum.clone(), metric.present.clone()
    with pytest.raises(ValueError, match="expected 4 classes"):
        metric.update(preds[:, :3], target[:, :3])
    assert torch.equal(metric.iou_sum, before[0]) and torch.equal(metric.present, before[1])
    with pytest.raises(ValueError, match="different numbers of classes"):
        metric.merge_state_values("iou_sum", [torch.zeros(4, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)])


def test_mean_iou_forward_with_another_c_names_preds_not_ranks():
    """One process, forward: the refusal is update's (preds, the two class counts), state unchanged;
    in a collection too."""
    from torchtally import MetricCollection

    preds, target = ONEHOT[0]
    for owner in (TS.MeanIoU(), MetricCollection({"iou": TS.MeanIoU()})):
        metric = owner if isinstance(owner, TS.MeanIoU) else owner["iou"]
        owner(preds, target)
        before = metric.iou_sum.clone(), metric.present.clone()
        with pytest.raises(ValueError, match=r"^preds: expected 4 classes \(kept\), as the batches before, got 3$"):
            owner(preds[:, :3], target[:, :3])
        assert torch.equal(metric.iou_sum, before[0]) and torch.equal(metric.present, before[1])
    other = TS.MeanIoU().update(preds[:, :3], target[:, :3])
    with pytest.raises(ValueError, match="one per rank, or per metric given to merge_state"):
        TS.MeanIoU().update(preds, target).merge_state(other)


def test_per_sample_states_are_fixed_shape():
    """MeanIoU and samplewise DiceScore hold sums and counts, not a row per sample."""
    metric = TS.DiceScore(C, average="none")
    for preds, target in ONEHOT:
        metric.update(preds, target)
    assert metric.score_sum.shape == (C,) and metric.scored.dtype == torch.int64
    assert TS.MeanIoU(C, per_class=True).iou_sum.shape == (C,)


BAD = [
    (functools.partial(TS.MeanIoU, C, input_format="index"), (INDEX[0][0].float(), INDEX[0][1]), TypeError, "preds"),
    (functools.partial(TS.DiceScore, C, input_format="index"), (INDEX[0][0], INDEX[0][1] + 2), ValueError, "target"),
    (functools.partial(TS.GeneralizedDiceScore, C), (ONEHOT[0][0] * 2, ONEHOT[0][1]), ValueError, "preds"),
    (functools.partial(TS.DiceScore, C), (ONEHOT[0][0], ONEHOT[0][1][:, :2]), ValueError, "preds and target"),
    (functools.partial(TS.MeanIoU, C + 1), ONEHOT[0], ValueError, "num_classes"),
    (
        functools.partial(TS.HausdorffDistance, C),
        (torch.full((1, C, 4, 4), float("nan")), ONEHOT[0][1][:1, :, :4, :4]),
        ValueError,
        "NaN",
    ),
    (
        functools.partial(TS.HausdorffDistance, C),
        (torch.zeros(1, C, 3, 3, 3, dtype=torch.long),) * 2,
        ValueError,
        "2-D",
    ),
    (functools.partial(TS.MeanIoU, C, input_format="mixed"), (INDEX[0][0], INDEX[0][1]), ValueError, "mixed"),
]


@pytest.mark.parametrize("factory,batch,exc,match", BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_bad_input_leaves_state(factory, batch, exc, match):
    metric = factory()
    warm_up = {"one-hot": ONEHOT[1], "index": INDEX[1], "mixed": (ONEHOT[1][0], INDEX[1][1])}[metric.input_format]
    if metric.num_classes == C:
        metric.update(*warm_up)
    assert_rejects(metric, batch, exc, match)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: TS.MeanIoU(input_format="index"), "num_classes"),
        (lambda: TS.DiceScore(C, average="mean"), "average"),
        (lambda: TS.DiceScore(C, aggregation_level="batch"), "aggregation_level"),
        (lambda: TS.GeneralizedDiceScore(C, weight_type="cubic"), "weight_type"),
        (lambda: TS.HausdorffDistance(C, distance_metric="cosine"), "distance_metric"),
        (lambda: TS.HausdorffDistance(C, spacing=[1.0, -1.0]), "spacing"),
        (lambda: TS.DiceScore(0), "num_classes"),
        (lambda: TS.MeanIoU(C, input_format="onehot"), "input_format"),
    ],
)
def test_bad_options(make, match):
    with pytest.raises(ValueError, match=match):
        make()
