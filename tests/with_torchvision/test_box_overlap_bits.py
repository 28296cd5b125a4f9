"""The IoU family's per-pair values against torchvision's, bit for bit: the C kernel and the torch
reference over random boxes (small, large, near-degenerate) of every floating dtype, and the
threshold decision of a value right at ``iou_threshold`` (float32 arithmetic order matters)."""

import pytest
import torch
import torchmetrics.detection as tm
from torchvision.ops import box_iou, complete_box_iou, distance_box_iou, generalized_box_iou

import torchtally.detection as tt
from torchtally.kernels import box_overlap_matrix
from torchtally.kernels.reference import box_overlap as ref

TORCHVISION = (box_iou, generalized_box_iou, distance_box_iou, complete_box_iou)
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _boxes(g: torch.Generator, n: int, scale: float, dtype: torch.dtype) -> torch.Tensor:
    xy = torch.rand(n, 2, generator=g, dtype=torch.float64) * scale
    # sizes from about 1e-8 of the scale (near-degenerate) up to the scale itself
    wh = scale * torch.rand(n, 2, generator=g, dtype=torch.float64) * torch.rand(n, 1, generator=g) ** 6
    wh[: n // 10] = 0  # zero widths and heights: zero areas (0 / 0 is NaN on both sides)
    return torch.cat([xy, xy + wh], 1).to(dtype).clamp(max=torch.finfo(dtype).max)


def _differ(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return ~((a == b) | (a.isnan() & b.isnan()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", range(4))
def test_pair_values_bit_equal_torchvision(kind, dtype):
    g = torch.Generator().manual_seed(kind)
    scales = (1.0, 600.0, 3e4) if dtype == torch.float16 else (1.0, 600.0, 1e6, 1e12)
    for scale in scales:
        p, t = _boxes(g, 150, scale, dtype), _boxes(g, 100, scale, dtype)
        want = TORCHVISION[kind](p, t)
        c = torch.empty_like(want)
        box_overlap_matrix(c, p, t, kind)
        r = torch.empty_like(want)
        ref.box_overlap_matrix(r, p, t, kind)
        assert not _differ(r, want).any(), (scale, "reference")
        bad = _differ(c, want)
        if kind < 3:
            assert not bad.any(), (scale, int(bad.sum()))
        else:
            # CIoU's arctangent: the C library's, torch's is SLEEF's (which one depends on the
            # CPU); they differ in the last bit for a percent or so of the aspect ratios, and the
            # CIoU (a value in [-1.5, 1]) then differs by an ulp or two of the output dtype
            assert not (c.isnan() ^ want.isnan()).any(), scale
            assert int(bad.sum()) <= want.numel() // 20, (scale, int(bad.sum()))
            eps = torch.finfo(want.dtype).eps
            off = (c.double() - want.double()).abs()[bad & want.isfinite()]
            assert off.numel() == 0 or float(off.max()) <= 4 * eps, (scale, float(off.max()) / eps)


def test_value_at_the_threshold_counts_as_in_torchmetrics():
    """torchvision's float32 IoU of this pair is 0.08423040807; in float64 rounded once it would be
    0.08423041552: at that threshold torchmetrics drops the pair, and so must torchtally."""
    pred = torch.tensor([[72.3109, 74.2336, 95.1614, 83.8483]])
    target = torch.tensor([[91.6366, 55.6637, 94.0705, 89.1599]])
    exact = float(box_iou(pred.double(), target.double())[0, 0].float())
    assert float(box_iou(pred, target)[0, 0]) < exact  # the case: float32 arithmetic is below
    preds = [{"boxes": pred, "labels": torch.tensor([0])}]
    targets = [{"boxes": target, "labels": torch.tensor([0])}]
    for threshold in (exact, float(box_iou(pred, target)[0, 0])):
        want = tm.IntersectionOverUnion(iou_threshold=threshold)
        got = tt.IntersectionOverUnion(iou_threshold=threshold)
        want.update(preds, targets)
        got.update(preds, targets)
        assert float(got.compute()["iou"]) == pytest.approx(float(want.compute()["iou"]), abs=0)
