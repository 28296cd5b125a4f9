"""Group fairness of binary predictions: per-group counts and the rates and ratios read from them.

The state (torchtally.classification's BinaryGroupStatRates and BinaryFairness keep it, and the
functions here form it from one batch) is ``group_stats`` int64 [G, 4] = (tp, fp, tn, fn) per
group, a "sum" state. ``groups`` holds one group id per sample, in [0, G): shape [N] (or [N, 1]),
N = preds.shape[0]; a sample's extra dims (preds and target [N, ...]) all count for its group.
Preds and target are read as by the binary stat-score metrics (probabilities or logits decided
over the whole batch, 0/1 labels, float 0/1 targets, ``ignore_index`` per element), checked by
the same kernel (one per-sample confusion matrix, then summed per group).

Results, as torchmetrics 1.9 names them:

* ``group_stat_rates``: ``{"group_<g>": [tp, fp, tn, fn] / (their sum)}`` (float32; NaN for a
  group without counted elements);
* demographic parity: ``{"DP_<lo>_<hi>": PR_lo / PR_hi}`` with PR = (tp + fp) / all of the
  group, lo / hi the groups of lowest / highest rate (the first on ties);
* equal opportunity: ``{"EO_<lo>_<hi>": TPR_lo / TPR_hi}`` with TPR = tp / (tp + fn);

a rate or a ratio with a zero denominator is 0 (torchmetrics' rule). Rates are divided in float64
and the ratio rounded once to float32 (torchmetrics divides in float32: the same value, but for
two rates closer than float32 resolution, whose order can then differ).

The functional forms take the groups present in the batch, keyed by their ids.
"""

import warnings
from typing import Dict, List, Optional

import torch
from torch import Tensor

from . import update

__all__ = ["binary_fairness", "binary_groups_stat_rates", "demographic_parity", "equal_opportunity"]

TASKS = ("demographic_parity", "equal_opportunity", "all")
_GROUP_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def check_num_groups(num_groups: object) -> int:
    if not isinstance(num_groups, int) or isinstance(num_groups, bool) or num_groups < 1:
        raise ValueError(f"num_groups: expected an int >= 1, got {num_groups!r}")
    return num_groups


def check_fairness_task(task: object) -> str:
    if task not in TASKS:
        raise ValueError(f"task: expected 'demographic_parity', 'equal_opportunity' or 'all', got {task!r}")
    return task


def check_groups(groups: object, preds: Tensor, num_groups: Optional[int]) -> Tensor:
    """groups: integer ids [N] (or [N, 1]) in [0, num_groups) (>= 0 when num_groups is None) on
    preds' device -> int64 [N]."""
    if not isinstance(groups, Tensor):
        raise TypeError(f"groups: expected a torch.Tensor, got {type(groups).__name__}")
    if groups.dtype not in _GROUP_DTYPES:
        raise TypeError(
            f"groups: expected integer group ids (int8-int64, uint8), got {str(groups.dtype).replace('torch.', '')}"
        )
    if groups.is_meta:
        raise ValueError("groups: a meta tensor holds no group ids")
    n = preds.shape[0] if preds.dim() else 1
    if groups.dim() == 0 or groups.shape[0] != n or groups.numel() != n:
        raise ValueError(f"groups: expected one group id per sample, shape [{n}], got {list(groups.shape)}")
    if groups.device != preds.device:
        raise ValueError(f"groups: expected a tensor on preds' device {preds.device}, got {groups.device}")
    ids = groups.reshape(n).long()
    if n:
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or (num_groups is not None and high >= num_groups):
            bound = f"[0, num_groups = {num_groups})" if num_groups is not None else ">= 0"
            raise ValueError(f"groups: expected group ids in {bound}, got {low if low < 0 else high}")
    return ids


def group_counts(
    preds: object, target: object, groups: object, num_groups: int, threshold: float, ignore_index: Optional[int]
) -> Tensor:
    """[num_groups, 4] int64 = (tp, fp, tn, fn) per group of one batch; ``target`` None: all 0
    (demographic parity reads predictions only)."""
    if not isinstance(preds, Tensor):
        raise TypeError(f"preds: expected a torch.Tensor, got {type(preds).__name__}")
    if target is None:
        target = torch.zeros(preds.shape, dtype=torch.int64, device=preds.device)
    if not isinstance(target, Tensor):
        raise TypeError(f"target: expected a torch.Tensor, got {type(target).__name__}")
    if preds.dim() == 0:
        raise ValueError("preds: expected a sample dim, [N, ...], got a 0-d tensor")
    ids = check_groups(groups, preds, num_groups)
    n = preds.shape[0]
    if target.shape != preds.shape:
        raise ValueError(f"target: expected the shape of preds {list(preds.shape)}, got {list(target.shape)}")
    per = preds[0].numel() if n else 0
    rows = update.binary_sample_confmats(
        preds.reshape(n, per), target.reshape(n, per), threshold, ignore_index
    )  # [N, 2, 2]: every check of the binary metrics
    summed = torch.zeros(num_groups, 2, 2, dtype=torch.int64, device=preds.device).index_add_(0, ids, rows)
    flat = summed.reshape(num_groups, 4)  # (tn, fp, fn, tp)
    return flat[:, [3, 1, 0, 2]].contiguous()


