"""Torch reference of the moments kernels (csrc/API.md, "Moments").

A batch is summarised by a two-pass computation in float64 (mean first, then the sum of
squared deviations), then merged into the state with Chan et al.'s pairwise formula:
    n = na + nb,  delta = mean_b - mean_a,
    mean = mean_a + delta * nb / n,  M2 = M2_a + M2_b + delta^2 * na * nb / n,
which stays accurate when the two means differ widely (no sum of squares is ever formed).
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import checks as chk

_F64 = torch.float64


def _state(t: object) -> Tensor:
    expected = "a float64 tensor of shape [D, 6]"
    t = chk.output("state", t, _F64, expected, (2,))
    if t.shape[1] != 6:
        chk.fail("state", t, expected, True)
    return t


def _other(t: object, state: Tensor) -> Tensor:
    expected = f"a float64 tensor of shape [D, 6] with D = {state.shape[0]} (state)"
    t = chk.tensor("other", t)
    if t.dtype != _F64:
        chk.fail("other", t, expected, False)
    if t.shape != state.shape:
        chk.fail("other", t, expected, True)
    chk.same_device("other", t, state)
    return t


def _values(name: str, t: object, state: Tensor, like: Optional[Tensor] = None) -> Tensor:
    """x, or y shaped as `like`: float [N, D] (or [N] when D = 1), NaN-free."""
    d = state.shape[0]
    if like is None:
        expected = f"a floating tensor of shape [N, D] with D = {d}" + (" or [N]" if d == 1 else "")
        ok = lambda s: (len(s) == 2 and s[1] == d) or (len(s) == 1 and d == 1)  # noqa: E731
    else:
        expected, ok = f"a floating tensor of shape {list(like.shape)} (as x)", lambda s: s == tuple(like.shape)
    t = chk.scores(name, t, state, expected, ok)
    chk.no_nan(name, t)
    return t


def _as_columns(t: Tensor, d: int) -> Tensor:
    return t.double().reshape(t.shape[0], d)


def _weights(t: object, n: int, state: Tensor) -> Optional[Tensor]:
    if t is None:
        return None
    t = chk.scores("weights", t, state, f"None or a floating tensor of shape [N] with N = {n} (x)", lambda s: s == (n,))
    i = chk.first(~(torch.isfinite(t) & (t >= 0)), None)
    if i is not None:
        raise ValueError(f"weights: expected finite weights >= 0, got {float(t[i])} at sample {i}")
    return t.double()[:, None]


def _chan(na: Tensor, nb: Tensor, mean_a: Tensor, mean_b: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Merged count and mean, and na * nb / n (the weight of delta^2 in M2).

    An empty side leaves the other exactly as it is; the operation order is the C core's.
    """
    n = na + nb
    safe = torch.where(n > 0, n, torch.ones_like(n))
    mean = torch.where(nb == 0, mean_a, torch.where(na == 0, mean_b, mean_a + (mean_b - mean_a) * (nb / safe)))
    return n, mean, na * nb / safe


def _pair_term(na: Tensor, nb: Tensor, a: Tensor, b: Tensor, delta_product: Tensor, w: Tensor) -> Tensor:
    """M2 or co-moment of the merge: a + (b + delta_x * delta_y * w), exact when a side is empty."""
    return torch.where(nb == 0, a, torch.where(na == 0, b, a + (b + delta_product * w)))


def merge_moments(a: Tensor, b: Tensor) -> Tensor:
    na, nb = a[:, 0], b[:, 0]
    n, mean, w = _chan(na, nb, a[:, 2], b[:, 2])
    delta = b[:, 2] - a[:, 2]
    m2 = _pair_term(na, nb, a[:, 3], b[:, 3], delta * delta, w)
    low, high = torch.minimum(a[:, 4], b[:, 4]), torch.maximum(a[:, 5], b[:, 5])
    return torch.stack([n, a[:, 1] + b[:, 1], mean, m2, low, high], dim=1)


def _merge_comoments(a: Tensor, b: Tensor) -> Tensor:
    na, nb = a[:, 0], b[:, 0]
    n, mean_x, w = _chan(na, nb, a[:, 1], b[:, 1])
    _, mean_y, _ = _chan(na, nb, a[:, 2], b[:, 2])
    dx, dy = b[:, 1] - a[:, 1], b[:, 2] - a[:, 2]
    m2_x, m2_y, c_xy = (
        _pair_term(na, nb, a[:, i], b[:, i], p, w) for i, p in ((3, dx * dx), (4, dy * dy), (5, dx * dy))
    )
    return torch.stack([n, mean_x, mean_y, m2_x, m2_y, c_xy], dim=1)


def batch_moments(x: Tensor, w: Optional[Tensor]) -> Tensor:
    """(n, sum, mean, m2, min, max) per column; min and max over the samples of positive weight."""
    d = x.shape[1]
    if w is None:
        n = torch.full((d,), float(x.shape[0]), dtype=_F64, device=x.device)
        total = x.sum(0)
        mean = total / n
        m2 = ((x - mean) ** 2).sum(0)
        low, high = x.amin(0), x.amax(0)
    else:
        n = w.sum().expand(d)
        total = (w * x).sum(0)
        mean = torch.where(n > 0, total / n, torch.zeros_like(total))
        m2 = (w * (x - mean) ** 2).sum(0)
        inf = torch.tensor(float("inf"), dtype=_F64, device=x.device)
        low, high = torch.where(w > 0, x, inf).amin(0), torch.where(w > 0, x, -inf).amax(0)
    return torch.stack([n, total, mean, m2, low, high], dim=1)


def moments_update(state, x, weights, /) -> None:
    """Merge the (weighted) moments of the rows of x into state [D, 6] = (n, sum, mean, m2, min, max)."""
    chk.no_meta(("x", x), ("weights", weights))
    state = _state(state)
    x = _values("x", x, state)
    w = _weights(weights, x.shape[0], state)
    if x.shape[0] == 0:
        return
    state.copy_(merge_moments(state, batch_moments(_as_columns(x, state.shape[0]), w)))


def moments_merge(state, other, /) -> None:
    """Merge the moments state `other` [D, 6] into `state` [D, 6]."""
    chk.no_meta(("other", other))
    state = _state(state)
    other = _other(other, state)
    state.copy_(merge_moments(state, other))


def comoments_update(state, x, y, /) -> None:
    """Merge the co-moments of (x, y) into state [D, 6] = (n, mean_x, mean_y, m2_x, m2_y, c_xy)."""
    chk.no_meta(("x", x), ("y", y))
    state = _state(state)
    x = _values("x", x, state)
    y = _values("y", y, state, like=x)
    if x.shape[0] == 0:
        return
    d = state.shape[0]
    x, y = _as_columns(x, d), _as_columns(y, d)
    mx, my = x.mean(0), y.mean(0)
    dx, dy = x - mx, y - my
    count = torch.full_like(mx, float(x.shape[0]))
    batch = torch.stack([count, mx, my, (dx * dx).sum(0), (dy * dy).sum(0), (dx * dy).sum(0)], dim=1)
    state.copy_(_merge_comoments(state, batch))


def comoments_merge(state, other, /) -> None:
    """Merge the co-moments state `other` [D, 6] into `state` [D, 6]."""
    chk.no_meta(("other", other))
    state = _state(state)
    other = _other(other, state)
    state.copy_(_merge_comoments(state, other))
