"""BLEUScore, SacreBLEUScore, CHRFScore and their functions against torchmetrics 1.9 and sacrebleu
(where torchmetrics says it matches it) on random sentences (repeated words, punctuation, HTML
entities, Unicode, empty lines; one to three references), every installed tokenizer, smoothing,
weights, lowercase and whitespace; the life cycle, bad input before any state change, and 3 gloo
ranks with uneven shards (== one process) syncing in one collective."""

import functools
import random

import pytest
import sacrebleu
import torch
import torchmetrics.functional.text as tmf
from support.metric_tester import MetricCase, assert_rejects, check_metric, feed, run_distributed_cases
from torchmetrics.text import BLEUScore as TMBLEU
from torchmetrics.text import CHRFScore as TMChrF

from torchtally.functional.text import bleu_score, chrf_score, sacre_bleu_score
from torchtally.text import BLEUScore, CHRFScore, SacreBLEUScore

WORDS = (
    "the a cat dog sat on mat The Cat is was , . ! ? 3.5 1,000 e-mail don't (it) &quot; &amp; été 中文 ｜ naïve".split()
)
TOKENIZERS = ["13a", "zh", "intl", "char", "none"]


def _sentence(rng, longest=14):
    if rng.random() < 0.05:
        return ""
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, longest))]
    glue = rng.choice([" ", " ", "  "])
    return glue.join(words) + rng.choice(["", ".", " !", " "])


def _corpus(seed, n=25, refs=(1, 3)):
    rng = random.Random(seed)
    preds = [_sentence(rng) for _ in range(n)]
    target = [[_sentence(rng) for _ in range(rng.randint(*refs))] for _ in range(n)]
    for i in range(0, n, 4):  # overlap: a reference close to its hypothesis
        target[i][0] = " ".join(w for w in preds[i].split() if rng.random() < 0.8)
    return preds, target


def _close(a, b, tol=2e-6):
    assert abs(float(a) - float(b)) <= tol, (float(a), float(b))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "n_gram,smooth,weights", [(4, False, None), (4, True, None), (2, True, [0.3, 0.7]), (1, False, None)]
)
def test_bleu_matches_torchmetrics(seed, n_gram, smooth, weights):
    preds, target = _corpus(seed)
    args = dict(n_gram=n_gram, smooth=smooth, weights=weights)
    expected = tmf.bleu_score(preds, target, **args)
    _close(bleu_score(preds, target, **args), expected)
    m = BLEUScore(**args)
    m.update(preds[:10], target[:10])
    _close(m.update(preds[10:], target[10:]).compute(), expected)


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@pytest.mark.parametrize("lowercase", [False, True])
def test_sacre_bleu_matches_torchmetrics(tokenize, lowercase):
    for seed in range(2):
        preds, target = _corpus(seed + 10)
        for smooth in (False, True):
            args = dict(tokenize=tokenize, lowercase=lowercase, smooth=smooth)
            expected = tmf.sacre_bleu_score(preds, target, **args)
            _close(sacre_bleu_score(preds, target, **args), expected)
            _close(SacreBLEUScore(**args).update(preds, target).compute(), expected)


@pytest.mark.parametrize("tokenize", TOKENIZERS)
def test_sacre_bleu_matches_sacrebleu(tokenize):
    # one reference per hypothesis (sacrebleu breaks ties of the closest length towards the shorter
    # reference, torchmetrics towards the first); no smoothing
    preds, target = _corpus(20, n=40, refs=(1, 1))
    expected = sacrebleu.metrics.BLEU(tokenize=tokenize, smooth_method="none").corpus_score(
        preds, [[t[0] for t in target]]
    )
    _close(sacre_bleu_score(preds, target, tokenize=tokenize), expected.score / 100, 2e-7)
    assert expected.score > 0


