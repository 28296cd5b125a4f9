"""The LCS kernel: the C core against the torch reference and a plain dynamic programme on
random token-id pairs (empty sides, strided inputs, pairs of very different lengths); bad
offsets and dtypes raise naming the argument, with `out` untouched."""

import pytest
import torch
from support.kernel_inputs import generator

from torchtally.kernels import reference


def _lcs(x, y):
    table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            same = x[i - 1] == y[j - 1]
            table[i][j] = table[i - 1][j - 1] + 1 if same else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def _batch(g, pairs, vocab, longest):
    lens_a = torch.randint(0, longest + 1, (pairs,), generator=g)
    lens_b = torch.randint(0, longest + 1, (pairs,), generator=g)
    lens_b[0] = 0  # an empty side
    a = torch.randint(0, vocab, (int(lens_a.sum()),), generator=g)
    b = torch.randint(0, vocab, (int(lens_b.sum()),), generator=g)
    ao = torch.cat((torch.zeros(1, dtype=torch.int64), lens_a.cumsum(0)))
    bo = torch.cat((torch.zeros(1, dtype=torch.int64), lens_b.cumsum(0)))
    return a, ao, b, bo


@pytest.mark.parametrize("vocab", [2, 5, 1000])
def test_c_matches_reference_and_direct(c_core, vocab):
    g = generator(vocab)
    a, ao, b, bo = _batch(g, 25, vocab, 30)
    expected = [_lcs(a[ao[p] : ao[p + 1]].tolist(), b[bo[p] : bo[p + 1]].tolist()) for p in range(25)]
    strided = torch.zeros(2 * a.shape[0], dtype=torch.int64)
    strided[::2] = a
    for impl in (c_core, reference):
        for va in (a, strided[::2]):
            out = torch.full((25,), -3, dtype=torch.int64)
            impl.lcs(out, va, ao, b, bo)
            assert out.tolist() == expected, impl


def test_long_against_short_and_no_pairs(impl):
    a = torch.arange(400) % 7
    b = torch.tensor([3, 1, 4, 1, 5])
    out = torch.zeros(2, dtype=torch.int64)
    impl.lcs(out, a, torch.tensor([0, 400, 400]), b, torch.tensor([0, 5, 5]))
    assert out.tolist() == [_lcs(a.tolist(), b.tolist()), 0]
    empty = torch.zeros(0, dtype=torch.int64)
    impl.lcs(empty, empty, torch.zeros(1, dtype=torch.int64), empty, torch.zeros(1, dtype=torch.int64))


def test_bad_calls_raise_naming_the_argument_and_leave_out_untouched(impl):
    t = torch.tensor([1, 2, 3])
    good = torch.tensor([0, 3])
    calls = [
        (1, (t.int(), good, t, good), TypeError, "a"),
        (1, (t, good, t.float(), good), TypeError, "b"),
        (1, (t, torch.tensor([1, 3]), t, good), ValueError, "a_offsets"),
        (1, (t, good, t, torch.tensor([0, 4])), ValueError, "b_offsets"),
        (2, (t, torch.tensor([0, 3, 2]), t, torch.tensor([0, 1, 2])), ValueError, "a_offsets"),
        (1, (t, good, t, torch.tensor([0, 1, 2])), ValueError, "b_offsets"),
    ]
    for pairs, args, exc, name in calls:
        out = torch.full((pairs,), 9, dtype=torch.int64)
        with pytest.raises(exc, match=f"^{name}: "):
            impl.lcs(out, *args)
        assert bool((out == 9).all())
    with pytest.raises(TypeError, match="^out: "):
        impl.lcs(torch.zeros(1), t, good, t, good)
