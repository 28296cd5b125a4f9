"""Torch reference of the top-k kernel (csrc/API.md, "Top-k").

The rank of class j is #{i : s_i > s_j} + #{i < j : s_i == s_j}, i.e. its position in a stable
descending sort; the reference takes the first k columns of that sort (the C core counts the
rank directly, without sorting).
"""

import torch

from . import checks as chk


def topk_update(out, preds, target, mask, ignore_index, k, /) -> None:
    """out[:, 0] += prediction (the target on a hit, else the rank-0 class), out[:, 1] += target
    in top k (hit), out[:, 2] += target (support)."""
    chk.no_meta(("preds", preds), ("target", target), ("mask", mask))
    expected = "an int64 tensor of shape [C, 3]"
    out = chk.output("out", out, torch.int64, expected, (2,))
    if out.shape[1] != 3:
        chk.fail("out", out, expected, True)
    c = out.shape[0]
    preds = chk.scores(
        "preds", preds, out, f"a floating tensor of shape [N, C] with C = {c}", lambda s: len(s) == 2 and s[1] == c
    )
    n = preds.shape[0]
    expected = f"an integer or bool label tensor of shape [N] with N = {n} (preds)"
    target = chk.labels("target", target, out, expected, lambda s: s == (n,)).long()
    keep = chk.keep_elements(chk.mask(mask, n, out), target, chk.index_value("ignore_index", ignore_index))
    k = chk.index_value("k", k, allow_none=False)
    if not 1 <= k <= c:
        raise ValueError(f"k: expected an int with 1 <= k <= C = {c}, got {k}")
    chk.label_range("target", target, keep, c)
    chk.no_nan("preds", preds)
    if keep is not None:
        preds, target = preds[keep], target[keep]
    top = preds.sort(dim=1, descending=True, stable=True).indices[:, :k]
    hit = (top == target[:, None]).any(dim=1)
    predicted = torch.where(hit, target, top[:, 0])
    counts = [torch.bincount(v, minlength=c) for v in (predicted, target[hit], target)]
    out.add_(torch.stack(counts, dim=1))
