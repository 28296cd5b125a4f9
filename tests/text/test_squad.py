"""SQuAD and squad against torchmetrics: several answers, empty and unanswered predictions,
articles and punctuation; torchmetrics' KeyErrors; bad answers raise with the state unchanged;
3 gloo ranks with uneven shards == one process, in at most 2 collectives."""

import functools
import random
import warnings

import pytest
import torch
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric
from support.rank_pools import run_on_ranks
from torchmetrics.functional.text import squad as tm_squad

from torchtally.functional.text import squad
from torchtally.testing import count_collectives
from torchtally.text import SQuAD

WORDS = ["The", "a", "an", "cat", "Cat,", "sat", "on", "mat.", "1976", "dog's", "x"]


def _text(rng, most=5):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, most)))


def _data(seed, n):
    rng = random.Random(seed)
    preds = [{"prediction_text": _text(rng), "id": str(i)} for i in range(n)]
    target = [
        {"answers": {"answer_start": [0], "text": [_text(rng) for _ in range(rng.randint(1, 3))]}, "id": str(i)}
        for i in range(n)
    ]
    return preds, target


def test_against_torchmetrics():
    preds, target = _data(0, 60)
    assert_same(squad(preds, target), tm_squad(preds, target), rtol=1e-6, atol=1e-4)
    m = SQuAD()
    for i in range(0, 60, 7):
        m.update(preds[i : i + 7], target[i : i + 7])
    assert_same(m.compute(), tm_squad(preds, target), rtol=1e-6, atol=1e-4)
    one_p, one_t = preds[3], target[3]  # a single dict each
    assert_same(squad(one_p, one_t), tm_squad(one_p, one_t), rtol=1e-6, atol=1e-4)


def test_unanswered_question_warns_and_scores_zero():
    preds = [{"prediction_text": "cat", "id": "1"}]
    target = [{"answers": {"text": ["cat"]}, "id": "1"}, {"answers": {"text": ["dog"]}, "id": "2"}]
    with pytest.warns(UserWarning, match="Unanswered question 2"):
        out = squad(preds, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(out, tm_squad(preds, target), rtol=1e-6)


def test_bad_input_raises_with_the_state_unchanged():
    m = SQuAD()
    m.update({"prediction_text": "a", "id": "1"}, {"answers": {"text": ["a"]}, "id": "1"})
    good_t = {"answers": {"text": ["a"]}, "id": "1"}
    assert_rejects(m, ({"text": "a", "id": "1"}, good_t), KeyError, "prediction_text")
    assert_rejects(m, ({"prediction_text": "a", "id": "1"}, {"answers": {"text": ["a"]}}), KeyError, "answers")
    assert_rejects(m, ({"prediction_text": "a", "id": "1"}, {"answers": {"start": [1]}, "id": "1"}), KeyError, "text")
    assert_rejects(
        m,
        ({"prediction_text": "a", "id": "1"}, {"answers": {"text": []}, "id": "1"}),
        ValueError,
        "expected at least one answer",
    )
    assert_rejects(m, ({"prediction_text": 3, "id": "1"}, good_t), TypeError, "prediction_text")


def test_none_and_missing_fields_are_named():
    """Each message names the argument, the item and the key, never "'NoneType' object is not
    iterable"; a missing key keeps torchmetrics' KeyError wording in parentheses."""
    m = SQuAD()
    m.update({"prediction_text": "a", "id": "1"}, {"answers": {"text": ["a"]}, "id": "1"})
    pred, good_t = {"prediction_text": "a", "id": "1"}, {"answers": {"text": ["a"]}, "id": "1"}
    for args, exc, match in (
        ((pred, {"answers": {"text": None}, "id": "1"}), TypeError, r"^target\[0\]\['answers'\]\['text'\]: .*NoneType"),
        ((pred, {"answers": None, "id": "1"}), TypeError, r"^target\[0\]\['answers'\]: expected a dict .*NoneType"),
        (
            (pred, {"answers": {"text": ["a", None]}, "id": "1"}),
            TypeError,
            r"^target\[0\]\['answers'\]\['text'\]\[1\]: ",
        ),
        (({"prediction_text": None, "id": "1"}, good_t), TypeError, r"^preds\[0\]\['prediction_text'\]: .*NoneType"),
        ((None, good_t), TypeError, "^preds: expected a dict or a list of dicts, got NoneType"),
        ((pred, None), TypeError, "^target: expected a dict or a list of dicts, got NoneType"),
        (([pred, None], good_t), TypeError, r"^preds\[1\]: expected a dict, got NoneType"),
        (
            ({"id": "1"}, good_t),
            KeyError,
            r"preds\[0\]: .*'prediction_text' is missing .*Expected keys in a single prediction",
        ),
        (
            (pred, [good_t, {"answers": {"text": ["a"]}}]),
            KeyError,
            r"target\[1\]: .*'id' is missing .*Expected keys in a single target",
        ),
    ):
        assert_rejects(m, args, exc, match)


def test_no_update_gives_nan():
    with pytest.warns(UserWarning):
        out = SQuAD().compute()
    assert torch.isnan(out["f1"]) and out["exact_match"].dtype == torch.float32


def _batches(seed, n, size):
    preds, target = _data(seed, n)
    return [(preds[i : i + size], target[i : i + size]) for i in range(0, n, size)]


def _reference(batches):
    return tm_squad([p for b in batches for p in b[0]], [t for b in batches for t in b[1]])


CASES = [
    MetricCase(
        "squad",
        SQuAD,
        batches=_batches(4, 31, 4),
        reference=_reference,
        reference_on_batches=True,
        rtol=1e-6,
        atol=1e-4,
    )
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


def _rank_worker(rank, world_size, batches):
    bounds = [0, 0, len(batches) // 3, len(batches)]
    m = SQuAD()
    for preds, target in batches[bounds[rank] : bounds[rank + 1]]:
        m.update(preds, target)
    with count_collectives() as counter:
        result = m.compute()
    return counter.total, result


@pytest.mark.distributed
def test_distributed_uneven_shards_in_at_most_two_collectives():
    batches = list(CASES[0].batches)
    expected = functools.reduce(lambda m, b: m.update(*b), batches, SQuAD()).compute()
    for total, result in run_on_ranks(_rank_worker, 3, batches):
        assert total <= 2, total
        assert_same(result, expected, rtol=1e-12, atol=1e-12)
        assert_same(result, _reference(batches), rtol=1e-6, atol=1e-4)
