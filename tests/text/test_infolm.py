"""InfoLM and infolm against torchmetrics 1.9 with the same tiny local masked language model (no
download), every information measure, and 2 gloo ranks with uneven splits == one process.

torchmetrics undoes its length sort with the permutation instead of its inverse (see
test_text_bertscore.py): the comparisons use sentences whose token counts grow with their
position, where its sort is the identity.
"""

import warnings

import pytest
import torch
from support.metric_tester import assert_same
from support.rank_pools import run_on_ranks
from support.tiny_language_models import save_tiny_bert
from torchmetrics.functional.text.infolm import infolm as tm_infolm
from torchmetrics.text import InfoLM as TMInfoLM

from torchtally.functional.text import infolm
from torchtally.functional.text.information_measures import information_measure
from torchtally.testing import count_collectives
from torchtally.text import InfoLM

PREDS = ["hello", "master kenobi", "a dog is", "the cat sat on the mat"]
TARGET = ["hello there", "general kenobi the", "a dog is here", "the cat sat on a red mat"]
COMMON = {"max_length": 12, "verbose": False, "temperature": 0.5}
MEASURES = [
    ("kl_divergence", None, None),
    ("alpha_divergence", 0.5, None),
    ("beta_divergence", None, 0.5),
    ("ab_divergence", 0.5, 0.3),
    ("renyi_divergence", 0.4, None),
    ("l1_distance", None, None),
    ("l2_distance", None, None),
    ("l_infinity_distance", None, None),
    ("fisher_rao_distance", None, None),
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny_bert(str(tmp_path_factory.mktemp("tiny_mlm")), masked_lm=True)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _close(actual, expected, measure):
    # acos near 1 (Fisher-Rao of near-equal distributions) magnifies float32 rounding
    tol = {"atol": 2e-3, "rtol": 0.0} if measure == "fisher_rao_distance" else {"atol": 1e-6, "rtol": 1e-4}
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        assert_same(a, e, what=measure, **tol)


@pytest.mark.parametrize(("measure", "alpha", "beta"), MEASURES)
def test_measures_match_torchmetrics(measure, alpha, beta):
    """Every measure on the same random distributions (some near-equal, some with zeros)."""
    from torchmetrics.functional.text.infolm import _InformationMeasure

    probs = torch.rand(6, 11) ** 3
    probs[0, :3] = 0.0
    other = torch.rand(6, 11) ** 3
    other[1] = probs[1] * (1 + 1e-3 * torch.rand(11))
    p, t = probs / probs.sum(-1, keepdim=True), other / other.sum(-1, keepdim=True)
    expected = _InformationMeasure(measure, alpha, beta)(p, t)
    assert_same(information_measure(measure, p, t, alpha, beta), expected, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize(
    ("measure", "alpha", "idf"),
    [("kl_divergence", None, False), ("kl_divergence", None, True), ("alpha_divergence", 0.5, True)],
)
def test_functional_matches_torchmetrics(model_dir, measure, alpha, idf):
    kwargs = dict(information_measure=measure, alpha=alpha, idf=idf, return_sentence_level_score=True)
    expected = _quiet(tm_infolm, PREDS, TARGET, model_dir, **kwargs, **COMMON)
    _close(infolm(PREDS, TARGET, model_dir, **kwargs, **COMMON), expected, measure)


@pytest.mark.parametrize("idf", [False, True])
def test_class_matches_torchmetrics(model_dir, idf):
    ours = InfoLM(model_dir, idf=idf, return_sentence_level_score=True, **COMMON)
    theirs = _quiet(TMInfoLM, model_dir, idf=idf, return_sentence_level_score=True, **COMMON)
    for metric in (ours, theirs):
        metric.update(PREDS[:3], TARGET[:3])
        metric.update(PREDS[3:], TARGET[3:])
    _close(ours.compute(), theirs.compute(), "kl_divergence")
    plain = InfoLM(model_dir, idf=idf, **COMMON).update(PREDS, TARGET).compute()
    assert_same(plain, ours.compute()[0])
    assert InfoLM(model_dir, information_measure="l1_distance", **COMMON).higher_is_better is False
    assert ours.higher_is_better is True


def test_pairs_scored_in_the_order_given(model_dir):
    preds, target = PREDS[::-1], TARGET[1:] + TARGET[:1]
    _, got = infolm(preds, target, model_dir, idf=False, return_sentence_level_score=True, **COMMON)
    for i in range(len(preds)):
        one = _quiet(tm_infolm, preds[i : i + 1], target[i : i + 1], model_dir, idf=False, **COMMON)
        assert_same(got[i], one, atol=1e-6, rtol=1e-4)


def test_errors(model_dir):
    with pytest.raises(ValueError, match="not a local directory"):
        InfoLM()  # torchmetrics' default "bert-base-uncased" would be downloaded
    with pytest.raises(ValueError, match="not a local directory"):
        infolm(PREDS, TARGET)
    with pytest.raises(ValueError, match="max_length"):
        InfoLM(model_dir)  # transformers 5 configs have no max_length
    with pytest.raises(ValueError, match="alpha"):
        InfoLM(model_dir, information_measure="alpha_divergence", **COMMON)
    with pytest.raises(ValueError, match="alpha"):
        InfoLM(model_dir, information_measure="alpha_divergence", alpha=1.0, **COMMON)
    with pytest.raises(ValueError, match="beta"):
        InfoLM(model_dir, information_measure="ab_divergence", alpha=0.5, beta=-0.5, **COMMON)
    with pytest.raises(ValueError, match="information_measure"):
        InfoLM(model_dir, information_measure="cosine", **COMMON)
    metric = InfoLM(model_dir, **COMMON).update(PREDS[:1], TARGET[:1])
    before = {name: value.clone() for name, value in metric.metric_state.items()}
    with pytest.raises(ValueError, match="as many"):
        metric.update(PREDS[:2], TARGET[:1])
    for name, value in metric.metric_state.items():
        assert torch.equal(value, before[name]), name


def _rank_worker(rank, world_size, model_dir, bounds, idf):
    metric = InfoLM(model_dir, idf=idf, return_sentence_level_score=True, **COMMON)
    start, stop = bounds[rank]
    for i in range(start, stop):
        metric.update([PREDS[i]], [TARGET[i]])
    with count_collectives() as counter:
        result = metric.compute()
    return result, counter.total


@pytest.mark.distributed
def test_two_ranks_uneven_equal_one_process(model_dir):
    per_rank = run_on_ranks(_rank_worker, 2, model_dir, [(0, 3), (3, 4)], True, timeout=240)
    expected = InfoLM(model_dir, idf=True, return_sentence_level_score=True, **COMMON).update(PREDS, TARGET).compute()
    for result, collectives in per_rank:
        _close(result, expected, "kl_divergence")
        assert collectives <= 2, collectives  # header + one padded all_gather (int64)
