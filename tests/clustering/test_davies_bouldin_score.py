"""DaviesBouldinScore and DunnIndex on their shared embedding state, against scikit-learn's
davies_bouldin_score and a numpy Dunn index (torchmetrics' centroid form) on seeded random
embeddings with labels of arbitrary values (one process and 3 gloo ranks with uneven shards, one
empty), side by side with torchmetrics, their edge cases and bad inputs."""

import functools

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.functional.clustering as tmf
from support.metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally import MetricCollection
from torchtally.clustering import DaviesBouldinScore, DunnIndex
from torchtally.functional.clustering import davies_bouldin_score, dunn_index


def numpy_dunn(x, labels, p=2.0):
    """min distance between two centroids / max distance of a point to its centroid (p-norm)."""
    x, labels = np.asarray(x, dtype=np.float64), np.asarray(labels)
    keys = np.unique(labels)
    cents = np.stack([x[labels == k].mean(0) for k in keys])
    between = min(np.linalg.norm(cents[i] - cents[j], ord=p) for i in range(len(keys)) for j in range(i + 1, len(keys)))
    within = max(np.linalg.norm(x[labels == k] - cents[i], ord=p, axis=1).max() for i, k in enumerate(keys))
    return between / within


def _data(n, d, k, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, k, (n,), generator=g)
    centres = torch.randn(k, d, generator=g, dtype=torch.float64) * 4
    x = centres[labels] + torch.randn(n, d, generator=g, dtype=torch.float64)
    return x.to(dtype), labels * -1_000_000_007 + 5


def _db(x, labels):
    return skm.davies_bouldin_score(x.double().numpy(), labels.numpy())


