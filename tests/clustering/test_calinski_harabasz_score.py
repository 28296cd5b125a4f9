"""CalinskiHarabaszScore on per-cluster Chan-merged moments, against scikit-learn's
calinski_harabasz_score on seeded random embeddings with labels of arbitrary values (one process
and 3 gloo ranks with uneven shards, one empty), side by side with torchmetrics, its edge cases
(constant clusters, cluster counts out of range) and bad inputs."""

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.functional.clustering as tmf
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.clustering import CalinskiHarabaszScore
from torchtally.functional.clustering import calinski_harabasz_score


def _data(n, d, k, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, k, (n,), generator=g)
    centres = torch.randn(k, d, generator=g, dtype=torch.float64) * 3 + 100  # far from 0: Chan matters
    x = centres[labels] + torch.randn(n, d, generator=g, dtype=torch.float64)
    return x.to(dtype), labels * 4_294_967_311 - 2**62  # labels beyond 32 bits, negative


def _sk(x, labels):
    return skm.calinski_harabasz_score(x.double().numpy(), labels.numpy())


X, L = _data(64, 3, 4, 0)
BATCHES = [(X[lo : lo + s], L[lo : lo + s]) for lo, s in ((0, 10), (10, 2), (12, 25), (37, 15), (52, 12))]
CASES = [MetricCase("calinski_harabasz", CalinskiHarabaszScore, BATCHES, reference=_sk, rtol=1e-6)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)


@pytest.mark.parametrize("seed", range(10))
def test_equals_scikit_learn_on_random_embeddings(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(10, 500)), int(rng.integers(1, 9)), int(rng.integers(2, 8))
    x, labels = _data(n, d, k, seed, dtype=torch.float64)
    if not 1 < labels.unique().numel() < n:
        return
    want = _sk(x, labels)
    assert float(calinski_harabasz_score(x, labels)) == pytest.approx(want, rel=1e-6)
    m = CalinskiHarabaszScore()
    for lo in range(0, n, 37):
        m.update(x[lo : lo + 37], labels[lo : lo + 37])
    assert float(m.compute()) == pytest.approx(want, rel=1e-6)


def test_equals_torchmetrics():
    x, labels = _data(200, 4, 5, 3)
    torch.testing.assert_close(
        calinski_harabasz_score(x, labels), tmf.calinski_harabasz_score(x, labels), rtol=1e-4, atol=0
    )


def test_state_is_per_cluster_not_per_sample():
    m = CalinskiHarabaszScore()
    for seed in range(10):
        m.update(*_data(500, 6, 3, seed))
    assert m.moments.dtype == torch.float64 and m.moments.numel() == 1 + 3 * (4 + 6)


def test_constant_clusters_give_one_as_scikit_learn():
    x = torch.tensor([[1.0, 2.0], [1.0, 2.0], [5.0, 5.0], [5.0, 5.0], [5.0, 5.0]])
    labels = torch.tensor([0, 0, 1, 1, 1])
    assert float(calinski_harabasz_score(x, labels)) == 1.0 == _sk(x, labels)
    m = CalinskiHarabaszScore().update(x[:3], labels[:3]).update(x[3:], labels[3:])
    assert float(m.compute()) == 1.0


@pytest.mark.parametrize("labels", [torch.zeros(4, dtype=torch.long), torch.arange(4)])
def test_cluster_count_out_of_range_raises(labels):
    with pytest.raises(ValueError, match="Number of detected clusters"):
        calinski_harabasz_score(torch.randn(4, 2), labels)
    with pytest.raises(ValueError, match="Number of detected clusters"):
        CalinskiHarabaszScore().update(torch.randn(4, 2), labels).compute()


BAD = [
    ((torch.ones(3, 2, dtype=torch.long), torch.tensor([0, 1, 1])), TypeError, "data: expected a floating"),
    ((torch.ones(3), torch.tensor([0, 1, 1])), ValueError, "data: expected a 2-D"),
    ((torch.ones(3, 3), torch.tensor([0, 1, 1])), ValueError, "data: expected 2 features"),
    ((torch.ones(3, 2), torch.tensor([0.0, 1.0, 1.0])), TypeError, "labels: expected integer"),
    ((torch.ones(3, 2), torch.tensor([0, 1])), ValueError, "labels: expected 3 labels"),
    ((torch.tensor([[0.0, float("nan")]]), torch.tensor([0])), ValueError, "data: expected finite"),
]


@pytest.mark.parametrize("args, exc, match", BAD, ids=[b[2] for b in BAD])
def test_bad_input(args, exc, match):
    m = CalinskiHarabaszScore().update(torch.randn(4, 2), torch.tensor([0, 0, 1, 1]))
    assert_rejects(m, args, exc, match)


def test_ranks_or_metrics_with_other_feature_counts_do_not_merge():
    a = CalinskiHarabaszScore().update(torch.randn(4, 2), torch.tensor([0, 0, 1, 1]))
    b = CalinskiHarabaszScore().update(torch.randn(4, 3), torch.tensor([0, 0, 1, 1]))
    with pytest.raises(ValueError, match="different numbers of features"):
        a.merge_state(b)


def test_a_bad_block_does_not_load():
    m = CalinskiHarabaszScore()
    with pytest.raises(ValueError, match="moments"):
        m.load_state_dict({"moments": torch.tensor([2.0, 0.0, 1.0, 1.0], dtype=torch.float64)}, strict=False)
