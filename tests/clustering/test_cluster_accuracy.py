"""ClusterAccuracy against the best one-to-one matching found by brute force and by scipy's
linear_sum_assignment, through the shared tester (one process and 3 gloo ranks), and its bad
inputs. torchmetrics' ClusterAccuracy needs torch_linear_assignment, which is not installed
here, so the reference is scipy's matching."""

import functools
import itertools

import numpy as np
import pytest
import scipy.optimize
import torch
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.clustering import ClusterAccuracy
from torchtally.functional.clustering import cluster_accuracy


def _scipy(p, t, c):
    m = np.zeros((c, c), dtype=np.int64)
    np.add.at(m, (t.numpy(), p.numpy()), 1)
    rows, cols = scipy.optimize.linear_sum_assignment(m, maximize=True)
    return m[rows, cols].sum() / max(len(p), 1)


def _brute(p, t, c):
    best = 0
    for perm in itertools.permutations(range(c)):
        best = max(best, int((torch.tensor(perm)[p] == t).sum()))
    return best / len(p)


def _data(n, c, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, c, (n,), generator=g)
    shuffle = torch.randperm(c, generator=g)
    noisy = torch.where(torch.rand(n, generator=g) < 0.7, shuffle[t], torch.randint(0, c, (n,), generator=g))
    return noisy, t


P5, T5 = _data(60, 5, 0)
BATCHES = [(P5[lo : lo + s], T5[lo : lo + s]) for lo, s in ((0, 9), (9, 1), (10, 20), (30, 13), (43, 17))]
CASES = [
    MetricCase(
        "cluster_accuracy",
        functools.partial(ClusterAccuracy, num_classes=5),
        BATCHES,
        reference=lambda p, t: _scipy(p, t, 5),
        rtol=1e-6,
    )
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES, world_size=3)


@pytest.mark.parametrize("seed", range(8))
def test_equals_brute_force_matching(seed):
    c = 2 + seed % 4
    p, t = _data(40 + seed, c, seed)
    assert float(cluster_accuracy(p, t, c)) == pytest.approx(_brute(p, t, c), abs=1e-7)
    assert float(ClusterAccuracy(c).update(p, t).compute()) == pytest.approx(_brute(p, t, c), abs=1e-7)


def test_large_class_count_equals_scipy():
    p, t = _data(5000, 60, 3)
    assert float(cluster_accuracy(p, t, 60)) == pytest.approx(_scipy(p, t, 60), abs=1e-7)


def test_edges():
    assert float(cluster_accuracy(torch.tensor([1, 1, 1]), torch.tensor([0, 0, 0]), 2)) == 1.0  # one class
    assert float(cluster_accuracy(torch.tensor([0, 1, 0, 1]), torch.tensor([0, 0, 0, 0]), 2)) == 0.5
    with pytest.warns(UserWarning, match="update"):
        assert torch.isnan(ClusterAccuracy(3).compute())


@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((torch.tensor([0, 3]), torch.tensor([0, 1])), ValueError, r"preds: expected labels in \[0, 3\)"),
        ((torch.tensor([0, 1]), torch.tensor([-1, 1])), ValueError, "target: expected labels"),
        ((torch.tensor([0.0, 1.0]), torch.tensor([0, 1])), TypeError, "preds: expected integer"),
        ((torch.tensor([0, 1]), torch.tensor([0, 1, 2])), ValueError, "same shape"),
    ],
)
def test_bad_input(args, exc, match):
    assert_rejects(ClusterAccuracy(3).update(torch.tensor([0, 1]), torch.tensor([1, 2])), args, exc, match)


def test_bad_num_classes():
    for bad in (0, -2, 2.0, True):
        with pytest.raises(ValueError, match="num_classes"):
            ClusterAccuracy(bad)
