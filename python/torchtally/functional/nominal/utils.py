"""The nominal family's shared parts (torchmetrics.functional.nominal.utils' place): option
checks, reading a pair of nominal series into int64 labels, and the statistics of a contingency
table.

The state of Cramer's V, Tschuprow's T, Pearson's contingency coefficient and Theil's U is one
int64 contingency table [C, C] (row = target's category, column = preds'), accumulated by the
confusion-matrix kernel; everything else is computed from it in float64 at compute, after the
empty rows and columns are dropped (so categories that never occur change nothing).

Inputs, as torchmetrics reads them: [N] category labels (integer, bool, or float holding whole
numbers; float NaN handled by ``nan_strategy``), or [N, C] scores whose argmax over dim 1 is the
category. Differences, on purpose: a float label that is not a whole number, an inf, a NaN in
[N, C] scores, preds and target of different lengths are ``ValueError`` (torchmetrics truncates,
picks the NaN, or broadcasts).
"""

import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...utilities.prints import rank_zero_warn

NAN_STRATEGIES = ("replace", "drop")
F64 = torch.float64


# -- options ----------------------------------------------------------------------------------


def check_nan_options(nan_strategy: object, nan_replace_value: object) -> Tuple[str, Optional[float]]:
    """``nan_strategy`` "replace" or "drop"; with "replace", ``nan_replace_value`` a finite whole
    number (the category a NaN becomes)."""
    if nan_strategy not in NAN_STRATEGIES:
        raise ValueError(f"nan_strategy: expected one of {list(NAN_STRATEGIES)}, got {nan_strategy!r}")
    if nan_strategy == "drop":
        return "drop", None if nan_replace_value is None else _replace_value(nan_replace_value)
    return "replace", _replace_value(nan_replace_value)


def _replace_value(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            "nan_replace_value: expected an int or float when nan_strategy='replace', "
            f"got {type(value).__name__} {value!r}"
        )
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"nan_replace_value: expected a whole number (a category), got {value!r}")
    return float(value)


def check_num_classes(num_classes: object) -> int:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"num_classes: expected an int >= 1, got {type(num_classes).__name__} {num_classes!r}")
    if num_classes < 1:
        raise ValueError(f"num_classes: expected an int >= 1, got {num_classes}")
    return num_classes


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__} {value!r}")
    return value


# -- inputs -----------------------------------------------------------------------------------


