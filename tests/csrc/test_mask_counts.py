"""The mask-counts kernel: the C core against the torch reference (the oracle) on 0/1 masks of
every integer dtype and layout, pixel counts on both sides of its 8-pixel words and 255-word
blocks; values other than 0/1 and bad calls (both paths) raise naming the argument and leave
`out` untouched."""

import pytest
import torch
from support.kernel_inputs import LABEL_DTYPES, dtype_id, generator

from torchtally.kernels import reference


def _direct(p, t):
    p, t = p.long(), t.long()
    return torch.stack(((p * t).sum(2), p.sum(2), t.sum(2)), dim=-1)


@pytest.mark.parametrize("dtype", LABEL_DTYPES, ids=dtype_id)
def test_c_matches_reference(c_core, dtype):
    g = generator(3)
    for pixels in (0, 1, 7, 8, 9, 2040, 2047, 5003):
        p = (torch.rand(3, 4, pixels, generator=g) < torch.rand(3, 4, 1, generator=g)).to(dtype)
        t = (torch.rand(3, 4, pixels, generator=g) < 0.5).to(dtype)
        p[0, 0] = 1  # a full mask: every byte lane of every word at its largest count
        expected = _direct(p, t)
        big = torch.zeros(3, 8, 2 * pixels + 1, dtype=dtype)
        big[:, ::2, 1::2] = t
        for vp, vt in ((p, t), (p.transpose(0, 1).contiguous().transpose(0, 1), big[:, ::2, 1::2]), (p, t.bool())):
            for impl in (c_core, reference):
                out = torch.full((3, 4, 3), -7, dtype=torch.int64)
                impl.mask_counts(out, vp, vt)
                assert torch.equal(out, expected), (pixels, impl)


def test_values_other_than_0_1_raise_naming_the_argument(impl):
    p = torch.zeros(2, 3, 100, dtype=torch.uint8)
    t = torch.ones(2, 3, 100, dtype=torch.int8)
    cases = [
        (lambda p, t: p[1, 2].__setitem__(57, 2), "preds: sample 1, class 2"),
        (lambda p, t: t[0, 1].__setitem__(99, -1), "target: sample 0, class 1"),
        (lambda p, t: (p[1, 0].__setitem__(3, 255), t[0, 0].__setitem__(0, 3)), "preds: sample 1, class 0"),
    ]
    for spoil, match in cases:
        bp, bt = p.clone(), t.clone()
        spoil(bp, bt)
        for args in ((bp, bt), (bp.long(), bt.long())):
            out = torch.full((2, 3, 3), 5, dtype=torch.int64)
            with pytest.raises(ValueError, match=match):
                impl.mask_counts(out, *args)
            assert bool((out == 5).all())


def test_bad_calls_leave_out_untouched(impl):
    m = torch.zeros(2, 3, 10, dtype=torch.bool)
    calls = [
        ((m.float(), m), TypeError, "preds"),
        ((m, m.half()), TypeError, "target"),
        ((m[:, 0], m[:, 0]), ValueError, "preds"),
        ((m, m[:, :2]), ValueError, "target"),
    ]
    for args, exc, match in calls:
        out = torch.full((2, 3, 3), 5, dtype=torch.int64)
        with pytest.raises(exc, match=match):
            impl.mask_counts(out, *args)
        assert bool((out == 5).all())
    for out, exc in (
        (torch.full((2, 3, 3), 5, dtype=torch.int32), TypeError),
        (torch.full((2, 3, 2), 5, dtype=torch.int64), ValueError),
        (torch.full((3, 2, 3), 5, dtype=torch.int64).transpose(0, 1), ValueError),
    ):
        with pytest.raises(exc, match="out"):
            impl.mask_counts(out, m, m)
        assert bool((out == 5).all())


@pytest.mark.parametrize("dtype", LABEL_DTYPES, ids=dtype_id)
def test_channels_last_masks_walked_a_sample_at_a_time(c_core, dtype):
    """Masks whose classes lie closer in memory than their pixels (one_hot(labels).permute, the
    usual one-hot) take the classes-inner walk: the same counts, and the same first bad
    (sample, class) per side, as the class-by-class walk."""
    g = generator(11)
    for pixels in (2, 9, 4099):
        p = (torch.rand(3, pixels, 5, generator=g) < 0.4).to(dtype).transpose(1, 2)  # class stride 1
        t = torch.nn.functional.one_hot(torch.randint(0, 5, (3, pixels), generator=g), 5).to(dtype).transpose(1, 2)
        mixed = (torch.rand(3, 5, pixels, generator=g) < 0.5).to(dtype)  # class-major: the other walk
        for vp, vt in ((p, t), (p, mixed), (t[:, ::2], p[:, 1:4])):
            for impl in (c_core, reference):
                out = torch.full(vp.shape[:2] + (3,), -7, dtype=torch.int64)
                impl.mask_counts(out, vp, vt)
                assert torch.equal(out, _direct(vp, vt)), (pixels, impl)
    if dtype == torch.bool:
        return
    p = torch.zeros(2, 50, 3, dtype=dtype).transpose(1, 2)
    t = torch.ones(2, 50, 3, dtype=dtype).transpose(1, 2)
    cases = [
        (lambda p, t: (p[1, 2].__setitem__(40, 2), t[0, 1].__setitem__(3, 3)), "preds: sample 1, class 2"),
        (lambda p, t: (t[1, 2].__setitem__(0, 2), t[0, 2].__setitem__(5, 3)), "target: sample 0, class 2"),
        (lambda p, t: (p[0, 2].__setitem__(49, 5), p[0, 1].__setitem__(0, 4)), "preds: sample 0, class 1"),
    ]
    for spoil, match in cases:
        bp, bt = (
            p.clone().transpose(1, 2).contiguous().transpose(1, 2),
            t.clone().transpose(1, 2).contiguous().transpose(1, 2),
        )
        spoil(bp, bt)
        for impl in (c_core, reference):
            out = torch.full((2, 3, 3), 5, dtype=torch.int64)
            with pytest.raises(ValueError, match=match):
                impl.mask_counts(out, bp, bt)
            assert bool((out == 5).all())
