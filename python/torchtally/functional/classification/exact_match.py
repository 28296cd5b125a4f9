"""Exact match (subset accuracy): the share of samples whose every element is predicted right.

Counts, int64, as the metric classes keep them (torchtally.classification's
MulticlassExactMatch / MultilabelExactMatch) and the functions here form them from one batch:

* global: ``[matched, samples]``, a "sum" state;
* samplewise: one row ``[matched, positions]`` per sample, a "cat" state of 16 bytes per sample.

What a "sample" is follows torchmetrics 1.9:

* multiclass, preds [N, ...] labels or [N, C, ...] scores (argmax over dim 1, first index on
  ties), target [N, ...]: sample n matches when every one of its positions does (a 1-D batch:
  every position is a sample). Samplewise: a row is (1 or 0, 1).
* multilabel, preds and target [N, L, ...]: every position m of sample n is a row of L labels,
  and it matches when all L do. Global: every (n, m) row counts as one sample (N * M of them);
  samplewise: sample n's row is (its matching rows, M).

An element whose target is ``ignore_index`` counts as matched. Inputs are checked by the
confusion-matrix kernels (labels in range, 0/1 targets, NaN scores, dtypes and devices; the
probabilities-or-logits decision taken over the whole batch), so a batch is refused as the
other classification metrics refuse it. Multilabel rows are counted by that kernel with one
column per row (32 bytes of scratch per row); multiclass matches are read off the predicted labels.
"""

import math
from typing import Optional

import torch
from torch import Tensor

from ... import kernels
from ..tasks import check_task, check_task_count
from . import update

__all__ = ["multiclass_exact_match", "multilabel_exact_match", "exact_match"]


def _samples_of(target: Tensor, samplewise: bool, least: int, layout: str) -> int:
    if target.dim() < least:
        what = "a sample dim N and the dims each sample is matched over" if samplewise else "a sample dim N"
        raise ValueError(f"target: exact match needs {layout} ({what}), got {list(target.shape)}")
    return int(target.shape[0])


def multiclass_match_counts(
    preds: object, target: object, num_classes: int, ignore_index: Optional[int], samplewise: bool
) -> Tensor:
    """[matched, samples] (global) or per sample [N, 2] (samplewise) of one multiclass batch."""
    if isinstance(target, Tensor):
        _samples_of(target, samplewise, 2 if samplewise else 1, "target [N, ...]" if samplewise else "target [N]")
    device = target.device if isinstance(target, Tensor) else torch.device("cpu")
    scratch = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=device)
    update.multiclass_update(scratch, preds, target, ignore_index)  # every check, on the whole batch
    kernels.settled(scratch)
    assert isinstance(preds, Tensor) and isinstance(target, Tensor)  # checked by the update
    if not samplewise and target.dim() == 1:
        # one label per sample: the matches are the confusion matrix's diagonal, and a sample with
        # ignore_index (which the matrix leaves out) counts as matched
        n = target.shape[0]
        hits = scratch.diagonal().sum() + (n - scratch.sum())
        return torch.stack([hits, torch.full_like(hits, n)])
    flat_preds, flat_target = update.multiclass_inputs(preds, target, num_classes)
    labels = flat_preds.argmax(1) if flat_preds.dim() == 2 else flat_preds.long()
    t = flat_target.long()
    matched = labels == t
    if ignore_index is not None:
        matched |= t == ignore_index
    n = target.shape[0]
    per_sample = matched.reshape(n, math.prod(target.shape[1:])).all(1)
    if samplewise:
        return torch.stack([per_sample.long(), torch.ones_like(per_sample, dtype=torch.int64)], 1)
    return torch.stack([per_sample.sum(), torch.tensor(n, device=device)]).long()


def multilabel_match_counts(
    preds: object, target: object, num_labels: int, threshold: float, ignore_index: Optional[int], samplewise: bool
) -> Tensor:
    """[matched rows, rows] (global) or per sample [N, 2] = (matched positions, positions)."""
    if samplewise and isinstance(preds, Tensor):
        if preds.dim() < 3:
            raise ValueError(
                f"preds: multidim_average='samplewise' needs preds and target [N, L, ...] (at least 3 dims: a "
                f"sample dim N, the labels and the dims each sample is matched over), got {list(preds.shape)}"
            )
    rows_p, rows_t = update.multilabel_inputs(preds, target, num_labels, ignore_index)  # [R, L] each
    assert isinstance(preds, Tensor)
    rows = rows_p.shape[0]
    out = torch.zeros(rows, 2, 2, dtype=torch.int64, device=preds.device)  # per row: [target, prediction]
    kernels.confmat_threshold(
        out, rows_p.t(), rows_t.t(), None, ignore_index, threshold, update.logit_threshold(threshold)
    )
    kernels.settled(out)
    matched = (out[:, 0, 1] + out[:, 1, 0]) == 0  # no wrong label in the row
    if samplewise:
        n = preds.shape[0]
        per = math.prod(preds.shape[2:])
        hits = matched.reshape(n, per).sum(1)
        return torch.stack([hits, torch.full_like(hits, per)], 1)
    return torch.stack([matched.sum(), torch.tensor(rows, device=preds.device)]).long()


def match_ratio(counts: Tensor) -> Tensor:
    """matched / total (float32; 0 where total is 0) of counts [..., 2]."""
    matched, total = counts[..., 0].double(), counts[..., 1].double()
    return torch.where(total != 0, matched / total.clamp(min=1), 0.0).to(torch.float32)


def multiclass_exact_match(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    num_classes = update.check_num_classes(num_classes)
    samplewise = update.check_multidim_average(multidim_average) == "samplewise"
    ignore_index = update.check_ignore_index(ignore_index)
    return match_ratio(multiclass_match_counts(preds, target, num_classes, ignore_index, samplewise))


def multilabel_exact_match(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    num_labels = update.check_count("num_labels", num_labels)
    threshold = update.check_threshold(threshold)
    samplewise = update.check_multidim_average(multidim_average) == "samplewise"
    ignore_index = update.check_ignore_index(ignore_index)
    return match_ratio(multilabel_match_counts(preds, target, num_labels, threshold, ignore_index, samplewise))


def exact_match(
    preds: Tensor,
    target: Tensor,
    task: str,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    """The task's exact match (``task``: "multiclass" or "multilabel")."""
    task = check_task(task, ("multiclass", "multilabel"))
    if task == "multiclass":
        classes = check_task_count("num_classes", num_classes, task)
        return multiclass_exact_match(preds, target, classes, multidim_average, ignore_index, validate_args)
    labels = check_task_count("num_labels", num_labels, task)
    return multilabel_exact_match(preds, target, labels, threshold, multidim_average, ignore_index, validate_args)
