"""lip_vertex_error and LipVertexError against a numpy formula and torchmetrics 1.9 on one
process (seeded random meshes, frame counts that differ, negative indices); edge cases (no frame,
one vertex); bad input raises with the state unchanged; 3 gloo ranks with uneven shards (one
rank with no update at all, where torchmetrics' list states break) == one process."""

import functools

import numpy as np
import pytest
import torch
from support.doctests import package_doctests
from support.metric_tester import (
    MetricCase,
    assert_rejects,
    assert_same,
    check_metric,
    made_in_float64,
    run_distributed_cases,
)
from torchmetrics.functional.multimodal import lip_vertex_error as tm_lip_vertex_error
from torchmetrics.multimodal import LipVertexError as TMLipVertexError

from torchtally.functional.multimodal import lip_vertex_error
from torchtally.multimodal import LipVertexError

MOUTH = [0, 3, 4, 7, 11]


def _meshes(seed, frames=6, gt_frames=None, vertices=12, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    pred = torch.randn(frames, vertices, 3, generator=g, dtype=torch.float64)
    gt = torch.randn(frames if gt_frames is None else gt_frames, vertices, 3, generator=g, dtype=torch.float64)
    return pred.to(dtype), gt.to(dtype)


def _numpy_lve(pred, gt, mouth_map):
    frames = min(len(pred), len(gt))
    p, t = pred[:frames].double().numpy()[:, mouth_map], gt[:frames].double().numpy()[:, mouth_map]
    return float(((t - p) ** 2).sum(axis=-1).max(axis=1).mean())


@pytest.mark.parametrize("frames", [(6, 6), (4, 9), (9, 2), (1, 1)])
@pytest.mark.parametrize("mouth_map", [MOUTH, [5], [-1, 2, -12], list(range(12))])
def test_functional_matches_numpy_and_torchmetrics(frames, mouth_map):
    pred, gt = _meshes(sum(frames), *frames)
    got = lip_vertex_error(pred, gt, mouth_map)
    want = tm_lip_vertex_error(pred, gt, mouth_map)
    assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape == ()
    assert_same(got, want, rtol=1e-6)
    assert_same(lip_vertex_error(pred.double(), gt.double(), mouth_map), _numpy_lve(pred, gt, mouth_map), rtol=1e-12)


def test_no_frame_gives_nan():
    pred, gt = _meshes(1, 0, 3)
    assert torch.isnan(lip_vertex_error(pred, gt, MOUTH))
    assert torch.isnan(tm_lip_vertex_error(pred, gt, MOUTH))
    metric = LipVertexError(MOUTH).update(pred, gt)
    assert int(metric.num_frames) == 0 and torch.isnan(metric.compute())


def test_class_matches_torchmetrics_on_one_process():
    ours, theirs = LipVertexError(mouth_map=MOUTH), TMLipVertexError(mouth_map=MOUTH)
    for seed, (t, t2) in enumerate([(5, 5), (3, 7), (8, 2)]):
        pred, gt = _meshes(seed, t, t2)
        assert_same(ours(pred, gt), theirs(pred, gt), rtol=1e-6)
    got, want = ours.compute(), theirs.compute()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same(got, want, rtol=1e-6)


def test_bad_input_raises_with_the_state_unchanged():
    pred, gt = _meshes(3)
    metric = LipVertexError(MOUTH).update(pred, gt)
    assert_rejects(metric, (pred[0], gt), ValueError, "3 dimensions")
    assert_rejects(metric, (pred, gt[:, :10]), ValueError, "same vertex and coordinate")
    assert_rejects(metric, (pred[:, :11], gt[:, :11]), ValueError, "invalid vertex indices")
    assert_rejects(metric, (pred.to(torch.int64), gt), TypeError, "vertices_pred.*floating")
    assert_rejects(metric, (pred, gt.numpy()), TypeError, "vertices_gt")
    nan = gt.clone()
    nan[2, 4, 1] = float("inf")
    assert_rejects(metric, (pred, nan), ValueError, "vertices_gt.*NaN or infinite")
    nan_elsewhere = gt.clone()
    nan_elsewhere[2, 5, 1] = float("nan")  # not a lip vertex: not read, as torchmetrics
    assert torch.isfinite(lip_vertex_error(pred, nan_elsewhere, MOUTH))
    with pytest.raises(ValueError, match="mouth_map cannot be empty"):
        LipVertexError(mouth_map=[])
    with pytest.raises(TypeError, match="mouth_map"):
        LipVertexError(mouth_map=[1.5, 2])
    with pytest.raises(ValueError, match="invalid vertex indices"):
        lip_vertex_error(pred, gt, [-13])
    with pytest.raises(ValueError, match="invalid vertex indices"):  # also with validate_args=False
        LipVertexError(MOUTH, validate_args=False).update(pred[:, :11], gt[:, :11])


def test_docstring_examples():
    for package in ("torchtally.multimodal.lve", "torchtally.functional.multimodal.lve"):
        failed, attempted = package_doctests(package)
        assert attempted > 0 and failed == 0, package


def _lve_of_batches(batches):
    errors = []
    for pred, gt in batches:
        frames = min(len(pred), len(gt))
        p, t = pred[:frames].double().numpy()[:, MOUTH], gt[:frames].double().numpy()[:, MOUTH]
        errors.extend(((t - p) ** 2).sum(axis=-1).max(axis=1))
    return float(np.mean(errors))


def _batches(seed, count):
    # frame counts differ between the two meshes and from batch to batch
    return [_meshes(seed + i, 1 + (3 * i) % 5, 1 + (2 * i) % 4, dtype=torch.float64) for i in range(count)]


CASES = [
    MetricCase(
        "lve",
        functools.partial(made_in_float64, LipVertexError, mouth_map=MOUTH),
        batches=_batches(0, 7),
        reference=_lve_of_batches,
        reference_on_batches=True,
        rtol=1e-12,
        max_collectives=3,
    ),
    MetricCase(
        "lve-float32-result",
        functools.partial(LipVertexError, mouth_map=[-1, 2]),
        batches=_batches(30, 5),
        reference=lambda batches: tm_lip_vertex_error(
            torch.cat([p[: min(len(p), len(g))] for p, g in batches]),
            torch.cat([g[: min(len(p), len(g))] for p, g in batches]),
            [-1, 2],
        ),
        reference_on_batches=True,
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES)


def test_a_nan_lip_vertex_raises_and_overflowing_squares_do_not():
    """The finiteness check reads one sum of the frames' errors: a NaN at a lip vertex of any
    frame still raises, with the state unchanged; finite float64 vertices whose squared
    distance overflows give inf, as the formula does, without an error."""
    pred, gt = _meshes(4)
    metric = LipVertexError(MOUTH).update(pred, gt)
    nan = pred.clone()
    nan[-1, MOUTH[-1], 2] = float("nan")
    assert_rejects(metric, (nan, gt), ValueError, "vertices_pred.*NaN or infinite")
    far = gt.to(torch.float64)
    far[0, MOUTH[0], 0] = 1e200
    assert lip_vertex_error(pred.to(torch.float64), far, MOUTH).item() == float("inf")
