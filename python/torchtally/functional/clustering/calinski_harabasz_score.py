"""``calinski_harabasz_score`` (torchmetrics.functional.clustering.calinski_harabasz_score's
names): the variance ratio criterion, between-cluster over within-cluster dispersion, each
divided by its degrees of freedom.

It needs per cluster only (count, mean, M2: the summed squared distance of its points to its
mean), merged across batches and ranks with Chan's formula. The state is a float64 block
(``moments_block``): ``[D, rows...]`` with one row ``[label_hi, label_lo, count, M2, mean (D)]``
per cluster label, sorted by label (an int64 label split into two 32-bit halves, each exact in
float64); no samples: an empty tensor.
"""

from typing import Sequence, Tuple

import torch
from torch import Tensor

from .utils import F64, I64, centroids, check_cluster_count, check_intrinsic, default_dtype

__all__ = ["calinski_harabasz_score", "moments_block", "merge_blocks", "ch_from_block", "block_features"]

_LOW = 1 << 32


def _block(labels: Tensor, counts: Tensor, m2: Tensor, means: Tensor) -> Tensor:
    hi = torch.div(labels, _LOW, rounding_mode="floor")
    lo = labels - hi * _LOW
    rows = torch.cat((torch.stack((hi.to(F64), lo.to(F64), counts, m2), dim=1), means), dim=1)
    head = torch.tensor([float(means.shape[1])], dtype=F64, device=means.device)
    return torch.cat((head, rows.reshape(-1)))


def _unpack(block: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    d = int(block[0])
    rows = block[1:].reshape(-1, 4 + d)
    labels = rows[:, 0].to(I64) * _LOW + rows[:, 1].to(I64)
    return labels, rows[:, 2], rows[:, 3], rows[:, 4:]


def block_features(block: Tensor) -> int:
    """The D of a block (-1 for an empty one)."""
    return int(block[0]) if block.numel() else -1


def moments_block(x: Tensor, labels: Tensor) -> Tensor:
    """The block of one batch of checked data (float64 [N, D]) and labels (int64 [N])."""
    if x.shape[0] == 0:
        return torch.zeros(0, dtype=F64, device=x.device)
    inverse, sizes, means = centroids(x, labels)
    m2 = torch.zeros_like(sizes).index_add_(0, inverse, (x - means[inverse]).pow(2).sum(1))
    return _block(torch.unique(labels), sizes, m2, means)


def merge_blocks(blocks: Sequence[Tensor]) -> Tensor:
    """Blocks of several batches or ranks as one: clusters of equal label merged (Chan:
    M2 = sum M2_i + sum n_i |mean_i - mean|^2); ValueError when their D differ."""
    held = [b for b in blocks if b.numel()]
    if not held:
        return blocks[0].clone()
    dims = {block_features(b) for b in held}
    if len(dims) > 1:
        raise ValueError(f"CalinskiHarabaszScore: batches or ranks with different numbers of features {sorted(dims)}")
    if len(held) == 1:
        return held[0].clone()
    parts = [_unpack(b) for b in held]
    labels = torch.cat([p[0] for p in parts])
    counts = torch.cat([p[1] for p in parts])
    m2 = torch.cat([p[2] for p in parts])
    means = torch.cat([p[3] for p in parts])
    keys, inverse = torch.unique(labels, return_inverse=True)
    n = torch.zeros(keys.numel(), dtype=F64, device=means.device).index_add_(0, inverse, counts)
    mean = torch.zeros(keys.numel(), means.shape[1], dtype=F64, device=means.device)
    mean = mean.index_add_(0, inverse, means * counts.unsqueeze(1)) / n.unsqueeze(1)
    spread = counts * (means - mean[inverse]).pow(2).sum(1)
    total_m2 = torch.zeros_like(n).index_add_(0, inverse, m2 + spread)
    return _block(keys, n, total_m2, mean)


def check_block(name: str, block: Tensor) -> None:
    """A loaded block: its layout, counts >= 1, M2 >= 0, labels distinct and sorted."""
    if block.numel() == 0:
        return
    d = block[0].item()
    if d != int(d) or d < 0 or (block.numel() - 1) % (4 + int(d)):
        raise ValueError(f"'{name}': expected [D, rows of 4 + D values], got {block.numel()} values with D = {d}")
    labels, counts, m2, _ = _unpack(block)
    if bool((counts < 1).any()) or bool((m2 < 0).any()) or bool((labels[1:] <= labels[:-1]).any()):
        raise ValueError(f"'{name}': expected counts >= 1, M2 >= 0 and distinct labels in order")


def ch_from_block(block: Tensor) -> float:
    """scikit-learn's calinski_harabasz_score from a block (1 when every cluster's points are
    equal); ValueError unless 1 < clusters < samples."""
    if block.numel() == 0:
        check_cluster_count(0, 0)
    _, counts, m2, means = _unpack(block)
    n, k = float(counts.sum()), counts.numel()
    check_cluster_count(k, int(n))
    mean = (means * counts.unsqueeze(1)).sum(0) / n
    between = float((counts * (means - mean).pow(2).sum(1)).sum())
    within = float(m2.sum())
    if within == 0.0:
        return 1.0
    return between * (n - k) / (within * (k - 1.0))


def calinski_harabasz_score(data: Tensor, labels: Tensor) -> Tensor:
    """Calinski-Harabasz score of embeddings ``data`` [N, D] clustered by ``labels`` [N].

    >>> import torch
    >>> data = torch.tensor([[0.0, 0.0], [0.0, 1.0], [4.0, 4.0], [4.0, 5.0]])
    >>> calinski_harabasz_score(data, torch.tensor([0, 0, 1, 1]))
    tensor(64.)
    """
    x, lab = check_intrinsic(data, labels)
    value = ch_from_block(moments_block(x, lab))
    return torch.tensor(value, dtype=F64).to(device=x.device, dtype=default_dtype())
