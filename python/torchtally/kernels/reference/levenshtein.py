"""Torch reference of the edit-distance kernel (csrc/API_TEXT.md, "Edit distance").

out int64 [N] = the Levenshtein distance of each pair of token sequences: pair i is the
hypothesis ``tokens[offsets[2i]:offsets[2i+1]]`` against the reference
``tokens[offsets[2i+1]:offsets[2i+2]]``; insertion and deletion cost 1, a substitution
``substitution_cost``, a match 0. The textbook dynamic programme over the full (m + 1) x (n + 1)
table in Python, the costs as given (the C core strips common ends and caps the substitution
cost at 2, which leaves every distance as it is: this is the oracle that checks it).
"""

from typing import List

import torch

from . import checks as chk


def _distance(hyp: List[int], ref: List[int], cost: int) -> int:
    table = [[0] * (len(ref) + 1) for _ in range(len(hyp) + 1)]
    for i in range(len(hyp) + 1):
        table[i][0] = i
    for j in range(len(ref) + 1):
        table[0][j] = j
    for i in range(1, len(hyp) + 1):
        for j in range(1, len(ref) + 1):
            step = 0 if hyp[i - 1] == ref[j - 1] else cost
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + step)
    return table[-1][-1]


def levenshtein(out, tokens, offsets, substitution_cost, /) -> None:
    """out int64 [N] = each pair's edit distance (see the module docstring)."""
    chk.no_meta(("tokens", tokens), ("offsets", offsets))
    tokens = chk.tensor("tokens", tokens)
    if tokens.dtype not in (torch.int32, torch.int64):
        chk.fail("tokens", tokens, "an int32 or int64 tensor [T]", False)
    if tokens.dim() != 1 or (tokens.shape[0] > 1 and tokens.stride(0) != 1):
        strided = "a strided " if tokens.dim() == 1 else ""
        raise ValueError(f"tokens: expected a contiguous 1-D tensor, got {strided}{chk.describe(tokens)}")
    offsets = chk.tensor("offsets", offsets)
    if offsets.dtype != torch.int64:
        chk.fail("offsets", offsets, "an int64 tensor [2N + 1]", False)
    if offsets.dim() != 1 or offsets.shape[0] % 2 == 0 or (offsets.shape[0] > 1 and offsets.stride(0) != 1):
        chk.fail("offsets", offsets, "a contiguous 1-D tensor of odd length 2N + 1", True)
    pairs = offsets.shape[0] // 2
    out = chk.output("out", out, torch.int64, f"int64 [{pairs}]", (1,))
    if out.shape[0] != pairs:
        chk.fail("out", out, f"int64 [{pairs}]", True)
    for name, t in (("tokens", tokens), ("offsets", offsets)):
        chk.same_device(name, t, out)
    if isinstance(substitution_cost, bool) or not isinstance(substitution_cost, int):
        raise TypeError(f"substitution_cost: expected an int, got {type(substitution_cost).__name__}")
    if substitution_cost < 0:
        raise ValueError(f"substitution_cost: expected a cost >= 0, got {substitution_cost}")
    o, total = offsets.tolist(), tokens.shape[0]
    if o[0] < 0 or o[0] > total:
        raise ValueError(f"offsets: expected offsets within [0, {total}], got {o[0]}")
    for k in range(1, len(o)):
        if o[k] < o[k - 1] or o[k] > total:
            raise ValueError(
                f"offsets: expected non-decreasing offsets within [0, {total}], "
                f"got {o[k]} at index {k} after {o[k - 1]}"
            )
    t = tokens.tolist()
    result = [
        _distance(t[o[2 * i] : o[2 * i + 1]], t[o[2 * i + 1] : o[2 * i + 2]], substitution_cost) for i in range(pairs)
    ]
    out.copy_(torch.tensor(result, dtype=torch.int64))
