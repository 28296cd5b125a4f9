"""The clustering family's shared state and arithmetic (torchmetrics.functional.clustering.utils'
place).

Label metrics (mutual information and its normalised and adjusted forms, Rand, adjusted Rand,
Fowlkes-Mallows, homogeneity, completeness, V-measure) all read one sparse contingency table:
``[K, 3]`` int64 rows ``(pred label, target label, count)``, one per distinct pair seen, sorted
by (pred, target), counts >= 1. Labels are arbitrary integers (no number of classes), so the
table grows with the number of distinct pairs, never with the number of samples; tables of
several batches or ranks merge by adding the counts of equal keys (``merge_contingency``). Both
the count of a batch folded into the table and the merge are one call of the contingency_rows
kernel (csrc/API_CLUSTERING.md: dense or hashed by the labels' range, rows sorted), and the
intrinsic metrics' centroids and distances are the cluster_moments and cluster_distances
kernels (``cluster_statistics``).

Every check runs before any state is touched and raises naming the argument: TypeError for a
wrong type or dtype, ValueError for a wrong shape.
"""

import math
from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from ...kernels.clustering import cluster_distances, folded_contingency, folded_moments
from . import small_table

__all__ = [
    "AVERAGE_METHODS",
    "check_average_method",
    "check_cluster_labels",
    "check_intrinsic",
    "check_intrinsic_shapes",
    "all_finite",
    "cluster_statistics",
    "contingency_rows",
    "fold_contingency",
    "merge_contingency",
    "marginals",
    "information",
    "pair_sums",
    "entropy_of_counts",
    "generalized_mean",
    "pair_confusion",
    "result",
]

F64 = torch.float64
I64 = torch.int64
AVERAGE_METHODS = ("min", "geometric", "arithmetic", "max")
EMPTY_TABLE_SHAPE = (0, 3)
_EPS = float(torch.finfo(F64).eps)


class LabelDtypeError(TypeError, ValueError):
    """Floating-point or complex cluster labels: a TypeError (torchtally's rule for a wrong dtype)
    and a ValueError (what torchmetrics raises there), with torchmetrics' words in brackets."""


def check_average_method(average_method: str) -> str:
    if average_method not in AVERAGE_METHODS:
        raise ValueError(f"average_method: expected one of {AVERAGE_METHODS}, got {average_method!r}")
    return average_method


def check_labels(name: str, x: object) -> Tensor:
    """A 1-D tensor of integer (or bool) labels, as int64 (uint64 wraps: still one label per value)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.is_floating_point() or x.is_complex():
        raise LabelDtypeError(
            f"{name}: expected integer cluster labels, got dtype {x.dtype} "
            f"(Expected real, discrete values for x but received {x.dtype})"
        )
    if x.dim() != 1:
        raise ValueError(f"{name}: expected a 1-D tensor of labels, got shape {tuple(x.shape)}")
    return x if x.dtype == I64 else x.to(I64)  # the common case without a call into torch


def check_cluster_labels(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """preds and target as int64 1-D tensors of equal length, on one device."""
    p = check_labels("preds", preds)
    t = check_labels("target", target)
    if p.shape != t.shape:
        raise ValueError(f"preds and target: expected the same shape, got {tuple(p.shape)} and {tuple(t.shape)}")
    if p.device != t.device:
        raise ValueError(f"target: expected a tensor on {p.device}, where preds is, got one on {t.device}")
    return p, t


def contingency_rows(preds: Tensor, target: Tensor) -> Tensor:
    """The sparse contingency table of one batch of checked labels: [K, 3] int64."""
    return folded_contingency(None, preds, target)


def fold_contingency(table: Tensor, preds: Tensor, target: Tensor) -> Tensor:
    """``table`` with one batch of checked labels counted in (one kernel call)."""
    return folded_contingency(table, preds, target)


def merge_contingency(tables: Sequence[Tensor]) -> Tensor:
    """Tables of several batches or ranks as one: counts of equal (pred, target) keys added."""
    held = [t for t in tables if t.numel()]
    if not held:
        return tables[0].clone()
    if len(held) == 1:
        return held[0].clone()
    empty = held[0].new_zeros(0)
    return folded_contingency(torch.cat(held), empty, empty)


def check_table(name: str, table: Tensor) -> None:
    """A loaded or merged-in table: counts >= 1, keys distinct and sorted (as updates leave it)."""
    if table.numel() == 0:
        return
    if bool((table[:, 2] < 1).any()):
        raise ValueError(f"'{name}': expected counts >= 1, got {table[:, 2].min().item()}")
    p, t = table[:, 0], table[:, 1]
    ordered = (p[1:] > p[:-1]) | ((p[1:] == p[:-1]) & (t[1:] > t[:-1]))
    if not bool(ordered.all()):
        raise ValueError(f"'{name}': expected distinct (pred, target) keys sorted by pred, then target")


Margins = Tuple[Tensor, Tensor, Tensor, Tensor]


def marginals(table: Tensor) -> Margins:
    """(pred index per row, target index per row, pred cluster sizes, target cluster sizes). The
    rows are sorted by pred label, so each pred cluster is one run of rows (no sort needed)."""
    preds, ip = torch.unique_consecutive(table[:, 0], return_inverse=True)
    targets, it = torch.unique(table[:, 1], return_inverse=True)
    c = table[:, 2]
    a = torch.zeros(preds.numel(), dtype=I64, device=c.device).index_add_(0, ip, c)
    b = torch.zeros(targets.numel(), dtype=I64, device=c.device).index_add_(0, it, c)
    return ip, it, a, b


def entropy_of_counts(sizes: Tensor) -> float:
    """Entropy (natural log) of a labelling with these cluster sizes; 1.0 for no samples, as
    scikit-learn's."""
    if sizes.numel() == 0:
        return 1.0
    p = sizes.to(F64)
    n = p.sum()
    return float(-((p / n) * (p.log() - n.log())).sum())


