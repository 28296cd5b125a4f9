"""Route of the clustering kernels (csrc/API_CLUSTERING.md): ``contingency_rows`` (the label
metrics' sparse contingency table), ``cluster_moments`` (per-cluster count, mean and M2:
CalinskiHarabaszScore's state, the centroids of DaviesBouldinScore and DunnIndex) and
``cluster_distances`` (the distances of samples to their centroids, those two scores' spreads).
The C core for CPU tensors, the torch reference (kernels/reference/clustering.py) elsewhere; a
custom op inside torch.compile.

The first two write a data-dependent number of rows: the caller gives ``out`` room for the most
there can be and reads how many were written from ``size``; ``folded_*`` do that and return the
rows.
"""

import threading
from typing import Optional

import torch
from torch import Tensor

from . import detached, host_module, ops

I64 = torch.int64
F64 = torch.float64


def contingency_rows(out: Tensor, size: Tensor, table: Optional[Tensor], preds: Tensor, target: Tensor) -> None:
    """out[:size] = sorted (pred, target, count) rows of table's rows and the pairs (preds, target)."""
    if ops.compiling():
        return ops.contingency_rows(out, size, table, preds, target)
    host_module(out).contingency_rows(out, size, table, preds, target)


def cluster_moments(out: Tensor, size: Tensor, block: Tensor, data: Tensor, labels: Tensor) -> None:
    """out[:size] = the per-cluster (count, M2, mean) block of block's rows and the samples."""
    if ops.compiling():
        return ops.cluster_moments(out, size, block, data, labels)
    host_module(out).cluster_moments(out, size, block, detached(data), labels)


def cluster_distances(out: Tensor, data: Tensor, labels: Tensor, keys: Tensor, centroids: Tensor, p: float) -> None:
    """out[:, 0] += per cluster the sum, out[:, 1] = max with the max of the p-norm distances of
    its samples to its centroid (keys: the sorted cluster labels, centroids [K, D] float64)."""
    if ops.compiling():
        return ops.cluster_distances(out, data, labels, keys, centroids, p)
    host_module(out).cluster_distances(out, detached(data), labels, keys, centroids, p)


_host_counts = threading.local()


def _count_slot(device: torch.device) -> Tensor:
    """The int64 [1] ``size`` a call writes its count into, read back at once: on the CPU one per
    thread, kept (a small batch's fold is mostly such per-call costs, an allocation among them)."""
    if device.type != "cpu" or ops.compiling():  # a traced graph gets its own tensor
        return torch.empty(1, dtype=I64, device=device)
    slot = getattr(_host_counts, "slot", None)
    if slot is None:
        slot = _host_counts.slot = torch.empty(1, dtype=I64)
    return slot


def _trimmed(out: Tensor, used: int) -> Tensor:
    # a small result is copied out of the large buffer, so the state does not keep the buffer alive
    return out[:used].clone() if used * 2 < out.shape[0] else out[:used]


def folded_contingency(table: Optional[Tensor], preds: Tensor, target: Tensor) -> Tensor:
    """The [K', 3] rows of ``table`` with the pairs (preds, target) counted in."""
    rows = (0 if table is None else table.shape[0]) + preds.shape[0]
    out = torch.empty(rows, 3, dtype=I64, device=preds.device)
    size = _count_slot(preds.device)
    contingency_rows(out, size, table, preds, target)
    return _trimmed(out, int(size))


def folded_moments(block: Tensor, data: Tensor, labels: Tensor, features: int) -> Tensor:
    """The block of ``block``'s clusters with the samples ``data`` [N, D] (labels [N]) merged in;
    ``features``: D of ``block`` (-1 when it is empty)."""
    d = data.shape[1] if features < 0 else features
    clusters = (block.numel() - 1) // (4 + d) if block.numel() else 0
    out = torch.empty(1 + (clusters + data.shape[0]) * (4 + d), dtype=F64, device=data.device)
    size = _count_slot(data.device)
    cluster_moments(out, size, block, data, labels)
    return _trimmed(out, int(size))
