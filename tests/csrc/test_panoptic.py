"""The panoptic segment-matching kernel: the C core against the torch reference (the oracle) on
random maps of every integer dtype and layout, both category kinds, void and unknown
categories; bad calls on both paths raise naming the argument and leave the outputs untouched."""

import pytest
import torch
from support.kernel_inputs import dtype_id, kernels
from support.panoptic_maps import STUFFS, THINGS, panoptic_batch

from torchtally.functional.detection.panoptic_sums import category_table
from torchtally.kernels import reference
from torchtally.kernels.reference import panoptic as reference_panoptic

MAP_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _outs(c, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(c, generator=g, dtype=torch.float64),) + tuple(
        torch.randint(0, 9, (c,), generator=g) for _ in range(3)
    )


def _run(impl, preds, target, table, allow):
    outs = _outs(len(table))
    impl.panoptic_update(*outs, preds, target, table, allow)
    return outs


def _same(a, b):
    torch.testing.assert_close(a[0], b[0], rtol=1e-12, atol=1e-12)
    for x, y in zip(a[1:], b[1:]):
        assert torch.equal(x, y)


@pytest.mark.parametrize("dtype", MAP_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("modified", [False, True])
def test_c_matches_reference(dtype, modified):
    c = kernels("c")
    table = category_table(set(THINGS), set(STUFFS), modified)
    for seed, shape in ((1, (16, 12)), (2, (30,)), (3, (1, 1))):
        for unknown in (False, True):
            preds, target = panoptic_batch(seed, 3, shape, unknown, dtype)
            p, t = preds.reshape(3, -1, 2), target.reshape(3, -1, 2)
            _same(_run(c, p, t, table, unknown), _run(reference, p, t, table, unknown))
    # strided views: a transposed image (non-contiguous pixel walk) and every other image
    preds, target = panoptic_batch(4, 6, (10, 8), True, dtype)
    p = preds.transpose(1, 2)[::2].reshape(3, -1, 2)  # a copy: reshape of a transposed view
    p_view = torch.stack([preds, preds], 1)[:, 0].flatten(1, 2)[::2]  # a strided view, no copy
    t_view = torch.stack([target, target], 1)[:, 1].flatten(1, 2)[::2]
    assert not p_view.is_contiguous()
    _same(_run(c, p_view, t_view, table, True), _run(reference, p_view, t_view, table, True))
    _same(_run(c, p, t_view, table, True), _run(reference, p, t_view, table, True))


def test_many_segments_and_empty():
    """Tables grow past their first size (thousands of segments in one image); empty batches add nothing."""
    g = torch.Generator().manual_seed(5)
    n = 20000
    preds = torch.stack([torch.randint(0, 4, (2, n), generator=g), torch.randint(0, 3000, (2, n), generator=g)], -1)
    target = preds.clone()
    target[..., 1] = torch.where(torch.rand(2, n, generator=g) < 0.3, 7, target[..., 1])
    table = category_table({0, 1, 3}, {2}, False)
    _same(_run(kernels("c"), preds, target, table, True), _run(reference, preds, target, table, True))
    for impl in (kernels("c"), reference):
        empty = torch.zeros(0, 5, 2, dtype=torch.long)
        assert all(torch.equal(a, b) for a, b in zip(_run(impl, empty, empty, table, False), _outs(4)))


def test_reference_unpacked_keys(monkeypatch):
    """The reference's fallback for keys too many to pack into one int64 (unique over rows)."""
    preds, target = panoptic_batch(7, 3, (9, 11), True)
    p, t = preds.reshape(3, -1, 2), target.reshape(3, -1, 2)
    table = category_table(set(THINGS), set(STUFFS), False)
    want = _run(reference, p, t, table, True)
    monkeypatch.setattr(reference_panoptic, "_PACK_LIMIT", 0)
    _same(_run(reference, p, t, table, True), want)


@pytest.mark.parametrize("impl_name", ["c", "reference"])
def test_bad_calls_leave_outputs(impl_name):
    impl = kernels(impl_name)
    table = category_table(set(THINGS), set(STUFFS), False)
    preds, target = panoptic_batch(6, 2, (5, 5), False)
    p, t = preds.reshape(2, -1, 2), target.reshape(2, -1, 2)
    unknown = p.clone()
    unknown[1, 7, 0] = 2
    outs = _outs(5)
    iou, tp, fp, fn = outs
    dup = table.clone()
    dup[1, 0] = dup[0, 0]
    kind = table.clone()
    kind[2, 1] = 3
    bad = [
        ((iou.float(), tp, fp, fn, p, t, table, False), TypeError, "iou_sum"),
        ((iou, tp[:4], fp, fn, p, t, table, False), ValueError, "true_positives"),
        ((iou, tp, fp.int(), fn, p, t, table, False), TypeError, "false_positives"),
        ((iou, tp, fp, torch.zeros(10, dtype=torch.long)[::2], p, t, table, False), ValueError, "false_negatives"),
        ((iou, tp, fp, fn, p.float(), t, table, False), TypeError, "preds"),
        ((iou, tp, fp, fn, p.bool(), t, table, False), TypeError, "preds"),
        ((iou, tp, fp, fn, p, t[:1], table, False), ValueError, "target"),
        ((iou, tp, fp, fn, p[..., :1], t[..., :1], table, False), ValueError, "preds"),
        ((iou, tp, fp, fn, p, t, table.int(), False), TypeError, "categories"),
        ((iou, tp, fp, fn, p, t, dup, False), ValueError, "categories: category 0 appears twice"),
        ((iou, tp, fp, fn, p, t, kind, False), ValueError, "categories: kind 3 of row 2"),
        ((iou, tp, fp, fn, unknown, t, table, False), ValueError, "preds: category 2 \\(image 1, pixel 7\\)"),
    ]
    before = [o.clone() for o in outs]
    for args, exc, match in bad:
        with pytest.raises(exc, match=match):
            impl.panoptic_update(*args)
        for a, b in zip(before, outs):
            assert torch.equal(a, b), match
