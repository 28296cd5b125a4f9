"""Checked probability batches for the metrics that read scores as numbers: hinge loss,
calibration error and the multilabel ranking metrics.

Inputs are read as torchmetrics 1.9 reads them for these metrics:

* binary: preds (floating) and target of one shape [N, ...], flattened; samples whose target is
  ``ignore_index`` are dropped first;
* multiclass: preds [N, C, ...] (floating) and target [N, ...] class ids, extra dims folded into
  samples, ignored samples dropped;
* multilabel: preds and target [N, L, ...], extra dims folded into samples; an ignored element
  is kept and marked IGNORED (2) in the returned labels.

A batch whose (kept) scores all lie in [0, 1] is taken as probabilities; otherwise sigmoid
(binary, multilabel) or softmax over dim 1 (multiclass) is applied to the whole batch. The
returned preds are detached, in their own floating dtype. Targets: integer or bool labels, or
floating ones holding 0/1 (binary, multilabel; or ignore_index). Every check runs before any
state changes: wrong types (TypeError), shapes, devices, labels out of range, NaN scores, and
logits whose softmax is undefined (ValueError), each naming the argument.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

IGNORED = 2  # the multilabel label of an ignored element
SCORE_DTYPES = frozenset((torch.float16, torch.bfloat16, torch.float32, torch.float64))
LABEL_DTYPES = frozenset((torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64))


def _describe(t: Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')} {list(t.shape)}"


def _check(preds: object, target: object, device: Optional[torch.device], multiclass: bool) -> Tuple[Tensor, Tensor]:
    """Types, dtypes and devices; -> (preds detached, target as integer labels)."""
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    assert isinstance(preds, Tensor) and isinstance(target, Tensor)
    if preds.dtype not in SCORE_DTYPES:
        raise TypeError(f"preds: expected floating probabilities or logits, got {_describe(preds)}")
    for name, t in (("preds", preds), ("target", target)):
        if t.is_meta:
            raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor {_describe(t)}")
        if device is not None and t.device != device:
            raise ValueError(f"{name}: expected a tensor on {device} (the device of the metric state), got {t.device}")
    if target.dtype in LABEL_DTYPES:
        return preds.detach(), target
    if target.dtype not in SCORE_DTYPES or multiclass:
        wanted = "integer class ids" if multiclass else "integer, bool or float 0/1 labels"
        raise TypeError(f"target: expected a tensor of {wanted}, got {_describe(target)}")
    labels = target.long()
    inexact = labels != target  # 0.5, NaN, inf
    if bool(inexact.any()):
        i = int(inexact.reshape(-1).nonzero()[0, 0])
        raise ValueError(f"target: expected 0 or 1 (a float target holds labels), got {target.reshape(-1)[i].item()}")
    return preds.detach(), labels


def _check_range(target: Tensor, hi: int, keep: Optional[Tensor]) -> None:
    if target.numel() == 0 or target.dtype == torch.bool:
        return
    if keep is None:  # every label read: its least and largest, one pass, settle the common case
        least, largest = (int(v) for v in torch.aminmax(target))
        if least >= 0 and largest < hi:
            return
    bad = (target < 0) | (target >= hi)
    if keep is not None:
        bad &= keep
    if bool(bad.any()):
        i = int(bad.reshape(-1).nonzero()[0, 0])
        raise ValueError(f"target: label {int(target.reshape(-1)[i])} at element {i} is out of range [0, {hi})")


def _probabilities(preds: Tensor, softmax: bool) -> Tensor:
    """NaN raises; a batch outside [0, 1] gets sigmoid (or softmax over dim 1)."""
    if preds.numel() == 0:
        return preds
    lo, hi = (float(v) for v in torch.aminmax(preds))
    if lo != lo:
        raise ValueError("preds: expected no NaN score, got NaN")
    if lo >= 0 and hi <= 1:
        return preds
    if not softmax:
        return preds.sigmoid()
    probabilities = preds.softmax(dim=1)
    bad = torch.isnan(probabilities).any(1)
    if bool(bad.any()):
        raise ValueError(
            f"preds: the softmax of sample {int(bad.nonzero()[0, 0])} is undefined (a logit of +inf, or every "
            "logit -inf); pass probabilities or finite logits"
        )
    return probabilities


def _no_nan(preds: Tensor) -> None:
    if preds.numel() and bool(torch.isnan(preds).any()):
        raise ValueError("preds: expected no NaN score, got NaN")


def binary_scores(
    preds: object, target: object, ignore_index: Optional[int], device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """-> (probabilities [N], int64 labels 0/1 [N]) of the kept samples."""
    p, t = _check(preds, target, device, multiclass=False)
    if p.shape != t.shape:
        raise ValueError(f"target: expected the shape of preds {list(p.shape)}, got {_describe(t)}")
    p, t = p.reshape(-1), t.reshape(-1)
    if ignore_index is not None:  # (without, _probabilities' min and max find a NaN in the same scores)
        _no_nan(p)
    keep = None if ignore_index is None else t != ignore_index
    _check_range(t, 2, keep)
    if keep is not None:
        p, t = p[keep], t[keep]
    return _probabilities(p, softmax=False), t.long()


def multiclass_scores(
    preds: object, target: object, num_classes: int, ignore_index: Optional[int], device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """-> (probabilities [N, C], int64 class ids [N]) of the kept samples."""
    p, t = _check(preds, target, device, multiclass=True)
    if p.dim() < 2 or p.shape[1] != num_classes:
        raise ValueError(f"preds: expected scores [N, C, ...] with C = num_classes = {num_classes}, got {_describe(p)}")
    want = p.shape[:1] + p.shape[2:]
    if t.shape != want:
        raise ValueError(f"target: expected shape {list(want)} (preds without its class dim 1), got {_describe(t)}")
    if p.dim() > 2:
        p = p.movedim(1, -1).reshape(-1, num_classes)
    t = t.reshape(-1)
    if ignore_index is not None:  # (without, _probabilities' min and max find a NaN in the same scores)
        _no_nan(p)
    keep = None if ignore_index is None else t != ignore_index
    _check_range(t, num_classes, keep)
    if keep is not None:
        p, t = p[keep], t[keep]
    return _probabilities(p, softmax=True), t.long()


def multilabel_scores(
    preds: object, target: object, num_labels: int, ignore_index: Optional[int], device: Optional[torch.device] = None
) -> Tuple[Tensor, Tensor]:
    """-> (probabilities [N, L], int64 labels [N, L]: 0, 1, or IGNORED where target is ignore_index)."""
    p, t = _check(preds, target, device, multiclass=False)
    if p.dim() < 2 or p.shape[1] != num_labels:
        raise ValueError(f"preds: expected shape [N, L, ...] with L = num_labels = {num_labels}, got {_describe(p)}")
    if t.shape != p.shape:
        raise ValueError(f"target: expected the shape of preds {list(p.shape)}, got {_describe(t)}")
    if p.dim() > 2:
        p = p.movedim(1, -1).reshape(-1, num_labels)
        t = t.movedim(1, -1).reshape(-1, num_labels)
    keep = None if ignore_index is None else t != ignore_index
    _check_range(t, 2, keep)
    labels = t.long()
    if keep is not None:
        labels = labels.masked_fill(~keep, IGNORED)
    return _probabilities(p, softmax=False), labels
