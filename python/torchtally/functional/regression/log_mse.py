"""Regression metrics, functional forms (one batch in, the metric out): log-cosh error, MSLE,
Minkowski distance, NRMSE, RSE, SMAPE, WMAPE, Tweedie deviance, critical success index, and
the KL and Jensen-Shannon divergences. Per-batch sums: batch_sums.py.

Computed in float64; results in the inputs' promoted float dtype (torch's default dtype for
integer inputs), as torchmetrics' functional forms, except critical_success_index (float32,
as torchmetrics). NaN or inf inputs, and values outside a metric's domain, raise ValueError.

    >>> import torch
    >>> from torchtally.functional import log_cosh_error, weighted_mean_absolute_percentage_error
    >>> preds, target = torch.tensor([3.0, 5.0, 2.5, 7.0]), torch.tensor([2.5, 5.0, 4.0, 8.0])
    >>> log_cosh_error(preds, target)
    tensor(0.3523)
    >>> weighted_mean_absolute_percentage_error(preds, target)
    tensor(0.1538)
"""

from typing import Optional

import torch
from torch import Tensor

from ... import kernels
from . import batch_sums as sums
from . import update

__all__ = [
    "critical_success_index",
    "jensen_shannon_divergence",
    "kl_divergence",
    "log_cosh_error",
    "mean_squared_log_error",
    "minkowski_distance",
    "normalized_root_mean_squared_error",
    "relative_squared_error",
    "symmetric_mean_absolute_percentage_error",
    "tweedie_deviance_score",
    "weighted_mean_absolute_percentage_error",
]

_F64 = torch.float64


def _result(value: Tensor, preds: Tensor, target: Tensor) -> Tensor:
    value = value.to(update.functional_dtype(preds, target))
    return value.reshape(()) if value.numel() == 1 else value


def log_cosh_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of log(cosh(preds - target)) of [N] inputs, or per column of [N, D] ones.

    >>> log_cosh_error(torch.tensor([[3.0, 5.0], [-2.0, 2.5]]), torch.tensor([[2.5, 5.0], [0.0, 4.0]]))
    tensor([0.7226, 0.4277])
    """
    d = preds.shape[1] if isinstance(preds, Tensor) and preds.dim() == 2 else 1
    p, t = update.pearson(preds, target, d)
    return _result(sums.log_cosh_sum(p, t) / p.shape[0], p, t)


def mean_squared_log_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of (log(1 + preds) - log(1 + target))^2 over all elements (values > -1).

    >>> mean_squared_log_error(torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0]))
    tensor(0.0207)
    """
    total, n = sums.squared_log_error_sum(preds, target)
    return _result(total / n, preds, target)


def minkowski_distance(preds: Tensor, targets: Tensor, p: float) -> Tensor:
    """``(sum of |preds - targets|^p)^(1/p)`` over all elements, for ``p >= 1``.

    >>> minkowski_distance(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 4.0, 3.0]), p=3)
    tensor(2.0801)
    """
    p = sums.check_minkowski_p(p)
    return _result(sums.minkowski_sum(preds, targets, p).pow(1.0 / p), preds, targets)


def normalized_root_mean_squared_error(
    preds: Tensor, target: Tensor, normalization: str = "mean", num_outputs: int = 1
) -> Tensor:
    """RMSE divided by the target's mean, range, standard deviation (population) or L2 norm.
    ``num_outputs=1`` flattens any shape; ``num_outputs=D`` takes [N, D], one value per output.

    >>> preds, target = torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0])
    >>> normalized_root_mean_squared_error(preds, target, normalization="range")
    tensor(0.2500)
    """
    normalization = sums.check_normalization(normalization)
    num_outputs = update.check_num_outputs(num_outputs)
    p, t = _nrmse_inputs(preds, target, num_outputs)
    sse = sums.squared_error_sum(p, t)
    t64 = t.to(_F64)
    n = torch.tensor(t.shape[0], device=t.device)
    if normalization == "mean":
        stat = t64.sum(0)
    elif normalization == "range":
        stat = (
            torch.stack((t64.amin(0), t64.amax(0)))
            if t.shape[0]
            else torch.full((2, num_outputs), torch.nan, dtype=_F64, device=t.device)
        )
    elif normalization == "std":
        stat = update.empty_moments(num_outputs, t.device)
        kernels.moments_update(stat, update.as_float(t), None)
    else:
        stat = t64.square().sum(0)
    rmse = (sse / n).sqrt()
    return _result(rmse / sums.nrmse_denominator(normalization, n, stat), p, t)


def _nrmse_inputs(preds: object, target: object, num_outputs: int):
    if num_outputs == 1:
        p, t = sums.pair(preds, target)
        return p.reshape(-1, 1), t.reshape(-1, 1)
    return update.columns(preds, target, num_outputs)


