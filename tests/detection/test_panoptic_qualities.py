"""PanopticQuality and ModifiedPanopticQuality (classes and functional forms) against
torchmetrics on random panoptic maps (void, unknown categories, every output form), across 3
gloo ranks with uneven shards, and bad inputs that leave the state unchanged."""

import functools

import pytest
import torch
import torchmetrics.detection as tm
import torchmetrics.functional.detection as tmf
from support.metric_tester import states_of
from support.panoptic_maps import STUFFS, THINGS, panoptic_batch
from support.parity_tester import ParityCase, assert_parity, check_parity, run_parity_distributed
from support.state_checks import assert_same_states

import torchtally.detection as tt
import torchtally.functional.detection as ttf
from torchtally import MetricCollection

_SHAPES = [(12, 10), (20,), (4, 6, 5)]  # images, point clouds, volumes


def _batches(seed, shape, unknown, dtype=torch.int64, n=5, batch=3):
    return [panoptic_batch(seed + i, batch, shape, unknown, dtype) for i in range(n)]


def _case(name, ours, theirs, batches, **options):
    return ParityCase(
        name,
        functools.partial(ours, THINGS, STUFFS, **options),
        functools.partial(theirs, THINGS, STUFFS, **options),
        batches,
    )


CASES = [
    _case("pq", tt.PanopticQuality, tm.PanopticQuality, _batches(0, (12, 10), False)),
    _case(
        "pq_sq_rq_unknown",
        tt.PanopticQuality,
        tm.PanopticQuality,
        _batches(10, (12, 10), True, torch.int32),
        allow_unknown_preds_category=True,
        return_sq_and_rq=True,
    ),
    _case("pq_per_class", tt.PanopticQuality, tm.PanopticQuality, _batches(20, (20,), False), return_per_class=True),
    _case(
        "pq_per_class_sq_rq",
        tt.PanopticQuality,
        tm.PanopticQuality,
        _batches(30, (4, 6, 5), True, torch.int16),
        allow_unknown_preds_category=True,
        return_per_class=True,
        return_sq_and_rq=True,
    ),
    _case("modified", tt.ModifiedPanopticQuality, tm.ModifiedPanopticQuality, _batches(40, (12, 10), False)),
    _case(
        "modified_unknown",
        tt.ModifiedPanopticQuality,
        tm.ModifiedPanopticQuality,
        _batches(50, (9, 7), True, torch.uint8),
        allow_unknown_preds_category=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_parity(case):
    check_parity(case)


@pytest.mark.distributed
def test_parity_distributed():
    run_parity_distributed(CASES, world_size=3)


@pytest.mark.parametrize("shape", _SHAPES, ids=str)
@pytest.mark.parametrize("unknown", [False, True])
def test_functional_parity(shape, unknown):
    preds, target = panoptic_batch(60 + len(shape), 4, shape, unknown)
    allow = dict(allow_unknown_preds_category=unknown)
    for sq_rq in (False, True):
        for per_class in (False, True):
            kw = dict(allow, return_sq_and_rq=sq_rq, return_per_class=per_class)
            got = ttf.panoptic_quality(preds, target, THINGS, STUFFS, **kw)
            want = tmf.panoptic_quality(preds, target, THINGS, STUFFS, **kw)
            assert_parity(got, want, f"panoptic_quality {kw}")
    got = ttf.modified_panoptic_quality(preds, target, THINGS, STUFFS, **allow)
    assert_parity(got, tmf.modified_panoptic_quality(preds, target, THINGS, STUFFS, **allow), "modified")


def test_things_or_stuffs_only_and_empty():
    preds, target = panoptic_batch(70, 2, (8, 8), False)
    for things, stuffs in ((THINGS, ()), ((), STUFFS), ({3}, {6})):
        for ours, theirs in (
            (ttf.panoptic_quality, tmf.panoptic_quality),
            (ttf.modified_panoptic_quality, tmf.modified_panoptic_quality),
        ):
            kw = dict(allow_unknown_preds_category=True)
            assert_parity(ours(preds, target, things, stuffs, **kw), theirs(preds, target, things, stuffs, **kw), "")
    # no category in any image: NaN, as torchmetrics; per class zeros
    void = torch.full((1, 3, 3, 2), 9)
    assert torch.isnan(ttf.panoptic_quality(void, void, THINGS, STUFFS, allow_unknown_preds_category=True))
    m = tt.PanopticQuality(THINGS, STUFFS, return_per_class=True)
    assert torch.equal(
        m.update(torch.zeros(0, 4, 2, dtype=torch.long), torch.zeros(0, 4, 2, dtype=torch.long)).compute(),
        torch.zeros(1, 5, dtype=torch.float64),
    )


def test_collection_shares_state():
    """PQ results of one configuration share one state; the modified metric keeps its own."""
    c = MetricCollection(
        {
            "pq": tt.PanopticQuality(THINGS, STUFFS),
            "per_class": tt.PanopticQuality(THINGS, STUFFS, return_per_class=True),
            "mpq": tt.ModifiedPanopticQuality(THINGS, STUFFS),
        }
    )
    theirs = {
        "pq": tm.PanopticQuality(THINGS, STUFFS),
        "per_class": tm.PanopticQuality(THINGS, STUFFS, return_per_class=True),
        "mpq": tm.ModifiedPanopticQuality(THINGS, STUFFS),
    }
    for preds, target in _batches(80, (10, 10), False, n=2):
        c.update(preds, target)
        for m in theirs.values():
            m.update(preds, target)
    assert_parity(c.compute(), {k: m.compute() for k, m in theirs.items()}, "collection")
    assert c["pq"].state_key == c["per_class"].state_key != c["mpq"].state_key


@pytest.mark.parametrize("cls", [tt.PanopticQuality, tt.ModifiedPanopticQuality], ids=lambda c: c.__name__)
def test_bad_inputs_leave_state_unchanged(cls):
    m = cls(THINGS, STUFFS)
    preds, target = panoptic_batch(90, 2, (6, 6), False)
    m.update(preds, target)
    before = states_of(m)
    unknown = preds.clone()
    unknown[1, 5, 5, 0] = 9
    bad = [
        ((preds[..., :1], target[..., :1]), ValueError, "preds"),  # last dim not 2
        ((preds.float(), target), TypeError, "preds"),
        ((preds, target.double()), TypeError, "target"),
        ((preds.bool(), target.bool()), TypeError, "preds"),
        ((preds, target[:1]), ValueError, "target"),  # mismatched shapes
        ((preds[:, 0, 0], target[:, 0, 0]), ValueError, "preds"),  # no spatial dim
        ((preds.tolist(), target), TypeError, "preds"),
        ((unknown, target), ValueError, "preds: category 9 \\(image 1, pixel 35\\)"),
    ]
    for args, exc, match in bad:
        with pytest.raises(exc, match=match):
            m.update(*args)
        assert_same_states(before, states_of(m), f"{cls.__name__} after {match}")
    with pytest.raises(ValueError, match="preds: category 9"):
        ttf.panoptic_quality(unknown, target, THINGS, STUFFS)


@pytest.mark.parametrize(
    "make",
    [tt.PanopticQuality, ttf.panoptic_quality, tt.ModifiedPanopticQuality],
    ids=["PanopticQuality", "panoptic_quality", "ModifiedPanopticQuality"],
)
def test_bad_categories(make):
    x = torch.zeros(1, 2, 2, 2, dtype=torch.long)
    call = make if isinstance(make, type) else functools.partial(make, x, x)
    with pytest.raises(ValueError, match="`things` and `stuffs` to have distinct keys, got \\[1\\]"):
        call(things={0, 1}, stuffs={1, 2})
    with pytest.raises(ValueError, match="At least one of `things` and `stuffs` must be non-empty"):
        call(things=[], stuffs=())
    with pytest.raises(TypeError, match="things"):
        call(things={0.5}, stuffs={1})
    with pytest.raises(TypeError, match="stuffs"):
        call(things={0}, stuffs={True})
    with pytest.warns(UserWarning, match="duplicate"):
        call(things=[0, 0, 3], stuffs=[1])