X, L = _data(60, 3, 4, 0)
BATCHES = [(X[lo : lo + s], L[lo : lo + s]) for lo, s in ((0, 12), (12, 1), (13, 22), (35, 15), (50, 10))]
CASES = [
    MetricCase("davies_bouldin", DaviesBouldinScore, BATCHES, reference=_db, rtol=1e-6),
    MetricCase("dunn", DunnIndex, BATCHES, reference=lambda x, lab: numpy_dunn(x, lab), rtol=1e-6),
    MetricCase("dunn_p1", functools.partial(DunnIndex, p=1), BATCHES, reference=lambda x, lab: numpy_dunn(x, lab, 1)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    both = CollectionFactory(db=DaviesBouldinScore, dunn=DunnIndex)
    run_distributed_cases(CASES + [MetricCase("collection", both, BATCHES, max_collectives=3)], world_size=3)


@pytest.mark.parametrize("seed", range(10))
def test_equal_the_references_on_random_embeddings(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(10, 400)), int(rng.integers(1, 9)), int(rng.integers(2, 8))
    x, labels = _data(n, d, k, seed, dtype=torch.float64)
    if not 1 < labels.unique().numel() < n:
        return
    p = [1.0, 2.0, 3.0, float("inf")][seed % 4]
    assert float(davies_bouldin_score(x, labels)) == pytest.approx(_db(x, labels), rel=1e-6)
    assert float(dunn_index(x, labels, p)) == pytest.approx(numpy_dunn(x, labels, p), rel=1e-9)
    db, dunn = DaviesBouldinScore(), DunnIndex(p)
    for lo in range(0, n, 29):
        db.update(x[lo : lo + 29], labels[lo : lo + 29])
        dunn.update(x[lo : lo + 29], labels[lo : lo + 29])
    assert float(db.compute()) == pytest.approx(_db(x, labels), rel=1e-6)
    assert float(dunn.compute()) == pytest.approx(numpy_dunn(x, labels, p), rel=1e-6)


def test_equal_torchmetrics():
    x, labels = _data(150, 4, 5, 3)
    torch.testing.assert_close(davies_bouldin_score(x, labels), tmf.davies_bouldin_score(x, labels), rtol=1e-4, atol=0)
    for p in (1, 2):
        torch.testing.assert_close(dunn_index(x, labels, p), tmf.dunn_index(x, labels, p), rtol=1e-4, atol=0)
    assert dunn_index(x.double(), labels).dtype == torch.float64  # the data's dtype, as torchmetrics'


def test_edges():
    same = torch.tensor([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    labels = torch.tensor([0, 1, 1])
    assert float(davies_bouldin_score(same, labels)) == 0.0 == _db(same, labels)  # all spreads 0
    with pytest.raises(ValueError, match="Number of detected clusters"):
        davies_bouldin_score(torch.randn(4, 2), torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="at least 2 clusters"):
        DunnIndex().update(torch.randn(4, 2), torch.zeros(4, dtype=torch.long)).compute()
    for bad in (-1, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="p: expected a non-negative"):
            DunnIndex(p=bad)


def test_dunn_with_p_zero_counts_the_coordinates_that_differ():
    """p = 0 (numpy's and torchmetrics' ord=0): both distances count differing coordinates."""
    x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
    labels = torch.tensor([0, 0, 1, 1])
    expected = numpy_dunn(x, labels, 0)
    assert float(dunn_index(x, labels, p=0)) == pytest.approx(expected)
    assert float(DunnIndex(p=0).update(x, labels).compute()) == pytest.approx(expected)
    tm = pytest.importorskip("torchmetrics.functional.clustering")
    assert float(dunn_index(x, labels, p=0)) == pytest.approx(float(tm.dunn_index(x, labels, p=0)))


def test_state_bytes_and_sharing():
    x, lab = _data(100, 6, 3, 1)
    m = DaviesBouldinScore().update(x, lab)  # float32 embeddings stay float32: 4 D + 8 bytes per sample
    assert m.data.dtype == torch.float32 and m.data.numel() == 600 and m.labels.numel() == 100
    m.update(x[:10].double() + 1e-12, lab[:10])  # float64 ones are kept as float64, exactly
    assert m.data64.dtype == torch.float64 and m.data64.numel() == 60 and m.labels64.numel() == 10
    both = (torch.cat((x.double(), x[:10].double() + 1e-12)), torch.cat((lab, lab[:10])))
    assert float(m.compute()) == pytest.approx(_db(*both), rel=1e-6)
    assert float(DunnIndex().update(x.half(), lab).compute()) == pytest.approx(numpy_dunn(x.half().double(), lab))
    coll = MetricCollection({"db": DaviesBouldinScore(), "dunn": DunnIndex()})
    for x, lab in BATCHES:
        coll.update(x, lab)
    got = coll.compute()
    assert float(got["db"]) == pytest.approx(_db(X, L), rel=1e-6)
    assert float(got["dunn"]) == pytest.approx(numpy_dunn(X, L), rel=1e-6)


BAD = [
    ((torch.ones(3, 2, dtype=torch.long), torch.tensor([0, 1, 1])), TypeError, "data: expected a floating"),
    ((torch.ones(3, 3), torch.tensor([0, 1, 1])), ValueError, "data: expected 2 features"),
    ((torch.ones(3, 2), torch.tensor([0.0, 1.0, 1.0])), TypeError, "labels: expected integer"),
    ((torch.ones(3, 2), torch.tensor([0, 1])), ValueError, "labels: expected 3 labels"),
    ((torch.tensor([[float("inf"), 0.0]]), torch.tensor([0])), ValueError, "data: expected finite"),
]


@pytest.mark.parametrize("cls", [DaviesBouldinScore, DunnIndex])
@pytest.mark.parametrize("args, exc, match", BAD, ids=[b[2] for b in BAD])
def test_bad_input(cls, args, exc, match):
    assert_rejects(cls().update(torch.randn(4, 2), torch.tensor([0, 0, 1, 1])), args, exc, match)


def test_other_feature_counts_do_not_merge():
    a = DunnIndex().update(torch.randn(4, 2), torch.tensor([0, 0, 1, 1]))
    b = DunnIndex().update(torch.randn(4, 3), torch.tensor([0, 0, 1, 1]))
    with pytest.raises(ValueError, match="different numbers of features"):
        a.merge_state(b)


@pytest.mark.parametrize("data_dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("label_dtype", [torch.int32, torch.int64])
def test_the_stored_embeddings_are_copies(data_dtype, label_dtype):
    """A caller that refills its buffers after each update (data and labels) leaves the stored
    embeddings alone, whichever dtypes arrive (some are stored as they come, others cast)."""
    g = torch.Generator().manual_seed(5)
    data = torch.randn(12, 3, generator=g).to(data_dtype)
    labels = torch.arange(12).remainder(3).to(label_dtype)
    want = [cls().update(data.clone(), labels.clone()).compute() for cls in (DaviesBouldinScore, DunnIndex)]
    metrics = [cls().update(data, labels) for cls in (DaviesBouldinScore, DunnIndex)]
    data.fill_(1.0)
    labels.zero_()
    for metric, expected in zip(metrics, want):
        torch.testing.assert_close(metric.compute(), expected, rtol=0, atol=0)
