"""``pearsons_contingency_coefficient`` and ``pearsons_contingency_coefficient_matrix``
(torchmetrics.functional.nominal.pearson's names): Pearson's contingency coefficient of two
nominal series, or of every pair of columns of a matrix."""

import torch
from torch import Tensor

from .utils import as_result, matrix_tables, pair_table, pearsons_contingency_of

__all__ = ["pearsons_contingency_coefficient", "pearsons_contingency_coefficient_matrix"]


def pearsons_contingency_coefficient(
    preds: Tensor, target: Tensor, nan_strategy: str = "replace", nan_replace_value: float = 0.0
) -> Tensor:
    """Pearson's contingency coefficient sqrt(phi^2 / (1 + phi^2)), phi^2 = chi^2 / n, of the
    contingency table of preds and target ([N] categories or [N, C] scores). Symmetric, in
    [0, 1); categories are the distinct values that occur.

    >>> pearsons_contingency_coefficient(torch.tensor([0, 1, 2, 2, 1, 0]), torch.tensor([0, 1, 2, 2, 0, 0]))
    tensor(0.7559)
    """
    return as_result(pearsons_contingency_of(pair_table(preds, target, nan_strategy, nan_replace_value)))


def pearsons_contingency_coefficient_matrix(
    matrix: Tensor, nan_strategy: str = "replace", nan_replace_value: float = 0.0
) -> Tensor:
    """The coefficient of every pair of columns of ``matrix`` [N, F] (samples x nominal
    variables): an [F, F] symmetric matrix with ones on its diagonal.

    >>> m = torch.tensor([[0, 0, 1], [1, 1, 0], [2, 2, 1], [2, 2, 0], [1, 0, 1], [0, 0, 0]])
    >>> pearsons_contingency_coefficient_matrix(m)
    tensor([[1.0000, 0.7559, 0.0000],
            [0.7559, 1.0000, 0.4264],
            [0.0000, 0.4264, 1.0000]])
    """
    count, tables = matrix_tables(matrix, nan_strategy, nan_replace_value)
    out = torch.ones(count, count, dtype=torch.get_default_dtype(), device=matrix.device)
    for i, j, table in tables:
        out[i, j] = out[j, i] = as_result(pearsons_contingency_of(table))
    return out
