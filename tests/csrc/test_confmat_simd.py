"""The confusion-matrix kernels' vector paths against their scalar path and the torch reference.

torchtally._C picks a path by SIMD level (0 scalar, 1 SSE2, 2 AVX2 where the CPU has it);
`_C._set_simd_level` (test-only) forces one, so every path runs on the same inputs and the
results, error messages and untouched states must agree bit for bit. The sizes sit around the
paths' edges: four rows per vector, 255 groups of four rows per packed count, 1024-row chunks.
Every level and the reference are run by support/simd_paths.py's ``run_all``.
"""

import pytest
import torch
from support.kernel_inputs import dtype_id, generator, kernels, start_counts
from support.simd_paths import run_all, simd_level


def test_simd_level_hook():
    c = kernels("c")
    level, widest = c._simd_level()
    assert 0 <= level <= widest <= 2
    with pytest.raises(ValueError, match="level: expected 0"):
        c._set_simd_level(widest + 1)
    with pytest.raises(ValueError, match="level: expected 0"):
        c._set_simd_level(-1)
    assert c._simd_level()[0] == level
    with simd_level(0):
        assert c._simd_level() == (0, widest)
    assert c._simd_level()[0] == level


# ---- confmat_threshold: dense float32/float64 preds ----------------------------------------------

ROWS = [0, 1, 3, 4, 5, 7, 8, 1019, 1020, 1021, 1023, 1024, 1025, 2047, 4085]
WIDTHS = [None, 1, 2, 3, 4, 5, 10, 64, 128, 129]


def threshold_case(rows, width, pdtype, tdtype, g):
    shape = (rows,) if width is None else (rows, width)
    p = torch.rand(shape, generator=g, dtype=torch.float64)
    p[torch.rand(shape, generator=g) < 0.1] = 0.5
    t = torch.randint(0, 2, shape, generator=g).to(tdtype)
    return p.to(pdtype), t


@pytest.mark.parametrize("width", WIDTHS, ids=str)
@pytest.mark.parametrize("rows", ROWS, ids=str)
def test_threshold_paths_agree_over_sizes(rows, width):
    g = generator(100 + rows)
    preds, target = threshold_case(rows, width, torch.float32, torch.int64, g)
    out = start_counts((2, 2) if width is None else (width, 2, 2), g)
    assert run_all("confmat_threshold", out, preds, target, None, None, 0.5)[0] == "ok"


