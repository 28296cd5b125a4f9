"""TranslationEditRate and ExtendedEditDistance against sacrebleu's TER (the field's reference)
and torchmetrics 1.9 on random sentences with one to three references, every option; input
checks before any state change; the shared life-cycle and 3-rank gloo checks; sum states sync
in at most two collectives."""

import functools

import pytest
import torch
import torchmetrics.functional.text as tmf
from sacrebleu.metrics import TER
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.text_ter_cases import BATCHES, corpus

from torchtally.errors import InputTypeError
from torchtally.functional.text import extended_edit_distance, translation_edit_rate
from torchtally.text import ExtendedEditDistance, TranslationEditRate

PREDS, TARGET = corpus(0, 24)
TER_OPTIONS = [
    {},
    {"normalize": True},
    {"no_punctuation": True, "lowercase": False},
    {"normalize": True, "no_punctuation": True, "asian_support": True},
    {"normalize": True, "asian_support": True, "lowercase": False},
]


def _sacrebleu_stats(preds, target, options):
    ter = TER(
        normalized=options.get("normalize", False),
        no_punct=options.get("no_punctuation", False),
        asian_support=options.get("asian_support", False),
        case_sensitive=not options.get("lowercase", True),
    )
    rows = [ter.sentence_score(p, refs) for p, refs in zip(preds, target)]
    return [(r.num_edits, r.ref_length) for r in rows]


def _rate(edits, length):
    return edits / length if length > 0 else float(edits > 0)


@pytest.mark.parametrize("options", TER_OPTIONS, ids=str)
def test_ter_equals_sacrebleu(options):
    stats = _sacrebleu_stats(PREDS, TARGET, options)
    score, rows = translation_edit_rate(PREDS, TARGET, **options, return_sentence_level_score=True)
    edits, length = sum(e for e, _ in stats), sum(n for _, n in stats)
    assert abs(float(score) - _rate(edits, length)) < 1e-6
    assert [float(r) for r in rows] == pytest.approx([_rate(e, n) for e, n in stats], abs=1e-6)
    metric = TranslationEditRate(**options, return_sentence_level_score=True)
    metric.update(PREDS[:10], TARGET[:10])
    total, per_sentence = metric.update(PREDS[10:], TARGET[10:]).compute()
    assert total.dtype == torch.float32 and per_sentence.shape == (len(PREDS),)
    assert abs(float(total) - _rate(edits, length)) < 1e-6
    assert metric.total_num_edits.item() == edits and metric.total_tgt_len.item() == pytest.approx(length, abs=1e-12)


def test_ter_agrees_with_torchmetrics_where_torchmetrics_agrees_with_sacrebleu():
    # torchmetrics shifts reference words against the hypothesis (arguments swapped) and counts
    # an empty hypothesis as 0 edits: on the sentences where that changes nothing, same values
    preds, target = corpus(3, 60, longest=8)
    stats = _sacrebleu_stats(preds, target, {})
    _, ours = translation_edit_rate(preds, target, return_sentence_level_score=True)
    _, theirs = tmf.translation_edit_rate(preds, target, return_sentence_level_score=True)
    agree = 0
    for (e, n), o, t in zip(stats, ours, theirs):
        if abs(float(t) - _rate(e, n)) < 1e-6:
            agree += 1
            assert abs(float(o) - float(t)) < 1e-6
    assert agree >= 0.8 * len(preds)
    for p, refs in (("the cat is on the mat", ["there is a cat on the mat", "a cat is on the mat"]),):
        assert abs(float(translation_edit_rate([p], [refs])) - float(tmf.translation_edit_rate([p], [refs]))) < 1e-6


EED_OPTIONS = [
    {},
    {"language": "ja"},
    {"alpha": 0.5, "rho": 0.0, "deletion": 1.0, "insertion": 0.5},
    {"language": "ja", "rho": 1.5},
]


@pytest.mark.parametrize("options", EED_OPTIONS, ids=str)
def test_eed_equals_torchmetrics(options):
    preds, target = [p for p in PREDS if p], [t for p, t in zip(PREDS, TARGET) if p]  # torchmetrics: ja "" fails
    mean, rows = extended_edit_distance(preds, target, **options, return_sentence_level_score=True)
    tm_mean, tm_rows = tmf.extended_edit_distance(preds, target, **options, return_sentence_level_score=True)
    assert torch.allclose(rows, tm_rows, atol=1e-6) and abs(float(mean) - float(tm_mean)) < 1e-6
    metric = ExtendedEditDistance(**options, return_sentence_level_score=True)
    metric.update(preds[:7], target[:7])
    total, per_sentence = metric.update(preds[7:], target[7:]).compute()
    assert torch.equal(per_sentence, rows) and abs(float(total) - float(tm_mean)) < 1e-6
    assert metric.num_sentences.item() == len(preds)


def test_flat_targets_and_single_strings_read_as_torchmetrics():
    for preds, target in (("a b c", ["a b", "c b a"]), (["a b", "c"], ["a b c", "c"]), ([], [])):
        assert abs(float(translation_edit_rate(preds, target)) - float(tmf.translation_edit_rate(preds, target))) < 1e-6
    for preds, target in (("a b c", ["a b", "c b a"]), (["a b", "c"], ["a b c", "c"])):
        ours, theirs = extended_edit_distance(preds, target), tmf.extended_edit_distance(preds, target)
        assert abs(float(ours) - float(theirs)) < 1e-6
    for make in (TranslationEditRate, ExtendedEditDistance):
        with pytest.warns(UserWarning, match="before the ``update``"):
            assert float(make().compute()) == 0.0  # no sentences: 0, as torchmetrics
    score, rows = translation_edit_rate([], [], return_sentence_level_score=True)
    assert float(score) == 0.0 and rows == []