def generalized_mean(u: float, v: float, method: str) -> float:
    if method == "min":
        return min(u, v)
    if method == "geometric":
        return math.sqrt(u * v)
    if method == "arithmetic":
        return (u + v) / 2.0
    return max(u, v)


def mutual_info_from_table(table: Tensor, margins: Optional[Margins] = None) -> float:
    """Mutual information (natural log) of a contingency table, scikit-learn's: 0 for a single
    cluster on either side, terms below float64's eps dropped, the sum clipped at 0.
    ``margins``: ``marginals(table)`` where the caller has them already."""
    if margins is None:
        small = small_table.small_table_sums(table)
        if small is not None:
            return small_table.mutual_info(small)
        margins = marginals(table)
    ip, it, a, b = margins
    if a.numel() <= 1 or b.numel() <= 1:
        return 0.0
    c = table[:, 2].to(F64)
    n = float(c.sum())  # the sample count, exact in float64 below 2^53
    log_n = math.log(n)
    share = c / n
    # the logs of the cluster sizes once per cluster, then one per row
    log_outer = 2.0 * log_n - (a.to(F64).log()[ip] + b.to(F64).log()[it])
    terms = share * (c.log() - log_n) + share * log_outer
    terms = torch.where(terms.abs() < _EPS, 0.0, terms)
    return max(float(terms.sum()), 0.0)


def information(table: Tensor) -> Tuple[float, float, float, int, int]:
    """(mutual information, entropy of preds, entropy of target, number of pred clusters, of
    target clusters) of a table: small CPU tables in Python numbers (small_table.py)."""
    small = small_table.small_table_sums(table)
    if small is not None:
        h_preds, h_target = small_table.entropy(small.pred_sizes), small_table.entropy(small.target_sizes)
        return small_table.mutual_info(small), h_preds, h_target, len(small.pred_sizes), len(small.target_sizes)
    margins = marginals(table)
    _, _, a, b = margins
    return mutual_info_from_table(table, margins), entropy_of_counts(a), entropy_of_counts(b), a.numel(), b.numel()


def pair_sums(table: Tensor) -> Tuple[int, int, int, int]:
    """(samples, sum of squared counts, of squared pred cluster sizes, of squared target cluster
    sizes) of a table, as Python ints. The torch path's sums are int64 (exact below about 3e9
    samples)."""
    small = small_table.small_table_sums(table)
    if small is not None:
        return small_table.pair_sums(small)
    _, _, a, b = marginals(table)
    c = table[:, 2]
    return int(c.sum()), int((c * c).sum()), int((a * a).sum()), int((b * b).sum())


def pair_confusion(table: Tensor) -> Tuple[int, int, int, int]:
    """(tn, fp, fn, tp): ordered pairs of samples by whether target and preds put them together,
    scikit-learn's pair_confusion_matrix, as Python ints; every product of the sums is a Python
    int, exact at any size."""
    n, sum_squares, pred_squares, target_squares = pair_sums(table)
    tp = sum_squares - n
    fp = pred_squares - sum_squares  # together in preds only (scikit-learn's C[0, 1])
    fn = target_squares - sum_squares  # together in target only
    tn = n * n - fp - fn - sum_squares
    return tn, fp, fn, tp