@pytest.mark.parametrize("tdtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.int16], ids=dtype_id)
@pytest.mark.parametrize("pdtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("width", [None, 3, 10], ids=str)
def test_threshold_paths_agree_dtypes_mask_ignore(width, pdtype, tdtype):
    g = generator(7)
    rows = 1031
    preds, target = threshold_case(rows, width, pdtype, tdtype, g)
    out = start_counts((2, 2) if width is None else (width, 2, 2), g)
    mask = torch.rand(rows, generator=g) < 0.7
    run_all("confmat_threshold", out, preds, target, mask, None, 0.5)
    run_all("confmat_threshold", out, preds, target, mask.to(torch.uint8)[:, None].expand(rows, 3)[:, 1], None, 0.5)
    if tdtype != torch.bool:
        # ignored elements may hold any value, also in masked rows: only kept ones are checked
        ignore = -1 if tdtype.is_signed else 255
        target = target.clone()
        target[torch.rand(target.shape, generator=g) < 0.2] = ignore
        run_all("confmat_threshold", out, preds, target, mask, ignore, 0.5)
        target[~mask] = 7  # masked rows are not range-checked
        assert run_all("confmat_threshold", out, preds, target, mask, ignore, 0.5)[0] == "ok"
        # an ignore_index that matches only in its low 32 bits is not an ignore
        big = torch.full_like(target, 1)
        if tdtype == torch.int64:
            big[5] = (1 << 32) | 1
            res = run_all("confmat_threshold", out, preds, big, None, 1, 0.5)
            assert res[0] == "error" and "value 4294967297 at sample 5" in res[1]


@pytest.mark.parametrize("pdtype", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize(
    "threshold", [0.1, 1 / 3, -1e-300, 1e-300, -1e300, 1e300, 3.5e38, float("inf"), -float("inf"), 0.0, -0.0]
)
def test_threshold_dense_compares_exactly(pdtype, threshold):
    """The float32 path compares with the largest float at or below the threshold: the same as
    comparing in double, also for thresholds between floats, tiny, huge or infinite."""
    import numpy as np

    g = generator(8)
    near = [
        np.nextafter(np.float32(threshold if abs(threshold) < 3e38 else 0), np.float32(d)) for d in (-np.inf, np.inf)
    ]
    values = [threshold, 0.0, -0.0, float("inf"), -float("inf"), 1e-45, -1e-45, 3.4e38, -3.4e38] + [
        float(v) for v in near
    ]
    preds = torch.tensor(values * 4, dtype=torch.float64).to(pdtype).reshape(-1, 4)
    target = torch.randint(0, 2, preds.shape, generator=g)
    out = torch.zeros(4, 2, 2, dtype=torch.int64)
    ok, got = run_all("confmat_threshold", out, preds, target, None, None, threshold)
    assert ok == "ok"
    want = torch.zeros(4, 2, 2, dtype=torch.int64)
    positive = (preds.double() > threshold).long()
    for col in range(4):
        for t, p in zip(target[:, col].tolist(), positive[:, col].tolist()):
            want[col, t, p] += 1
    assert torch.equal(got, want)


@pytest.mark.parametrize("pdtype", [torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("width", [None, 3, 10], ids=str)
def test_threshold_nan_and_bad_target_at_every_lane(width, pdtype):
    """One bad element at each position of the first groups, of a group near the packed-count
    flush, and of the tail: the same first bad element named, out unchanged, on every path."""
    g = generator(9)
    rows = 1023
    preds, target = threshold_case(rows, width, pdtype, torch.int64, g)
    cols = 1 if width is None else width
    out = start_counts((2, 2) if width is None else (width, 2, 2), g)
    positions = list(range(0, 8 * cols)) + list(range(1018 * cols, 1023 * cols))
    for flat in positions:
        r, c = divmod(flat, cols)
        p, t = preds.clone(), target.clone()
        idx = (r,) if width is None else (r, c)
        p[idx] = float("nan")
        res = run_all("confmat_threshold", out, p, t, None, None, 0.5)
        assert res[0] == "error" and f"NaN at sample {r}, column {c}" in res[1]
        t[idx] = 2 if flat % 2 else -1
        res = run_all("confmat_threshold", out, preds, t, None, None, 0.5)
        assert res[0] == "error" and f"at sample {r}, column {c} is not a binary label" in res[1]
        # a NaN in a masked row is still an error; a bad target there is not
        mask = torch.ones(rows, dtype=torch.bool)
        mask[r] = False
        assert run_all("confmat_threshold", out, p, target, mask, None, 0.5)[0] == "error"
        assert run_all("confmat_threshold", out, preds, t, mask, None, 0.5)[0] == "ok"


def test_threshold_non_dense_layouts_fall_back():
    g = generator(10)
    preds, target = threshold_case(1030, 6, torch.float32, torch.int64, g)
    out = start_counts((6, 2, 2), g)
    want = run_all("confmat_threshold", out, preds, target, None, None, 0.5)
    for p, t in [
        (preds.t().contiguous().t(), target),
        (preds, target.t().contiguous().t()),
        (preds[:, None].expand(1030, 2, 6)[:, 0], target),
        (torch.cat([preds, preds], 1)[:, :6], torch.cat([target, target], 1)[:, :6]),
    ]:
        assert torch.equal(run_all("confmat_threshold", out, p, t, None, None, 0.5)[1], want[1])
    # an offset start of the data (not 16-byte aligned) on the dense path
    big_p, big_t = (
        torch.cat([preds.flatten()[:1], preds.flatten()]),
        torch.cat([target.flatten()[:1], target.flatten()]),
    )
    assert torch.equal(
        run_all("confmat_threshold", out, big_p[1:].view(1030, 6), big_t[1:].view(1030, 6), None, None, 0.5)[1], want[1]
    )


# ---- confmat_scores: the fused argmax (float32 rows: 16 per AVX2 pass, 4 per SSE2 vector) ---------

SCORE_ROWS = [0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 1023, 1024, 1025, 1040, 2063]


def score_case(rows, classes, dtype, g, ties=False):
    if ties:  # few distinct values: many exact ties, also of the maximum
        s = torch.randint(-2, 3, (rows, classes), generator=g).to(torch.float64) / 2
    else:
        s = torch.randn(rows, classes, generator=g, dtype=torch.float64)
    return s.to(dtype), torch.randint(0, classes, (rows,), generator=g)


@pytest.mark.parametrize("classes", [1, 2, 3, 10, 33], ids=str)
@pytest.mark.parametrize("rows", SCORE_ROWS, ids=str)
def test_argmax_paths_agree_over_sizes(rows, classes):
    g = generator(200 + rows)
    for ties in (False, True):
        scores, target = score_case(rows, classes, torch.float32, g, ties)
        out = start_counts((classes, classes), g)
        ok, got = run_all("confmat_scores", out, scores, target, None, None)
        assert ok == "ok"
        want = torch.bincount(target * classes + scores.argmax(1), minlength=classes * classes) if rows else 0
        assert torch.equal(got.flatten(), want if rows else torch.zeros(classes * classes, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=dtype_id)
@pytest.mark.parametrize("kind", ["contiguous", "transposed", "sliced", "expanded"])
def test_argmax_paths_agree_layouts_and_dtypes(dtype, kind):
    g = generator(3)
    rows, classes = 1041, 10
    scores, target = score_case(rows, classes, dtype, g, ties=True)
    if kind == "transposed":
        scores = scores.t().contiguous().t()
    elif kind == "sliced":
        scores = torch.cat([scores, scores], 1)[:, 3 : 3 + classes]
    elif kind == "expanded":  # every row the same memory (row stride 0)
        scores = scores[:1].expand(rows, classes)
    mask = torch.rand(rows, generator=g) < 0.8
    out = start_counts((classes, classes), g)
    ok, got = run_all("confmat_scores", out, scores, target, mask, 3)
    assert ok == "ok"
    keep = mask & (target != 3)
    want = torch.bincount(target[keep] * classes + scores.float()[keep].argmax(1), minlength=classes * classes)
    assert torch.equal(got.flatten(), want)


def test_argmax_ties_infinities_and_float64_precision():
    """Ties go to the lowest index; a row of -inf is class 0; float64 values that round to the
    same float32 are told apart."""
    rows = 40
    ninf, inf = float("-inf"), float("inf")
    patterns = [
        [ninf] * 5,
        [1, 1, 1, 1, 1],
        [0, 2, 2, 1, 2],
        [ninf, ninf, ninf, ninf, -1e38],
        [inf, inf, 0, 0, 0],
        [-0.0, 0.0, -0.0, 0, 0],
        [0, 0, 0, 0, inf],
    ]
    want_pattern = [0, 0, 1, 4, 0, 0, 4]
    s = torch.tensor([patterns[r % len(patterns)] for r in range(rows)], dtype=torch.float32)
    target = torch.zeros(rows, dtype=torch.int64)
    ok, got = run_all("confmat_scores", torch.zeros(5, 5, dtype=torch.int64), s, target, None, None)
    want = torch.bincount(torch.tensor([want_pattern[r % len(patterns)] for r in range(rows)]), minlength=5)
    assert ok == "ok" and torch.equal(got[0], want)
    d = torch.tensor([[1.0, 1.0 + 2**-40, 1.0]] * 20, dtype=torch.float64)
    assert d.float()[0, 0] == d.float()[0, 1]
    ok, got = run_all(
        "confmat_scores", torch.zeros(3, 3, dtype=torch.int64), d, torch.zeros(20, dtype=torch.int64), None, None
    )
    assert ok == "ok" and got[0, 1] == 20


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
def test_argmax_nan_at_every_lane_and_bad_targets(dtype):
    """A NaN in each row of the first passes, of a pass across the chunk edge and of the tail, at
    each column: every path names that sample and leaves out unchanged (also for a masked row);
    a counted out-of-range target before it is the error named instead."""
    g = generator(4)
    rows, classes = 1043, 5
    scores, target = score_case(rows, classes, dtype, g)
    out = start_counts((classes, classes), g)
    for r in list(range(0, 34)) + list(range(1016, 1043)):
        col = r % classes
        s = scores.clone()
        s[r, col] = float("nan")
        mask = torch.ones(rows, dtype=torch.bool)
        mask[r] = False
        for m in (None, mask):
            res = run_all("confmat_scores", out, s, target, m, None)
            assert res == ("error", f"preds: NaN in the scores of sample {r}"), res
        if r == 0:
            continue  # the out-of-range target would lie in the NaN row itself
        t = target.clone()
        t[r // 2] = classes
        res = run_all("confmat_scores", out, s, t, None, None)
        assert res == ("error", f"target: label {classes} at index {r // 2} is out of range [0, {classes})"), res
    # many NaN rows in one pass: the first is named
    s = scores.clone()
    s[[21, 18, 30], 0] = float("nan")
    assert run_all("confmat_scores", out, s, target, None, None) == ("error", "preds: NaN in the scores of sample 18")
