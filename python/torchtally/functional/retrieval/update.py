"""Retrieval: option and input checks, and the documents' rows a batch adds to the state.

A document is (query id int64, score float32, relevance): bool for the binary metrics, float32
for NDCG's graded relevance. Every check runs before any state is touched and raises a
ValueError naming the argument (torchmetrics raises ValueError for these too):

* preds: a floating tensor (scores are stored as float32, as torchmetrics reads them); NaN is
  refused (it would rank anywhere; torchmetrics lets it through);
* target: bool, integer or floating; 0 or 1 for the binary metrics, a finite relevance >= 0 for
  NDCG (torchmetrics takes negative relevances there, which make its ideal DCG meaningless);
* indexes: an integer tensor (not bool) of the shape of preds and target;
* ignore_index: documents whose target equals it are dropped first;
* an empty or 0-d batch is a ValueError, as in torchmetrics; a batch left with no document
  after ignore_index adds nothing (torchmetrics raises ValueError).

Each message names the argument first and then carries torchmetrics' own wording, so code (and
tests) matching torchmetrics' messages keep working.
"""

from typing import Any, Callable, Optional, Tuple, Union

import torch
from torch import Tensor

from ...kernels import retrieval as kernel
from ...kernels.reference.checks import describe

EMPTY_TARGET_ACTIONS = ("error", "skip", "neg", "pos")
AGGREGATIONS = ("mean", "median", "min", "max")
_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
_FLOAT = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

Aggregation = Union[str, Callable[..., Tensor]]


# -- options -------------------------------------------------------------------------------------


def check_empty_target_action(action: object) -> str:
    if action not in EMPTY_TARGET_ACTIONS:
        raise ValueError(
            f"empty_target_action: expected one of {EMPTY_TARGET_ACTIONS}, got {action!r} "
            f"(`empty_target_action` received a wrong value `{action}`.)"
        )
    return str(action)


def check_ignore_index(ignore_index: object) -> Optional[int]:
    if ignore_index is not None and (not isinstance(ignore_index, int) or isinstance(ignore_index, bool)):
        raise ValueError(
            f"ignore_index: expected an int or None, got {ignore_index!r} "
            "(Argument `ignore_index` must be an integer or None.)"
        )
    return ignore_index


def check_aggregation(aggregation: object) -> Aggregation:
    if not (aggregation in AGGREGATIONS or callable(aggregation)):
        raise ValueError(
            f"aggregation: expected one of {AGGREGATIONS} or a callable taking (values, dim=None), got {aggregation!r}"
        )
    return aggregation


def check_top_k(top_k: object, name: str = "top_k") -> Optional[int]:
    """None or a positive int (0: every document, for the kernel: ``top_k or 0``)."""
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k <= 0 or top_k >= 2**63):
        raise ValueError(
            f"{name}: expected a positive int or None, got {top_k!r} (`{name}` has to be a positive integer or None)"
        )
    return top_k


def check_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected a bool, got {value!r} (`{name}` has to be a boolean)")
    return value


def check_queries_complete(queries_complete: object, aggregation: Any) -> bool:
    check_flag(queries_complete, "queries_complete")
    if queries_complete and aggregation != "mean":
        raise ValueError(
            "queries_complete=True keeps only the sum of the per-query values, so it needs "
            f"aggregation='mean', got {aggregation!r} (use queries_complete=False for other aggregations)"
        )
    return bool(queries_complete)


# -- inputs --------------------------------------------------------------------------------------


def _tensor(name: str, t: object) -> Tensor:
    if not isinstance(t, Tensor):
        raise ValueError(f"{name}: expected a tensor, got {type(t).__name__}")
    if t.is_meta:
        raise ValueError(f"{name}: a meta tensor holds no values to score")
    return t


def check_scores_and_relevance(preds: object, target: object, graded: bool) -> Tuple[Tensor, Tensor]:
    """preds and target of one shape, flattened: scores (floating, no NaN) and relevances (bool,
    integer or floating; binary unless ``graded``, else finite and >= 0)."""
    preds, target = _tensor("preds", preds), _tensor("target", target)
    _check_kinds(preds, target)
    if target.shape != preds.shape:
        raise ValueError(
            f"target: expected the shape of preds {list(preds.shape)}, got {describe(target)} "
            "(`preds` and `target` must be of the same shape)"
        )
    preds, target = _flat(preds), _flat(target)
    _check_values(preds, target, graded)
    return preds, target


