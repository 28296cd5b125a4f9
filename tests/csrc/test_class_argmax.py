"""The class-argmax kernel: the C core against torch.argmax over the class dim (the reference's
oracle) on score maps of every float dtype and layout, pixel counts on both sides of its
1024-pixel chunks, ties, -inf rows and NaN pixels (-1); bad calls (both paths) raise naming the
argument and leave `out` untouched."""

import pytest
import torch
from support.kernel_inputs import SCORE_DTYPES, dtype_id, generator

from torchtally.kernels import reference


def _expected(s):
    return s.argmax(dim=1).masked_fill_(torch.isnan(s).any(dim=1), -1)


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_c_matches_torch_argmax(c_core, dtype):
    g = generator(4)
    for pixels in (0, 1, 1023, 1024, 1025, 2500):
        for classes in (1, 3, 17):
            s = torch.randn(2, classes, pixels, generator=g).to(dtype)
            if pixels > 10:
                s[0, :, 3] = 0.5  # a tie: the first class wins
                s[1, :, 5] = float("-inf")  # every score -inf: class 0
                s[1, classes - 1, 7] = float("nan")
                s[0, 0, pixels - 1] = float("nan")
            expected = _expected(s.float())
            wide = torch.zeros(2, classes, 2 * pixels, dtype=dtype)
            wide[:, :, ::2] = s
            for view in (s, s.transpose(1, 2).contiguous().transpose(1, 2), wide[:, :, ::2]):
                for impl in (c_core, reference):
                    out = torch.full((2, pixels), 9, dtype=torch.int64)
                    impl.class_argmax(out, view)
                    assert torch.equal(out, expected), (pixels, classes, impl)


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_one_score_row_per_sample(c_core, dtype):
    """[N, C, 1]: a multiclass batch [N, C] (rows read one by one for float32 / float64 with
    unit class stride, else walked as [1, C, N]) with ties, -inf rows and NaN rows."""
    g = generator(5)
    for rows, classes in ((1, 4), (3, 1), (2500, 10)):
        s = torch.randn(rows, classes, generator=g).to(dtype)
        if rows > 10:
            s[3] = 0.25  # a tie: the first class wins
            s[4, 2:] = s[4].max() + 1  # a tie after the first class
            s[5] = float("-inf")
            s[6, classes - 1] = float("nan")
            s[7, 0] = float("nan")
        expected = _expected(s.float()[:, :, None])
        wide = torch.zeros(rows, 2 * classes, dtype=dtype)
        wide[:, ::2] = s
        for view in (s, s.t().contiguous().t(), wide[:, ::2]):
            out = torch.full((rows, 1), 9, dtype=torch.int64)
            c_core.class_argmax(out, view[:, :, None])
            assert torch.equal(out, expected), (rows, classes, view.stride())


def test_bad_calls_leave_out_untouched(impl):
    s = torch.zeros(2, 3, 10)
    calls = [((s.long(),), TypeError, "scores"), ((s[0],), ValueError, "scores"), ((s[:, :0],), ValueError, "scores")]
    for args, exc, match in calls:
        out = torch.full((2, 10), 5, dtype=torch.int64)
        with pytest.raises(exc, match=match):
            impl.class_argmax(out, *args)
        assert bool((out == 5).all())
    for out, exc in (
        (torch.full((2, 10), 5, dtype=torch.int32), TypeError),
        (torch.full((2, 9), 5, dtype=torch.int64), ValueError),
        (torch.full((10, 2), 5, dtype=torch.int64).t(), ValueError),
    ):
        with pytest.raises(exc, match="out"):
            impl.class_argmax(out, s)
        assert bool((out == 5).all())
