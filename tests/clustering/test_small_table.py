"""The label metrics' two paths over a contingency table (functional/clustering/small_table.py):
Python numbers for small CPU tables, torch ops for the rest. Both equal scikit-learn, on tables
below and above the size that picks the path, and each other when the same table takes both."""

import numpy as np
import pytest
import sklearn.metrics as skm
import torch

import torchtally.functional.clustering as ttf
from torchtally.functional.clustering import small_table

FUNCTIONAL = [
    (ttf.mutual_info_score, skm.mutual_info_score),
    (ttf.rand_score, skm.rand_score),
    (ttf.adjusted_rand_score, skm.adjusted_rand_score),
    (ttf.fowlkes_mallows_index, skm.fowlkes_mallows_score),
    (ttf.homogeneity_score, skm.homogeneity_score),
    (ttf.completeness_score, skm.completeness_score),
    (ttf.v_measure_score, skm.v_measure_score),
    (ttf.normalized_mutual_info_score, skm.normalized_mutual_info_score),
]
IDS = [f.__name__ for f, _ in FUNCTIONAL]


def _labels(n, kp, kt, seed):
    g = torch.Generator().manual_seed(seed)
    preds = torch.randint(0, kp, (n,), generator=g)
    keep = torch.rand(n, generator=g) < 0.5
    target = torch.where(keep, preds % kt, torch.randint(0, kt, (n,), generator=g))
    return preds * 7 - 3, target * -11 + 2**35


def _rows(p, t):
    return int(torch.unique(torch.stack((p, t)), dim=1).shape[1])


@pytest.mark.parametrize("ours, reference", FUNCTIONAL, ids=IDS)
def test_a_table_above_the_small_size_takes_the_torch_path_and_equals_scikit_learn(ours, reference):
    p, t = _labels(4000, 40, 30, seed=3)
    assert _rows(p, t) > small_table.SMALL_ROWS
    assert float(ours(p, t)) == pytest.approx(reference(t.numpy(), p.numpy()), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ours, reference", FUNCTIONAL, ids=IDS)
def test_both_paths_give_the_same_value(ours, reference, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    p, t = _labels(int(rng.integers(1, 600)), int(rng.integers(1, 15)), int(rng.integers(1, 15)), seed)
    assert _rows(p, t) <= small_table.SMALL_ROWS
    small = float(ours(p, t))
    monkeypatch.setattr(small_table, "SMALL_ROWS", -1)  # every table takes the torch path
    assert small_table.small_table_sums(torch.zeros(0, 3, dtype=torch.int64)) is None
    large = float(ours(p, t))
    assert small == pytest.approx(large, rel=1e-12, abs=1e-15)
    assert small == pytest.approx(reference(t.numpy(), p.numpy()), rel=1e-5, abs=1e-6)


def test_the_python_sums_are_exact_ints():
    table = torch.tensor([[0, 0, 3], [0, 2, 1], [1, 2, 2**31]], dtype=torch.int64)
    sums = small_table.small_table_sums(table)
    assert sums.pred_sizes == {0: 4, 1: 2**31} and sums.target_sizes == {0: 3, 2: 2**31 + 1}
    assert small_table.pair_sums(sums) == (2**31 + 4, 9 + 1 + 2**62, 16 + 2**62, 9 + (2**31 + 1) ** 2)


def test_the_empty_table_takes_scikit_learn_values():
    empty = torch.zeros(0, 3, dtype=torch.int64)
    sums = small_table.small_table_sums(empty)
    assert sums.n == 0 and small_table.entropy(sums.pred_sizes) == 1.0 and small_table.mutual_info(sums) == 0.0
