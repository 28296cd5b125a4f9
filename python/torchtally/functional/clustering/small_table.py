"""The label metrics' sums over a small contingency table on the CPU, in Python numbers.

A table of a few dozen rows (the usual number of (pred, target) pairs) costs each torch op a
fixed few microseconds, and a metric's value takes some twenty of them; the same formulas over
the rows as Python ints and floats cost a fraction of that. Tables of more than ``SMALL_ROWS``
rows, or on another device, take the torch path (functional.clustering.utils), which gives the
same values (the tests compare both with scikit-learn): counts and squares as exact ints, the
logs and their sums in float64, with scikit-learn's rules (terms below float64's eps dropped, the
mutual information clipped at 0, the entropy of no samples 1).
"""

import math
from typing import Dict, List, NamedTuple, Optional, Tuple

from torch import Tensor

__all__ = ["SMALL_ROWS", "TableSums", "small_table_sums", "mutual_info", "entropy", "pair_sums"]

SMALL_ROWS = 256
_EPS = 2.220446049250313e-16  # float64's machine epsilon, as scikit-learn's np.finfo(float).eps


class TableSums(NamedTuple):
    """A table's rows and marginals as Python ints."""

    rows: List[List[int]]  # (pred label, target label, count)
    pred_sizes: Dict[int, int]  # pred label -> samples
    target_sizes: Dict[int, int]  # target label -> samples
    n: int


def small_table_sums(table: Tensor) -> Optional[TableSums]:
    """The sums of a CPU table of at most SMALL_ROWS rows; None for any other table."""
    if not table.is_cpu or table.shape[0] > SMALL_ROWS:
        return None
    rows = table.tolist()
    pred_sizes: Dict[int, int] = {}
    target_sizes: Dict[int, int] = {}
    for p, t, c in rows:
        pred_sizes[p] = pred_sizes.get(p, 0) + c
        target_sizes[t] = target_sizes.get(t, 0) + c
    return TableSums(rows, pred_sizes, target_sizes, sum(pred_sizes.values()))


def mutual_info(sums: TableSums) -> float:
    """utils.mutual_info_from_table's value: 0 for a single cluster on either side."""
    a, b, n = sums.pred_sizes, sums.target_sizes, sums.n
    if len(a) <= 1 or len(b) <= 1:
        return 0.0
    log_n = math.log(n)
    log_a = {p: math.log(size) for p, size in a.items()}
    log_b = {t: math.log(size) for t, size in b.items()}
    total = 0.0
    for p, t, c in sums.rows:
        share = c / n
        term = share * (math.log(c) - log_n) + share * (2.0 * log_n - (log_a[p] + log_b[t]))
        if abs(term) >= _EPS:
            total += term
    return max(total, 0.0)


def entropy(sizes: Dict[int, int]) -> float:
    """utils.entropy_of_counts' value of these cluster sizes: 1.0 for no samples."""
    if not sizes:
        return 1.0
    n = sum(sizes.values())
    log_n = math.log(n)
    return -sum((size / n) * (math.log(size) - log_n) for size in sizes.values())


def pair_sums(sums: TableSums) -> Tuple[int, int, int, int]:
    """(samples, sum of squared counts, of squared pred cluster sizes, of squared target sizes)."""
    squares = sum(c * c for _, _, c in sums.rows)
    pred_squares = sum(size * size for size in sums.pred_sizes.values())
    target_squares = sum(size * size for size in sums.target_sizes.values())
    return sums.n, squares, pred_squares, target_squares
