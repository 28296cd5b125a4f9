"""Torch reference of the regression error-sums kernel (csrc/API_REGRESSION.md, "error_sums").

Adds one batch of preds x and target y (floating [N] or [N, D], [N, d] for the per-row kinds)
into ``sums`` (float64; per column, per batch or per row summed) and ``count`` (int64, one
element), and writes each row's value into ``rows`` (float64 [N], per-row kinds). A NaN or inf
input, or a value outside the kind's domain, raises ValueError naming the first one; nothing is
written then. Every check runs before anything is written.
"""

import math

import torch

from . import checks as chk

F64 = torch.float64
I64 = torch.int64
EPS = 1.17e-06
BIG = 20.0
KINDS = (
    "squared",
    "absolute",
    "log_cosh",
    "abs_percent",
    "sym_percent",
    "squared_log",
    "minkowski",
    "weighted_percent",
    "cosine",
    "kl",
    "js",
)
COLUMN_KINDS = KINDS[:3]
ELEMENT_KINDS = KINDS[3:8]
ROW_KINDS = KINDS[8:]


def _flat_out(name, t, dtype, k):
    if t is None:
        return None
    t = chk.tensor(name, t)
    if t.dtype != dtype or t.numel() != k:
        err = TypeError if t.dtype != dtype else ValueError
        raise err(f"{name}: expected {str(dtype).replace('torch.', '')} with {k} element(s), got {chk.describe(t)}")
    if not t.is_contiguous():
        raise ValueError(f"{name}: expected a contiguous tensor, got a strided {chk.describe(t)}")
    return t


def _inputs(x, y, kind):
    chk.no_meta(("x", x), ("y", y))
    rank = (2,) if kind in ROW_KINDS else (1, 2)
    x = chk.tensor("x", x)
    if x.dtype not in chk.SCORE_DTYPES:
        raise TypeError(f"x: expected a floating tensor (float16, bfloat16, float32, float64), got {chk.describe(x)}")
    if x.dim() not in rank:
        raise ValueError(f"x: expected a {rank[0]}-D tensor of scores, got {chk.describe(x)}")
    y = chk.tensor("y", y)
    if y.dtype not in chk.SCORE_DTYPES:
        raise TypeError(f"y: expected a floating tensor (float16, bfloat16, float32, float64), got {chk.describe(y)}")
    if y.shape != x.shape:
        raise ValueError(f"y: expected the shape of x ({chk.describe(x)}), got {chk.describe(y)}")
    if y.device != x.device:
        raise ValueError(f"y: expected a tensor on {x.device} (the device of x), got {y.device}")
    return x, y


def _sums_size(x, kind):
    if kind in COLUMN_KINDS:
        return x.shape[1] if x.dim() == 2 else 1
    return 2 if kind == "weighted_percent" else 1


def _column_terms(x, y, kind, param):
    """[N, D] float64 terms (WMAPE: a [2] of sums instead)."""
    e = y - x
    if kind == "squared":
        return e * e
    if kind == "absolute":
        return e.abs()
    if kind == "log_cosh":
        a = e.abs()
        s = a.clamp(max=BIG)
        return torch.log1p(2.0 * torch.sinh(0.5 * s).square()) + (a - s)
    if kind == "abs_percent":
        return e.abs() / y.abs().clamp(min=EPS)
    if kind == "sym_percent":
        return 2.0 * (e.abs() / (y.abs() + x.abs()).clamp(min=EPS))
    if kind == "squared_log":
        return (torch.log1p(x) - torch.log1p(y)).square()
    return e.abs().pow(param)  # minkowski


