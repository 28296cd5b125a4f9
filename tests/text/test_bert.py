"""BERTScore and bert_score against torchmetrics 1.9 with the same tiny local model (no
download), the token rows' idf at compute, and 2 gloo ranks with uneven splits == one process.

torchmetrics sorts sentences by length and undoes the sort with the permutation instead of its
inverse: where that permutation is not its own inverse its scores belong to other pairs. The
comparisons over several pairs use sentences whose token counts grow with their position (the
sort is then the identity); the order itself is checked against torchmetrics one pair at a time.
"""

import warnings

import pytest
import torch
from support.metric_tester import assert_same
from support.rank_pools import run_on_ranks
from support.tiny_language_models import save_tiny_bert
from torchmetrics.functional.text.bert import bert_score as tm_bert_score
from torchmetrics.text import BERTScore as TMBERTScore

from torchtally.functional.text import bert_score
from torchtally.testing import count_collectives
from torchtally.text import BERTScore

# Token counts strictly increasing in both lists (see the module docstring).
PREDS = ["hello", "general kenobi", "a dog is here", "the cat sat on the mat", "he read the big red book here"]
TARGET = ["hello there", "master kenobi the", "a big dog is here", "the cat sat on a red mat", "he read a book"]
TARGET[4] = "he was interested in the world history book"
TOL = {"atol": 2e-5, "rtol": 1e-5}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny_bert(str(tmp_path_factory.mktemp("tiny_bert")))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _same(actual, expected):
    assert set(actual) == set(expected)
    for key in expected:
        assert actual[key].shape == expected[key].shape, key
        assert actual[key].dtype == expected[key].dtype, key
        assert_same(actual[key], expected[key], what=key, **TOL)


@pytest.mark.parametrize(
    "options", [{}, {"idf": True}, {"num_layers": 1}, {"num_layers": 0, "idf": True}, {"all_layers": True, "idf": True}]
)
def test_functional_matches_torchmetrics(model_dir, options):
    expected = _quiet(tm_bert_score, PREDS, TARGET, model_name_or_path=model_dir, **options)
    _same(bert_score(PREDS, TARGET, model_name_or_path=model_dir, **options), expected)


def test_pairs_scored_in_the_order_given(model_dir):
    preds, target = PREDS[::-1], TARGET[1:] + TARGET[:1]  # sorting permutations that are not involutions
    got = bert_score(preds, target, model_name_or_path=model_dir)
    for i in range(len(preds)):
        one = _quiet(tm_bert_score, preds[i : i + 1], target[i : i + 1], model_name_or_path=model_dir)
        for key in ("precision", "recall", "f1"):
            assert_same(got[key][i], one[key], what=key, **TOL)


def test_multiple_references_take_the_best(model_dir):
    target = [[TARGET[0], TARGET[1]], [TARGET[1]], (TARGET[2], TARGET[3], TARGET[4])]
    got = bert_score(PREDS[:3], target, model_name_or_path=model_dir)
    for i, refs in enumerate(target):
        refs = list(refs)
        each = bert_score([PREDS[i]] * len(refs), refs, model_name_or_path=model_dir)
        for key in ("precision", "recall", "f1"):
            assert_same(got[key][i], each[key].reshape(-1).max(), what=key, **TOL)


@pytest.mark.parametrize("options", [{}, {"idf": True}, {"all_layers": True}])
def test_class_matches_torchmetrics(model_dir, options):
    ours, theirs = BERTScore(model_name_or_path=model_dir, **options), _quiet(TMBERTScore, model_dir, **options)
    for metric in (ours, theirs):
        metric.update(PREDS[:2], TARGET[:2])
        metric.update(PREDS[2:], TARGET[2:])
    _same(ours.compute(), _quiet(theirs.compute))


def test_own_model_and_tokenizer(model_dir):
    from transformers import AutoModel, AutoTokenizer

    hf_tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)

    def user_tokenizer(sentences, max_length):  # torchmetrics' contract for the class
        return hf_tokenizer(sentences, padding=True, max_length=max_length, truncation=True, return_tensors="pt")

    model = _quiet(AutoModel.from_pretrained, model_dir, local_files_only=True)

    def forward(model, batch):
        return model(batch["input_ids"], batch["attention_mask"]).last_hidden_state

    for extra in ({}, {"user_forward_fn": forward}):
        metric = BERTScore(model=model, user_tokenizer=user_tokenizer, idf=True, **extra)
        _same(metric.update(PREDS, TARGET).compute(), bert_score(PREDS, TARGET, model_name_or_path=model_dir, idf=True))