@pytest.mark.parametrize(
    "args",
    [
        {},
        dict(n_word_order=0),
        dict(n_char_order=3, n_word_order=1, beta=1.0),
        dict(lowercase=True, whitespace=True),
        dict(beta=0.0, whitespace=True),
    ],
)
def test_chrf_matches_torchmetrics(args):
    for seed in range(2):
        preds, target = _corpus(seed + 30, n=14)
        score, sentences = tmf.chrf_score(preds, target, return_sentence_level_score=True, **args)
        got, got_sentences = chrf_score(preds, target, return_sentence_level_score=True, **args)
        _close(got, score)
        torch.testing.assert_close(got_sentences, sentences, rtol=0, atol=2e-6)
        m = CHRFScore(return_sentence_level_score=True, **args)
        m.update(preds[:7], target[:7])
        got, got_sentences = m.update(preds[7:], target[7:]).compute()
        _close(got, score)
        torch.testing.assert_close(got_sentences, sentences, rtol=0, atol=2e-6)
        _close(CHRFScore(**args).update(preds, target).compute(), score)


def test_chrf_matches_sacrebleu():
    # single references sharing characters with their hypothesis, plain spaces: where
    # torchmetrics' chrF is sacrebleu's with eps_smoothing (the mean of the orders' F-scores;
    # sacrebleu's default averages precision and recall over the orders first)
    rng = random.Random(3)
    preds = [" ".join(rng.choice(WORDS[:10]) for _ in range(12)) for _ in range(30)]
    refs = [" ".join(w for w in p.split() if rng.random() < 0.8) + " cat" for p in preds]
    for char_order, word_order in ((6, 2), (6, 0)):
        expected = sacrebleu.metrics.CHRF(
            char_order=char_order, word_order=word_order, eps_smoothing=True
        ).corpus_score(preds, [refs])
        got = chrf_score(preds, [[r] for r in refs], n_char_order=char_order, n_word_order=word_order)
        _close(got, expected.score / 100, 2e-7)


def test_string_forms_and_edges():
    p, t = "the cat sat", ["the cat sat on", "a cat"]
    _close(chrf_score(p, t), tmf.chrf_score(p, t))
    _close(chrf_score(["a b", "c d"], ["a b", "c"]), tmf.chrf_score(["a b", "c d"], ["a b", "c"]))
    _close(bleu_score(p, [t]), tmf.bleu_score(p, [t]))
    _close(bleu_score([p], ["the cat sat"]), tmf.bleu_score([p], ["the cat sat"]))
    assert float(bleu_score([""], [[""]])) == 0.0
    _close(chrf_score([""], [["", "x"]]), tmf.chrf_score([""], [["", "x"]]))
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert float(BLEUScore().compute()) == 0.0  # no sentence: 0, as torchmetrics
        score, sentences = CHRFScore(return_sentence_level_score=True).compute()
    assert float(score) == 0.0 and sentences.shape == (0,)


def test_unicode_and_surrogates():
    preds = ["naïve café 中文字 😀 ok", "\ud800 lone"]
    target = [["naive café 中文 😀 ok"], ["\ud800 lone"]]
    _close(chrf_score(preds, target), tmf.chrf_score(preds, target))
    _close(sacre_bleu_score(preds, target, tokenize="zh"), tmf.sacre_bleu_score(preds, target, tokenize="zh"))


def test_bad_input_leaves_the_state_unchanged():
    m = BLEUScore()
    m.update(["a b c"], [["a b c"]])
    sizes = (
        r"preds and target: .* got 2 hypotheses in preds and 1 reference lists in target \(Corpus has different size"
    )
    assert_rejects(m, (["a", "b"], [["a"]]), ValueError, sizes)
    assert_rejects(m, (["a", 3], [["a"], ["b"]]), TypeError, "preds")
    assert_rejects(m, (["a"], [["a", None]]), TypeError, r"target\[0\]")
    assert_rejects(m, (["a", "b"], [["a"], []]), ValueError, r"target\[1\]: expected at least one reference")
    c = CHRFScore(return_sentence_level_score=True)
    c.update(["a b c"], [["a b c"]])
    assert_rejects(c, (["a", "b"], [["a"]]), ValueError, sizes)
    assert_rejects(c, ([b"a"], [["a"]]), TypeError, "preds")
    # a hypothesis without a reference: torchmetrics scores it 0, torchtally refuses it as BLEU does
    assert_rejects(c, (["a b c", "d e"], [["a b c"], []]), ValueError, r"target\[1\]: expected at least one reference")
    with pytest.raises(ValueError, match=r"target\[1\]"):
        chrf_score(["a b c", "d e"], [["a b c"], []])