def relative_squared_error(preds: Tensor, target: Tensor, squared: bool = True) -> Tensor:
    """Sum of squared errors over the target's sum of squared deviations from its mean, per
    column of [N] or [N, D] inputs, then averaged; ``squared=False``: its root (RRSE).

    >>> relative_squared_error(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0]))
    tensor(0.0514)
    """
    squared = update.check_squared(squared)
    p, t, _ = update.outputs(preds, target, max_dims=2)
    sse = sums.squared_error_sum(p, t)
    moments = update.empty_moments(p.shape[1], p.device)
    kernels.moments_update(moments, update.as_float(t), None)
    dtype = update.functional_dtype(p, t)
    return _result(sums.rse_from(sse, moments, squared, dtype), p, t)


def symmetric_mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of ``2 |target - preds| / max(|target| + |preds|, 1.17e-6)`` over all elements.

    >>> symmetric_mean_absolute_percentage_error(torch.tensor([0.9, 15.0]), torch.tensor([1.0, 10.0]))
    tensor(0.2526)
    """
    total, n = sums.symmetric_percentage_error_sum(preds, target)
    return _result(total / n, preds, target)


def weighted_mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """``sum |target - preds| / max(sum |target|, 1.17e-6)``.

    >>> weighted_mean_absolute_percentage_error(torch.tensor([0.9, 15.0]), torch.tensor([1.0, 10.0]))
    tensor(0.4636)
    """
    s = sums.weighted_percentage_error_sums(preds, target)
    return _result(s[0] / s[1].clamp(min=sums.SMAPE_EPS), preds, target)


def tweedie_deviance_score(preds: Tensor, targets: Tensor, power: float = 0.0) -> Tensor:
    """Mean Tweedie deviance for ``power`` (0: squared error, 1: Poisson, 2: Gamma, ...;
    0 < power < 1 is undefined). Domains: power < 0: preds > 0; 1 <= power < 2: preds > 0,
    targets >= 0; power >= 2: both > 0.

    >>> tweedie_deviance_score(torch.tensor([4.0, 3.0, 2.0, 1.0]), torch.tensor([1.0, 2.0, 3.0, 4.0]), power=2)
    tensor(1.2083)
    """
    power = sums.check_power(power)
    total, n = sums.tweedie_deviance_sum(preds, targets, power)
    return _result(total / n, preds, targets)


def critical_success_index(
    preds: Tensor, target: Tensor, threshold: float, keep_sequence_dim: Optional[int] = None
) -> Tensor:
    """hits / (hits + misses + false alarms) of the elements >= ``threshold`` (0 when none of
    either is); per index of dim ``keep_sequence_dim`` when given. float32, as torchmetrics.

    >>> critical_success_index(torch.tensor([[0.2, 0.7], [0.9, 0.3]]), torch.tensor([[0.4, 0.2], [0.8, 0.6]]), 0.5)
    tensor(0.3333)
    """
    threshold = sums.check_threshold(threshold)
    keep_sequence_dim = sums.check_keep_sequence_dim(keep_sequence_dim)
    counts = sums.csi_counts(preds, target, threshold, keep_sequence_dim)
    if keep_sequence_dim is None:
        return sums.csi_from_counts(counts[3], counts[1], counts[2])
    return sums.csi_from_counts(counts[:, 0], counts[:, 1], counts[:, 2])


def kl_divergence(p: Tensor, q: Tensor, log_prob: bool = False, reduction: Optional[str] = "mean") -> Tensor:
    """KL(p || q) of each row of [N, d] distributions (rows scaled to sum 1 unless ``log_prob``:
    then p and q are log-probabilities), reduced by ``reduction``: "mean", "sum", "none"/None.

    >>> kl_divergence(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1 / 3, 1 / 3, 1 / 3]]))
    tensor(0.0853)
    """
    log_prob, reduction = sums.check_log_prob(log_prob), sums.check_reduction(reduction)
    x, y = sums.distributions(p, q)
    rows = sums.kl_rows(x, y, log_prob)
    return sums.reduce_rows(rows, x.shape[0], reduction).to(update.functional_dtype(x, y))


def jensen_shannon_divergence(
    p: Tensor, q: Tensor, log_prob: bool = False, reduction: Optional[str] = "mean"
) -> Tensor:
    """Jensen-Shannon divergence (natural log) of each row of [N, d] distributions, reduced as
    kl_divergence.

    >>> jensen_shannon_divergence(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1 / 3, 1 / 3, 1 / 3]]))
    tensor(0.0225)
    """
    log_prob, reduction = sums.check_log_prob(log_prob), sums.check_reduction(reduction)
    x, y = sums.distributions(p, q)
    rows = sums.js_rows(x, y, log_prob)
    return sums.reduce_rows(rows, x.shape[0], reduction).to(update.functional_dtype(x, y))