def test_empty_and_unicode_sentences():
    preds = ["", "猫がいる。", "", "naïve café"]
    target = [["a b c"], ["猫 が いる 。"], [""], ["naive cafe", "naïve café"]]
    stats = _sacrebleu_stats(preds, target, {"normalize": True, "asian_support": True})
    _, rows = translation_edit_rate(preds, target, normalize=True, asian_support=True, return_sentence_level_score=True)
    assert [float(r) for r in rows] == pytest.approx([_rate(e, n) for e, n in stats], abs=1e-6)
    assert float(rows[0]) == 1.0 and float(rows[2]) == 0.0  # an empty hypothesis: 3 deletions / 3 words
    for language in ("en", "ja"):
        _, eed = extended_edit_distance(preds, target, language=language, return_sentence_level_score=True)
        _, tm_eed = tmf.extended_edit_distance(preds, target, language=language, return_sentence_level_score=True)
        assert torch.allclose(eed.float(), tm_eed, atol=1e-6)


@pytest.mark.parametrize("make", [TranslationEditRate, ExtendedEditDistance])
def test_bad_input_raises_naming_the_argument_and_leaves_the_state(make):
    metric = make(return_sentence_level_score=True)
    metric.update(["a b"], [["a"]])
    for args, exc, match in (
        ((["a", "b"], [["a"]]), ValueError, r"^preds and target: .* got 2 sentences in preds and 1 entries in target "),
        ((["a", "b"], ["a", None]), TypeError, r"^target\[1\]: expected a reference string"),
        ((["a", None], [["a"], ["b"]]), TypeError, r"^preds\[1\]: expected a string, got NoneType"),
        ((["a"], [[]]), ValueError, r"^target\[0\]: "),
        ((["a"], []), ValueError, r"^target\[0\]: "),
        ((["a", "b"], [["a"], "b"]), TypeError, r"^target\[1\]: "),
        (([1], [["a"]]), TypeError, r"^preds\[0\]: "),
        ((["a"], "a"), TypeError, "^target: "),
        ((["a"], [[None]]), InputTypeError, r"^target\[0\]\[0\]: expected a reference string, got NoneType"),
        ((["a", None], [["a"], ["b"]]), ValueError, r"^preds\[1\]: "),  # torchmetrics' EED: ValueError
    ):
        assert_rejects(metric, args, exc, match)


def test_bad_options_raise_naming_them():
    for kwargs, name in (({"normalize": 1}, "normalize"), ({"asian_support": "yes"}, "asian_support")):
        with pytest.raises(ValueError, match=f"^{name}: "):
            TranslationEditRate(**kwargs)
        with pytest.raises(ValueError, match=f"^{name}: "):
            translation_edit_rate("a", ["a"], **kwargs)
    for kwargs, name in (({"language": "de"}, "language"), ({"alpha": 2}, "alpha"), ({"rho": -0.1}, "rho")):
        with pytest.raises(ValueError, match=f"^{name}: "):
            ExtendedEditDistance(**kwargs)
        with pytest.raises(ValueError, match=f"^{name}: "):
            extended_edit_distance("a", ["a"], **kwargs)


def _ter_reference(batches, **options):
    preds = [p for b in batches for p in b[0]]
    target = [t for b in batches for t in b[1]]
    stats = _sacrebleu_stats(preds, target, options)
    score = torch.tensor(_rate(sum(e for e, _ in stats), sum(n for _, n in stats)), dtype=torch.float32)
    if options.get("sentences"):
        return score, torch.tensor([_rate(e, n) for e, n in stats], dtype=torch.float32)
    return score


def _eed_reference(batches, sentences=False):
    preds = [p for b in batches for p in b[0]]
    target = [t for b in batches for t in b[1]]
    return tmf.extended_edit_distance(preds, target, return_sentence_level_score=sentences)


CASES = [
    MetricCase(
        "ter",
        TranslationEditRate,
        BATCHES,
        _ter_reference,
        rtol=1e-6,
        atol=1e-6,
        reference_on_batches=True,
        max_collectives=2,
    ),
    MetricCase(
        "ter_sentences",
        functools.partial(TranslationEditRate, normalize=True, return_sentence_level_score=True),
        BATCHES,
        functools.partial(_ter_reference, normalize=True, sentences=True),
        rtol=1e-6,
        atol=1e-6,
        reference_on_batches=True,
    ),
    MetricCase(
        "eed",
        ExtendedEditDistance,
        BATCHES,
        _eed_reference,
        rtol=1e-6,
        atol=1e-6,
        reference_on_batches=True,
        max_collectives=2,
    ),
    MetricCase(
        "eed_sentences",
        functools.partial(ExtendedEditDistance, return_sentence_level_score=True),
        BATCHES,
        functools.partial(_eed_reference, sentences=True),
        rtol=1e-6,
        atol=1e-6,
        reference_on_batches=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES)
