"""``theils_u`` and ``theils_u_matrix`` (torchmetrics.functional.nominal.theils_u's names):
Theil's uncertainty coefficient of two nominal series, or of every ordered pair of columns of a
matrix."""

import torch
from torch import Tensor

from .utils import as_result, matrix_tables, pair_table, theils_u_of

__all__ = ["theils_u", "theils_u_matrix"]


def theils_u(preds: Tensor, target: Tensor, nan_strategy: str = "replace", nan_replace_value: float = 0.0) -> Tensor:
    """Theil's U(preds | target) = (H(preds) - H(preds | target)) / H(preds): the share of the
    entropy of preds that target explains. Asymmetric, in [0, 1]; 0 where preds is constant.
    preds and target: [N] categories or [N, C] scores; categories are the values that occur.

    >>> theils_u(torch.tensor([0, 1, 2, 2, 1, 0]), torch.tensor([0, 1, 2, 2, 0, 0]))
    tensor(0.7103)
    """
    return as_result(theils_u_of(pair_table(preds, target, nan_strategy, nan_replace_value)))


def theils_u_matrix(matrix: Tensor, nan_strategy: str = "replace", nan_replace_value: float = 0.0) -> Tensor:
    """Theil's U of every ordered pair of columns of ``matrix`` [N, F]: entry [i, j] is
    U(column i | column j), ones on the diagonal.

    >>> m = torch.tensor([[0, 0, 1], [1, 1, 0], [2, 2, 1], [2, 2, 0], [1, 0, 1], [0, 0, 0]])
    >>> theils_u_matrix(m)
    tensor([[1.0000, 0.7103, 0.0000],
            [0.7716, 1.0000, 0.1422],
            [0.0000, 0.2075, 1.0000]])
    """
    count, tables = matrix_tables(matrix, nan_strategy, nan_replace_value)
    out = torch.ones(count, count, dtype=torch.get_default_dtype(), device=matrix.device)
    for i, j, table in tables:
        out[i, j] = as_result(theils_u_of(table))
        out[j, i] = as_result(theils_u_of(table.T))
    return out
