"""The text kernels ter_sentences and eed_sentences: the C core against the Python reference
(the oracle) on random packed sentences (repeated words, empty hypotheses and references, long
length ratios that narrow the beam, spans that reach the end of the hypothesis); bad calls
(both paths) raise naming the argument and leave `out` untouched."""

import random

import pytest
import torch

from torchtally.functional.text import packing
from torchtally.kernels import reference

I64 = torch.int64
COSTS = torch.tensor([2.0, 0.3, 0.2, 1.0], dtype=torch.float64)


def _sentences(rng, n, vocab, longest):
    hyps, groups = [], []
    for _ in range(n):
        hyps.append([rng.randrange(vocab) for _ in range(rng.randint(0, longest))])
        groups.append(
            [[rng.randrange(vocab) for _ in range(rng.randint(0, longest))] for _ in range(rng.randint(1, 3))]
        )
    return hyps, groups


def test_ter_c_matches_reference(c_core):
    rng = random.Random(5)
    for vocab, longest in ((3, 8), (6, 18), (40, 12)):
        packed = packing.pack(*_sentences(rng, 12, vocab, longest))
        expected = torch.full((12, 2), -1.0, dtype=torch.float64)
        reference.ter_sentences(expected, *packed)
        out = torch.full((12, 2), -1.0, dtype=torch.float64)
        c_core.ter_sentences(out, *packed)
        assert torch.equal(out, expected), (vocab, longest)


def test_ter_beam_and_length_ratio(c_core):
    # a 1-word hypothesis against 120 words (ratio > 50: a wider beam) and the reverse
    rng = random.Random(2)
    long_ref = [rng.randrange(5) for _ in range(120)]
    hyps, groups = [[3], long_ref[:60] + [9] * 5, long_ref], [[long_ref], [long_ref[::-1]], [[3]]]
    packed = packing.pack(hyps, groups)
    expected, out = torch.zeros(3, 2, dtype=torch.float64), torch.zeros(3, 2, dtype=torch.float64)
    reference.ter_sentences(expected, *packed)
    c_core.ter_sentences(out, *packed)
    assert torch.equal(out, expected)
    assert out[0, 0] == 119 and out[2, 0] == 119  # one word kept, the rest inserted / deleted


def test_ter_known_values(impl):
    # hypothesis "a b c d", references: itself (0 edits), reversed halves (1 shift), empty (4)
    packed = packing.pack([[0, 1, 2, 3]] * 3, [[[0, 1, 2, 3]], [[2, 3, 0, 1]], [[]]])
    out = torch.zeros(3, 2, dtype=torch.float64)
    impl.ter_sentences(out, *packed)
    assert out.tolist() == [[0.0, 4.0], [1.0, 4.0], [4.0, 0.0]]


def test_eed_c_matches_reference_bit_for_bit(c_core):
    rng = random.Random(7)
    for costs in (COSTS, torch.tensor([0.5, 0.0, 1.5, 0.25], dtype=torch.float64)):
        hyps, groups = _sentences(rng, 15, 4, 30)
        hyps = [[32 if c == 0 else 96 + c for c in h] for h in hyps]  # 0 becomes a space
        groups = [[[32 if c == 0 else 96 + c for c in r] for r in rs] for rs in groups]
        packed = packing.pack(hyps, groups)
        expected, out = torch.zeros(15, dtype=torch.float64), torch.zeros(15, dtype=torch.float64)
        reference.eed_sentences(expected, *packed, costs)
        c_core.eed_sentences(out, *packed, costs)
        assert torch.equal(out, expected)


def test_eed_empty_reference_and_hypothesis(impl):
    packed = packing.pack([[], [97]], [[[]], [[]]])
    out = torch.zeros(2, dtype=torch.float64)
    impl.eed_sentences(out, *packed, torch.tensor([2.0, 0.0, 0.2, 1.0], dtype=torch.float64))
    assert out.tolist() == [0.0, 1.0]  # 0 / 0 is 0, x / 0 is 1


def _good():
    return list(packing.pack([[1, 2], [3]], [[[1], [2, 2]], [[3, 4]]]))


BAD = [
    (lambda a: a.__setitem__(1, a[1].int()), TypeError, "hyp"),
    (lambda a: a.__setitem__(1, a[1].reshape(1, -1)), ValueError, "hyp"),
    (lambda a: a.__setitem__(2, torch.tensor([0, 3, 2], dtype=I64)), ValueError, "hyp_offsets"),
    (lambda a: a.__setitem__(2, torch.tensor([0, 1], dtype=I64)), ValueError, "hyp_offsets"),
    (lambda a: a.__setitem__(4, torch.tensor([0, 2, 1, 5], dtype=I64)), ValueError, "ref_offsets"),
    (lambda a: a.__setitem__(4, torch.empty(0, dtype=I64)), ValueError, "ref_offsets"),
    (lambda a: a.__setitem__(5, torch.tensor([0, 2, 2], dtype=I64)), ValueError, "groups"),
    (lambda a: a.__setitem__(5, torch.tensor([0, 2, 4], dtype=I64)), ValueError, "groups"),
    (lambda a: a.__setitem__(5, torch.empty(0, dtype=I64)), ValueError, "groups"),
    (lambda a: a.__setitem__(3, torch.arange(10, dtype=I64)[::2]), ValueError, "refs"),
    (lambda a: a.__setitem__(0, torch.zeros(2, 3, dtype=torch.float64)), ValueError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(2, 2, dtype=torch.float32)), TypeError, "out"),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_ter_bad_input_raises_naming_the_argument(impl, k):
    change, exc, name = BAD[k]
    args = [torch.full((2, 2), -3.0, dtype=torch.float64), *_good()]
    change(args)
    before = args[0].clone()
    with pytest.raises(exc, match=f"^{name}: "):
        impl.ter_sentences(*args)
    if args[0].dtype == torch.float64:
        assert torch.equal(args[0], before)


@pytest.mark.parametrize("costs", [[2.0, -0.1, 0.2, 1.0], [float("nan"), 0.3, 0.2, 1.0], [2.0, 0.3, float("inf"), 1.0]])
def test_eed_bad_costs_raise_naming_costs(impl, costs):
    out = torch.full((2,), -3.0, dtype=torch.float64)
    with pytest.raises(ValueError, match="^costs: "):
        impl.eed_sentences(out, *_good(), torch.tensor(costs, dtype=torch.float64))
    with pytest.raises(ValueError, match="^costs: "):
        impl.eed_sentences(out, *_good(), torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="^out: "):
        impl.eed_sentences(torch.zeros(3, dtype=torch.float64), *_good(), COSTS)
    assert (out == -3.0).all()
