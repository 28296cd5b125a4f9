"""Regression: options, input checks and per-batch sums of the error metrics (log-cosh, MSLE,
Minkowski, NRMSE, RSE, SMAPE, WMAPE, Tweedie deviance), the divergences (KL, Jensen-Shannon)
and the critical success index, and their results from those sums.

Every function here checks the whole batch before it returns anything, so a metric that adds
the returned sums to its state leaves the state as it was when a batch is refused. The sums
are float64 (integer inputs are read as float64; counts are int64): sums of non-negative
terms, which need no compensation; where a variance is needed (NRMSE's "std", RSE's total sum
of squares) the metric keeps Chan-merged moments instead (see update.py).

Inputs are real tensors (update.real: TypeError for bool, complex, float8, uint16-uint64;
ValueError for meta tensors). Values must be finite, and inside the metric's domain (MSLE:
> -1; Tweedie: by power; KL / JS probabilities: >= 0 with a positive row sum): a small summary
of the batch (its sum of terms) is checked, and only when it is NaN or inf are the inputs
searched for the first bad element, named in a ValueError. A summary that is inf for finite,
valid inputs (an overflow, a KL term with q = 0 where p > 0) passes: the value is inf, as
torchmetrics'.
"""

import functools
import math
from numbers import Real
from typing import Callable, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...kernels import deferred_checks
from ...kernels import regression as regression_kinds
from ...kernels.ops import compiling
from ...kernels.reference.checks import describe
from . import fused_sums, update

_F64 = torch.float64
_WIDE = (torch.float32, torch.float64)  # the dtypes the threshold-counts kernel compares in
_LN2 = math.log(2.0)
# log cosh(a) = log cosh(_BIG) + (a - _BIG) for a >= _BIG, to float64's precision (the rest is
# below exp(-2 * _BIG)); below it log1p(2 sinh(a / 2)^2) keeps the digits of small errors.
_BIG = 20.0
SMAPE_EPS = 1.17e-06  # torchmetrics' clamp of |target| + |preds| and of WMAPE's sum of |target|
NORMALIZATIONS = ("mean", "range", "std", "l2")
REDUCTIONS = ("mean", "sum", "none", None)

# (argument name, its bad elements, what was expected) for the search of a refused batch
Rule = Tuple[str, Callable[[], Tensor], str]


# -- options ---------------------------------------------------------------------------------


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, Tensor)):
        raise ValueError(f"{name}: expected a real number, got {value!r}")
    if isinstance(value, Tensor) and (value.numel() != 1 or value.is_complex() or value.dtype == torch.bool):
        raise ValueError(f"{name}: expected a real number, got a tensor {describe(value)}")
    number = float(value)
    if math.isnan(number):
        raise ValueError(f"{name}: expected a real number, got nan")
    return number


def check_minkowski_p(p: object) -> float:
    number = _number("p", p)
    if not (1 <= number < math.inf):
        raise ValueError(
            f"p: expected a finite number >= 1, got {p!r} (Argument ``p`` must be a float or int greater than 1)"
        )
    return number


def check_power(power: object) -> float:
    number = _number("power", power)
    if 0 < number < 1 or math.isinf(number):
        raise ValueError(
            f"power: expected a finite number <= 0 or >= 1, got {power!r} "
            f"(Deviance Score is not defined for power={power}.)"
        )
    return number


def check_threshold(threshold: object) -> float:
    return _number("threshold", threshold)


def check_normalization(normalization: object) -> str:
    if normalization not in NORMALIZATIONS:
        raise ValueError(
            f"normalization: expected one of {NORMALIZATIONS}, got {normalization!r} (Argument `normalization` should "
            "be either 'mean', 'range', 'std' or 'l2')"
        )
    return normalization


def check_keep_sequence_dim(keep_sequence_dim: object) -> Optional[int]:
    if keep_sequence_dim is not None and (
        not isinstance(keep_sequence_dim, int) or isinstance(keep_sequence_dim, bool) or keep_sequence_dim < 0
    ):
        raise ValueError(
            f"keep_sequence_dim: expected None or an int >= 0 (a dimension of the inputs), got {keep_sequence_dim!r}"
        )
    return keep_sequence_dim


