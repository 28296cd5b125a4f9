"""Torch reference of the binned score histogram (csrc/API.md, "Binned score histograms").

The bin of a score s is b = #{i : thresholds[i] <= s}, found by a binary search
(torch.searchsorted, right=True), then counted with one bincount: O(N*K + T) memory, never an
N x T comparison. `uniform` is only a hint for the C core; the result is the same either way.
"""

import torch
from torch import Tensor

from . import checks as chk

# csrc/kernels/binned.h's TT_BINNED_NAN_NOTE
NAN_NOTE = " (a NaN score, or a row of logits whose softmax is undefined: a logit of +inf, or every logit -inf)"


def _thresholds(thresholds: object, out: Tensor) -> Tensor:
    expected = "a contiguous float64 tensor of shape [T]"
    thresholds = chk.tensor("thresholds", thresholds)
    if thresholds.dtype != torch.float64:
        chk.fail("thresholds", thresholds, expected, False)
    if thresholds.dim() != 1 or not thresholds.is_contiguous():
        chk.fail("thresholds", thresholds, expected, True)
    chk.same_device("thresholds", thresholds, out)
    chk.no_nan("thresholds", thresholds, "index")
    i = chk.first(thresholds[1:] < thresholds[:-1], None)
    if i is not None:
        a, b = float(thresholds[i]), float(thresholds[i + 1])
        raise ValueError(f"thresholds: expected non-decreasing values, got {b} after {a} at index {i + 1}")
    return thresholds


def _out_shape(out: Tensor, t: int) -> None:
    if out.shape[1] != t + 1 or out.shape[2] != 2:
        chk.fail("out", out, f"an int64 tensor of shape [K, T + 1, 2] with T = {t} (thresholds)", True)


def binned_update(out, preds, target, mask, ignore_index, thresholds, uniform, /) -> None:
    """out[k, bin(preds[n, k]), is_positive] += 1 for every kept sample (element, multilabel)."""
    chk.no_meta(("preds", preds), ("target", target), ("mask", mask), ("thresholds", thresholds))
    out = chk.output("out", out, torch.int64, "an int64 tensor of shape [K, T + 1, 2]", (3,))
    thresholds = _thresholds(thresholds, out)
    t = thresholds.shape[0]
    _out_shape(out, t)
    k = out.shape[0]
    expected = f"a floating tensor of shape [N, K] with K = {k}" + (" or [N]" if k == 1 else "")
    preds = chk.scores("preds", preds, out, expected, lambda s: (len(s) == 2 and s[1] == k) or (len(s) == 1 and k == 1))
    n = preds.shape[0]
    shapes = ((n,),) if preds.dim() == 1 else ((n,), (n, k))
    expected = "an integer or bool label tensor of shape " + " or ".join(f"{list(s)}" for s in shapes)
    target = chk.labels("target", target, out, expected, lambda s: s in shapes).long()
    bool(uniform)  # a hint only, but it must have a truth value
    keep = chk.keep_elements(chk.mask(mask, n, out), target, chk.index_value("ignore_index", ignore_index))
    multiclass = preds.dim() == 2 and target.dim() == 1
    chk.label_range("target", target, keep, k if multiclass else 2)
    if multiclass:  # the C core's note: NaN here may be logits whose softmax is undefined
        i = chk.first(torch.isnan(preds).any(dim=1), None)
        if i is not None:
            raise ValueError(f"preds: NaN at sample {i}{NAN_NOTE}")
    chk.no_nan("preds", preds)

    bins = torch.searchsorted(thresholds, preds.double().contiguous(), right=True).view(n, k)
    if multiclass:
        positive = (target[:, None] == torch.arange(k, device=out.device)).long()
    else:
        positive = target.view(n, k)
    index = torch.arange(k, device=out.device) * (2 * (t + 1)) + bins * 2 + positive
    if keep is not None:
        index = index[keep.view(n, -1).expand(n, k)]  # keep is [N] (per sample) or [N, K]
    out.add_(torch.bincount(index.reshape(-1), minlength=out.numel()).view(out.shape))
