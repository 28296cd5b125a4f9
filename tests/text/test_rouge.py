"""ROUGEScore and rouge_score against rouge-score (the field's reference) and torchmetrics:
stemmer on and off, accumulate best / avg, several references, empty strings; rougeLsum's
sentence split (punkt, never downloaded) and the errors; 3 gloo ranks with uneven shards ==
one process, in at most 2 collectives."""

import functools
import random

import pytest
import torch
from rouge_score import rouge_scorer
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric
from support.rank_pools import run_on_ranks
from torchmetrics.functional.text import rouge_score as tm_rouge_score

import torchtally.functional.text.summary_overlap as ru
from torchtally.functional.text import rouge_score
from torchtally.testing import count_collectives
from torchtally.text import ROUGEScore

KEYS = ("rouge1", "rouge2", "rougeL")
WORDS = "The cat sat on the mat; dogs running, runs ran quickly. Quick a an jumped jumping! 42 x9".split()


def _sentence(rng, most=14):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, most)))


def _data(seed, n, most_refs=3):
    rng = random.Random(seed)
    preds = [_sentence(rng) for _ in range(n)]
    refs = [[_sentence(rng) for _ in range(rng.randint(1, most_refs))] for _ in range(n)]
    preds[0], refs[1][0] = "", ""  # empty strings
    return preds, refs


def _rouge_score_reference(preds, refs, keys, use_stemmer, accumulate):
    """rouge-score: per prediction the best reference by fmeasure (score_multi) or the mean."""
    scorer = rouge_scorer.RougeScorer(list(keys), use_stemmer=use_stemmer)
    sums = {f"{k}_{c}": 0.0 for k in keys for c in ("fmeasure", "precision", "recall")}
    for p, rs in zip(preds, refs):
        if accumulate == "best":
            chosen = scorer.score_multi(rs, p)
            per = {k: (chosen[k].fmeasure, chosen[k].precision, chosen[k].recall) for k in keys}
        else:
            scores = [scorer.score(r, p) for r in rs]
            per = {
                k: tuple(
                    sum(getattr(s[k], c) for s in scores) / len(scores) for c in ("fmeasure", "precision", "recall")
                )
                for k in keys
            }
        for k in keys:
            for c, v in zip(("fmeasure", "precision", "recall"), per[k]):
                sums[f"{k}_{c}"] += v
    return {name: torch.tensor(v / len(preds)) for name, v in sums.items()}


@pytest.mark.parametrize("use_stemmer", [False, True])
@pytest.mark.parametrize("accumulate", ["best", "avg"])
def test_against_rouge_score_and_torchmetrics(use_stemmer, accumulate):
    preds, refs = _data(1 + use_stemmer, 40)
    keys = ("rouge1", "rouge2", "rouge4", "rougeL")
    ours = rouge_score(preds, refs, accumulate=accumulate, use_stemmer=use_stemmer, rouge_keys=keys)
    tm = tm_rouge_score(preds, refs, accumulate=accumulate, use_stemmer=use_stemmer, rouge_keys=keys)
    assert list(ours) == list(tm)
    assert_same(ours, tm, rtol=1e-6, atol=1e-6)
    if accumulate == "best":  # score_multi breaks fmeasure ties like torchmetrics only without them; avg is exact
        refs = [rs[:1] for rs in refs]
        ours = rouge_score(preds, refs, accumulate=accumulate, use_stemmer=use_stemmer, rouge_keys=keys)
    expected = _rouge_score_reference(preds, refs, keys, use_stemmer, accumulate)
    assert_same(ours, expected, rtol=1e-6, atol=1e-6)


def test_class_matches_functional_and_the_input_forms():
    preds, refs = _data(3, 12)
    m = ROUGEScore(rouge_keys=KEYS, accumulate="avg")
    for i in range(0, 12, 5):
        m.update(preds[i : i + 5], refs[i : i + 5])
    assert_same(m.compute(), rouge_score(preds, refs, accumulate="avg", rouge_keys=KEYS), rtol=1e-12, atol=1e-12)
    # a single string, a list of strings (one reference each), or a prediction's references
    for p, t in (("a cat sat", "the cat sat"), (["a cat", "dog"], ["cat a", "a dog"]), ("a cat", ["cat", "a cat x"])):
        assert_same(rouge_score(p, t, rouge_keys=KEYS), tm_rouge_score(p, t, rouge_keys=KEYS), rtol=1e-6, atol=1e-6)
        assert_same(ROUGEScore(rouge_keys=KEYS).update(p, t).compute(), rouge_score(p, t, rouge_keys=KEYS))


def test_normalizer_and_tokenizer_are_used():
    preds, refs = ["A-B c", "x_y z"], [["a b C"], ["X Y z"]]
    kw = dict(normalizer=lambda s: s.replace("-", " ").replace("_", " "), tokenizer=str.split, rouge_keys=KEYS)
    assert_same(rouge_score(preds, refs, **kw), tm_rouge_score(preds, refs, **kw), rtol=1e-6, atol=1e-6)