def _rows(x, y, kind, log_prob):
    """(each row's value [N], the verdict summary, whether a probability is negative)."""
    if kind == "cosine":
        norms = torch.linalg.vector_norm(x, dim=1) * torch.linalg.vector_norm(y, dim=1)
        return (x * y).sum(1) / norms, norms.sum(), False
    if log_prob:
        if kind == "kl":
            rows = (x.exp() * (x - y)).sum(-1)
        else:
            m = torch.logaddexp(x, y) - math.log(2.0)
            rows = 0.5 * (x.exp() * (x - m) + y.exp() * (y - m)).sum(-1)
        return rows, rows.sum(), False
    negative = bool((torch.minimum(x, y) < 0).any())
    p, q = x / x.sum(-1, keepdim=True), y / y.sum(-1, keepdim=True)
    if kind == "kl":
        rows = (torch.xlogy(p, p) - torch.xlogy(p, q)).sum(-1)
    else:
        rows = 0.5 * (torch.xlogy(p, p) + torch.xlogy(q, q) - torch.xlogy(p + q, 0.5 * (p + q))).sum(-1)
    return rows, rows.sum(), negative


def _first(name, bad, x, expected):
    flat = bad.reshape(-1)
    if bool(flat.any()):
        i = int(flat.nonzero()[0, 0])
        value = float(x.reshape(-1)[i])
        raise ValueError(f"{name}: expected {expected}, got {value:g} at flat index {i}")


def _search(x, y, kind, param):
    for name, t in (("x", x), ("y", y)):
        _first(name, ~torch.isfinite(t), t, "finite values")
    if kind == "squared_log":
        for name, t in (("x", x), ("y", y)):
            _first(name, t <= -1, t, "values > -1 (log(1 + x) is taken)")
    if kind in ("kl", "js") and param == 0:
        for name, t in (("x", x), ("y", y)):
            _first(name, t < 0, t, "probabilities >= 0")
        for name, t in (("x", x), ("y", y)):
            zero = (t.sum(-1) == 0).nonzero()
            if zero.numel():
                raise ValueError(f"{name}: expected rows with a positive sum, got row {int(zero[0, 0])}")


def error_sums(sums, count, rows, x, y, kind, param, /) -> None:
    """sums += the batch's float64 sums, count += its rows (elements for the element kinds),
    rows = each row's value (per-row kinds); nothing written for a refused batch."""
    if not isinstance(kind, int) or isinstance(kind, bool) or not 0 <= kind < len(KINDS):
        raise ValueError(f"kind: expected 0 to {len(KINDS) - 1}, got {kind!r}")
    name = KINDS[kind]
    x, y = _inputs(x, y, name)
    param = chk.float_value("param", param)
    if name == "minkowski" and not (1 <= param < math.inf):
        raise ValueError(f"param: expected a finite p >= 1, got {param:g}")
    if name in ("kl", "js") and param not in (0.0, 1.0):
        raise ValueError(f"param: expected 0 (probabilities) or 1 (log_prob), got {param:g}")
    sums = _flat_out("sums", sums, F64, _sums_size(x, name))
    count = _flat_out("count", count, I64, 1)
    if rows is not None and name not in ROW_KINDS:
        raise ValueError(f"rows: expected None for kind {kind} (not a per-row kind)")
    rows = _flat_out("rows", rows, F64, x.shape[0])
    for t in (sums, count, rows):
        if t is not None:
            chk.same_device("x", x, t)
    x64, y64 = x.to(F64), y.to(F64)
    if x64.dim() == 1:
        x64, y64 = x64[:, None], y64[:, None]
    values = None
    if name in ROW_KINDS:
        values, summary, negative = _rows(x64, y64, name, param == 1.0)
        batch = values.sum().reshape(1)
        if negative:
            summary = summary + math.nan
    elif name == "weighted_percent":
        batch = torch.stack(((y64 - x64).abs().sum(), y64.abs().sum()))
        summary = batch.sum()
    else:
        terms = _column_terms(x64, y64, name, param)
        batch = terms.sum(0) if name in COLUMN_KINDS else terms.sum().reshape(1)
        summary = batch.sum()
    if not math.isfinite(float(summary)):
        _search(x64, y64, name, param)
    if sums is not None:
        sums.add_(batch.reshape(sums.shape))
    if count is not None:
        count.add_(x64.numel() if name in ELEMENT_KINDS else x64.shape[0])
    if rows is not None:
        rows.copy_(values)
