"""Torch reference of the LCS kernel (csrc/API_TEXT.md, "Text kernels").

For each pair p, the length of the longest common subsequence of the token ids
``a[a_offsets[p]:a_offsets[p + 1]]`` and ``b[b_offsets[p]:b_offsets[p + 1]]``, by the classic
dynamic programme over one row, the row updated with torch ops per token of the longer side (a
running maximum along the row, as ``cummax``).
"""

import torch
from torch import Tensor

from . import checks as chk


def _offsets(name: str, t: object, pairs: int, length: int) -> Tensor:
    t = chk.tensor(name, t)
    if t.dtype != torch.int64 or t.dim() != 1 or t.shape[0] != pairs + 1:
        chk.fail(name, t, f"int64 offsets [{pairs + 1}]", t.dtype == torch.int64)
    values = t.tolist()
    previous = 0
    for p, x in enumerate(values):
        if (p == 0 and x != 0) or x < previous or x > length:
            raise ValueError(f"{name}: expected offsets rising from 0 to at most {length}, got {x} at index {p}")
        previous = x
    return t


def _tokens(name: str, t: object) -> Tensor:
    t = chk.tensor(name, t)
    if t.dtype != torch.int64 or t.dim() != 1:
        chk.fail(name, t, "int64 token ids [L]", t.dtype == torch.int64)
    return t


def _pair(x: Tensor, y: Tensor) -> int:
    """LCS length of x and y (y the shorter): row[j] = LCS of x[:i] and y[:j]."""
    n = y.shape[0]
    row = torch.zeros(n + 1, dtype=torch.int64)
    for token in x.tolist():
        diagonal = row[:-1] + (y == token).long()  # a match extends the previous row's diagonal
        row = torch.cat((row[:1], torch.maximum(row[1:], diagonal)))
        row = torch.cummax(row, dim=0).values
    return int(row[n])


def lcs(out, a, a_offsets, b, b_offsets, /) -> None:
    """out int64 [P][p] = the LCS length of pair p (see the module docstring)."""
    chk.no_meta(("a", a), ("b", b))
    out = chk.output("out", out, torch.int64, "int64 [P]", (1,))
    a, b = _tokens("a", a), _tokens("b", b)
    pairs = out.shape[0]
    ao = _offsets("a_offsets", a_offsets, pairs, a.shape[0]).tolist()
    bo = _offsets("b_offsets", b_offsets, pairs, b.shape[0]).tolist()
    a, b = a.cpu(), b.cpu()
    result = []
    for p in range(pairs):
        x, y = a[ao[p] : ao[p + 1]], b[bo[p] : bo[p + 1]]
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        result.append(_pair(x, y) if y.shape[0] else 0)
    out.copy_(torch.tensor(result, dtype=torch.int64))