def test_lsum_with_a_sentence_split(monkeypatch):
    """rougeLsum's union LCS against torchmetrics', both splitting on newlines (punkt's place)."""
    import torchmetrics.functional.text.rouge as tm_rouge

    monkeypatch.setattr(ru, "split_sentences", lambda s: s.split("\n"))
    monkeypatch.setattr(tm_rouge, "_split_sentence", lambda s: s.split("\n"))
    rng = random.Random(5)
    preds = ["\n".join(_sentence(rng, 8) for _ in range(rng.randint(1, 3))) for _ in range(25)]
    refs = [["\n".join(_sentence(rng, 8) for _ in range(rng.randint(1, 3)))] for _ in range(25)]
    ours = rouge_score(preds, refs, rouge_keys=("rougeLsum",))
    assert_same(ours, tm_rouge_score(preds, refs, rouge_keys=("rougeLsum",)), rtol=1e-6, atol=1e-6)
    scorer = rouge_scorer.RougeScorer(["rougeLsum"])
    expected = [scorer.score(r[0], p)["rougeLsum"] for p, r in zip(preds, refs)]
    assert_same(ours["rougeLsum_recall"], torch.tensor(sum(s.recall for s in expected) / 25), rtol=1e-6, atol=1e-6)


def test_lsum_without_punkt_raises_and_never_downloads(monkeypatch):
    import nltk

    def refuse(*args, **kwargs):
        raise AssertionError("nltk.download called")

    monkeypatch.setattr(nltk, "download", refuse)
    monkeypatch.setattr(nltk.data, "find", lambda name, *a, **k: (_ for _ in ()).throw(LookupError(name)))
    m = ROUGEScore()
    assert_rejects(m, ("a b", "a c"), OSError, r"punkt_tab.*without 'rougeLsum'")
    with pytest.raises(OSError, match="nltk.download"):
        rouge_score("a b", "a c")


def test_bad_input_raises_with_the_state_unchanged():
    m = ROUGEScore(rouge_keys=KEYS)
    m.update(["a b"], [["a"]])
    assert_rejects(
        m, (["a", "b"], [["a"]]), ValueError, "preds and target: .* got 2 predictions in preds and 1 entries"
    )
    assert_rejects(m, (["a"], [[]]), ValueError, r"target\[0\]: expected at least one reference")
    assert_rejects(m, ([1], [["a"]]), TypeError, r"preds\[0\]: expected a string, got int")
    assert_rejects(m, (["a", None], [["a"], ["b"]]), TypeError, r"preds\[1\]: expected a string, got NoneType")
    assert_rejects(m, (["a"], [[2]]), TypeError, r"target\[0\]\[0\]: expected a reference string, got int")
    assert_rejects(m, (["a", "b"], ["a", None]), TypeError, r"target\[1\]: expected a reference string .* got NoneType")
    with pytest.raises(ValueError, match="rouge_keys"):
        ROUGEScore(rouge_keys=("rouge10",))
    with pytest.raises(ValueError, match="accumulate"):
        ROUGEScore(accumulate="max")


def test_no_update_gives_nan():
    with pytest.warns(UserWarning):
        out = ROUGEScore(rouge_keys=("rouge1",)).compute()
    assert all(torch.isnan(v) for v in out.values()) and out["rouge1_fmeasure"].dtype == torch.float32


def _batches(seed, n, size):
    preds, refs = _data(seed, n)
    return [(preds[i : i + size], refs[i : i + size]) for i in range(0, n, size)]


def _reference(batches, **kw):
    return tm_rouge_score([p for b in batches for p in b[0]], [r for b in batches for r in b[1]], **kw)


CASES = [
    MetricCase(
        f"rouge_{acc}_{'stem' if stem else 'plain'}",
        functools.partial(ROUGEScore, use_stemmer=stem, accumulate=acc, rouge_keys=KEYS),
        batches=_batches(7 + stem, 23, 4),
        reference=functools.partial(_reference, accumulate=acc, use_stemmer=stem, rouge_keys=KEYS),
        reference_on_batches=True,
        rtol=1e-6,
        atol=1e-6,
    )
    for acc, stem in (("best", False), ("avg", True))
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


def _rank_worker(rank, world_size, cases):
    """Per rank: an uneven contiguous shard of each case's batches (rank 0 gets none), then
    one counted compute."""
    out = []
    for factory, batches in cases:
        bounds = [0, 0, len(batches) // 3, len(batches)]
        m = factory()
        for preds, refs in batches[bounds[rank] : bounds[rank + 1]]:
            m.update(preds, refs)
        with count_collectives() as counter:
            result = m.compute()
        out.append((counter.total, result))
    return out


@pytest.mark.distributed
def test_distributed_uneven_shards_in_at_most_two_collectives():
    """One spawned 3-rank gloo run for every case: each rank's result == one process over all
    the data (and the reference), after at most 2 collectives (the header, one all_reduce)."""
    per_rank = run_on_ranks(_rank_worker, 3, [(c.factory, list(c.batches)) for c in CASES])
    for i, case in enumerate(CASES):
        expected = case.reference(case.batches)
        for rank in per_rank:
            total, result = rank[i]
            assert total <= 2, (case.name, total)
            assert_same(result, expected, rtol=1e-6, atol=1e-6, what=case.name)