def result(value: float, device: torch.device, dtype: torch.dtype) -> Tensor:
    return torch.tensor(value, dtype=F64).to(device=device, dtype=dtype)


def default_dtype() -> torch.dtype:
    return torch.get_default_dtype()


# -- intrinsic metrics: embeddings and their cluster labels --------------------------------------


def check_intrinsic(data: object, labels: object, features: int = -1) -> Tuple[Tensor, Tensor]:
    """data [N, D] floating and finite (``features``: the D it must have, -1 any), labels [N]
    integer, on one device: as float64 and int64."""
    x, lab = check_intrinsic_shapes(data, labels, features)
    if not all_finite(x):
        raise ValueError("data: expected finite values, got NaN or inf")
    return x.to(F64), lab


def all_finite(x: Tensor) -> bool:
    """Whether every value of a floating tensor is finite: its min and max in one pass (both NaN
    where a NaN is), some 30 times cheaper than ``torch.isfinite(x).all()`` on the CPU, which
    writes a bool per value first."""
    if x.numel() == 0:
        return True
    low, high = torch.aminmax(x)
    return math.isfinite(low.item()) and math.isfinite(high.item())  # Python floats: no more tensor ops


def check_intrinsic_shapes(data: object, labels: object, features: int = -1) -> Tuple[Tensor, Tensor]:
    """check_intrinsic's checks of types, shapes and devices, without the float64 copy and the
    finiteness check (which the cluster_moments kernel makes as it reads): data detached as it
    came, labels as int64."""
    if not isinstance(data, Tensor):
        raise TypeError(f"data: expected a torch.Tensor, got {type(data).__name__}")
    if not data.is_floating_point():
        raise TypeError(f"data: expected a floating-point tensor, got dtype {data.dtype}")
    if data.dim() != 2:
        raise ValueError(f"data: expected a 2-D tensor [N, D], got shape {tuple(data.shape)}")
    if features >= 0 and data.shape[1] != features:
        raise ValueError(f"data: expected {features} features per sample, as the batches before, got {data.shape[1]}")
    lab = check_labels("labels", labels)
    if lab.shape[0] != data.shape[0]:
        raise ValueError(f"labels: expected {data.shape[0]} labels, one per row of data, got {lab.shape[0]}")
    if lab.device != data.device:
        raise ValueError(f"labels: expected a tensor on {data.device}, where data is, got one on {lab.device}")
    return (data.detach() if data.requires_grad else data), lab


def check_cluster_count(clusters: int, samples: int) -> None:
    """scikit-learn's rule for the intrinsic scores: more than one cluster, fewer than samples."""
    if not 1 < clusters < samples:
        raise ValueError(
            "Number of detected clusters must be greater than one and less than the number of samples; "
            f"got {clusters} clusters and {samples} samples"
        )


def cluster_statistics(parts: Sequence[Tuple[Tensor, Tensor]], p: float) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """(sizes [K], centroids [K, D], distance sums [K], largest distances [K]), float64, per
    cluster label in sorted order, of the samples of every checked (data [N, D], labels [N]) part:
    the centroids in one pass over the samples (cluster_moments), then the p-norm distances of the
    samples to them in a second (cluster_distances); data is read in its own dtype, never copied."""
    device = parts[0][0].device
    block = torch.zeros(0, dtype=F64, device=device)
    for data, labels in parts:
        if data.shape[0]:
            block = folded_moments(block, data, labels, int(block[0]) if block.numel() else -1)
    if block.numel() == 0:
        empty = torch.zeros(0, dtype=F64, device=device)
        return empty, empty.reshape(0, parts[0][0].shape[1]), empty, empty
    rows = block[1:].reshape(-1, 4 + int(block[0]))
    keys = rows[:, 0].to(I64) * (1 << 32) + rows[:, 1].to(I64)
    sizes, means = rows[:, 2], rows[:, 4:]
    out = torch.zeros(keys.numel(), 2, dtype=F64, device=device)
    for data, labels in parts:
        if data.shape[0]:
            cluster_distances(out, data, labels, keys, means, p)
    return sizes, means, out[:, 0], out[:, 1]