def test_bleu_class_reads_a_flat_reference_list_as_one_reference_per_sentence():
    """The documented difference: torchmetrics' BLEUScore iterates each string's characters (0.0)."""
    preds, flat = ["the cat is on the mat", "a dog ran"], ["the cat is on the mat", "a dog ran"]
    assert float(BLEUScore(n_gram=2).update(preds, flat).compute()) == 1.0
    assert float(bleu_score(preds, flat, n_gram=2)) == 1.0
    assert float(TMBLEU(n_gram=2)(preds, flat)) == 0.0  # the behaviour docs/differences/text.md records


def test_bad_arguments():
    with pytest.raises(ValueError, match="weights"):
        BLEUScore(n_gram=2, weights=[1.0])
    with pytest.raises(ValueError, match="n_gram"):
        bleu_score(["a"], [["a"]], n_gram=0)
    with pytest.raises(ValueError, match="tokenize"):
        SacreBLEUScore(tokenize="13b")
    for kind in ("ja-mecab", "ko-mecab", "flores101", "flores200"):  # not installed here
        with pytest.raises(ModuleNotFoundError, match="pip install"):
            sacre_bleu_score(["a"], [["a"]], tokenize=kind)
    for bad in (dict(n_char_order=0), dict(n_word_order=-1), dict(beta=-1.0)):
        with pytest.raises(ValueError, match="Expected argument"):
            CHRFScore(**bad)


def test_torchmetrics_class_states_agree_over_batches():
    preds, target = _corpus(40)
    tm = TMChrF()
    for i in range(0, 25, 6):
        tm.update(preds[i : i + 6], target[i : i + 6])
    _close(feed(CHRFScore(), [(preds[i : i + 6], target[i : i + 6]) for i in range(0, 25, 6)]).compute(), tm.compute())


def _concat(batches):
    return [p for b in batches for p in b[0]], [t for b in batches for t in b[1]]


def _cases():
    preds, target = _corpus(50, n=24)
    batches = [(preds[i : i + 3], target[i : i + 3]) for i in range(0, 24, 3)]

    def ref(fn, **kw):
        return lambda bs: fn(*_concat(bs), **kw)

    return [
        MetricCase(
            "bleu",
            BLEUScore,
            batches,
            ref(tmf.bleu_score),
            rtol=0,
            atol=2e-6,
            reference_on_batches=True,
            max_collectives=2,  # the header and one all_reduce
        ),
        MetricCase(
            "sacrebleu_intl_smooth",
            functools.partial(SacreBLEUScore, tokenize="intl", smooth=True),
            batches,
            ref(tmf.sacre_bleu_score, tokenize="intl", smooth=True),
            rtol=0,
            atol=2e-6,
            reference_on_batches=True,
        ),
        MetricCase(
            "chrf_sentences",
            functools.partial(CHRFScore, return_sentence_level_score=True),
            batches,
            ref(tmf.chrf_score, return_sentence_level_score=True),
            rtol=0,
            atol=2e-6,
            reference_on_batches=True,
        ),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(_cases())


def test_signatures_are_torchmetrics():
    import inspect

    import torchmetrics.text as tmt

    pairs = [
        (BLEUScore, tmt.BLEUScore),
        (SacreBLEUScore, tmt.SacreBLEUScore),
        (CHRFScore, tmt.CHRFScore),
        (bleu_score, tmf.bleu_score),
        (sacre_bleu_score, tmf.sacre_bleu_score),
        (chrf_score, tmf.chrf_score),
    ]
    for ours, theirs in pairs:
        a, b = inspect.signature(ours).parameters, inspect.signature(theirs).parameters
        assert [(p.name, p.default, p.kind) for p in a.values()] == [(p.name, p.default, p.kind) for p in b.values()]


def test_a_negative_count_in_a_loaded_state_is_refused():
    m = BLEUScore().update(["a b"], [["a b"]])
    m.persistent(True)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    state["stats"][0, 0] = -1
    fresh = BLEUScore()
    fresh.persistent(True)
    with pytest.raises(ValueError, match="stats"):
        fresh.load_state_dict(state)
    assert int(fresh.stats.abs().sum()) == 0
