"""Input checks and the float64 formulas shared by the audio signal metrics (SNR, SI-SDR,
SA-SDR and their kin): per utterance, a ratio of two energies in decibels.

Every one of them is a formula of a few float64 sums per utterance (the last axis is time):
|t|^2, <t, p>, |p - t|^2 and, for the scale-invariant ones, the residual |alpha t - p|^2 of the
scaled target, each of the signals less their means where asked. ``signal_energies``
gets them in one call to the signal_sums kernel (C on CPU: up to three passes over the samples,
no float64 copy of them; the torch reference elsewhere and wherever a gradient is wanted), and
the formulas run on those [B]-sized sums. Every residual is summed directly, never from the
dot products, so a prediction close to its target, or signals with a large offset, lose no
digits (the dot-product identities would). Values are float64, one per utterance; the
functional forms cast them to torchmetrics' result dtype, the classes sum them in float64.
``eps`` is the machine epsilon of the caller's input dtype, added to numerator and denominator
as torchmetrics adds it (so a silent target against a silent prediction is 0 dB, not NaN).
"""

import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from ...errors import ShapeError
from ...kernels.audio.signal_sums import signal_sums
from ...kernels.reference.signal_sums import signal_sums_of

F64 = torch.float64


def checked_tensor(
    name: str, value: object, shape_words: str, min_dims: int = 1, torchmetrics_says: str = ""
) -> Tensor:
    """``value``: a real floating point tensor with at least ``min_dims`` dimensions (too few: a
    ShapeError, with ``torchmetrics_says``, its message there, in brackets)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor of shape {shape_words}, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name}: expected a floating point tensor of shape {shape_words}, got dtype {value.dtype}")
    if value.dim() < min_dims:
        raise ShapeError(
            f"{name}: expected a tensor of shape {shape_words} (at least {min_dims} dimension(s)), "
            f"got shape {list(value.shape)}" + (f" ({torchmetrics_says})" if torchmetrics_says else "")
        )
    return value


def check_same_shape(p: Tensor, t: Tensor) -> None:
    if p.shape != t.shape:
        raise ShapeError(
            f"target: expected the shape of preds {list(p.shape)}, got {list(t.shape)} "
            "(Predictions and targets are expected to have the same shape)"
        )


def checked_pair(
    preds: object,
    target: object,
    shape_words: str = "(..., time)",
    min_dims: int = 1,
    torchmetrics_says: str = "",
    same_shape_first: bool = False,
) -> Tuple[Tensor, Tensor]:
    """preds and target: real float tensors of one shape on one device (errors carry
    torchmetrics' words in brackets, so code matching its messages still matches).
    ``same_shape_first``: compare the shapes before counting dimensions, as torchmetrics does
    for that metric (it names the first failed check)."""
    if same_shape_first and isinstance(preds, Tensor) and isinstance(target, Tensor):
        check_same_shape(preds, target)
    p = checked_tensor("preds", preds, shape_words, min_dims, torchmetrics_says)
    t = checked_tensor("target", target, shape_words, min_dims, torchmetrics_says)
    check_same_shape(p, t)
    if p.device != t.device:
        raise ValueError(f"target: expected a tensor on {p.device}, where preds is, got one on {t.device}")
    return p, t


def refuse_non_finite(values: Tensor, preds: Tensor, target: Tensor) -> None:
    """A batch whose scores are not all finite is refused, naming why: a NaN or infinite sample,
    or finite ones whose energies overflow float64. The inputs are scanned only then (the
    scores' sum, which any NaN or infinity reaches, is checked on every batch: a caller that has
    the sum checks it first)."""
    if bool(torch.isfinite(values.sum(dtype=F64))):
        return
    for name, x in (("preds", preds), ("target", target)):
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name}: expected finite values, got NaN or infinity")
    raise ValueError("preds, target: expected signals whose energies fit float64, got a score of NaN or infinity")


def result_dtype(preds: Tensor, target: Tensor) -> torch.dtype:
    """torchmetrics' result dtype: its arithmetic in the inputs' promoted dtype."""
    return torch.promote_types(preds.dtype, target.dtype)


def eps_of(preds: Tensor) -> float:
    """torchmetrics' epsilon: the machine epsilon of preds' dtype."""
    return float(torch.finfo(preds.dtype).eps)


def centered(x: Tensor) -> Tensor:
    return x - x.mean(dim=-1, keepdim=True)


def signal_energies(
    preds: Tensor, target: Tensor, zero_mean: bool, group: int = 1, eps: Optional[float] = None
) -> Tensor:
    """float64 [..., 3] (or [..., 4] given ``eps``) per utterance of ``preds``, ``target``
    ([..., time]): (|t|^2, <t, p>, |p - t|^2[, |alpha t - p|^2]), the signals less their means
    when ``zero_mean``, alpha = (<t, p> + eps) / (|t|^2 + eps) over each ``group`` of consecutive
    utterances (the signal_sums kernel's columns, csrc/API_AUDIO.md). The C kernel on CPU; the
    torch reference's differentiable form when a gradient is wanted."""
    lead, samples = preds.shape[:-1], preds.shape[-1]
    p, t = preds.reshape(math.prod(lead), samples), target.reshape(math.prod(lead), samples)
    residual = eps is not None
    gain_eps = 0.0 if eps is None else eps
    if torch.is_grad_enabled() and (p.requires_grad or t.requires_grad):
        sums = signal_sums_of(p, t, zero_mean, group, gain_eps, residual)
    else:
        sums = torch.empty(p.shape[0], 4 if residual else 3, dtype=F64, device=p.device)
        signal_sums(sums, p, t, zero_mean, group, gain_eps)
    return sums.reshape(*lead, sums.shape[-1])


def decibels(numerator: Tensor, denominator: Tensor, eps: float) -> Tensor:
    return 10.0 * torch.log10((numerator + eps) / (denominator + eps))


def snr_of(energies: Tensor, eps: float) -> Tensor:
    """10 log10(|t|^2 / |t - p|^2) from signal_energies' columns."""
    return decibels(energies[..., 0], energies[..., 2], eps)


def si_sdr_of(energies: Tensor, eps: float) -> Tensor:
    """SI-SDR from signal_energies' four columns (made with this ``eps``): the target scaled by
    alpha = (<p, t> + eps) / (|t|^2 + eps) against the residual |alpha t - p|^2."""
    tt = energies[..., 0]
    alpha = (energies[..., 1] + eps) / (tt + eps)
    return decibels(alpha.square() * tt, energies[..., 3], eps)


def snr_values(preds: Tensor, target: Tensor, eps: float, zero_mean: bool) -> Tensor:
    """10 log10(|target|^2 / |target - preds|^2) per utterance, float64."""
    return snr_of(signal_energies(preds, target, zero_mean), eps)


def si_sdr_values(preds: Tensor, target: Tensor, eps: float, zero_mean: bool) -> Tensor:
    """Scale-invariant SDR per utterance, float64: the target scaled by the least-squares gain
    alpha = <preds, target> / |target|^2 (each with eps), against the residual."""
    return si_sdr_of(signal_energies(preds, target, zero_mean, eps=eps), eps)


def sa_sdr_values(preds: Tensor, target: Tensor, eps: float, scale_invariant: bool, zero_mean: bool) -> Tensor:
    """Source-aggregated SDR per mixture ([..., spk, time] -> [...]), float64: the energies of
    every speaker added before the ratio; one gain for all speakers when scale-invariant."""
    energies = signal_energies(preds, target, zero_mean, max(1, preds.shape[-2]), eps if scale_invariant else None)
    energies = energies.sum(-2)
    return si_sdr_of(energies, eps) if scale_invariant else snr_of(energies, eps)


def complex_as_real(name: str, value: object) -> object:
    """A complex tensor [..., F, T] as its real view [..., F, T, 2]; anything else unchanged."""
    if isinstance(value, Tensor) and value.is_complex():
        return torch.view_as_real(value)
    return value


def spectrogram_pair(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """C-SI-SNR's inputs: real [..., F, T, 2] (or complex [..., F, T]) of one shape, returned as
    real tensors [..., F * T * 2] (the spectrogram flattened into one signal)."""
    words = "(..., frequency, time, 2) (or complex (..., frequency, time))"
    says = "Predictions and targets are expected to have the shape (..., frequency, time, 2)"
    p, t = checked_pair(complex_as_real("preds", preds), complex_as_real("target", target), words, 3, says)
    for name, x in (("preds", p), ("target", t)):
        if x.shape[-1] != 2:
            raise ShapeError(f"{name}: expected a tensor of shape {words}, got shape {list(x.shape)} ({says})")
    return p.flatten(-3), t.flatten(-3)  # (not reshape(..., -1): ambiguous for an empty batch)
