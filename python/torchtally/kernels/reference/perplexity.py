"""Torch reference of the perplexity kernel (csrc/API_TEXT.md, "Text kernels").

total float64 [] += the sum over counted tokens of ``logsumexp(x) - x[y]`` (the negative
log-softmax of the target), computed in float64; count int64 [] += the number of counted tokens
(target != ignore_index). Logits with NaN or +inf, or a counted row of -inf only, and a counted
target outside [0, V) raise ValueError before anything is written.
"""

from typing import Optional

import torch

from . import checks as chk

_CHUNK_ELEMENTS = 1 << 24


def perplexity_update(total, count, preds, target, ignore_index: Optional[int] = None, /) -> None:
    """total += the targets' negative log-likelihood, count += the tokens counted."""
    chk.no_meta(("preds", preds), ("target", target))
    total = chk.output("total", total, torch.float64, "float64 []", (0,))
    count = chk.output("count", count, torch.int64, "int64 []", (0,))
    preds = chk.scores("preds", preds, total, "a floating tensor [N, T, V]", lambda s: len(s) == 3)
    target = chk.tensor("target", target)
    if target.dtype != torch.int64:
        chk.fail("target", target, "int64 token ids [N, T]", False)
    n, t, v = preds.shape
    if tuple(target.shape) != (n, t):
        raise ValueError(
            f"target: expected the shape [{n}, {t}] of preds' first two dimensions, got {chk.describe(target)}"
        )
    chk.same_device("target", target, total)
    ignore = chk.index_value("ignore_index", ignore_index)
    y = target.reshape(-1)
    keep = torch.ones_like(y, dtype=torch.bool) if ignore is None else y != ignore
    if v == 0 and y.numel():
        raise ValueError(f"preds: expected a vocabulary of at least 1, got {chk.describe(preds)}")
    rows = preds.reshape(-1, v)
    index = keep.nonzero().squeeze(1)
    y = y[index]
    bad = ((y < 0) | (y >= v)).nonzero()
    if bad.numel():
        raise ValueError(f"target: token id {int(y[bad[0, 0]])} is out of range [0, {v})")
    per_chunk = max(1, _CHUNK_ELEMENTS // max(v, 1))  # float64 copies of a few rows at a time: bounded memory
    parts = []
    for lo in range(0, index.numel(), per_chunk):
        chunk = rows[index[lo : lo + per_chunk]].double()
        if bool((torch.isnan(chunk) | (chunk == float("inf"))).any()):
            raise ValueError("preds: expected no NaN or +inf")
        if bool((chunk == float("-inf")).all(dim=1).any()):
            raise ValueError("preds: a row is -inf everywhere (no probability to share)")
        target_logit = chunk.gather(1, y[lo : lo + per_chunk, None]).squeeze(1)
        parts.append((torch.logsumexp(chunk, dim=1) - target_logit).sum())
    total += torch.stack(parts).sum() if parts else 0.0
    count += y.numel()
