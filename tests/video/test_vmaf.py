"""VMAF with a stand-in model of vmaf-torch's interface: per-frame scores and the 12 feature
columns equal the model applied per video directly; what to pass without vmaf-torch; bad
input raises with the state unchanged; 3 gloo ranks == one process."""

import functools

import pytest
import torch
from support.audio_models import VmafTable, vmaf_metric, vmaf_model
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.functional.video import video_multi_method_assessment_fusion
from torchtally.functional.video.vmaf import FEATURES, calculate_luma
from torchtally.video import VideoMultiMethodAssessmentFusion


def _videos(seed, b, frames=3):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(b, 3, frames, 6, 5, generator=g), torch.rand(b, 3, frames, 6, 5, generator=g)


def _direct(preds, target):
    out = []
    for v in range(preds.shape[0]):
        r = 255 * (0.299 * target[v, 0] + 0.587 * target[v, 1] + 0.114 * target[v, 2])
        d = 255 * (0.299 * preds[v, 0] + 0.587 * preds[v, 1] + 0.114 * preds[v, 2])
        out.append(100 - (r - d).abs().mean(dim=(1, 2)))
    return torch.stack(out)


def test_functional_equals_the_model_per_video():
    preds, target = _videos(0, 3)
    got = video_multi_method_assessment_fusion(preds, target, model=vmaf_model)
    assert got.shape == (3, 3) and got.dtype == preds.dtype
    torch.testing.assert_close(got, _direct(preds, target))
    assert torch.equal(video_multi_method_assessment_fusion(preds, target, model=VmafTable()), got)
    table = video_multi_method_assessment_fusion(preds, target, True, model=VmafTable())
    assert list(table) == list(FEATURES)
    for i, name in enumerate(FEATURES):
        torch.testing.assert_close(table[name], got / (i + 1))
    assert calculate_luma(preds).shape == (3, 1, 3, 6, 5)


def test_class_state_and_features():
    batches = [_videos(s, 1 + s % 2) for s in range(3)]
    m = vmaf_metric(True)
    for p, t in batches:
        m.update(p, t)
    out = m.compute()
    want = torch.cat([_direct(p, t) for p, t in batches])
    torch.testing.assert_close(out["vmaf"], want)
    torch.testing.assert_close(out["integer_vif_scale3"], want / 12)
    assert m.frame_scores.shape == (12, 12) and m.frame_counts.tolist() == [3, 3, 3, 3]


def test_without_vmaf_torch_says_what_to_pass():
    with pytest.raises(ModuleNotFoundError, match="vmaf-torch.*model="):
        VideoMultiMethodAssessmentFusion()


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _videos(1, 2)
    m = vmaf_metric().update(preds, target)
    assert_rejects(m, (preds[:, :2], target[:, :2]), ValueError, r"preds: expected RGB video")
    assert_rejects(m, (preds, target[:1]), ValueError, "the same shape")
    assert_rejects(m, ((preds * 255).to(torch.uint8), target), TypeError, "preds: expected a floating")
    m.update(*_videos(2, 1, frames=4))
    with pytest.raises(ValueError, match="different frame counts"):
        m.compute()
    with pytest.raises(ValueError, match="`features`"):
        VideoMultiMethodAssessmentFusion(features=1, model=vmaf_model)


CASES = [
    MetricCase("vmaf", vmaf_metric, [_videos(10 + i, 1 + i % 3) for i in range(5)], _direct, rtol=1e-6),
    MetricCase(
        "vmaf-features",
        functools.partial(vmaf_metric, True),
        [_videos(20 + i, 1 + i % 2) for i in range(4)],
        lambda p, t: {name: _direct(p, t) / (i + 1) for i, name in enumerate(FEATURES)},
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=3)
