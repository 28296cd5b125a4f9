"""Multilabel ranking metrics: the per-batch sums and the functional forms.

State (shared by the three metrics): float64 sums over samples of (coverage, ranking average
precision, ranking loss) and an int64 sample count, filled by the ranking kernel (csrc/API.md,
where the per-sample definitions are: scikit-learn's coverage_error,
label_ranking_average_precision_score and label_ranking_loss, ties as scikit-learn counts
them). A result is its sum over the count. Inputs: preds and target [N, L, ...] (extra dims
folded into samples), probabilities or logits (sigmoid when the batch is outside [0, 1]).

With ``ignore_index``, an ignored label is scored as torchmetrics scores it: ranked below every
other label, not relevant for ranking average precision and ranking loss (but counted among the
labels), and a label to cover for coverage error.
"""

from typing import Optional

import torch
from torch import Tensor

from ... import kernels
from . import score_inputs
from .update import check_count, check_ignore_index

__all__ = ["multilabel_coverage_error", "multilabel_ranking_average_precision", "multilabel_ranking_loss"]

COVERAGE, AVERAGE_PRECISION, LOSS = 0, 1, 2  # the columns of the sums state


def ranking_update(sums: Tensor, preds: object, target: object, num_labels: int, ignore_index: Optional[int]) -> int:
    """Add one batch to `sums` (float64 [3], unchanged on error); returns its number of samples."""
    p, t = score_inputs.multilabel_scores(preds, target, num_labels, ignore_index, sums.device)
    kernels.ranking_update(sums, p, t)
    return int(p.shape[0])


def ranking_result(sums: Tensor, count: Tensor, column: int, dtype: torch.dtype) -> Tensor:
    """sums[column] / count in `dtype` (NaN over no samples)."""
    return (sums[column] / count).to(dtype)


def _form(preds: Tensor, target: Tensor, num_labels: int, ignore_index: Optional[int], column: int) -> Tensor:
    num_labels = check_count("num_labels", num_labels)
    sums = torch.zeros(3, dtype=torch.float64, device=preds.device if isinstance(preds, Tensor) else None)
    n = ranking_update(sums, preds, target, num_labels, check_ignore_index(ignore_index))
    return ranking_result(sums, torch.tensor(n), column, torch.float32)


def multilabel_coverage_error(
    preds: Tensor, target: Tensor, num_labels: int, ignore_index: Optional[int] = None, validate_args: bool = True
) -> Tensor:
    """How far down the ranked labels one must go, on average, to cover every relevant label (float32).

    >>> import torch
    >>> multilabel_coverage_error(torch.tensor([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]),
    ...                           torch.tensor([[1, 0, 0], [0, 0, 1]]), num_labels=3)
    tensor(2.5000)
    """
    return _form(preds, target, num_labels, ignore_index, COVERAGE)


def multilabel_ranking_average_precision(
    preds: Tensor, target: Tensor, num_labels: int, ignore_index: Optional[int] = None, validate_args: bool = True
) -> Tensor:
    """Label ranking average precision (float32; 1 is best).

    >>> import torch
    >>> multilabel_ranking_average_precision(torch.tensor([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]),
    ...                                      torch.tensor([[1, 0, 0], [0, 0, 1]]), num_labels=3)
    tensor(0.4167)
    """
    return _form(preds, target, num_labels, ignore_index, AVERAGE_PRECISION)


def multilabel_ranking_loss(
    preds: Tensor, target: Tensor, num_labels: int, ignore_index: Optional[int] = None, validate_args: bool = True
) -> Tensor:
    """Label ranking loss: the share of (relevant, irrelevant) label pairs ranked wrongly, a tie
    counting as wrong (float32; 0 is best).

    >>> import torch
    >>> multilabel_ranking_loss(torch.tensor([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]),
    ...                         torch.tensor([[1, 0, 0], [0, 0, 1]]), num_labels=3)
    tensor(0.7500)
    """
    return _form(preds, target, num_labels, ignore_index, LOSS)
