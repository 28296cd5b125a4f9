"""Torch reference of the curve_rows kernel (csrc/API_CURVES.md).

One batch of an exact curve update stored as it is: preds (any floating dtype) as float32 rows,
labels compacted (binary, multiclass: rows where target == ignore_index dropped; multilabel: 2
there). Declined (size -1, nothing else written) when a score is NaN, a counted label is out of
range, ``convert`` and a counted score lies outside [0, 1] (multilabel: any score), or
ignore_index lies outside the target dtype's range. Every check runs before an output is written.
"""

import torch

from . import checks as chk

TASKS = (0, 1, 2)


def _in_range(value: int, dtype: torch.dtype) -> bool:
    if dtype == torch.bool:
        return value in (0, 1)
    info = torch.iinfo(dtype)
    return info.min <= value <= info.max


def _check(scores, labels, size, preds, target, task):
    if isinstance(task, bool) or not isinstance(task, int) or task not in TASKS:
        raise ValueError(f"task: expected 0 (binary), 1 (multiclass) or 2 (multilabel), got {task!r}")
    chk.no_meta(("preds", preds), ("target", target))
    scores = chk.tensor("scores", scores)
    dims, label_dims = (1 if task == 0 else 2), (2 if task == 2 else 1)
    preds = chk.scores("preds", preds, scores, f"a {dims}-D tensor of scores", lambda s: len(s) == dims)
    target = chk.labels("target", target, scores, f"a {label_dims}-D tensor of labels", lambda s: len(s) == label_dims)
    if target.shape[0] != preds.shape[0] or (label_dims == 2 and target.shape[1] != preds.shape[1]):
        raise ValueError(f"target: expected the rows of preds {chk.describe(preds)}, got {chk.describe(target)}")
    shape = tuple(preds.shape)
    scores = chk.output("scores", scores, torch.float32, f"float32 {list(shape)}", (dims,))
    if tuple(scores.shape) != shape:
        chk.fail("scores", scores, f"float32 {list(shape)}", True)
    labels = chk.tensor("labels", labels)
    want = labels.dtype if task == 1 else torch.uint8
    if task == 1 and (want not in chk.LABEL_DTYPES or want == torch.bool or not _in_range(shape[1] - 1, want)):
        raise TypeError(f"labels: expected an integer dtype that holds {shape[1] - 1}, got {chk.describe(labels)}")
    labels = chk.output("labels", labels, want, f"{want} {list(target.shape)}", (label_dims,))
    if labels.shape != target.shape:
        chk.fail("labels", labels, f"{want} {list(target.shape)}", True)
    size = chk.output("size", size, torch.int64, "int64 [1]", (1,))
    if size.numel() != 1:
        chk.fail("size", size, "int64 [1]", True)
    return scores, labels, size, preds, target


def curve_rows(scores, labels, size, preds, target, task, ignore_index, convert, /) -> None:
    scores, labels, size, preds, target = _check(scores, labels, size, preds, target, task)
    if ignore_index is not None and not _in_range(ignore_index, target.dtype):
        size.fill_(-1)
        return
    t = target.to(torch.int64)
    keep = torch.ones_like(t, dtype=torch.bool) if ignore_index is None else t != ignore_index
    hi = preds.shape[1] if task == 1 else 2
    values = preds.double()
    if task == 2:  # multilabel: every element decides, binary and multiclass the kept rows
        counted = torch.ones_like(values, dtype=torch.bool)
    else:
        counted = keep if task == 0 else keep[:, None].expand_as(values)
    outside = ~((values >= 0) & (values <= 1)) & counted
    declined = (
        bool(torch.isnan(values).any())
        or bool((keep & ((t < 0) | (t >= hi))).any())
        or (bool(convert) and bool(outside.any()))
    )
    if declined:
        size.fill_(-1)
        return
    if task == 2:
        m = preds.shape[0]
        scores.copy_(preds.to(torch.float32))
        labels.copy_(torch.where(keep, t, torch.full_like(t, 2)).to(torch.uint8))
    else:
        m = int(keep.sum())
        scores[:m] = preds[keep].to(torch.float32)
        labels[:m] = t[keep].to(labels.dtype)
    size.fill_(m)