def _check_kinds(preds: Tensor, target: Tensor) -> None:
    if preds.dtype not in _FLOAT:
        raise ValueError(
            f"preds: expected a floating tensor of scores, got {describe(preds)} (`preds` must be a tensor of floats)"
        )
    if target.dtype not in _INTEGER + _FLOAT + (torch.bool,):
        raise ValueError(f"target: expected a bool, integer or floating tensor, got {describe(target)}")


def _flat(t: Tensor) -> Tensor:
    """``t`` as 1-D, outside any autograd graph (a detach only where one is needed: a
    microsecond of a small update each)."""
    t = t.detach() if t.requires_grad else t
    return t if t.dim() == 1 else t.reshape(-1)


def _check_values(preds: Tensor, target: Tensor, graded: bool) -> None:
    """No NaN score; a binary (or, ``graded``, finite >= 0) relevance. 1-D inputs of one length."""
    if bool(torch.isnan(preds).any()):
        raise ValueError(f"preds: NaN at document {int(torch.isnan(preds).nonzero()[0])} (a NaN score has no rank)")
    if target.dtype == torch.bool or target.numel() == 0:
        return
    if not target.is_floating_point():
        # an integer target is in range iff its extremes are: one pass, no mask
        lo, hi = torch.aminmax(target)
        if lo.item() >= 0 and (graded or hi.item() <= 1):
            return
    if graded:
        bad = ~(target >= 0) | (torch.isinf(target) if target.is_floating_point() else False)
        expected = "a finite relevance >= 0"
    else:
        bad = (target != 0) & (target != 1)
        expected = "0 or 1 (binary relevance: `target` must contain `binary` values)"
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        raise ValueError(f"target: expected {expected}, got {target[i].item()} at document {i}")


def document_rows(
    preds: object,
    target: object,
    indexes: object,
    ignore_index: Optional[int],
    graded: bool,
    device: Optional[torch.device] = None,
) -> Tuple[Tensor, Tensor, Tensor]:
    """The batch's documents as (query int64 [n], score float32 [n], relevance [n]: float32 when
    ``graded`` else bool), fresh tensors on ``device`` (default: the inputs')."""
    if indexes is None:
        raise ValueError("indexes: expected an integer tensor of query ids, got None (`indexes` cannot be None)")
    preds, target, indexes = _tensor("preds", preds), _tensor("target", target), _tensor("indexes", indexes)
    if indexes.dtype not in _INTEGER:
        raise ValueError(
            f"indexes: expected an integer tensor of query ids, got {describe(indexes)} "
            "(`indexes` must be a tensor of long integers)"
        )
    if indexes.shape != preds.shape:
        raise ValueError(
            f"indexes: expected the shape of preds {list(preds.shape)}, got {describe(indexes)} "
            "(`indexes`, `preds` and `target` must be of the same shape)"
        )
    if isinstance(target, Tensor) and target.shape != preds.shape:
        raise ValueError(
            f"target: expected the shape of preds {list(preds.shape)}, got {describe(target)} "
            "(`indexes`, `preds` and `target` must be of the same shape)"
        )
    if preds.dim() == 0 or preds.numel() == 0:
        raise ValueError(
            f"preds: expected at least one document, got {describe(preds)} "
            "(`indexes`, `preds` and `target` must be non-empty and non-scalar tensors)"
        )
    if isinstance(target, Tensor) and ignore_index is not None and target.shape == preds.shape:
        # integers compared as int64: a uint8 target against 256 must not wrap to 0
        wide = target if target.is_floating_point() else target.to(torch.int64)
        keep = (wide != ignore_index).reshape(-1)
        preds, target, indexes = preds.reshape(-1)[keep], target.reshape(-1)[keep], indexes.reshape(-1)[keep]
    _check_kinds(preds, target)
    scores, relevance, query = _flat(preds), _flat(target), _flat(indexes)
    n, at = scores.shape[0], scores.device
    if relevance.device != at or query.device != at:  # inputs split over devices: the scores' holds the rows
        relevance, query = relevance.to(at), query.to(at)
    rows = (
        torch.empty(n, dtype=torch.int64, device=at),
        torch.empty(n, dtype=torch.float32, device=at),
        torch.empty(n, dtype=torch.float32 if graded else torch.bool, device=at),
    )
    kernel.retrieval_rows(*rows, query, scores, relevance)  # the value checks, then the copies
    if device is None or device == at:
        return rows
    return rows[0].to(device), rows[1].to(device), rows[2].to(device)
