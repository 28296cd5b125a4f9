"""image_gradients and total variation against torchmetrics (float32, float64, float16, int64;
every reduction; output dtypes) and a numpy loop; bad input raises with the state unchanged;
2 gloo ranks (uneven shards, and one rank empty) == one process."""

import functools

import numpy as np
import pytest
import torch
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric, run_distributed_cases
from torchmetrics.functional.image import image_gradients as tm_image_gradients
from torchmetrics.functional.image import total_variation as tm_total_variation
from torchmetrics.image import TotalVariation as TMTotalVariation

from torchtally.functional.image import image_gradients, total_variation
from torchtally.image import TotalVariation


def _images(seed, n=2, c=3, size=12, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.int64:
        return torch.randint(-50, 200, (n, c, size, size + 1), generator=g)
    return torch.rand(n, c, size, size + 1, generator=g).to(dtype)


def _numpy_tv(img):
    x = img.double().numpy()
    return [np.abs(np.diff(i, axis=1)).sum() + np.abs(np.diff(i, axis=2)).sum() for i in x]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
def test_functional_against_torchmetrics(dtype):
    img = _images(0, dtype=dtype)
    tol = dict(rtol=1e-5) if dtype != torch.float16 else dict(rtol=2e-3)
    for reduction in ("sum", "mean", "none", None):
        got, want = total_variation(img, reduction), tm_total_variation(img, reduction)
        assert got.dtype == want.dtype and got.shape == want.shape, (reduction, got.dtype, want.dtype)
        assert_same(got, want, **tol)
    exact = {torch.float32: 1e-7, torch.float16: 1e-3}.get(dtype, 1e-12)  # float64 sums, rounded to dtype
    assert_same(total_variation(img, "none"), _numpy_tv(img), rtol=exact)
    for got, want in zip(image_gradients(img), tm_image_gradients(img)):
        assert got.dtype == want.dtype and got.is_contiguous()
        assert torch.equal(got, want)


def test_class_dtypes_follow_torchmetrics():
    for dtype in (torch.float64, torch.int64):
        img = _images(1, dtype=dtype)
        for reduction in ("sum", "mean", "none"):
            tm = TMTotalVariation(reduction)
            tm.update(img)
            want = tm.compute()
            got = TotalVariation(reduction).update(img).compute()
            assert got.dtype == want.dtype and got.shape == want.shape, (dtype, reduction, got.dtype, want.dtype)
            assert_same(got, want, rtol=1e-6)
    one = TotalVariation("none").update(_images(2, n=1)).compute()
    assert one.shape == ()  # one-element results are 0-d, as torchmetrics' classes give them


def test_exact_where_torchmetrics_is_not():
    img = torch.full((1, 1, 3, 3), 2**24, dtype=torch.int64)
    img[0, 0, 1, 1] += 1
    assert total_variation(img).item() == 4
    assert total_variation(img.double() * 1e8 + img.double()).item() == 4 * (1e8 + 1)


def test_bad_input_raises_with_the_state_unchanged():
    img = _images(3)
    for m in (TotalVariation().update(img), TotalVariation("none").update(img)):
        assert_rejects(m, (img[0],), ValueError, "img: expected a 4-d tensor")
        assert_rejects(m, (img[0],), RuntimeError, "Expected input `img` to")
        assert_rejects(m, ((img * 255).to(torch.uint8),), TypeError, "wrap around")
        assert_rejects(m, (img > 0.5,), TypeError, "img")
        assert_rejects(m, (img.numpy(),), TypeError, "img: expected a torch.Tensor")
    with pytest.raises(ValueError, match="Expected argument `reduction`"):
        TotalVariation("elementwise_mean")
    with pytest.raises(TypeError):
        image_gradients(img.numpy())
    with pytest.raises(RuntimeError):
        image_gradients(img[0])
    with pytest.raises(TypeError, match="unsigned"):
        image_gradients((img * 255).to(torch.uint8))


def _batches(seed, count, dtype=torch.float32):
    return [(_images(seed + i, n=1 + i % 3, dtype=dtype),) for i in range(count)]


CASES = [
    MetricCase("tv-sum", TotalVariation, batches=_batches(10, 6), reference=tm_total_variation, rtol=1e-6),
    MetricCase(
        "tv-mean-int",
        functools.partial(TotalVariation, reduction="mean"),
        batches=_batches(20, 6, torch.int64),
        reference=functools.partial(tm_total_variation, reduction="mean"),
        rtol=1e-6,
    ),
    MetricCase(
        "tv-none",
        functools.partial(TotalVariation, reduction="none"),
        batches=_batches(30, 6, torch.float64),
        reference=functools.partial(tm_total_variation, reduction="none"),
        rtol=1e-12,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_uneven_shards_equal_one_process():
    run_distributed_cases(CASES, world_size=2)