def check_log_prob(log_prob: object) -> bool:
    if not isinstance(log_prob, bool):
        raise TypeError(f"log_prob: expected a bool, got {log_prob!r} (Expected argument `log_prob` to be bool)")
    return log_prob


def check_reduction(reduction: object) -> Optional[str]:
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction: expected one of {REDUCTIONS}, got {reduction!r}")
    return reduction


# -- inputs ------------------------------------------------------------------------------------


def pair(
    preds: object, target: object, device: Optional[torch.device] = None, names: Tuple[str, str] = ("preds", "target")
) -> Tuple[Tensor, Tensor]:
    """Two real tensors of one shape on one device, named as the caller's arguments."""
    a, b = names
    p, t = update.real(a, preds, device), update.real(b, target, device)
    if t.device != p.device:
        raise ValueError(f"{b}: expected a tensor on {p.device} (the device of {a}), got {t.device}")
    if t.shape != p.shape:
        raise update.InputShapeError(
            f"{b}: expected the shape of {a} {list(p.shape)}, got {list(t.shape)} "
            "(Predictions and targets are expected to have the same shape)"
        )
    return p, t


def distributions(p: object, q: object, device: Optional[torch.device] = None) -> Tuple[Tensor, Tensor]:
    """[N, d] p and q: one distribution per row."""
    p, q = pair(p, q, device, ("p", "q"))
    if p.dim() != 2:
        raise ValueError(
            f"p: expected shape [N, d] (one distribution per row), got {describe(p)} (Expected both p and q "
            f"distribution to be 2D but got {p.dim()} and {q.dim()} respectively)"
        )
    return p, q


def checked(summary: Tensor, named: Sequence[Tuple[str, Tensor]], rules: Sequence[Rule] = ()) -> None:
    """Search the inputs when ``summary`` (0-d) is NaN or inf: the first non-finite element of
    each named input in turn, then each rule's first bad element; ValueError naming it. Inside
    a CUDA metric update in deferred mode the verdict (every input finite, every rule kept)
    stays on the device and the error is raised later (kernels.deferred_checks)."""
    if deferred_checks.deferring(summary):
        ok = [deferred_checks.finite(*(t for _, t in named))] + [~bad().any() for _, bad, _ in rules]
        search = functools.partial(_search, named, rules)
        deferred_checks.hold(deferred_checks.all_true(ok, summary.device), search, " / ".join(n for n, _ in named))
        return
    if math.isfinite(summary.item()):
        return
    _search(named, rules)


def _search(named: Sequence[Tuple[str, Tensor]], rules: Sequence[Rule]) -> None:
    """Raise for the first non-finite element of the named inputs, then for the first element
    that breaks a rule; nothing when there is none."""
    for name, t in named:
        update.finite(name, t)
    for name, bad, expected in rules:
        mask = bad().reshape(-1)
        if bool(mask.any()):
            flat = int(mask.nonzero()[0, 0])
            value = dict(named)[name].reshape(-1)[flat].item()
            raise ValueError(f"{name}: expected {expected}, got {value} at flat index {flat}")


def _flagged(summary: Tensor, bad: Tensor) -> Tensor:
    """``summary``, or NaN when any element of ``bad`` is set (so that ``checked`` searches)."""
    return torch.where(bad.any(), torch.nan, summary)


# -- error sums -------------------------------------------------------------------------------


def log_cosh_sum(p: Tensor, t: Tensor) -> Tensor:
    """Sum over dim 0 of log(cosh(preds - target)) of checked [N, D] inputs (float64 [D])."""
    a = (t.to(_F64) - p).abs()
    s = a.clamp(max=_BIG)
    total = (torch.log1p(2.0 * torch.sinh(0.5 * s).square()) + (a - s)).sum(0)
    checked(total.sum(), (("preds", p), ("target", t)))
    return total


def squared_log_error_sum(preds: object, target: object, device: Optional[torch.device] = None) -> Tuple[Tensor, int]:
    """(sum of (log1p(preds) - log1p(target))^2 float64 0-d, number of elements)."""
    p, t = pair(preds, target, device)
    diff = torch.log1p(p.to(_F64)) - torch.log1p(t.to(_F64))
    total = diff.square().sum()
    rules = [
        (name, lambda x=x: x <= -1, "values > -1 (log(1 + x) is taken)") for name, x in (("preds", p), ("target", t))
    ]
    checked(total, (("preds", p), ("target", t)), rules)
    return total, p.numel()


