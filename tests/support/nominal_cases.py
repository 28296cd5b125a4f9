"""Data and references shared by tests/nominal/: correlated category series split into uneven
batches, and the statistics computed from scratch with scipy / scikit-learn / numpy (over the
occupied rows and columns of the table, as the metrics define them)."""

import math
from typing import List, Tuple

import numpy as np
import scipy.stats
import sklearn.metrics as skm
import torch

C = 5
SIZES = (17, 40, 3, 29, 11, 50)  # uneven batches, one tiny


def series(seed: int, n: int = sum(SIZES), classes: int = C, noise: float = 0.6) -> Tuple[torch.Tensor, torch.Tensor]:
    """preds, target int64 [n] in [0, classes): target a noisy copy of preds."""
    g = torch.Generator().manual_seed(seed)
    preds = torch.randint(0, classes, (n,), generator=g)
    keep = torch.rand(n, generator=g) > noise
    target = torch.where(keep, preds, torch.randint(0, classes, (n,), generator=g))
    return preds, target


def batches(*tensors: torch.Tensor, sizes=SIZES) -> List[Tuple[torch.Tensor, ...]]:
    out, lo = [], 0
    for size in sizes:
        out.append(tuple(t[lo : lo + size] for t in tensors))
        lo += size
    return out


def table(preds, target) -> np.ndarray:
    """Contingency table (rows target, columns preds) over the categories that occur."""
    p, t = np.asarray(preds).astype(np.int64), np.asarray(target).astype(np.int64)
    rows, t_idx = np.unique(t, return_inverse=True)
    cols, p_idx = np.unique(p, return_inverse=True)
    out = np.zeros((len(rows), len(cols)), dtype=np.int64)
    np.add.at(out, (t_idx, p_idx), 1)
    return out


def _phi2(tab: np.ndarray, yates: bool) -> float:
    if min(tab.shape) == 1:
        return 0.0
    chi2 = scipy.stats.chi2_contingency(tab, correction=yates)[0]
    return chi2 / tab.sum()


def cramers_v_ref(preds, target, bias_correction: bool = True) -> float:
    tab = table(preds, target)
    if not bias_correction:
        return scipy.stats.contingency.association(tab, method="cramer")
    return _corrected(tab, lambda r, c: min(r, c))


def tschuprows_t_ref(preds, target, bias_correction: bool = True) -> float:
    tab = table(preds, target)
    if not bias_correction:
        return scipy.stats.contingency.association(tab, method="tschuprow")
    return _corrected(tab, lambda r, c: math.sqrt(r * c))


def _corrected(tab: np.ndarray, denominator) -> float:
    """Bergsma's bias correction (phi^2 and the table's sizes), Yates' correction on 2 x 2."""
    n = tab.sum()
    r, c = tab.shape
    phi2 = max(0.0, _phi2(tab, True) - (r - 1) * (c - 1) / (n - 1))
    r_c, c_c = r - (r - 1) ** 2 / (n - 1), c - (c - 1) ** 2 / (n - 1)
    return min(1.0, math.sqrt(phi2 / denominator(r_c - 1, c_c - 1)))


def pearsons_ref(preds, target) -> float:
    return scipy.stats.contingency.association(table(preds, target), method="pearson")


def theils_u_ref(preds, target) -> float:
    """U(preds | target) = I(preds; target) / H(preds)."""
    p, t = np.asarray(preds), np.asarray(target)
    h = scipy.stats.entropy(np.unique(p, return_counts=True)[1])
    return 0.0 if h == 0 else skm.mutual_info_score(t, p) / h


def ratings(seed: int, n: int = sum(SIZES), categories: int = 4, raters: int = 6) -> torch.Tensor:
    """[n, categories] int64 counts, each row summing to ``raters``, with some agreement."""
    g = torch.Generator().manual_seed(seed)
    favourite = torch.randint(0, categories, (n, 1), generator=g)
    choice = torch.where(
        torch.rand(n, raters, generator=g) < 0.5, favourite, torch.randint(0, categories, (n, raters), generator=g)
    )
    counts = torch.zeros(n, categories, dtype=torch.int64)
    return counts.scatter_add_(1, choice, torch.ones_like(choice))


def fleiss_ref(counts) -> float:
    """Fleiss (1971), from the [N, C] counts."""
    x = np.asarray(counts, dtype=np.float64)
    n, r = x.shape[0], x.sum(1)[0]
    p_j = x.sum(0) / (n * r)
    p_i = ((x * x).sum(1) - r) / (r * (r - 1))
    pe = (p_j**2).sum()
    return (p_i.mean() - pe) / (1 - pe)
