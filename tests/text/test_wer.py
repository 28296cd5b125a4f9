"""The edit-distance text metrics (WordErrorRate, CharErrorRate, MatchErrorRate, WordInfoLost,
WordInfoPreserved, EditDistance and their functions) against torchmetrics 1.9 and jiwer on random
sentences: Unicode words and separators, empty sentences, a single str; the life cycle (merge,
state_dict, pickle, reset) and 3 gloo ranks with uneven splits == one process, with the sync's
collectives counted; bad input raises naming the argument, the state untouched."""

import functools
import random
import warnings

import jiwer
import pytest
import torch
import torchmetrics.functional.text as tmf
import torchmetrics.text as tmt
from support.metric_tester import MetricCase, assert_same, check_metric, run_distributed_cases, states_of

import torchtally.functional.text as F
import torchtally.kernels as kernels
import torchtally.text as T
from torchtally.errors import InputTypeError

TOL = dict(rtol=1e-6, atol=1e-7)  # torchmetrics divides in float32, torchtally in float64
WORDS = ["a", "b", "the", "é", "日本", "Straße", "🙂", "ab", "x\u0301"]
SEPARATORS = [" ", "  ", "\t", "\u3000", "\n"]  # all whitespace for str.split


def _sentence(rng, longest):
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, longest))]
    text = ""
    for w in words:
        text += rng.choice(SEPARATORS) + w
    return text + rng.choice(["", " "])


def _sentences(seed, n, longest=7):
    rng = random.Random(seed)
    return [_sentence(rng, longest) for _ in range(n)], [_sentence(rng, longest) for _ in range(n)]


def _plain_sentences(seed, n, longest=7):
    """Words joined by one space, nothing around them: jiwer's transforms split on " " only and
    strip the sentences."""
    rng = random.Random(seed)
    make = lambda: " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, longest)))  # noqa: E731
    return [make() for _ in range(n)], [make() for _ in range(n)]


def _batches(seed, count, size):
    preds, target = _sentences(seed, count * size)
    return [(preds[i : i + size], target[i : i + size]) for i in range(0, count * size, size)]


PAIRS = [
    (F.word_error_rate, tmf.word_error_rate, T.WordErrorRate, tmt.WordErrorRate),
    (F.char_error_rate, tmf.char_error_rate, T.CharErrorRate, tmt.CharErrorRate),
    (F.match_error_rate, tmf.match_error_rate, T.MatchErrorRate, tmt.MatchErrorRate),
    (F.word_information_lost, tmf.word_information_lost, T.WordInfoLost, tmt.WordInfoLost),
    (F.word_information_preserved, tmf.word_information_preserved, T.WordInfoPreserved, tmt.WordInfoPreserved),
]
PAIR_IDS = [p[0].__name__ for p in PAIRS]