def test_idf_over_the_whole_data_set(model_dir):
    """idf is over every reference of the data: the per-update scores differ, the total matches."""
    metric = BERTScore(model_name_or_path=model_dir, idf=True)
    metric.update(PREDS[:2], TARGET[:2]).update(PREDS[2:], TARGET[2:])
    whole = bert_score(PREDS, TARGET, model_name_or_path=model_dir, idf=True)
    _same(metric.compute(), whole)
    part = bert_score(PREDS[:2], TARGET[:2], model_name_or_path=model_dir, idf=True)
    assert not torch.allclose(part["recall"], whole["recall"][:2])


def test_rescale_with_local_baseline(model_dir, tmp_path):
    path = tmp_path / "baseline.tsv"
    path.write_text("LAYER,P,R,F\n0,0.5,0.4,0.45\n1,0.6,0.5,0.55\n2,0.7,0.6,0.65\n")
    for options in ({}, {"num_layers": 1}, {"all_layers": True}):
        kwargs = dict(model_name_or_path=model_dir, rescale_with_baseline=True, baseline_path=str(path), **options)
        _same(bert_score(PREDS, TARGET, **kwargs), _quiet(tm_bert_score, PREDS, TARGET, **kwargs))
    with pytest.raises(ValueError, match="never downloads a baseline"):
        BERTScore(model_name_or_path=model_dir, rescale_with_baseline=True)
    with pytest.raises(ValueError, match="never downloads a baseline"):
        bert_score(PREDS, TARGET, model_name_or_path=model_dir, rescale_with_baseline=True, baseline_url="http://x")


def test_return_hash_and_empty(model_dir):
    got = bert_score(PREDS, TARGET, model_name_or_path=model_dir, return_hash=True, num_layers=1)
    assert got["hash"] == f"{model_dir}_L1_no-idf"
    with pytest.warns(UserWarning, match="empty"):
        assert bert_score([], [], model_name_or_path=model_dir) == {"precision": [0.0], "recall": [0.0], "f1": [0.0]}


def test_no_model_no_download():
    with pytest.raises(ValueError, match="never downloads"):
        BERTScore()
    with pytest.raises(ValueError, match="not a local directory"):
        BERTScore(model_name_or_path="roberta-large")
    with pytest.raises(ValueError, match="never downloads"):
        bert_score(["a"], ["a"])


def test_bad_input_leaves_state_unchanged(model_dir):
    metric = BERTScore(model_name_or_path=model_dir).update(PREDS[:1], TARGET[:1])
    before = {name: value.clone() for name, value in metric.metric_state.items()}
    with pytest.raises(ValueError, match="same"):
        metric.update(PREDS[:2], TARGET[:1])
    with pytest.raises(TypeError, match="preds"):
        metric.update([1, 2], TARGET[:2])
    for name, value in metric.metric_state.items():
        assert torch.equal(value, before[name]), name
    with pytest.raises(ValueError, match="num_layers"):
        BERTScore(model_name_or_path=model_dir, num_layers=5)


def _rank_worker(rank, world_size, model_dir, bounds, options):
    metric = BERTScore(model_name_or_path=model_dir, **options)
    start, stop = bounds[rank]
    for i in range(start, stop):  # one pair per update; rank 1 also gets a multi-reference item
        target = [TARGET[i], TARGET[0]] if i == 4 else TARGET[i]
        metric.update([PREDS[i]], [target])
    with count_collectives() as counter:
        result = metric.compute()
    return result, counter.total


@pytest.mark.distributed
def test_two_ranks_uneven_equal_one_process(model_dir):
    options = {"idf": True, "all_layers": True}  # idf over both ranks' references, every layer
    bounds = [(0, 1), (1, 5)]
    per_rank = run_on_ranks(_rank_worker, 2, model_dir, bounds, options, timeout=240)
    single = BERTScore(model_name_or_path=model_dir, **options)
    for i in range(5):
        single.update([PREDS[i]], [[TARGET[i], TARGET[0]] if i == 4 else TARGET[i]])
    expected = single.compute()
    for result, collectives in per_rank:
        _same(result, expected)
        assert collectives <= 3, collectives  # header + one padded all_gather per dtype (int64, float32)
