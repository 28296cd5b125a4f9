"""``dunn_index`` (torchmetrics.functional.clustering.dunn_index's names): the smallest distance
between two centroids over the largest distance of a point to its own centroid, in the p-norm
(torchmetrics' centroid form of Dunn's index)."""

import math
from typing import Any, Sequence, Tuple

import torch
from torch import Tensor

from .utils import F64, check_intrinsic, cluster_statistics

__all__ = ["dunn_index", "dunn_from_data", "dunn_from_parts", "check_p"]


def check_p(p: Any) -> float:
    """The vector norm's order: p >= 0 or inf (p = 0 counts the coordinates that differ, as
    numpy's and torch's ``ord=0``)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not (p >= 0 or math.isinf(p)) or math.isnan(p):
        raise ValueError(f"p: expected a non-negative number (or inf) for the p-norm, got {p!r}")
    return float(p)


def dunn_from_data(x: Tensor, labels: Tensor, p: float) -> float:
    """Dunn index of checked data and int64 labels; ValueError with fewer than 2 clusters."""
    return dunn_from_parts([(x, labels)], p)


def dunn_from_parts(parts: Sequence[Tuple[Tensor, Tensor]], p: float) -> float:
    """Dunn index of the samples of every checked (data, labels) part; ValueError with fewer than
    2 clusters."""
    sizes, means, _, largest = cluster_statistics(parts, p)
    if sizes.numel() < 2:
        raise ValueError(f"labels: the Dunn index needs at least 2 clusters, got {sizes.numel()}")
    i, j = torch.triu_indices(sizes.numel(), sizes.numel(), offset=1, device=means.device)
    between = torch.linalg.vector_norm(means[i] - means[j], ord=p, dim=1).min()
    return float(between / largest.max())


def dunn_index(data: Tensor, labels: Tensor, p: float = 2) -> Tensor:
    """Dunn index of embeddings ``data`` [N, D] clustered by ``labels`` [N]; result in data's dtype,
    as torchmetrics'.

    >>> import torch
    >>> data = torch.tensor([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0], [0.5, 1.0]])
    >>> dunn_index(data, torch.tensor([0, 0, 0, 1]))
    tensor(2.)
    """
    p = check_p(p)
    x, lab = check_intrinsic(data, labels)
    return torch.tensor(dunn_from_data(x, lab, p), dtype=F64).to(device=x.device, dtype=data.dtype)