def _torchmetrics(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("forms", PAIRS, ids=PAIR_IDS)
def test_functions_match_torchmetrics(forms):
    ours, theirs = forms[0], forms[1]
    for seed in range(4):
        preds, target = _sentences(seed, 30)
        result = ours(preds, target)
        assert result.dtype == torch.float32 and result.shape == ()
        assert_same(result, _torchmetrics(theirs, preds, target), **TOL)
    cases = [("a b c", "a c"), ("", "a"), ("a", ""), ("", ""), ([], []), (["日本 é"], ["日本 e"]), ("a\ud800b", "ab")]
    for preds, target in cases:
        assert_same(ours(preds, target), _torchmetrics(theirs, preds, target), **TOL)


@pytest.mark.parametrize("forms", PAIRS, ids=PAIR_IDS)
def test_classes_match_torchmetrics(forms):
    ours, theirs = forms[2](), forms[3]()
    for preds, target in _batches(5, 4, 6):
        ours.update(preds, target)
        theirs.update(preds, target)
        assert_same(ours.compute(), _torchmetrics(theirs.compute), **TOL)
    assert_same(ours(["a b"], "a"), _torchmetrics(theirs, ["a b"], "a"), **TOL)  # forward: the batch's value


def _jiwer_args(preds, target):
    return dict(reference=target, hypothesis=preds)


def test_error_rates_match_jiwer():
    for seed in range(4):
        preds, target = _plain_sentences(10 + seed, 25)
        keep = [i for i, t in enumerate(target) if t.split()]  # jiwer refuses empty references
        p, t = [preds[i] for i in keep], [target[i] for i in keep]
        assert abs(float(F.word_error_rate(p, t)) - jiwer.wer(**_jiwer_args(p, t))) < 1e-6
        assert abs(float(F.char_error_rate(p, t)) - jiwer.cer(**_jiwer_args(p, t))) < 1e-6


def test_hit_based_rates_match_jiwer_where_its_alignment_agrees():
    """torchmetrics (and torchtally) count hits as the longer side's words minus the distance;
    jiwer counts them on the alignment it picks. Where that alignment has no pair of an insertion
    and a deletion the two agree, and the three rates must equal jiwer's."""
    preds, target = _plain_sentences(21, 200, longest=5)
    agree = []
    for p, t in zip(preds, target):
        if not t.split() or not p.split():
            continue
        out = jiwer.process_words(t, p)
        if min(out.insertions, out.deletions) == 0:
            agree.append((p, t))
    assert len(agree) > 50
    p, t = [a for a, _ in agree], [b for _, b in agree]
    assert abs(float(F.match_error_rate(p, t)) - jiwer.mer(**_jiwer_args(p, t))) < 1e-6
    assert abs(float(F.word_information_lost(p, t)) - jiwer.wil(**_jiwer_args(p, t))) < 1e-6
    assert abs(float(F.word_information_preserved(p, t)) - jiwer.wip(**_jiwer_args(p, t))) < 1e-6
    # the documented difference: "a b" -> "b c" has an alignment (delete a, keep b, insert c)
    out = jiwer.process_words(["a b", "x y z"], ["b c", "x z"])
    hits_tm = sum(max(len(a.split()), len(b.split())) for a, b in (("a b", "b c"), ("x y z", "x z"))) - 3
    assert hits_tm <= out.hits


def _long_pair(rng, n):
    a = "".join(rng.choice("ab") for _ in range(n))
    return a, a[n // 3 :] + "".join(rng.choice("ab") for _ in range(2 * n // 3))


@pytest.mark.parametrize("cost", [0, 1, 2, 3])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", None])
def test_edit_distance_matches_torchmetrics(cost, reduction):
    preds, target = _sentences(30 + cost, 20, longest=4)  # short: torchmetrics' beam does not bind
    ours = F.edit_distance(preds, target, substitution_cost=cost, reduction=reduction)
    theirs = _torchmetrics(tmf.edit_distance, preds, target, substitution_cost=cost, reduction=reduction)
    assert ours.dtype == theirs.dtype
    assert_same(ours, theirs, **TOL)
    m, tm = T.EditDistance(cost, reduction), tmt.EditDistance(cost, reduction)
    for i in range(0, 20, 7):
        m.update(preds[i : i + 7], target[i : i + 7])
        tm.update(preds[i : i + 7], target[i : i + 7])
    result = m.compute()
    expected = _torchmetrics(tm.compute)
    assert result.dtype == expected.dtype
    assert_same(result, expected, **TOL)
    for preds, target in [([], []), ([""], [""]), ("abc", "")]:
        expected = _torchmetrics(tmf.edit_distance, preds, target, cost, reduction)
        assert_same(F.edit_distance(preds, target, cost, reduction), expected)
        assert F.edit_distance(preds, target, cost, reduction).dtype == expected.dtype


def test_edit_distance_is_exact_for_long_pairs():
    """Against the edit-distance oracle (torch reference kernel, the full table) and jiwer's CER
    numerator, on pairs long enough for torchmetrics' beam to matter."""
    rng = random.Random(3)
    pairs = [_long_pair(rng, n) for n in (40, 90, 150)] + [("x" * 10 + "a" * 200, "a" * 200 + "y" * 100)]
    preds, target = [a for a, _ in pairs], [b for _, b in pairs]
    ours = F.edit_distance(preds, target, reduction=None)
    exact = [round(jiwer.cer(reference=t, hypothesis=p) * len(t)) for p, t in pairs]
    assert ours.tolist() == exact
    # the last pair leaves torchmetrics' band around the diagonal: it overestimates (152, not 110)
    theirs = _torchmetrics(tmf.edit_distance, preds[-1:], target[-1:], reduction=None)
    assert exact[-1] == 110 and int(theirs[0]) > exact[-1]


def test_reference_route_and_custom_op_give_the_same_values():
    preds, target = _sentences(50, 12)

    def values():
        rates = [F.word_error_rate(preds, target), F.char_error_rate(preds, target)]
        return rates + [F.edit_distance(preds, target, 2, None)]

    expected = values()
    previous = kernels.set_backend("reference")
    try:
        got = values()
    finally:
        kernels.set_backend(previous)
    assert_same(got, expected)
    tokens, offsets = torch.tensor([1, 2, 3, 1, 3], dtype=torch.int32), torch.tensor([0, 3, 5])
    out = torch.full((1,), -1, dtype=torch.int64)
    torch.ops.torchtally.levenshtein(out, tokens, offsets, 1)
    assert out.tolist() == [1]


def test_empty_results_follow_torchmetrics():
    for preds, target in [("", ""), ("a", ""), ([""], ["a b"])]:
        for forms in PAIRS:
            assert_same(forms[0](preds, target), _torchmetrics(forms[1], preds, target))
    m = T.WordErrorRate().update(["a"], [""])
    assert torch.isinf(m.compute())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.isnan(T.WordErrorRate().compute())
        assert torch.isnan(T.EditDistance().compute())
        assert T.EditDistance(reduction="sum").compute().dtype == torch.int64
        assert_same(T.EditDistance(reduction=None).compute(), torch.tensor(0, dtype=torch.int32))


def test_result_dtype_follows_the_default_dtype():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = T.CharErrorRate()
    finally:
        torch.set_default_dtype(previous)
    assert m.update("abc", "abd").compute().dtype == torch.float64


BAD = [
    (["a"], ["a", "b"], ValueError, "preds and target"),
    (["a", 1], ["a", "b"], InputTypeError, r"preds\[1\]"),
    (["a"], [None], InputTypeError, r"target\[0\]"),
    (3, "a", TypeError, "preds"),
    ("a", {"a": 1}, TypeError, "target"),
]


@pytest.mark.parametrize("cls", [p[2] for p in PAIRS] + [T.EditDistance, functools.partial(T.EditDistance, 1, None)])
@pytest.mark.parametrize("bad", range(len(BAD)))
def test_bad_input_raises_and_leaves_the_state(cls, bad):
    preds, target, exc, name = BAD[bad]
    m = cls()
    m.update(["a b c"], ["a c"])
    before = {k: v.clone() for k, v in states_of(m).items()}
    with pytest.raises(exc, match=f"^{name}: "):
        m.update(preds, target)
    after = states_of(m)
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_non_string_items_are_both_type_and_value_errors_with_torchmetrics_words():
    """torchmetrics raises ValueError there: code catching it keeps working."""
    for exc in (TypeError, ValueError):
        with pytest.raises(
            exc, match=r"^preds\[1\]: expected a str, got int \(Expected all values in argument `preds`"
        ):
            T.EditDistance().update(["a", 1], ["a", "b"])
    with pytest.raises(ValueError, match=r"\(Expected argument `preds` and `target` to have same length\)$"):
        T.EditDistance().update(["a"], ["a", "b"])


def test_bad_arguments():
    with pytest.raises(ValueError, match="substitution_cost"):
        T.EditDistance(substitution_cost=-1)
    with pytest.raises(ValueError, match="substitution_cost"):
        F.edit_distance("a", "b", substitution_cost=1.5)
    with pytest.raises(ValueError, match="reduction"):
        T.EditDistance(reduction="max")
    with pytest.raises(ValueError, match="reduction"):
        F.edit_distance("a", "b", reduction="avg")
    with pytest.raises(ValueError, match="preds and target: .* got 1 in preds and 0 in target"):
        F.word_error_rate(["a"], [])


# -- life cycle and distributed ---------------------------------------------------------------


def _tm_reference(tm_factory, batches):
    metric = tm_factory()
    for preds, target in batches:
        metric.update(preds, target)
    return _torchmetrics(metric.compute)


BATCHES = _batches(40, 6, 5) + [("", "a b"), (["日本"], ["日本 日本"])]
CASES = [
    MetricCase(
        cls.__name__,
        cls,
        BATCHES,
        reference=functools.partial(_tm_reference, tm_cls),
        reference_on_batches=True,
        max_collectives=2,  # the header and one all_reduce
        **TOL,
    )
    for _, _, cls, tm_cls in PAIRS
] + [
    MetricCase(
        f"EditDistance-{reduction}",
        functools.partial(T.EditDistance, 2, reduction),
        BATCHES,
        reference=functools.partial(_tm_reference, functools.partial(tmt.EditDistance, 2, reduction)),
        reference_on_batches=True,
        max_collectives=2,  # the header and one all_reduce (reduction=None: one gather)
        **TOL,
    )
    for reduction in ("mean", "sum", None)
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)