def _ratio(num: Tensor, den: Tensor) -> Tensor:
    num, den = num.double(), den.double()
    return torch.where(den != 0, num / torch.where(den != 0, den, 1.0), 0.0)


def group_stat_rates(counts: Tensor, ids: Optional[List[int]] = None) -> Dict[str, Tensor]:
    """{"group_<id>": (tp, fp, tn, fn) / their sum} (float32) of counts [G, 4]; ``ids``: the
    group ids of the rows (default 0 .. G - 1)."""
    ids = list(range(counts.shape[0])) if ids is None else ids
    values = counts.double()
    shares = (values / values.sum(1, keepdim=True)).to(torch.float32)
    return {f"group_{g}": shares[i] for i, g in enumerate(ids)}


def _disparity(prefix: str, rates: Tensor, ids: List[int]) -> Dict[str, Tensor]:
    if not ids:
        raise ValueError("preds: an empty batch has no groups to compare")
    low, high = int(rates.argmin()), int(rates.argmax())  # the first on ties
    value = _ratio(rates[low], rates[high]).to(torch.float32)
    return {f"{prefix}_{ids[low]}_{ids[high]}": value}


def fairness(counts: Tensor, task: str, ids: Optional[List[int]] = None) -> Dict[str, Tensor]:
    """Demographic parity ("DP_..."), equal opportunity ("EO_...") or both ("all") of counts [G, 4]."""
    ids = list(range(counts.shape[0])) if ids is None else ids
    tp, fp, tn, fn = counts.unbind(1)
    out: Dict[str, Tensor] = {}
    if task in ("demographic_parity", "all"):
        out.update(_disparity("DP", _ratio(tp + fp, tp + fp + tn + fn), ids))
    if task in ("equal_opportunity", "all"):
        out.update(_disparity("EO", _ratio(tp, tp + fn), ids))
    return out


def warn_empty_groups(counts: Tensor, task: str, owner: str) -> None:
    """Say which groups give a rate of 0 for want of data (torchmetrics' rule, silent there)."""
    empty = (counts.sum(1) == 0).nonzero().flatten().tolist()
    if task in ("equal_opportunity", "all"):
        no_positives = ((counts[:, 0] + counts[:, 3]) == 0).nonzero().flatten().tolist()
        empty = sorted(set(empty) | set(no_positives))
    if empty:
        warnings.warn(
            f"{owner}: group(s) {empty} have no counted samples (or, for equal opportunity, no positive "
            "targets): their rate is taken as 0, which sets the reported ratio",
            UserWarning,
            stacklevel=3,
        )


def _present(groups: object, preds: object) -> List[int]:
    if isinstance(groups, Tensor) and isinstance(preds, Tensor) and groups.dtype in _GROUP_DTYPES:
        return check_groups(groups, preds, None).unique().tolist() if preds.dim() else []
    return []


def _counts_of_present(
    preds: Tensor, target: Optional[Tensor], groups: Tensor, threshold: float, ignore_index: Optional[int]
):
    threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    present = _present(groups, preds)
    size = (max(present) + 1) if present else 1
    counts = group_counts(preds, target, groups, size, threshold, ignore_index)
    return counts[present], present


def binary_groups_stat_rates(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    num_groups: int,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Dict[str, Tensor]:
    """(tp, fp, tn, fn) / their sum of each group present in the batch, keyed "group_<id>"."""
    num_groups = check_num_groups(num_groups)
    threshold, ignore_index = update.check_threshold(threshold), update.check_ignore_index(ignore_index)
    counts = group_counts(preds, target, groups, num_groups, threshold, ignore_index)
    present = _present(groups, preds)
    return group_stat_rates(counts[present], present)


def demographic_parity(
    preds: Tensor,
    groups: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Dict[str, Tensor]:
    """{"DP_<lo>_<hi>": lowest / highest positive rate} over the groups present in the batch."""
    counts, present = _counts_of_present(preds, None, groups, threshold, ignore_index)
    return fairness(counts, "demographic_parity", present)


def equal_opportunity(
    preds: Tensor,
    target: Tensor,
    groups: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Dict[str, Tensor]:
    """{"EO_<lo>_<hi>": lowest / highest true positive rate} over the groups present in the batch."""
    if target is None:
        raise TypeError("target: expected a torch.Tensor, got NoneType (equal opportunity needs the targets)")
    counts, present = _counts_of_present(preds, target, groups, threshold, ignore_index)
    return fairness(counts, "equal_opportunity", present)


def binary_fairness(
    preds: Tensor,
    target: Optional[Tensor],
    groups: Tensor,
    task: str = "all",
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Dict[str, Tensor]:
    """Demographic parity, equal opportunity or both ("all") over the groups present in the
    batch; "demographic_parity" reads no target (one given is ignored, with torchmetrics' warning)."""
    task = check_fairness_task(task)
    if task == "demographic_parity":
        if target is not None:
            warnings.warn("The task demographic_parity does not require a target.", UserWarning, stacklevel=2)
        target = None
    elif target is None:
        raise TypeError(f"target: expected a torch.Tensor, got NoneType (task {task!r} needs the targets)")
    counts, present = _counts_of_present(preds, target, groups, threshold, ignore_index)
    return fairness(counts, task, present)