def minkowski_sum(preds: object, targets: object, p: float, device: Optional[torch.device] = None) -> Tensor:
    """Sum of |preds - targets|^p, float64 0-d."""
    x, y = pair(preds, targets, device, ("preds", "targets"))
    total = (y.to(_F64) - x).abs().pow(p).sum()
    checked(total, (("preds", x), ("targets", y)))
    return total


def symmetric_percentage_error_sum(
    preds: object, target: object, device: Optional[torch.device] = None
) -> Tuple[Tensor, int]:
    """(sum of 2 |target - preds| / max(|target| + |preds|, 1.17e-6) float64 0-d, elements)."""
    p, t = pair(preds, target, device)
    p64, t64 = p.to(_F64), t.to(_F64)
    total = 2.0 * ((t64 - p64).abs() / (t64.abs() + p64.abs()).clamp(min=SMAPE_EPS)).sum()
    checked(total, (("preds", p), ("target", t)))
    return total, p.numel()


def weighted_percentage_error_sums(preds: object, target: object, device: Optional[torch.device] = None) -> Tensor:
    """float64 [2]: (sum of |target - preds|, sum of |target|)."""
    p, t = pair(preds, target, device)
    t64 = t.to(_F64)
    sums = torch.stack(((t64 - p).abs().sum(), t64.abs().sum()))
    checked(sums.sum(), (("preds", p), ("target", t)))
    return sums


def squared_error_sum(p: Tensor, t: Tensor) -> Tensor:
    """Sum over dim 0 of (target - preds)^2 of checked [N, D] inputs (float64 [D])."""
    total = (t.to(_F64) - p).square().sum(0)
    checked(total.sum(), (("preds", p), ("target", t)))
    return total


# -- Tweedie deviance ---------------------------------------------------------------------------


def _tweedie_domain(power: float) -> Tuple[str, str]:
    """(what preds must be, what targets must be) for ``power``: "" (anything), "> 0" or ">= 0"."""
    if power == 0:
        return "", ""
    if power < 0:
        return "> 0", ""
    if power < 2:  # 1 <= power < 2 (0 < power < 1 is refused)
        return "> 0", ">= 0"
    return "> 0", "> 0"


def _tweedie_domain_words(power: float) -> str:
    """torchmetrics' words for the domain of ``power`` (so that code matching them still reads)."""
    if power < 0:
        return f"For power={power:g}, 'preds' has to be strictly positive."
    if power == 1:
        return f"For power={power:g}, 'preds' has to be strictly positive and 'targets' cannot be negative."
    if power < 2:
        return f"For power={power:g}, 'targets' has to be strictly positive and 'preds' cannot be negative."
    return f"For power={power:g}, both 'preds' and 'targets' have to be strictly positive."


def _violates(x: Tensor, rule: str) -> Tensor:
    return x <= 0 if rule == "> 0" else x < 0


def tweedie_deviance_sum(
    preds: object, targets: object, power: float, device: Optional[torch.device] = None
) -> Tuple[Tensor, int]:
    """(sum of the unit Tweedie deviances for ``power`` float64 0-d, number of elements)."""
    p, t = pair(preds, targets, device, ("preds", "targets"))
    if power == 0:  # the squared error: one pass of the error-sums kernel where it takes the batch
        total = torch.zeros(1, dtype=_F64)
        if fused_sums.added(total, None, None, p.reshape(-1), t.reshape(-1), regression_kinds.SQUARED):
            return total.reshape(()), p.numel()
    x, y = p.to(_F64), t.to(_F64)
    if power == 0:
        dev = (y - x).square()
    elif power == 1:
        dev = 2.0 * (torch.xlogy(y, y) - torch.xlogy(y, x) + x - y)
    elif power == 2:
        dev = 2.0 * (torch.log(x / y) + y / x - 1.0)
    else:
        one, two = 1.0 - power, 2.0 - power
        dev = 2.0 * (y.clamp(min=0).pow(two) / (one * two) - y * x.pow(one) / one + x.pow(two) / two)
    total = dev.sum()
    rule_p, rule_t = _tweedie_domain(power)
    rules = [
        (
            name,
            lambda x=x, rule=rule: _violates(x, rule),
            f"values {rule} for power={power:g} ({_tweedie_domain_words(power)})",
        )
        for name, x, rule in (("preds", p, rule_p), ("targets", t, rule_t))
        if rule
    ]
    summary = total
    if rules:
        summary = _flagged(total, torch.stack([bad().any() for _, bad, _ in rules]))
    checked(summary, (("preds", p), ("targets", t)), rules)
    return total, p.numel()


