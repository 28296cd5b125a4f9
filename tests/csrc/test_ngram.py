"""The n-gram kernels (bleu_update, chrf_update): the C core against the Python-Counter reference
(the oracle) on random batches with small vocabularies (repeated n-grams, clipping), empty
segments and sentences with several or no references; bad layouts raise naming the argument and
leave `out` (and the reference's `out`) untouched."""

import random

import pytest
import torch

from torchtally.kernels import reference


def _batch(rng, streams, min_refs, sentences=30, vocab=4, longest=12):
    tokens, bounds, groups = [], [[0] for _ in range(streams)], [0]
    for _ in range(sentences):
        for _ in range(1 + rng.randint(min_refs, 3)):
            for k in range(streams):
                tokens.extend(rng.randrange(vocab) for _ in range(rng.choice([0, 1, 2, rng.randint(0, longest)])))
                bounds[k].append(len(tokens))
        groups.append(len(bounds[0]) - 1)
    t = torch.tensor(tokens, dtype=torch.int64)
    return t, torch.tensor(bounds, dtype=torch.int64), torch.tensor(groups, dtype=torch.int64)


@pytest.mark.parametrize("orders", [1, 2, 4, 6])
def test_bleu_c_matches_reference(c_core, orders):
    rng = random.Random(orders)
    for trial in range(4):
        tokens, bounds, groups = _batch(rng, 1, 1, vocab=2 + trial * 3)
        expected = torch.full((orders + 1, 2), 3, dtype=torch.int64)
        got = expected.clone()
        reference.bleu_update(expected, tokens, bounds, groups)
        c_core.bleu_update(got, tokens, bounds, groups)
        assert torch.equal(got, expected)
        assert int(expected[:-1, 0].sub(3).clamp(min=0).sum()) > 0  # matches were counted


@pytest.mark.parametrize("chars,words", [(1, 0), (3, 1), (6, 2)])
@pytest.mark.parametrize("beta", [0.0, 1.0, 2.0])
def test_chrf_c_matches_reference(c_core, chars, words, beta):
    rng = random.Random(chars * 10 + words)
    for trial in range(3):
        tokens, bounds, groups = _batch(rng, 2, 0, vocab=2 + trial * 3)
        g = groups.numel() - 1
        expected, got = (torch.full((chars + words, 3), 2, dtype=torch.int64) for _ in range(2))
        s_expected, s_got = torch.full((g,), -1.0, dtype=torch.float64), torch.zeros(g, dtype=torch.float64)
        reference.chrf_update(expected, s_expected, tokens, bounds, groups, chars, beta)
        c_core.chrf_update(got, s_got, tokens, bounds, groups, chars, beta)
        assert torch.equal(got, expected)
        torch.testing.assert_close(s_got, s_expected, rtol=1e-12, atol=1e-15)
        c_core.chrf_update(got, None, tokens, bounds, groups, chars, beta)  # sentence scores optional
        assert torch.equal(got - 2, 2 * (expected - 2))


def test_large_sentences_grow_the_table(c_core):
    rng = random.Random(5)
    tokens, bounds, groups = _batch(rng, 1, 1, sentences=6, vocab=50, longest=3000)
    expected, got = torch.zeros(5, 2, dtype=torch.int64), torch.zeros(5, 2, dtype=torch.int64)
    reference.bleu_update(expected, tokens, bounds, groups)
    c_core.bleu_update(got, tokens, bounds, groups)
    assert torch.equal(got, expected)


def _good():
    tokens = torch.tensor([1, 2, 3, 1, 2], dtype=torch.int64)
    return tokens, torch.tensor([[0, 3, 5]]), torch.tensor([0, 2])


def test_bleu_bad_calls_leave_out_untouched(impl):
    tokens, bounds, groups = _good()
    calls = [
        ((tokens.int(), bounds, groups), TypeError, "tokens"),
        ((tokens, bounds.int(), groups), TypeError, "bounds"),
        ((tokens, bounds, groups.float()), TypeError, "groups"),
        ((tokens[::2], torch.tensor([[0, 1, 3]]), groups), ValueError, "tokens"),
        ((tokens, torch.tensor([[0, 4, 3]]), groups), ValueError, "bounds"),
        ((tokens, torch.tensor([[0, 3, 6]]), groups), ValueError, "bounds"),
        ((tokens, bounds[0], groups), ValueError, "bounds"),
        ((tokens, bounds, torch.tensor([0, 1])), ValueError, "groups"),
        ((tokens, bounds, torch.tensor([0, 1, 2])), ValueError, "groups: sentence 0 has no reference"),
        ((tokens, bounds, torch.tensor([1, 2])), ValueError, "groups"),
    ]
    for args, error, match in calls:
        out = torch.full((3, 2), 7, dtype=torch.int64)
        with pytest.raises(error, match=match):
            impl.bleu_update(out, *args)
        assert bool((out == 7).all())
    for out in (torch.zeros(1, 2, dtype=torch.int64), torch.zeros(3, 2), torch.zeros(3, 3, dtype=torch.int64)):
        with pytest.raises((TypeError, ValueError), match="out"):
            impl.bleu_update(out, tokens, bounds, groups)


def test_chrf_bad_calls_leave_out_untouched(impl):
    tokens, bounds, groups = _good()
    bounds2 = bounds.expand(2, 3).contiguous()
    sentence = torch.zeros(1, dtype=torch.float64)
    calls = [
        ((sentence, tokens, bounds, groups, 1, 2.0), ValueError, "bounds"),
        ((sentence, tokens, bounds2, groups, 0, 2.0), ValueError, "n_char_order"),
        ((sentence, tokens, bounds2, groups, 4, 2.0), ValueError, "n_char_order"),
        ((sentence, tokens, bounds2, groups, 1, -1.0), ValueError, "beta"),
        ((sentence, tokens, bounds2, groups, 1, float("nan")), ValueError, "beta"),
        ((torch.zeros(2, dtype=torch.float64), tokens, bounds2, groups, 1, 2.0), ValueError, "sentence"),
        ((torch.zeros(1), tokens, bounds2, groups, 1, 2.0), TypeError, "sentence"),
    ]
    for args, error, match in calls:
        out = torch.full((3, 3), 7, dtype=torch.int64)
        with pytest.raises(error, match=match):
            impl.chrf_update(out, *args)
        assert bool((out == 7).all())
