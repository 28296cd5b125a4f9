"""``calinski_harabasz_score`` (torchmetrics.functional.clustering.calinski_harabasz_score's
names): the variance ratio criterion, between-cluster over within-cluster dispersion, each
divided by its degrees of freedom.

It needs per cluster only (count, mean, M2: the summed squared distance of its points to its
mean), merged across batches and ranks with Chan's formula. The state is a float64 block
(``moments_block``): ``[D, rows...]`` with one row ``[label_hi, label_lo, count, M2, mean (D)]``
per cluster label, sorted by label (an int64 label split into two 32-bit halves, each exact in
float64); no samples: an empty tensor.
"""

from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from ...kernels.clustering import folded_moments
from .utils import F64, I64, check_cluster_count, check_intrinsic, default_dtype

__all__ = [
    "calinski_harabasz_score",
    "moments_block",
    "fold_moments",
    "merge_blocks",
    "ch_from_block",
    "block_features",
]

_LOW = 1 << 32


def _unpack(block: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    d = int(block[0])
    rows = block[1:].reshape(-1, 4 + d)
    labels = rows[:, 0].to(I64) * _LOW + rows[:, 1].to(I64)
    return labels, rows[:, 2], rows[:, 3], rows[:, 4:]


def block_features(block: Tensor) -> int:
    """The D of a block (-1 for an empty one)."""
    return int(block[0]) if block.numel() else -1


def moments_block(x: Tensor, labels: Tensor) -> Tensor:
    """The block of one batch of checked data ([N, D] floating) and labels (integer [N])."""
    return fold_moments(torch.zeros(0, dtype=F64, device=x.device), x, labels)


def fold_moments(block: Tensor, data: Tensor, labels: Tensor, features: Optional[int] = None) -> Tensor:
    """``block`` with one batch merged in (one kernel call, which also refuses NaN or inf in
    ``data`` and a D other than the block's, naming ``data``); ``features``: the block's D
    (block_features) where the caller has read it already."""
    if data.shape[0] == 0 and block.numel() == 0:
        return block.clone()
    return folded_moments(block, data, labels, block_features(block) if features is None else features)


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
    d = dims.pop()
    rows = torch.cat([held[0]] + [b[1:] for b in held[1:]])
    return folded_moments(rows, rows.new_zeros(0, d), rows.new_zeros(0, dtype=I64), d)


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