# -- critical success index -------------------------------------------------------------------


def csi_counts(
    preds: object,
    target: object,
    threshold: float,
    keep_sequence_dim: Optional[int] = None,
    device: Optional[torch.device] = None,
) -> Tensor:
    """int64 counts of the elements >= threshold: [4] (neither, target only (misses), preds
    only (false alarms), both (hits)), or [S, 3] (hits, misses, false alarms) per index of dim
    ``keep_sequence_dim`` (S its size)."""
    p, t = pair(preds, target, device)
    if keep_sequence_dim is not None and keep_sequence_dim >= p.dim():
        raise ValueError(
            f"keep_sequence_dim: expected a dimension of preds ({describe(p)}), got {keep_sequence_dim} "
            f"(Expected keep_sequence dim to be in range [0, {p.dim()}])"
        )
    if p.is_floating_point() or t.is_floating_point():
        checked(p.sum(dtype=_F64) + t.sum(dtype=_F64), (("preds", p), ("target", t)))
    pb, tb = p >= threshold, t >= threshold
    if keep_sequence_dim is None:
        # uint8 codes 0-3: an eighth of int64's memory (a large batch's int64 temporaries cost
        # more than the comparisons)
        return torch.bincount((pb.to(torch.uint8) * 2 + tb).reshape(-1), minlength=4)
    dims = [d for d in range(p.dim()) if d != keep_sequence_dim]
    both = pb & tb
    if dims:
        hits, observed, forecast = both.sum(dims), tb.sum(dims), pb.sum(dims)
    else:  # 1-D: every element is its own index (a sum over no dims would sum them all)
        hits, observed, forecast = both.long(), tb.long(), pb.long()
    return torch.stack((hits, observed - hits, forecast - hits), 1)


def csi_counts_added(
    counts: Tensor, preds: object, target: object, threshold: float, device: Optional[torch.device] = None
) -> bool:
    """Whether the threshold-counts kernel (csrc/API_REGRESSION.md) added the checked batch's
    [4] counts (csi_counts' order) into ``counts`` in one read of preds and target. False, with
    nothing written, where ``csi_counts`` must run instead: not on the CPU (there the checks stay
    on the device), under dynamo, inputs other than float32 / float64 (torch compares a float16,
    bfloat16 or integer tensor with the threshold in another dtype), or a batch the kernel
    refused (a NaN / inf: the torch path raises naming ``preds`` / ``target``)."""
    p, t = pair(preds, target, device)
    if not p.is_cpu or compiling() or p.dtype not in _WIDE or t.dtype not in _WIDE:
        return False
    if p.dim() not in (1, 2):  # any shape is its elements: one view when contiguous
        p, t = p.reshape(-1), t.reshape(-1)
    try:
        regression_kinds.threshold_counts(counts, p, t, threshold)
    except (TypeError, ValueError):
        return False
    return True


def csi_from_counts(hits: Tensor, misses: Tensor, false_alarms: Tensor) -> Tensor:
    """hits / (hits + misses + false alarms), 0 where nothing was counted (as torchmetrics),
    float32 (torchmetrics' result dtype)."""
    total = hits + misses + false_alarms
    score = hits.to(_F64) / total.clamp(min=1)
    return score.to(torch.float32)


# -- divergences ------------------------------------------------------------------------------


def _normalised(p: Tensor, q: Tensor, rules: list) -> Tuple[Tensor, Tensor, Tensor]:
    """Rows of p and q scaled to sum 1 (float64), and a flag of negative entries."""
    p64, q64 = p.to(_F64), q.to(_F64)
    negative = torch.minimum(p64, q64) < 0  # where p or q is negative
    rules += [(name, lambda x=x: x < 0, "probabilities >= 0") for name, x in (("p", p), ("q", q))]
    return p64 / p64.sum(-1, keepdim=True), q64 / q64.sum(-1, keepdim=True), negative


