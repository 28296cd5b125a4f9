"""The surface-distance kernel: the C core against the torch reference (the oracle), bit for bit,
on random masks (noise and blobs) of every metric, isotropic and anisotropic spacing, directed
or not, square and non-square images, strided inputs and integer dtypes; known answers for
empty and 1-pixel masks; bad calls (both paths) that leave `out` untouched."""

import math

import pytest
import torch
from support.kernel_inputs import generator, same_bits

from torchtally.kernels import reference

SPACINGS = ((1.0, 1.0), (0.7, 2.3), (3.1, 0.45))


def _masks(n, c, h, w, g):
    """[n, c, h, w] bool: noise of random density for half of the pairs, random rectangles for the rest."""
    noise = torch.rand(n, c, h, w, generator=g) < torch.rand(n, c, 1, 1, generator=g)
    rows, cols = torch.arange(h).view(h, 1), torch.arange(w).view(1, w)
    blobs = torch.zeros(n, c, h, w, dtype=torch.bool)
    for i in range(n):
        for j in range(c):
            for _ in range(2):
                r0, r1 = sorted(torch.randint(0, h + 1, (2,), generator=g).tolist())
                c0, c1 = sorted(torch.randint(0, w + 1, (2,), generator=g).tolist())
                blobs[i, j] |= (rows >= r0) & (rows < r1) & (cols >= c0) & (cols < c1)
    return torch.where(torch.arange(c).view(1, c, 1, 1) % 2 == 0, noise, blobs)


def _both(p, t, metric, spacing, directed, c_core):
    a = torch.zeros(p.shape[:2], dtype=torch.float64)
    b = torch.zeros(p.shape[:2], dtype=torch.float64)
    c_core.surface_distance(a, p, t, metric, spacing[0], spacing[1], directed)
    reference.surface_distance(b, p, t, metric, spacing[0], spacing[1], directed)
    return a, b


@pytest.mark.parametrize("shape", [(3, 4, 17, 17), (2, 4, 9, 31), (2, 3, 40, 6)], ids=str)
def test_c_matches_reference(c_core, shape):
    g = generator(sum(shape))
    p, t = _masks(*shape, g), _masks(*shape, g)
    p[0, 1] = False  # one empty mask (inf) and a pair of empty masks (NaN)
    p[0, 2], t[0, 2] = False, False
    for metric in range(3):
        for spacing in SPACINGS:
            for directed in (False, True):
                a, b = _both(p, t, metric, spacing, directed, c_core)
                assert same_bits(a, b), (metric, spacing, directed, a, b)
    assert math.isinf(a[0, 1]) and math.isnan(a[0, 2])


def test_strided_and_integer_inputs(c_core):
    g = generator(5)
    p, t = _masks(2, 3, 12, 15, g), _masks(2, 3, 12, 15, g)
    expected = torch.zeros(2, 3, dtype=torch.float64)
    c_core.surface_distance(expected, p, t, 0, 1.5, 0.5, False)
    big = torch.zeros(4, 3, 25, 40, dtype=torch.int16)
    big[::2, :, 1::2, 3:33:2] = p.to(torch.int16)
    variants = [
        (p.to(torch.uint8), t.to(torch.int64)),
        (p.contiguous(memory_format=torch.channels_last), t.transpose(2, 3).contiguous().transpose(2, 3)),
        (big[::2, :, 1::2, 3:33:2], t.to(torch.int8)),
        (p.int() * 5, t),  # any nonzero value is inside the mask
    ]
    for impl in (c_core, reference):
        for vp, vt in variants:
            out = torch.zeros(2, 3, dtype=torch.float64)
            impl.surface_distance(out, vp, vt, 0, 1.5, 0.5, False)
            assert same_bits(out, expected)


@pytest.mark.parametrize("directed", [False, True])
def test_known_answers(impl, directed):
    p = torch.zeros(1, 4, 5, 7, dtype=torch.bool)
    t = torch.zeros(1, 4, 5, 7, dtype=torch.bool)
    p[0, 0, 1, 2] = True  # two single pixels 3 rows and 4 columns apart
    t[0, 0, 4, 6] = True
    t[0, 1, 2, 3] = True  # preds empty: inf
    p[0, 3] = True  # the whole image against one corner pixel: every border pixel is an edge
    t[0, 3, 0, 0] = True
    sy, sx = 0.5, 2.0
    expected = {
        0: [math.sqrt((3 * sy) ** 2 + (4 * sx) ** 2), math.inf, math.nan, math.sqrt((4 * sy) ** 2 + (6 * sx) ** 2)],
        1: [max(3 * sy, 4 * sx), math.inf, math.nan, max(4 * sy, 6 * sx)],
        2: [3 * sy + 4 * sx, math.inf, math.nan, 4 * sy + 6 * sx],
    }
    if directed:  # from the full image's edges to the corner pixel: the same; from the corner: 0
        p, t = t, p
        expected = {m: v[:3] + [0.0] for m, v in expected.items()}
    for metric, values in expected.items():
        out = torch.zeros(1, 4, dtype=torch.float64)
        impl.surface_distance(out, p, t, metric, sy, sx, directed)
        torch.testing.assert_close(out, torch.tensor([values], dtype=torch.float64), equal_nan=True, rtol=0, atol=0)


def test_thin_and_empty_images(c_core):
    g = generator(9)
    for shape in ((2, 2, 1, 9), (2, 2, 9, 1), (1, 2, 1, 1)):
        p, t = _masks(*shape, g), _masks(*shape, g)
        for metric in range(3):
            a, b = _both(p, t, metric, (1.3, 0.8), False, c_core)
            assert same_bits(a, b)
    for shape in ((2, 3, 0, 4), (0, 3, 4, 4), (2, 0, 4, 4)):
        empty = torch.zeros(shape, dtype=torch.bool)
        a, b = _both(empty, empty, 0, (1, 1), False, c_core)
        assert same_bits(a, b) and bool(a.isnan().all())


def test_bad_calls_leave_out_untouched(impl):
    m = torch.zeros(2, 3, 4, 5, dtype=torch.bool)
    m[:, :, 1, 1] = True
    calls = [
        ((m.float(), m, 0, 1.0, 1.0, False), TypeError, "preds"),
        ((m, m.double(), 0, 1.0, 1.0, False), TypeError, "target"),
        ((m[:, :, 0], m[:, :, 0], 0, 1.0, 1.0, False), ValueError, "preds"),
        ((m, m[:, :, :3], 0, 1.0, 1.0, False), ValueError, "target"),
        ((m, m, 3, 1.0, 1.0, False), ValueError, "metric"),
        ((m, m, -1, 1.0, 1.0, False), ValueError, "metric"),
        ((m, m, 0, 0.0, 1.0, False), ValueError, "row_spacing"),
        ((m, m, 0, 1.0, float("inf"), False), ValueError, "col_spacing"),
        ((m, m, 0, 1.0, float("nan"), False), ValueError, "col_spacing"),
    ]
    for args, exc, match in calls:
        out = torch.full((2, 3), 0.25, dtype=torch.float64)
        with pytest.raises(exc, match=match):
            impl.surface_distance(out, *args)
        assert bool((out == 0.25).all())
    for out, exc in (
        (torch.full((2, 3), 0.25), TypeError),
        (torch.full((3, 2), 0.25, dtype=torch.float64), ValueError),
        (torch.full((3, 2), 0.25, dtype=torch.float64).t(), ValueError),
    ):
        with pytest.raises(exc, match="out"):
            impl.surface_distance(out, m, m, 0, 1.0, 1.0, False)
        assert bool((out == 0.25).all())
