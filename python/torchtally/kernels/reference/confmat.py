"""Torch reference of the confusion-matrix kernels (csrc/API.md, "Confusion matrices").

Row = target, column = prediction. All checks run first; `out` is written once, at the end.
"""

import math
from typing import Optional

import torch
from torch import Tensor

from . import checks as chk


def _labels_1d(name: str, t: object, out: Tensor, n: Optional[int]) -> Tensor:
    if n is None:
        return chk.labels(name, t, out, "an integer or bool label tensor of shape [N]", lambda s: len(s) == 1)
    expected = f"an integer or bool label tensor of shape [N] with N = {n} (preds)"
    return chk.labels(name, t, out, expected, lambda s: s == (n,))


def _square_out(out: object) -> Tensor:
    expected = "an int64 tensor of shape [C, C]"
    out = chk.output("out", out, torch.int64, expected, (2,))
    if out.shape[0] != out.shape[1]:
        chk.fail("out", out, expected, True)
    return out


def _add_counts(out: Tensor, index: Tensor) -> None:
    out.add_(torch.bincount(index, minlength=out.numel()).view(out.shape))


def confmat_labels(out, preds, target, mask, ignore_index, /) -> None:
    """out[target, preds] += 1 for every kept sample; labels must lie in [0, C)."""
    chk.no_meta(("preds", preds), ("target", target), ("mask", mask))
    out = _square_out(out)
    c = out.shape[0]
    preds = _labels_1d("preds", preds, out, None)
    n = preds.shape[0]
    target = _labels_1d("target", target, out, n).long()
    keep = chk.keep_elements(chk.mask(mask, n, out), target, chk.index_value("ignore_index", ignore_index))
    preds = preds.long()
    chk.label_range("target", target, keep, c)
    chk.label_range("preds", preds, keep, c)
    if keep is not None:
        preds, target = preds[keep], target[keep]
    _add_counts(out, target * c + preds)


def confmat_scores(out, scores, target, mask, ignore_index, /) -> None:
    """As confmat_labels with preds = argmax of each score row (first index on ties)."""
    chk.no_meta(("preds", scores), ("target", target), ("mask", mask))
    out = _square_out(out)
    c = out.shape[0]
    expected = f"a floating tensor of shape [N, C] with C = {c}"
    scores = chk.scores("preds", scores, out, expected, lambda s: len(s) == 2 and s[1] == c)
    n = scores.shape[0]
    if c == 0 and n > 0:
        chk.fail("preds", scores, "at least one class column", True)
    target = _labels_1d("target", target, out, n).long()
    keep = chk.keep_elements(chk.mask(mask, n, out), target, chk.index_value("ignore_index", ignore_index))
    chk.label_range("target", target, keep, c)
    chk.no_nan("preds", scores)
    if keep is not None:
        scores, target = scores[keep], target[keep]
    if target.numel() == 0:  # also covers C = 0, where argmax has no identity
        return
    _add_counts(out, target * c + scores.argmax(dim=1))


def _threshold_out(out: object) -> Tensor:
    expected = "an int64 tensor of shape [L, 2, 2] or [2, 2]"
    out = chk.output("out", out, torch.int64, expected, (2, 3))
    if tuple(out.shape[-2:]) != (2, 2):
        chk.fail("out", out, expected, True)
    return out


def _threshold_preds(preds: object, out: Tensor) -> Tensor:
    preds = chk.tensor("preds", preds)
    kind = "a floating or label tensor of shape"
    if out.dim() == 2:
        expected, ok = f"{kind} [N] (out is [2, 2])", lambda s: len(s) == 1
    else:
        labels = out.shape[0]
        expected = f"{kind} [N, L] with L = {labels}" + (" or [N]" if labels == 1 else "")
        ok = lambda s: (len(s) == 2 and s[1] == labels) or (labels == 1 and len(s) == 1)  # noqa: E731
    if preds.dtype not in chk.SCORE_DTYPES + chk.LABEL_DTYPES:
        chk.fail("preds", preds, expected, False)
    if not ok(tuple(preds.shape)):
        chk.fail("preds", preds, expected, True)
    chk.same_device("preds", preds, out)
    return preds


def _greater(preds: Tensor, value: float) -> Tensor:
    """preds > value on the exact values, with no float64 unless preds is float64 (MPS has none).

    For a float32 p and any real v: p > v  <=>  p > (the largest float32 <= v).
    """
    if preds.dtype == torch.float64:
        return preds > value
    below = torch.tensor(value, dtype=torch.float32)
    if float(below) > value:
        below = torch.nextafter(below, torch.tensor(-math.inf))
    return preds.float() > float(below)


def _all_probabilities(preds: Tensor) -> bool:
    """Every element of float preds in [0, 1] (empty: True); a NaN or one outside -> False (logits)."""
    return bool(((preds >= 0) & (preds <= 1)).all())


def confmat_threshold(out, preds, target, mask, ignore_index, threshold, logit_threshold=None, /) -> None:
    """out[l, target, prediction] += 1 per kept element; prediction = preds > threshold (float preds).

    With a float `logit_threshold`, float preds are compared against it instead when any element
    of preds (masked and ignored ones included) lies outside [0, 1] or is NaN: a batch of logits.
    """
    chk.no_meta(("preds", preds), ("target", target), ("mask", mask))
    out = _threshold_out(out)
    preds = _threshold_preds(preds, out)
    shape = tuple(preds.shape)
    expected = f"an integer or bool label tensor of shape {list(shape)} (as preds)"
    target = chk.labels("target", target, out, expected, lambda s: s == shape).long()
    keep = chk.keep_elements(chk.mask(mask, shape[0], out), target, chk.index_value("ignore_index", ignore_index))
    chk.label_range("target", target, keep, 2)
    value = chk.float_value("threshold", threshold)
    if logit_threshold is not None:
        if not isinstance(logit_threshold, (float, int)) or isinstance(logit_threshold, bool):
            raise TypeError(f"logit_threshold: expected a float or None, got {type(logit_threshold).__name__}")
        logit_value = chk.float_value("logit_threshold", logit_threshold)
        if preds.is_floating_point() and not _all_probabilities(preds):
            value = logit_value
    if preds.is_floating_point():
        chk.no_nan("preds", preds)
        predicted = _greater(preds, value).long()
    else:
        predicted = preds.long()
        chk.label_range("preds", predicted, keep, 2)
    if preds.dim() == 1:
        predicted, target = predicted[:, None], target[:, None]
        keep = None if keep is None else keep[:, None]
    column = torch.arange(predicted.shape[1], device=out.device) * 4
    index = column + target * 2 + predicted
    _add_counts(out, index[keep] if keep is not None else index.reshape(-1))
