"""VisualInformationFidelity against torchmetrics (float32, float64; sigma_n_sq; per-image
scores); bad input raises with the state unchanged; 2 gloo ranks with uneven shards == one
process."""

import functools

import pytest
import torch
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image import visual_information_fidelity as tm_vif

from torchtally.functional.image import visual_information_fidelity
from torchtally.image import VisualInformationFidelity


def _pair(seed, n=2, c=3, h=44, w=41, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    target = torch.rand(n, c, h, w, generator=g, dtype=torch.float64) * 255
    preds = (target + 25 * torch.randn(n, c, h, w, generator=g, dtype=torch.float64)).clamp(0, 255)
    return preds.to(dtype), target.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_against_torchmetrics(dtype):
    preds, target = _pair(0, dtype=dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-11, atol=1e-12)
    for kwargs in ({}, {"sigma_n_sq": 0.5, "reduction": "none"}):
        got = visual_information_fidelity(preds, target, **kwargs)
        assert got.dtype == dtype
        assert_same(got, tm_vif(preds, target, **kwargs), what=str(kwargs), **tol)


def test_bad_input_raises_with_the_state_unchanged():
    preds, target = _pair(1)
    m = VisualInformationFidelity().update(preds, target)
    assert_rejects(m, (preds[..., :40], target[..., :40]), ValueError, "preds")
    assert_rejects(m, (preds, target[:1]), ValueError, "target")
    assert_rejects(m, (preds[0], target[0]), ValueError, "preds")
    assert_rejects(m, (preds.long(), target), TypeError, "preds")
    nan = target.clone()
    nan[1, 2, 5, 5] = float("nan")
    assert_rejects(m, (preds, nan), ValueError, "target: expected finite")
    flat = target.clone()
    flat[0, 1] = 7.0
    assert_rejects(m, (preds, flat), ValueError, "constant")
    for kwargs, match in (({"sigma_n_sq": 0.0}, "sigma_n_sq"), ({"reduction": "sum"}, "reduction")):
        with pytest.raises(ValueError, match=match):
            VisualInformationFidelity(**kwargs)


def _batches(seed, count):
    return [_pair(seed + i, n=1 + i % 3, c=1 + i % 2, h=41) for i in range(count)]


CASES = [
    MetricCase(
        "vif-mean",
        VisualInformationFidelity,
        batches=[_pair(10 + i, n=1 + i % 3, c=2, h=41) for i in range(5)],
        reference=lambda p, t: tm_vif(p, t),
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "vif-none",
        functools.partial(VisualInformationFidelity, sigma_n_sq=1.0, reduction="none"),
        batches=_batches(20, 4),
        reference=lambda batches: torch.cat([tm_vif(p, t, sigma_n_sq=1.0, reduction="none") for p, t in batches]),
        reference_on_batches=True,
        rtol=1e-5,
        atol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards():
    run_distributed_cases(CASES, world_size=2)
