"""``adjusted_mutual_info_score`` (torchmetrics.functional.clustering.adjusted_mutual_info_score's
names): mutual information adjusted for chance, with the expected mutual information of two
random labellings of the same cluster sizes (the hypergeometric model), from the margins only."""

import math

import torch
from torch import Tensor

from .utils import (
    F64,
    check_average_method,
    check_cluster_labels,
    contingency_rows,
    default_dtype,
    entropy_of_counts,
    generalized_mean,
    marginals,
    mutual_info_from_table,
    result,
)

__all__ = ["adjusted_mutual_info_score", "expected_mutual_info", "ami_from_table"]

# how many (j, n_ij) terms one vectorised step of the expected mutual information holds at most
_CHUNK = 1 << 22


def expected_mutual_info(a: Tensor, b: Tensor) -> float:
    """E[MI] of two labellings with cluster sizes ``a`` and ``b`` (int64, same total N) under
    random assignment: the sum over clusters i, j and every feasible overlap n_ij of
    ``n_ij/N * log(N n_ij / (a_i b_j)) * P(n_ij)``, P hypergeometric, in log space (lgamma),
    float64. 0 when either side has one cluster."""
    if a.numel() <= 1 or b.numel() <= 1:
        return 0.0
    n = int(a.sum())
    af, bf = a.to(F64), b.to(F64)
    log_n = math.log(n)
    # the factorials that depend on one side only: log(a! (N-a)!), log(b! (N-b)!)
    gln_a = torch.lgamma(af + 1) + torch.lgamma(n - af + 1) - math.lgamma(n + 1)
    gln_b = torch.lgamma(bf + 1) + torch.lgamma(n - bf + 1)
    emi = torch.zeros((), dtype=F64, device=a.device)
    columns = torch.arange(b.numel(), device=b.device)
    for i in range(a.numel()):  # one row at a time: its terms over every column and overlap
        ai = a[i]
        start = torch.clamp(ai - n + b, min=1)
        lengths = torch.clamp(torch.minimum(ai.expand_as(b), b) + 1 - start, min=0)
        total = int(lengths.sum())
        if total == 0:
            continue
        cols = torch.repeat_interleave(columns, lengths)
        offsets = torch.arange(total, device=b.device) - torch.repeat_interleave(
            torch.cumsum(lengths, 0) - lengths, lengths
        )
        for lo in range(0, total, _CHUNK):
            j = cols[lo : lo + _CHUNK]
            nij = (start[j] + offsets[lo : lo + _CHUNK]).to(F64)
            bj = bf[j]
            log_p = (
                gln_a[i]
                + gln_b[j]
                - torch.lgamma(nij + 1)
                - torch.lgamma(af[i] - nij + 1)
                - torch.lgamma(bj - nij + 1)
                - torch.lgamma(n - af[i] - bj + nij + 1)
            )
            log_ratio = log_n + nij.log() - af[i].log() - bj.log()  # log(N n_ij / (a_i b_j))
            emi = emi + (nij / n * log_ratio * log_p.exp()).sum()
    return float(emi)


def ami_from_table(table: Tensor, average_method: str) -> float:
    """scikit-learn's adjusted_mutual_info_score of a contingency table: 1 when both sides have
    one cluster (or no samples), 0 when one side has, else (MI - E[MI]) / (mean(H) - E[MI]) with
    numerator and denominator kept at least float64's eps away from 0, sign kept."""
    margins = marginals(table)
    _, _, a, b = margins
    if a.numel() == b.numel() and a.numel() <= 1:
        return 1.0
    if a.numel() == 1 or b.numel() == 1:
        return 0.0
    mi = mutual_info_from_table(table, margins)
    emi = expected_mutual_info(b, a)
    normalizer = generalized_mean(entropy_of_counts(b), entropy_of_counts(a), average_method)
    eps = float(torch.finfo(F64).eps)
    denominator = normalizer - emi
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    numerator = mi - emi
    numerator = min(numerator, -eps) if numerator < 0 else max(numerator, eps)
    return numerator / denominator


def adjusted_mutual_info_score(preds: Tensor, target: Tensor, average_method: str = "arithmetic") -> Tensor:
    """Adjusted mutual information of two clusterings; ``average_method`` as in
    normalized_mutual_info_score. scikit-learn's value (torchmetrics gives 0 where both sides
    have a single cluster: here 1).

    >>> import torch
    >>> adjusted_mutual_info_score(torch.tensor([2, 1, 0, 1, 0]), torch.tensor([0, 2, 1, 1, 0]))
    tensor(-0.2500)
    """
    check_average_method(average_method)
    p, t = check_cluster_labels(preds, target)
    return result(ami_from_table(contingency_rows(p, t), average_method), p.device, default_dtype())
