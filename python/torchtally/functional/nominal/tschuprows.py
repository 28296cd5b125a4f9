"""``tschuprows_t`` and ``tschuprows_t_matrix`` (torchmetrics.functional.nominal.tschuprows' names):
Tschuprow's T association of two nominal series, or of every pair of columns of a matrix."""

import torch
from torch import Tensor

from .utils import as_result, check_flag, matrix_tables, pair_table, tschuprows_t_of

__all__ = ["tschuprows_t", "tschuprows_t_matrix"]


def tschuprows_t(
    preds: Tensor,
    target: Tensor,
    bias_correction: bool = True,
    nan_strategy: str = "replace",
    nan_replace_value: float = 0.0,
) -> Tensor:
    """Tschuprow's T, sqrt(phi^2 / sqrt((r - 1)(c - 1))) with phi^2 = chi^2 / n, of the contingency
    table of preds and target ([N] categories or [N, C] scores); with ``bias_correction``,
    Bergsma's correction (and Yates' on a 2 x 2 table). Symmetric, in [0, 1].

    Categories are the distinct values that occur (any whole numbers). NaN with a warning where
    it is undefined (a single category on a side).

    >>> tschuprows_t(torch.tensor([0, 1, 2, 2, 1, 0, 2, 1]), torch.tensor([0, 1, 2, 2, 0, 0, 2, 1]))
    tensor(0.7817)
    """
    check_flag("bias_correction", bias_correction)
    return as_result(tschuprows_t_of(pair_table(preds, target, nan_strategy, nan_replace_value), bias_correction))


def tschuprows_t_matrix(
    matrix: Tensor, bias_correction: bool = True, nan_strategy: str = "replace", nan_replace_value: float = 0.0
) -> Tensor:
    """Tschuprow's T of every pair of columns of ``matrix`` [N, F] (samples x nominal variables):
    an [F, F] symmetric matrix with ones on its diagonal.

    >>> m = torch.tensor([[0, 0, 1], [1, 1, 0], [2, 2, 1], [2, 2, 0], [1, 0, 1], [0, 0, 0]])
    >>> tschuprows_t_matrix(m, bias_correction=False)
    tensor([[1.0000, 0.8165, 0.0000],
            [0.8165, 1.0000, 0.3964],
            [0.0000, 0.3964, 1.0000]])
    """
    check_flag("bias_correction", bias_correction)
    count, tables = matrix_tables(matrix, nan_strategy, nan_replace_value)
    out = torch.ones(count, count, dtype=torch.get_default_dtype(), device=matrix.device)
    for i, j, table in tables:
        out[i, j] = out[j, i] = as_result(tschuprows_t_of(table, bias_correction))
    return out
