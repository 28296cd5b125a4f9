"""The edit-distance kernel: the C core against the torch reference (the oracle: the full
dynamic programme, costs as given) on random batches of token pairs (int32 and int64 ids, small
alphabets so that matches happen, empty sides, offsets that skip tokens, substitution costs 0 to
5), and the bad calls (both paths) that raise naming the argument with `out` untouched."""

import pytest
import torch
from support.kernel_inputs import generator

from torchtally.kernels import reference


def _batch(g, pairs, longest, alphabet, dtype):
    """Random pairs in one token buffer; offsets start past a few leading tokens and leave gaps
    only at the ends (the kernel reads [offsets[0], offsets[2N]])."""
    lengths = torch.randint(0, longest + 1, (2 * pairs,), generator=g)
    lead = int(torch.randint(0, 3, (1,), generator=g))
    offsets = torch.cat((torch.tensor([lead]), lead + lengths.cumsum(0)))
    tokens = torch.randint(-alphabet, alphabet, (int(offsets[-1]) + 2,), generator=g).to(dtype)
    return tokens, offsets


def _direct(tokens, offsets, cost):
    """Each pair's distance, from the definition (recursion over the table, no shortcuts)."""
    t, o = tokens.tolist(), offsets.tolist()
    result = []
    for i in range(len(o) // 2):
        a, b = t[o[2 * i] : o[2 * i + 1]], t[o[2 * i + 1] : o[2 * i + 2]]
        row = list(range(len(b) + 1))
        for x in range(1, len(a) + 1):
            prev, row[0] = row[:], x
            for y in range(1, len(b) + 1):
                row[y] = min(prev[y] + 1, row[y - 1] + 1, prev[y - 1] + (0 if a[x - 1] == b[y - 1] else cost))
        result.append(row[-1])
    return torch.tensor(result, dtype=torch.int64)


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64), ids=str)
def test_c_matches_reference(c_core, dtype):
    g = generator(11)
    for pairs, longest, alphabet in ((1, 0, 2), (7, 3, 1), (40, 12, 2), (25, 40, 4), (3, 90, 3)):
        tokens, offsets = _batch(g, pairs, longest, alphabet, dtype)
        for cost in (0, 1, 2, 3, 5):
            expected = torch.full((pairs,), -1, dtype=torch.int64)
            reference.levenshtein(expected, tokens, offsets, cost)
            out = torch.full((pairs,), -1, dtype=torch.int64)
            c_core.levenshtein(out, tokens, offsets, cost)
            assert torch.equal(out, expected), (pairs, longest, alphabet, cost)
    tokens, offsets = _batch(g, 20, 8, 2, dtype)
    expected = _direct(tokens, offsets, 1)
    out = torch.empty(20, dtype=torch.int64)
    c_core.levenshtein(out, tokens, offsets, 1)
    assert torch.equal(out, expected)


def test_known_distances(impl):
    # "kitten" -> "sitting": 3; "rain" -> "shine": 3, or 5 when a substitution costs 2; "" -> "abc": 3
    words = [("kitten", "sitting"), ("rain", "shine"), ("", "abc"), ("abc", ""), ("", ""), ("same", "same")]
    flat = "".join(a + b for a, b in words)
    tokens = torch.tensor([ord(c) for c in flat], dtype=torch.int32)
    offsets = torch.tensor([0] + [len(s) for pair in words for s in pair]).cumsum(0)
    out = torch.empty(len(words), dtype=torch.int64)
    impl.levenshtein(out, tokens, offsets, 1)
    assert out.tolist() == [3, 3, 3, 3, 0, 0]
    impl.levenshtein(out, tokens, offsets, 2)
    assert out.tolist() == [5, 5, 3, 3, 0, 0]
    impl.levenshtein(out, tokens, offsets, 0)  # substitutions free: the length difference
    assert out.tolist() == [1, 1, 3, 3, 0, 0]


def test_no_pairs(impl):
    out = torch.empty(0, dtype=torch.int64)
    impl.levenshtein(out, torch.empty(0, dtype=torch.int64), torch.zeros(1, dtype=torch.int64), 1)
    assert out.numel() == 0


def _bad_calls():
    tokens, offsets, out = torch.arange(6, dtype=torch.int64), torch.tensor([0, 2, 3, 3, 6]), torch.zeros(2).long()
    return [
        ((out, tokens.double(), offsets, 1), TypeError, "tokens"),
        ((out, tokens.reshape(2, 3), offsets, 1), ValueError, "tokens"),
        ((out, torch.arange(12)[::2], offsets, 1), ValueError, "tokens"),
        ((out, tokens, offsets.int(), 1), TypeError, "offsets"),
        ((out, tokens, offsets[:4], 1), ValueError, "offsets"),
        ((out, tokens, torch.tensor([0, 2, 1, 3, 6]), 1), ValueError, "offsets"),
        ((out, tokens, torch.tensor([0, 2, 3, 3, 7]), 1), ValueError, "offsets"),
        ((out, tokens, torch.tensor([-1, 2, 3, 3, 6]), 1), ValueError, "offsets"),
        ((torch.zeros(3).long(), tokens, offsets, 1), ValueError, "out"),
        ((torch.zeros(2).int(), tokens, offsets, 1), TypeError, "out"),
        ((out, tokens, offsets, -1), ValueError, "substitution_cost"),
        ((out, tokens, offsets, 1.5), TypeError, "substitution_cost"),
        (("out", tokens, offsets, 1), TypeError, "out"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_calls())))
def test_bad_input_raises_naming_the_argument(impl, case):
    args, exc, name = _bad_calls()[case]
    out = args[0]
    before = out.clone() if isinstance(out, torch.Tensor) else None
    with pytest.raises(exc, match=f"^{name}: "):
        impl.levenshtein(*args)
    if before is not None:
        assert torch.equal(out, before)
