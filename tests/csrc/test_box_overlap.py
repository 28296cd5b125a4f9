"""The box-overlap kernels: the C core against the torch reference (the oracle) on random boxes
of every float dtype and layout, with integer boxes and degenerate ones (zero width, zero area),
and bad calls (both paths) that leave `out` untouched."""

import pytest
import torch
from support.detection_boxes import random_boxes
from support.kernel_inputs import SCORE_DTYPES, dtype_id, generator, kernels

from torchtally.kernels import reference


def _tolerance(kind, dtype):
    """CIoU (kind 3) takes an arctangent: libm's atanf and torch's vectorised float32 atan may
    differ by an ulp, depending on the CPU's SIMD width; every other value is exact."""
    if kind == 3 and dtype in (torch.float16, torch.bfloat16, torch.float32):
        return {"rtol": 5e-7, "atol": 5e-7}
    return {"rtol": 1e-12, "atol": 1e-12}


def _boxes(n, g, dtype):
    b = random_boxes(n, g, dtype=torch.float64)
    b[: n // 4, 2] = b[: n // 4, 0]  # a quarter of zero width
    if n > 3:
        b[3] = b[2]  # two equal boxes
    return b.to(dtype)


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_matrix_c_matches_reference(c_core, dtype):
    g = generator(7)
    p, t = _boxes(40, g, dtype), _boxes(30, g, dtype)
    p[:, 2:] = p[:, 2:].clamp(min=p[:, :2] + 1)  # predictions of positive area: no 0 / 0
    for kind in range(4):
        for out_dtype in (torch.float32, torch.float64):
            a, b = torch.zeros(40, 30, dtype=out_dtype), torch.zeros(40, 30, dtype=out_dtype)
            c_core.box_overlap_matrix(a, p[:, :], t.t().contiguous().t(), kind)  # column-major target
            reference.box_overlap_matrix(b, p, t, kind)
            torch.testing.assert_close(a, b, equal_nan=True, **_tolerance(kind, dtype))
            d1, d2 = torch.zeros(25, dtype=out_dtype), torch.zeros(25, dtype=out_dtype)
            c_core.box_overlap_matrix(d1, p[::1], t, kind)
            reference.box_overlap_matrix(d2, p, t, kind)
            assert torch.equal(d1, a.diagonal()[:25])
            torch.testing.assert_close(d1, d2, **_tolerance(kind, dtype))


def test_zero_area_pairs_are_nan_as_torchvision(c_core):
    points = torch.tensor([[1.0, 1, 1, 1], [0, 0, 0, 4]])  # a point; a vertical segment
    full = torch.tensor([[0.0, 0, 4, 4]])
    for impl in (c_core, reference):
        out = torch.zeros(2, 2)
        impl.box_overlap_matrix(out, points, points, 0)
        assert out.isnan().all()
        out = torch.zeros(2, 1)
        impl.box_overlap_matrix(out, points, full, 3)
        assert out[0].isnan().all() and out[1].isfinite().all()  # CIoU: atan(0 / 0) for the point only


@pytest.mark.parametrize("kind", range(4))
def test_sums_c_matches_reference(c_core, kind):
    g = generator(11 + kind)
    sizes = torch.tensor([[10, 5], [0, 3], [12, 0], [8, 12], [0, 0], [5, 5]])
    p, t = _boxes(35, g, torch.float32), _boxes(25, g, torch.float32)
    p[:, 2:] = p[:, 2:].clamp(min=p[:, :2] + 1)
    pl, tl = torch.randint(0, 3, (35,), generator=g).to(torch.int16), torch.randint(0, 3, (25,), generator=g)
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        for labelled in (True, False):
            for threshold in (None, 0.1, -0.2):
                a = torch.full((25, 2), 0.5, dtype=torch.float64)
                b = a.clone()
                args = (sizes, pl if labelled else None, tl if labelled else None, kind, threshold)
                c_core.box_overlap_sums(a, p.to(dtype), t.to(dtype)[::1], *args)
                reference.box_overlap_sums(b, p.to(dtype), t.to(dtype), *args)
                torch.testing.assert_close(a, b, **_tolerance(kind, dtype))
    counts = torch.zeros(25, 2, dtype=torch.float64)
    c_core.box_overlap_sums(counts, p, t, sizes, None, None, kind)
    assert counts[5:8, 1].tolist() == [3.0, 3.0, 3.0]  # no predictions: M zeros per target without labels
    c_core.box_overlap_sums(counts.zero_(), p, t, sizes, pl, tl, kind)
    assert counts[5:8].tolist() == [[0.0, 1.0]] * 3  # with labels, one zero per target


def test_bad_calls_leave_out_untouched(impl):
    box = torch.tensor([[0.0, 0, 2, 2], [1, 1, 3, 3]])
    sizes = torch.tensor([[1, 1], [1, 1]])
    labels = torch.tensor([0, 0])
    calls = [
        ((box.long(), box, sizes, None, None, 0), TypeError, "preds"),
        ((box[:, :3], box, sizes, None, None, 0), ValueError, "preds"),
        (
            (box, torch.tensor([[0.0, 0, 2, 2], [1, 1, 0, 3]]), sizes, None, None, 0),
            ValueError,
            "target: image 1, box 0",
        ),
        (
            (torch.tensor([[0.0, float("nan"), 2, 2], [1, 1, 3, 3]]), box, sizes, None, None, 0),
            ValueError,
            "preds: image 0",
        ),
        ((box, box, torch.tensor([[1, 1], [1, 2]]), None, None, 0), ValueError, "sizes"),
        ((box, box, torch.tensor([[2, 1], [-1, 1]]), None, None, 0), ValueError, "sizes"),
        ((box, box, sizes.int(), None, None, 0), TypeError, "sizes"),
        ((box, box, sizes, labels, None, 0), ValueError, "target_labels"),
        ((box, box, sizes, labels.float(), labels, 0), TypeError, "pred_labels"),
        ((box, box, sizes, labels, labels[:1], 0), ValueError, "target_labels"),
        ((box, box, sizes, None, None, 4), ValueError, "kind"),
        ((box, box, sizes, None, None, 0, float("nan")), ValueError, "threshold"),
        ((torch.zeros(2, 4), torch.zeros(2, 4), sizes, None, None, 0), ValueError, "image 0: the IoU"),
    ]
    for args, exc, match in calls:
        out = torch.full((2, 2), 0.25, dtype=torch.float64)
        with pytest.raises(exc, match=match):
            impl.box_overlap_sums(out, *args)
        assert bool((out == 0.25).all())
    for out in (
        torch.zeros(2, 2, dtype=torch.float64)[:, :1],
        torch.zeros(3, 2, dtype=torch.float64),
        torch.zeros(2, 2),
    ):
        with pytest.raises((TypeError, ValueError), match="out"):
            impl.box_overlap_sums(out, box, box, sizes, None, None, 0)
    matrix_calls = [
        ((torch.zeros(2, 3), box, box, 0), ValueError, "out"),
        ((torch.zeros(3), box, box, 0), ValueError, "out"),
        ((torch.zeros(2, 2, dtype=torch.int64), box, box, 0), TypeError, "out"),
        (
            (torch.zeros(2, 2), box, torch.tensor([[0.0, 0, float("inf"), 1], [0, 0, 1, 1]]), 0),
            ValueError,
            "target: box 0",
        ),
    ]
    for args, exc, match in matrix_calls:
        out = args[0].fill_(0.25) if args[0].is_floating_point() else args[0]
        with pytest.raises(exc, match=match):
            impl.box_overlap_matrix(*args)
        assert bool((out == (0.25 if out.is_floating_point() else 0)).all())


def test_routing_takes_the_c_core_for_cpu(monkeypatch):
    from torchtally import kernels as routing

    calls = []
    c = kernels("c")

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(c, name)

    monkeypatch.setattr(routing, "_c", Spy())
    out = torch.zeros(1, 1)
    routing.box_overlap_matrix(out, torch.tensor([[0.0, 0, 1, 1]]), torch.tensor([[0.0, 0, 1, 2]]), 0)
    a, b = torch.tensor([[0.0, 0, 1, 1]]), torch.tensor([[0.0, 0, 1, 2]])
    sums = torch.zeros(1, 2, dtype=torch.float64)
    routing.box_overlap_sums(sums, a, b, torch.tensor([[1, 1]]), None, None, 1)
    assert calls == ["box_overlap_matrix", "box_overlap_sums"] and out.item() == 0.5 and sums.tolist() == [[0.5, 1.0]]
