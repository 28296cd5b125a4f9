"""Torch reference of the clustering kernels (csrc/API_CLUSTERING.md): ``contingency_rows`` and
``cluster_moments``, the oracle of the C core and the path of every non-CPU device. Same
arguments, checks and results; every check runs before ``out`` or ``size`` is written.
"""

import torch
from torch import Tensor

from . import checks as chk

I64 = torch.int64
F64 = torch.float64
HALF = 1 << 32
TABLE_COLUMNS = 3
ROW_HEAD = 4  # label hi, label lo, count, M2; then the D means


def _size_out(size: object, out: Tensor) -> Tensor:
    size = chk.output("size", size, I64, "int64 [1]", (1,))
    if size.numel() != 1:
        raise ValueError(f"size: expected int64 [1], got {chk.describe(size)}")
    chk.same_device("size", size, out)
    return size


def _grouped(pred: Tensor, target: Tensor, counts: Tensor) -> Tensor:
    """Rows (pred, target, summed count) per distinct key, sorted by (pred, target)."""
    up, ip = torch.unique(pred, return_inverse=True)
    ut, it = torch.unique(target, return_inverse=True)
    # (pred index, target index) as one int64 key: below distinct preds x distinct targets <= N^2
    key = ip * ut.numel() + it
    uk, inverse = torch.unique(key, return_inverse=True)
    summed = torch.zeros(uk.numel(), dtype=I64, device=pred.device).index_add_(0, inverse, counts)
    return torch.stack((up[uk // ut.numel()], ut[uk % ut.numel()], summed), dim=1)


def contingency_rows(out, size, table, preds, target, /) -> None:
    """out[:size] = the sorted (pred, target, count) rows of table's rows and the label pairs."""
    chk.no_meta(("table", table), ("preds", preds), ("target", target))
    out = chk.tensor("out", out)
    preds = chk.labels("preds", preds, out, "an integer or bool tensor of labels [N]", lambda s: len(s) == 1)
    target = chk.labels("target", target, out, "an integer or bool tensor of labels [N]", lambda s: len(s) == 1)
    if target.shape != preds.shape:
        raise ValueError(f"target: expected {preds.shape[0]} labels (as preds), got {target.shape[0]}")
    if table is not None:
        table = chk.tensor("table", table)
        if table.dtype != I64 or table.dim() != 2 or table.shape[1] != TABLE_COLUMNS:
            chk.fail("table", table, "int64 rows [K, 3] (pred, target, count)", table.dtype == I64)
        chk.same_device("table", table, out)
    size = _size_out(size, out)
    rows = (0 if table is None else table.shape[0]) + preds.shape[0]
    expected = f"int64 [M, 3] with M >= {rows} (table rows + samples)"
    out = chk.output("out", out, I64, expected, (2,))
    if out.shape[1] != TABLE_COLUMNS or out.shape[0] < rows:
        raise ValueError(f"out: expected {expected}, got {chk.describe(out)}")
    parts = [] if table is None else [table]
    if parts and table.numel() and bool((table[:, 2] < 1).any()):
        bad = int(torch.nonzero(table[:, 2] < 1)[0])
        raise ValueError(f"table: expected counts >= 1, got {int(table[bad, 2])} in row {bad}")
    p = torch.cat([t[:, 0] for t in parts] + [preds.to(I64)])
    t = torch.cat([t[:, 1] for t in parts] + [target.to(I64)])
    c = torch.cat([t[:, 2] for t in parts] + [torch.ones(preds.shape[0], dtype=I64, device=out.device)])
    if p.numel() == 0:
        size.fill_(0)
        return
    # the total (hence every key's count) must fit int64; exact Python ints only near the edge
    if table is not None and table.numel() and float(table[:, 2].double().sum()) + preds.shape[0] >= 2.0**62:
        if sum(table[:, 2].tolist()) + preds.shape[0] >= 2**63:
            raise ValueError("table: expected counts whose sums fit int64")
    grouped = _grouped(p, t, c)
    out[: grouped.shape[0]] = grouped
    size.fill_(grouped.shape[0])


def _check_block(block: object, out: Tensor) -> tuple:
    block = chk.tensor("block", block)
    if block.dtype != F64 or block.dim() != 1:
        chk.fail("block", block, "a float64 block [1 + K (4 + D)]", block.dtype == F64)
    chk.same_device("block", block, out)
    if block.numel() == 0:
        return block, -1, None
    head = float(block[0])
    if not (0 <= head < 1e9 and head == int(head)) or (block.numel() - 1) % (int(head) + ROW_HEAD):
        raise ValueError(f"block: expected [D, rows of 4 + D values], got {block.numel()} values with D = {head:g}")
    d = int(head)
    rows = block[1:].reshape(-1, ROW_HEAD + d)
    hi, lo, n, m2 = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
    ok = (hi >= -HALF / 2) & (hi < HALF / 2) & (hi == hi.floor()) & (lo >= 0) & (lo < HALF) & (lo == lo.floor())
    ok &= (n >= 1) & (n < float("inf")) & (m2 >= 0) & (m2 < float("inf")) & torch.isfinite(rows[:, 4:]).all(1)
    if not bool(ok.all()):
        bad = int(torch.nonzero(~ok)[0])
        raise ValueError(
            f"block: expected rows (label hi, label lo, count >= 1, M2 >= 0, finite means), row {bad} is not"
        )
    return block, d, rows


def cluster_moments(out, size, block, data, labels, /) -> None:
    """out[:size] = the block of block's clusters and the samples', merged by label, sorted."""
    chk.no_meta(("block", block), ("data", data), ("labels", labels))
    out = chk.tensor("out", out)
    data = chk.scores("data", data, out, "a floating tensor [N, D]", lambda s: len(s) == 2)
    labels = chk.labels("labels", labels, out, "an integer or bool tensor of labels [N]", lambda s: len(s) == 1)
    if labels.shape[0] != data.shape[0]:
        raise ValueError(f"labels: expected {data.shape[0]} labels, one per row of data, got {labels.shape[0]}")
    block, d, rows = _check_block(block, out)
    if d >= 0 and data.shape[0] > 0 and data.shape[1] != d:
        raise ValueError(f"data: expected {d} features per sample, as the batches before, got {data.shape[1]}")
    d = data.shape[1] if d < 0 else d
    rows = block.new_zeros(0, ROW_HEAD + d) if rows is None else rows
    size = _size_out(size, out)
    need = 1 + (rows.shape[0] + data.shape[0]) * (ROW_HEAD + d)
    expected = f"float64 [L] with L >= {need}"
    out = chk.output("out", out, F64, expected, (1,))
    if out.numel() < need:
        raise ValueError(f"out: expected {expected}, got {chk.describe(out)}")
    x = data.to(F64)
    if not bool(torch.isfinite(x).all()):
        raise ValueError("data: expected finite values, got NaN or inf")
    if rows.shape[0] + x.shape[0] == 0:
        size.fill_(0)
        return
    lab = labels.to(I64)
    # the batch's clusters: counts and means, then M2 about those means
    keys, inverse = torch.unique(lab, return_inverse=True)
    n = torch.zeros(keys.numel(), dtype=F64, device=x.device).index_add_(0, inverse, torch.ones_like(x[:, 0]))
    mean = torch.zeros(keys.numel(), d, dtype=F64, device=x.device).index_add_(0, inverse, x) / n.unsqueeze(1)
    m2 = torch.zeros_like(n).index_add_(0, inverse, (x - mean[inverse]).pow(2).sum(1))
    # every part (the block's rows, the batch's clusters) merged by label
    part_labels = torch.cat((rows[:, 0].to(I64) * HALF + rows[:, 1].to(I64), keys))
    part_n = torch.cat((rows[:, 2], n))
    part_m2 = torch.cat((rows[:, 3], m2))
    part_mean = torch.cat((rows[:, 4:], mean))
    merged, where = torch.unique(part_labels, return_inverse=True)
    total = torch.zeros(merged.numel(), dtype=F64, device=x.device).index_add_(0, where, part_n)
    centre = torch.zeros(merged.numel(), d, dtype=F64, device=x.device)
    centre = centre.index_add_(0, where, part_mean * part_n.unsqueeze(1)) / total.unsqueeze(1)
    spread = part_n * (part_mean - centre[where]).pow(2).sum(1)
    total_m2 = torch.zeros_like(total).index_add_(0, where, part_m2 + spread)
    hi = torch.div(merged, HALF, rounding_mode="floor")
    head = torch.stack(((hi).to(F64), (merged - hi * HALF).to(F64), total, total_m2), dim=1)
    result = torch.cat((torch.tensor([float(d)], dtype=F64, device=x.device), torch.cat((head, centre), 1).reshape(-1)))
    out[: result.numel()] = result
    size.fill_(result.numel())


def cluster_distances(out, data, labels, keys, centroids, p, /) -> None:
    """out[:, 0] += per cluster the sum, out[:, 1] = max(out[:, 1], the max) of the p-norm
    distances of its samples to its centroid."""
    chk.no_meta(("data", data), ("labels", labels), ("keys", keys), ("centroids", centroids))
    out = chk.tensor("out", out)
    data = chk.scores("data", data, out, "a floating tensor [N, D]", lambda s: len(s) == 2)
    labels = chk.labels("labels", labels, out, "an integer or bool tensor of labels [N]", lambda s: len(s) == 1)
    if labels.shape[0] != data.shape[0]:
        raise ValueError(f"labels: expected {data.shape[0]} labels, one per row of data, got {labels.shape[0]}")
    keys = chk.tensor("keys", keys)
    if keys.dtype != I64 or keys.dim() != 1:
        chk.fail("keys", keys, "int64 cluster labels [K]", keys.dtype == I64)
    chk.same_device("keys", keys, out)
    k, d = keys.shape[0], data.shape[1]
    centroids = chk.tensor("centroids", centroids)
    if centroids.dtype != F64 or centroids.shape != (k, d):
        chk.fail("centroids", centroids, f"float64 [{k}, {d}] (keys x features of data)", centroids.dtype == F64)
    chk.same_device("centroids", centroids, out)
    p = chk.float_value("p", p)
    if not p >= 0:
        raise ValueError(f"p: expected p >= 0 or inf, got {p:g}")
    expected = f"float64 [{k}, 2]"
    out = chk.output("out", out, F64, expected, (2,))
    if out.shape != (k, 2):
        raise ValueError(f"out: expected {expected}, got {chk.describe(out)}")
    if k > 1 and bool((keys[1:] <= keys[:-1]).any()):
        at = int(torch.nonzero(keys[1:] <= keys[:-1])[0]) + 1
        raise ValueError(f"keys: expected strictly increasing labels, got {int(keys[at])} after {int(keys[at - 1])}")
    lab = labels.to(I64)
    index = torch.searchsorted(keys, lab).clamp(max=max(k - 1, 0))
    missing = (index >= k) | (keys[index] != lab) if k else torch.ones_like(lab, dtype=torch.bool)
    if bool(missing.any()):
        at = int(torch.nonzero(missing)[0])
        raise ValueError(f"labels: label {int(lab[at])} (sample {at}) is not among keys")
    x = data.to(F64)
    if not bool(torch.isfinite(x).all()):
        raise ValueError("data: expected finite values, got NaN or inf")
    dist = torch.linalg.vector_norm(x - centroids[index], ord=p, dim=1)
    sums = torch.zeros(k, dtype=F64, device=out.device).index_add_(0, index, dist)
    most = torch.zeros(k, dtype=F64, device=out.device).scatter_reduce_(0, index, dist, "amax")
    out[:, 0] += sums
    out[:, 1] = torch.maximum(out[:, 1], most)