def _as_labels(name: str, x: object) -> Tensor:
    """[N] labels as they are, [N, C] scores -> their argmax; checks what applies to one side."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.is_complex() or x.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        raise TypeError(f"{name}: expected integer, bool or float categories, got {str(x.dtype).replace('torch.', '')}")
    if x.dim() == 2:
        if x.is_floating_point() and bool(torch.isnan(x).any()):
            raise ValueError(f"{name}: NaN in scores {list(x.shape)} (argmax of a NaN row is not a category)")
        return x.argmax(1) if x.shape[1] else torch.empty(0, dtype=torch.int64, device=x.device)
    if x.dim() != 1:
        raise ValueError(f"{name}: expected [N] categories or [N, C] scores, got shape {list(x.shape)}")
    return x


def _whole(name: str, x: Tensor) -> Tensor:
    if not x.is_floating_point():
        return x.to(torch.int64)
    bad = ~torch.isfinite(x) | (x != torch.trunc(x))
    if bool(bad.any()):
        at = int(bad.nonzero()[0, 0])
        raise ValueError(f"{name}: expected whole-number categories, got {x[at].item()!r} at index {at}")
    return x.to(torch.int64)


def paired_labels(
    preds: object, target: object, nan_strategy: str, nan_replace_value: Optional[float]
) -> Tuple[Tensor, Tensor]:
    """preds, target -> two int64 [N] label tensors (argmax of scores, NaN replaced or dropped)."""
    p, t = _as_labels("preds", preds), _as_labels("target", target)
    if p.shape[0] != t.shape[0]:
        raise ValueError(f"target: expected {p.shape[0]} samples (as preds), got {t.shape[0]}")
    if p.device != t.device:
        raise ValueError(f"target: expected a tensor on {p.device} (as preds), got one on {t.device}")
    if p.is_floating_point() or t.is_floating_point():
        p_nan = torch.isnan(p) if p.is_floating_point() else None
        t_nan = torch.isnan(t) if t.is_floating_point() else None
        if nan_strategy == "drop":
            nan = p_nan if t_nan is None else (t_nan if p_nan is None else p_nan | t_nan)
            assert nan is not None
            if bool(nan.any()):
                keep = ~nan
                p, t = p[keep], t[keep]
        else:
            assert nan_replace_value is not None
            if p_nan is not None:
                p = torch.where(p_nan, nan_replace_value, p)
            if t_nan is not None:
                t = torch.where(t_nan, nan_replace_value, t)
    return _whole("preds", p), _whole("target", t)


def table_update(confmat: Tensor, preds: Tensor, target: Tensor) -> None:
    """Add the (target, preds) pairs to ``confmat`` [C, C]; labels outside [0, C) raise
    ValueError and leave it unchanged (the kernel checks before it counts)."""
    if preds.numel():
        kernels.confmat_labels(confmat, preds, target)


def table_of(preds: Tensor, target: Tensor) -> Tensor:
    """The contingency table of two label series over the categories that occur (any integers,
    negative ones too), in sorted order of the categories: row = target, column = preds."""
    n = preds.shape[0]
    values, inverse = torch.unique(torch.cat([preds, target]), return_inverse=True)
    k = values.shape[0]
    confmat = torch.zeros(k, k, dtype=torch.int64, device=preds.device)
    if n:
        kernels.confmat_labels(confmat, inverse[:n], inverse[n:])
    return kernels.settled(confmat)


# -- statistics of a table --------------------------------------------------------------------


def occupied(confmat: Tensor) -> Tensor:
    """``confmat`` without its empty rows and columns, as float64."""
    table = confmat.to(F64)
    table = table[table.sum(1) != 0]
    return table[:, table.sum(0) != 0]


def chi_squared(table: Tensor, yates: bool) -> Tensor:
    """Pearson's chi-squared statistic of independence of a table with no empty row or column;
    ``yates``: with Yates' continuity correction where the table has one degree of freedom
    (scipy.stats.chi2_contingency's rule: each cell moves towards its expected count by at most
    0.5, never past it)."""
    rows, cols = table.shape
    if (rows - 1) * (cols - 1) == 0:
        return torch.zeros((), dtype=F64, device=table.device)
    expected = torch.outer(table.sum(1), table.sum(0)) / table.sum()
    if yates and (rows - 1) * (cols - 1) == 1:
        diff = expected - table
        table = table + torch.sign(diff) * torch.clamp(diff.abs(), max=0.5)
    return ((table - expected) ** 2 / expected).sum()


def _undefined(metric_name: str, why: str) -> Tensor:
    rank_zero_warn(f"{metric_name} is undefined {why}; returning NaN.", UserWarning)
    return torch.tensor(math.nan, dtype=F64)


def _bias_corrected(table: Tensor, name: str) -> Optional[Tuple[Tensor, Tensor, Tensor]]:
    """(phi^2 corrected, rows corrected, columns corrected) by Bergsma's correction, or None
    (with torchmetrics' warning) where a corrected size is 1: one row or column, or as many
    rows or columns as samples."""
    rows, cols = table.shape
    n = int(table.sum().item())
    if min(rows, cols) == 1 or n in (rows, cols):
        rank_zero_warn(
            f"Unable to compute {name} using bias correction. Please consider to set `bias_correction=False`.",
            UserWarning,
        )
        return None
    phi2 = chi_squared(table, True) / n
    phi2 = torch.clamp(phi2 - (rows - 1) * (cols - 1) / (n - 1), min=0.0)
    rows_c = rows - (rows - 1) ** 2 / (n - 1)
    cols_c = cols - (cols - 1) ** 2 / (n - 1)
    return phi2, torch.tensor(rows_c, dtype=F64), torch.tensor(cols_c, dtype=F64)


def cramers_v_of(confmat: Tensor, bias_correction: bool) -> Tensor:
    """Cramer's V of a contingency table (float64, 0-d)."""
    table = occupied(confmat)
    rows, cols = table.shape
    if table.numel() == 0:
        return _undefined("Cramer's V", "without samples").to(confmat.device)
    if bias_correction:
        corrected = _bias_corrected(table, "Cramer's V")
        if corrected is None:
            return torch.tensor(math.nan, dtype=F64, device=confmat.device)
        phi2, rows_c, cols_c = corrected
        value = torch.sqrt(phi2 / torch.minimum(rows_c - 1, cols_c - 1).to(phi2.device))
    else:
        if min(rows, cols) == 1:
            return _undefined("Cramer's V", "with one category on a side").to(confmat.device)
        value = torch.sqrt(chi_squared(table, False) / table.sum() / min(rows - 1, cols - 1))
    return value.clamp(0.0, 1.0)


def tschuprows_t_of(confmat: Tensor, bias_correction: bool) -> Tensor:
    """Tschuprow's T of a contingency table (float64, 0-d)."""
    table = occupied(confmat)
    rows, cols = table.shape
    if table.numel() == 0:
        return _undefined("Tschuprow's T", "without samples").to(confmat.device)
    if bias_correction:
        corrected = _bias_corrected(table, "Tschuprow's T")
        if corrected is None:
            return torch.tensor(math.nan, dtype=F64, device=confmat.device)
        phi2, rows_c, cols_c = corrected
        value = torch.sqrt(phi2 / torch.sqrt((rows_c - 1) * (cols_c - 1)).to(phi2.device))
    else:
        if min(rows, cols) == 1:
            return _undefined("Tschuprow's T", "with one category on a side").to(confmat.device)
        value = torch.sqrt(chi_squared(table, False) / table.sum() / math.sqrt((rows - 1) * (cols - 1)))
    return value.clamp(0.0, 1.0)


def pearsons_contingency_of(confmat: Tensor) -> Tensor:
    """Pearson's contingency coefficient of a contingency table (float64, 0-d)."""
    table = occupied(confmat)
    if table.numel() == 0:
        return _undefined("Pearson's contingency coefficient", "without samples").to(confmat.device)
    phi2 = chi_squared(table, False) / table.sum()
    return torch.sqrt(phi2 / (1 + phi2)).clamp(0.0, 1.0)


def theils_u_of(confmat: Tensor) -> Tensor:
    """Theil's U(preds | target) = (H(preds) - H(preds | target)) / H(preds) of a table whose
    rows are target and columns preds (float64, 0-d); 0 where preds is constant (or absent)."""
    table = confmat.to(F64)
    total = table.sum()
    if total == 0:
        return torch.zeros((), dtype=F64, device=confmat.device)
    p_x = table.sum(0) / total
    p_x = p_x[p_x > 0]
    h_x = -(p_x * torch.log(p_x)).sum()
    if h_x == 0:
        return torch.zeros((), dtype=F64, device=confmat.device)
    p_y = (table.sum(1) / total).unsqueeze(1).expand_as(table)
    p_xy = table / total
    cells = p_xy > 0
    h_x_given_y = (p_xy[cells] * torch.log(p_y[cells] / p_xy[cells])).sum()
    return ((h_x - h_x_given_y) / h_x).clamp(0.0, 1.0)  # mutual information >= 0: no rounding below


def as_result(value: Tensor, dtype: Optional[torch.dtype] = None) -> Tensor:
    """A float64 statistic in ``dtype`` (torch's default dtype: torchmetrics' float32)."""
    return value.to(dtype or torch.get_default_dtype())


# -- functional forms -------------------------------------------------------------------------


def pair_table(preds: object, target: object, nan_strategy: object, nan_replace_value: object) -> Tensor:
    """The contingency table of one pair of series (the functional forms' state)."""
    strategy, replace = check_nan_options(nan_strategy, nan_replace_value)
    return table_of(*paired_labels(preds, target, strategy, replace))


def matrix_tables(matrix: object, nan_strategy: object, nan_replace_value: object) -> Tuple[int, list]:
    """(F, [(i, j, table of columns i (preds) and j (target))] for every pair i < j) of an
    [N, F] matrix of F nominal variables."""
    strategy, replace = check_nan_options(nan_strategy, nan_replace_value)
    if not isinstance(matrix, Tensor):
        raise TypeError(f"matrix: expected a torch.Tensor, got {type(matrix).__name__}")
    if matrix.dim() != 2:
        raise ValueError(f"matrix: expected [N, F] (samples x variables), got shape {list(matrix.shape)}")
    count = matrix.shape[1]
    tables = []
    for i in range(count):
        for j in range(i + 1, count):
            try:
                labels = paired_labels(matrix[:, i], matrix[:, j], strategy, replace)
            except ValueError as error:  # name the matrix's columns, not preds / target
                raise ValueError(f"matrix: columns {i} and {j}: {error}") from None
            tables.append((i, j, table_of(*labels)))
    return count, tables
