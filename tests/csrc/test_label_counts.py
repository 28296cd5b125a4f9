"""The label-counts kernel: the C core against the torch reference (the oracle) and a direct
count, on index maps of every integer dtype and layout (contiguous, strided rows, transposed),
rows on both sides of the C core's 1024-label chunks; labels outside [0, C) and bad calls (both
paths) raise naming the argument and leave `out` untouched."""

import pytest
import torch
from support.kernel_inputs import LABEL_DTYPES, dtype_id, generator

from torchtally.kernels import reference


def _direct(p, t, classes):
    p, t = p.long(), t.long()
    cls = torch.arange(classes).view(1, classes, 1)
    hp, ht = p.unsqueeze(1) == cls, t.unsqueeze(1) == cls
    return torch.stack(((hp & ht).sum(2), hp.sum(2), ht.sum(2)), dim=-1)


def _layouts(p, t):
    """The same maps as given, with strided rows, and transposed from [P, N]."""
    wide = torch.zeros(p.shape[0], 3 * p.shape[1] + 1, dtype=t.dtype)
    wide[:, 1::3] = t
    yield p, t
    yield p.t().contiguous().t(), wide[:, 1::3]
    yield p[:, :], t.t().contiguous().t()


@pytest.mark.parametrize("dtype", LABEL_DTYPES, ids=dtype_id)
def test_c_matches_reference(c_core, dtype):
    g = generator(5)
    top = 2 if dtype == torch.bool else 9
    for pixels in (0, 1, 7, 1023, 1024, 1025, 3001):
        for classes in (top, top + 3):
            p = torch.randint(0, top, (3, pixels), generator=g).to(dtype)
            t = torch.randint(0, top, (3, pixels), generator=g).to(dtype)
            expected = _direct(p, t, classes)
            for vp, vt in _layouts(p, t):
                for impl in (c_core, reference):
                    out = torch.full((3, classes, 3), -7, dtype=torch.int64)
                    impl.label_counts(out, vp, vt, 0)
                    assert torch.equal(out, expected), (pixels, classes, impl)


def test_random_shapes_match(c_core):
    g = generator(11)
    for _ in range(40):
        n, pixels, classes = (int(torch.randint(1, hi, (1,), generator=g)) for hi in (6, 3000, 40))
        p = torch.randint(0, classes, (n, pixels), generator=g)
        t = torch.randint(0, classes, (n, pixels), generator=g).int()
        a = torch.empty(n, classes, 3, dtype=torch.int64)
        b = torch.empty(n, classes, 3, dtype=torch.int64)
        c_core.label_counts(a, p, t, 3)
        reference.label_counts(b, p, t, 3)
        assert torch.equal(a, b) and torch.equal(a, _direct(p, t, classes))


def test_empty_batch_and_no_pixels(impl):
    out = torch.empty(0, 4, 3, dtype=torch.int64)
    impl.label_counts(out, torch.zeros(0, 5, dtype=torch.long), torch.zeros(0, 5, dtype=torch.long), 0)
    out = torch.full((2, 4, 3), 9, dtype=torch.int64)
    impl.label_counts(out, torch.zeros(2, 0, dtype=torch.uint8), torch.zeros(2, 0, dtype=torch.uint8), 0)
    assert bool((out == 0).all())


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64], ids=dtype_id)
def test_labels_out_of_range_raise_naming_argument_sample_value(impl, dtype):
    p = torch.zeros(3, 2000, dtype=dtype)
    t = torch.ones(3, 2000, dtype=dtype)
    cases = [
        (lambda p, t: p[1].__setitem__(1500, 4), r"^preds: sample 1: class index 4 is out of range \[0, 4\)"),
        (lambda p, t: t[2].__setitem__(3, -1), r"^target: sample 2: class index -1 is out of range \[0, 4\)"),
        (  # preds is looked at first, even where target's bad label comes earlier
            lambda p, t: (p[2].__setitem__(1999, 100), t[0].__setitem__(0, 5)),
            r"^preds: sample 2: class index 100 is out of range \[0, 4\)",
        ),
    ]
    for spoil, match in cases:
        bp, bt = p.clone(), t.clone()
        spoil(bp, bt)
        for args in ((bp, bt), (bp.t().contiguous().t(), bt.t().contiguous().t())):
            out = torch.full((3, 4, 3), 5, dtype=torch.int64)
            with pytest.raises(ValueError, match=match):
                impl.label_counts(out, *args, 0)
            assert bool((out == 5).all())


