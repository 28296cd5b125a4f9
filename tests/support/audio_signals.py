"""numpy references for the audio signal metrics (float64, from the papers' formulas) and the
random signals the audio tests draw. Imported by tests/audio as ``support.audio_signals``."""

import numpy as np
import torch

F32_EPS = float(np.finfo(np.float32).eps)


def signals(seed, shape, dtype=torch.float32, noise=0.3):
    """(preds, target): target ~ N(0, 1) of ``shape``, preds = 0.8 target + noise * N(0, 1)."""
    g = torch.Generator().manual_seed(seed)
    target = torch.randn(*shape, generator=g, dtype=torch.float64)
    preds = 0.8 * target + noise * torch.randn(*shape, generator=g, dtype=torch.float64)
    return preds.to(dtype), target.to(dtype)


def _np(x):
    return x.detach().cpu().double().numpy()


def _center(x):
    return x - x.mean(axis=-1, keepdims=True)


def snr(preds, target, zero_mean=False, eps=F32_EPS):
    p, t = _np(preds), _np(target)
    if zero_mean:
        p, t = _center(p), _center(t)
    return 10 * np.log10(((t**2).sum(-1) + eps) / (((t - p) ** 2).sum(-1) + eps))


def si_sdr(preds, target, zero_mean=False, eps=F32_EPS):
    p, t = _np(preds), _np(target)
    if zero_mean:
        p, t = _center(p), _center(t)
    alpha = ((p * t).sum(-1, keepdims=True) + eps) / ((t**2).sum(-1, keepdims=True) + eps)
    s = alpha * t
    return 10 * np.log10(((s**2).sum(-1) + eps) / (((s - p) ** 2).sum(-1) + eps))


def sa_sdr(preds, target, scale_invariant=True, zero_mean=False, eps=F32_EPS):
    p, t = _np(preds), _np(target)
    if zero_mean:
        p, t = _center(p), _center(t)
    if scale_invariant:
        alpha = ((p * t).sum((-2, -1), keepdims=True) + eps) / ((t**2).sum((-2, -1), keepdims=True) + eps)
        t = alpha * t
    return 10 * np.log10(((t**2).sum((-2, -1)) + eps) / (((t - p) ** 2).sum((-2, -1)) + eps))


def sdr(preds, target, filter_length=512, zero_mean=False, load_diag=None):
    """BSS Eval's SDR for one source by its definition: the least-squares projection of the
    (unit-norm) prediction onto the filter_length delayed copies of the (unit-norm) target,
    built as an explicit matrix of shifted signals and solved with numpy's lstsq."""
    p, t = _np(preds), _np(target)
    out = np.empty(p.shape[:-1])
    for idx in np.ndindex(*p.shape[:-1]):
        x, y = p[idx], t[idx]
        if zero_mean:
            x, y = x - x.mean(), y - y.mean()
        x = x / max(np.linalg.norm(x), 1e-6)
        y = y / max(np.linalg.norm(y), 1e-6)
        n = len(y)
        shifts = np.zeros((n + filter_length - 1, filter_length))
        for k in range(filter_length):
            shifts[k : k + n, k] = y
        gram = shifts.T @ shifts
        if load_diag is not None:
            gram = gram + load_diag * np.eye(filter_length)
        b = shifts.T @ np.concatenate([x, np.zeros(filter_length - 1)])
        coh = b @ np.linalg.solve(gram, b)
        out[idx] = 10 * np.log10(coh / (1 - coh))
    return out