def _zero_rows(name: str, x: Tensor) -> Rule:
    return (name, lambda: (x.to(_F64).sum(-1, keepdim=True) == 0).expand_as(x), "rows with a positive sum")


def kl_rows(p: Tensor, q: Tensor, log_prob: bool) -> Tensor:
    """KL(p || q) of each row of checked [N, d] inputs (float64 [N])."""
    rules: list = []
    if log_prob:
        p64 = p.to(_F64)
        rows = (p64.exp() * (p64 - q)).sum(-1)
        summary = rows.sum()
    else:
        pn, qn, negative = _normalised(p, q, rules)
        rows = (torch.xlogy(pn, pn) - torch.xlogy(pn, qn)).sum(-1)
        summary = _flagged(rows.sum(), negative)
        rules += [_zero_rows("p", p), _zero_rows("q", q)]
    checked(summary, (("p", p), ("q", q)), rules)
    return rows


def js_rows(p: Tensor, q: Tensor, log_prob: bool) -> Tensor:
    """Jensen-Shannon divergence of each row of checked [N, d] inputs (float64 [N])."""
    rules: list = []
    if log_prob:
        p64, q64 = p.to(_F64), q.to(_F64)
        m = torch.logaddexp(p64, q64) - _LN2
        rows = 0.5 * (p64.exp() * (p64 - m) + q64.exp() * (q64 - m)).sum(-1)
        summary = rows.sum()
    else:
        pn, qn, negative = _normalised(p, q, rules)
        m = 0.5 * (pn + qn)
        rows = 0.5 * (torch.xlogy(pn, pn) + torch.xlogy(qn, qn) - torch.xlogy(pn + qn, m)).sum(-1)
        summary = _flagged(rows.sum(), negative)
        rules += [_zero_rows("p", p), _zero_rows("q", q)]
    checked(summary, (("p", p), ("q", q)), rules)
    return rows


def reduce_rows(rows: Tensor, count: int, reduction: Optional[str]) -> Tensor:
    if reduction == "sum":
        return rows.sum()
    if reduction == "mean":
        return rows.sum() / count
    return rows


# -- results from sums and moments ------------------------------------------------------------


def nrmse_denominator(normalization: str, n: Tensor, target_stat: Tensor) -> Tensor:
    """The target's mean, range, (population) standard deviation or L2 norm per output, from
    ``target_stat``: its sum [D] ("mean"), its [2, D] min and max ("range"), its moments
    [D, 6] ("std", see update.py) or its sum of squares [D] ("l2")."""
    if normalization == "mean":
        return target_stat / n
    if normalization == "range":
        return target_stat[1] - target_stat[0]
    if normalization == "std":
        return (moments_ss(target_stat) / target_stat[:, 0]).sqrt()
    return target_stat.sqrt()


def moments_ss(moments: Tensor) -> Tensor:
    """Sum of squared deviations per row of a moments state, exactly 0 for a constant column."""
    return torch.where(moments[:, 4] == moments[:, 5], torch.zeros_like(moments[:, 3]), moments[:, 3])


def rse_from(sse: Tensor, moments: Tensor, squared: bool, dtype: torch.dtype) -> Tensor:
    """mean over outputs of SSE / SS_tot (its root when not ``squared``). An exactly constant
    target's SS_tot of 0 is clamped to ``dtype``'s eps, as torchmetrics; NaN over no samples."""
    ss_tot = moments_ss(moments)
    ss_tot = torch.where(ss_tot == 0, torch.finfo(dtype).eps, ss_tot)
    rse = sse / ss_tot
    rse = torch.where(moments[:, 0] == 0, torch.nan, rse)
    return (rse if squared else rse.sqrt()).mean()


def moments_update(state: Tensor, t: Tensor) -> None:
    """Fold a checked [N, D] target into a moments state [D, 6] (update.py's layout), in place."""
    kernels.moments_update(state, deferred_checks.cleaned(update.as_float(t)), None)


def check_moments(state: Tensor, name: str) -> None:
    """ValueError naming a loaded moments state that no update could have made: NaN, or a
    negative count or sum of squared deviations."""
    if bool(torch.isnan(state).any()):
        raise ValueError(f"'{name}': NaN (an update never stores one)")
    if bool((state[:, [0, 3]] < 0).any()):
        raise ValueError(f"'{name}': expected counts and sums of squares >= 0 (columns 0 and 3)")