def test_bad_calls_leave_out_untouched(impl):
    m = torch.zeros(2, 10, dtype=torch.long)
    calls = [
        ((m.float(), m), TypeError, "preds"),
        ((m, m.half()), TypeError, "target"),
        ((m[0], m[0]), ValueError, "preds"),
        ((m, m[:, :9]), ValueError, "target"),
        ((m.view(2, 2, 5), m.view(2, 2, 5)), ValueError, "preds"),
    ]
    for args, exc, match in calls:
        out = torch.full((2, 3, 3), 5, dtype=torch.int64)
        with pytest.raises(exc, match=match):
            impl.label_counts(out, *args, 0)
        assert bool((out == 5).all())
    for out, exc in (
        (torch.full((2, 3, 3), 5, dtype=torch.int32), TypeError),
        (torch.full((2, 3, 2), 5, dtype=torch.int64), ValueError),
        (torch.full((3, 3, 3), 5, dtype=torch.int64), ValueError),
        (torch.full((3, 2, 3), 5, dtype=torch.int64).transpose(0, 1), ValueError),
        (torch.full((2, 9), 5, dtype=torch.int64), ValueError),
    ):
        with pytest.raises(exc, match="out"):
            impl.label_counts(out, m, m, 0)
        assert bool((out == 5).all())


def test_nan_marks_of_scored_sides(impl):
    """-1 on a side marked in from_scores is a NaN row of its scores; unmarked, it is a label."""
    p = torch.zeros(3, 50, dtype=torch.long)
    t = torch.ones(3, 50, dtype=torch.long)
    p[2, 7] = -1
    t[1, 3] = -1
    cases = [
        (0, r"^preds: sample 2: class index -1 is out of range \[0, 4\)"),
        (1, r"^preds: NaN in the scores of sample 2$"),
        (2, r"^preds: sample 2: class index -1 is out of range"),
        (3, r"^preds: NaN in the scores of sample 2$"),
    ]
    for flags, match in cases:
        out = torch.full((3, 4, 3), 5, dtype=torch.int64)
        with pytest.raises(ValueError, match=match):
            impl.label_counts(out, p, t, flags)
        assert bool((out == 5).all())
    p[2, 7] = 0
    for flags, match in ((2, r"^target: NaN in the scores of sample 1$"), (1, r"^target: sample 1: class index -1")):
        out = torch.full((3, 4, 3), 5, dtype=torch.int64)
        with pytest.raises(ValueError, match=match):
            impl.label_counts(out, p, t, flags)
        assert bool((out == 5).all())
    for flags in (-1, 4):
        with pytest.raises(ValueError, match="^from_scores"):
            impl.label_counts(torch.zeros(3, 4, 3, dtype=torch.int64), p, t, flags)


@pytest.mark.parametrize("classes", [1, 31, 32, 33])
def test_both_counting_paths_at_their_boundary(c_core, classes):
    """Up to 32 classes long rows take the joint histograms, beyond the per-class counters."""
    g = generator(classes)
    for pixels in (2 * 4 * classes * classes - 1, 2 * 4 * classes * classes + 3):
        p = torch.randint(0, classes, (2, pixels), generator=g)
        t = torch.randint(0, classes, (2, pixels), generator=g).to(torch.int16)
        t[1, : pixels // 2] = p[1, : pixels // 2]  # long runs of hits
        out = torch.empty(2, classes, 3, dtype=torch.int64)
        c_core.label_counts(out, p, t, 0)
        assert torch.equal(out, _direct(p, t, classes))
