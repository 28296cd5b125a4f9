"""Checks of the packed sentences that the text kernels read (csrc/API.md, "Translation edit
rate" and "Extended edit distance"), shared by their torch references.

A batch of N sentences is packed as int64 1-D tensors: ``hyp`` (every hypothesis' tokens, one
after another) cut by ``hyp_offsets`` [N + 1]; ``refs`` (every reference's tokens) cut by
``ref_offsets`` [M + 1]; ``groups`` [N + 1] gives each sentence its references
``groups[i]:groups[i + 1]`` (at least one each). Tokens are any int64 values (equal ids, equal
tokens). The checks raise before any output is written, with the C core's messages.
"""

from typing import List, Tuple

import torch
from torch import Tensor

from . import checks as chk


def vector(name: str, t: object, out: Tensor) -> Tensor:
    """An int64 1-D contiguous tensor on out's device."""
    t = chk.tensor(name, t)
    if t.dtype != torch.int64:
        raise TypeError(f"{name}: expected an int64 1-D tensor, got {chk.describe(t)}")
    if t.dim() != 1:
        raise ValueError(f"{name}: expected an int64 1-D tensor, got {chk.describe(t)}")
    if not t.is_contiguous():
        raise ValueError(f"{name}: expected a contiguous tensor, got strides {tuple(t.stride())}")
    chk.same_device(name, t, out)
    return t


def offsets(name: str, t: Tensor, count: int, end: int, strict: bool) -> List[int]:
    """``count`` offsets rising from 0 to ``end`` (strictly when ``strict``), as a list."""
    if t.shape[0] != count:
        raise ValueError(f"{name}: expected {count} offsets, got {t.shape[0]}")
    values = [int(v) for v in t.tolist()]
    rises = all(b > a if strict else b >= a for a, b in zip(values, values[1:]))
    if values[0] != 0 or values[-1] != end or not rises:
        kind = "increasing" if strict else "non-decreasing"
        raise ValueError(f"{name}: expected {kind} offsets from 0 to {end}")
    return values


def unpack(
    out: object, out_cols: int, hyp: object, hyp_offsets: object, refs: object, ref_offsets: object, groups: object
) -> Tuple[Tensor, List[List[int]], List[List[List[int]]]]:
    """Check the arguments; returns out and, per sentence, its hypothesis and its references."""
    chk.no_meta(("hyp", hyp), ("hyp_offsets", hyp_offsets), ("refs", refs), ("ref_offsets", ref_offsets))
    chk.no_meta(("groups", groups))
    out = chk.tensor("out", out)
    names = ("hyp", "hyp_offsets", "refs", "ref_offsets", "groups")
    hyp, hyp_offsets, refs, ref_offsets, groups = (
        vector(n, t, out) for n, t in zip(names, (hyp, hyp_offsets, refs, ref_offsets, groups))
    )
    if groups.shape[0] < 1:
        raise ValueError("groups: expected at least one offset (0 for no sentences), got none")
    if ref_offsets.shape[0] < 1:
        raise ValueError("ref_offsets: expected at least one offset (0 for no references), got none")
    n, m = groups.shape[0] - 1, ref_offsets.shape[0] - 1
    shape = [n, out_cols] if out_cols else [n]
    expected = f"a float64 tensor of shape {shape}"
    out = chk.output("out", out, torch.float64, expected, (len(shape),))
    if list(out.shape) != shape:
        chk.fail("out", out, expected, True)
    cut_h = offsets("hyp_offsets", hyp_offsets, n + 1, hyp.shape[0], False)
    cut_r = offsets("ref_offsets", ref_offsets, m + 1, refs.shape[0], False)
    cut_g = offsets("groups", groups, n + 1, m, True)
    h, r = hyp.tolist(), refs.tolist()
    hyps = [h[cut_h[i] : cut_h[i + 1]] for i in range(n)]
    every_ref = [r[cut_r[j] : cut_r[j + 1]] for j in range(m)]
    return out, hyps, [every_ref[cut_g[i] : cut_g[i + 1]] for i in range(n)]
