"""Input checks and the float64 formulas shared by the audio signal metrics (SNR, SI-SDR,
SA-SDR and their kin): per utterance, a ratio of two energies in decibels.

Every formula here takes float64 tensors and returns float64 values, one per utterance (the
last axis is time); the functional forms cast the values to torchmetrics' result dtype, the
classes sum them in float64. ``eps`` is the machine epsilon of the caller's input dtype, added
to numerator and denominator as torchmetrics adds it (so a silent target against a silent
prediction is 0 dB, not NaN).
"""

from typing import Tuple

import torch
from torch import Tensor

from ...errors import ShapeError

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


def result_dtype(preds: Tensor, target: Tensor) -> torch.dtype:
    """torchmetrics' result dtype: its arithmetic in the inputs' promoted dtype."""
    return torch.promote_types(preds.dtype, target.dtype)


def eps_of(preds: Tensor) -> float:
    """torchmetrics' epsilon: the machine epsilon of preds' dtype."""
    return float(torch.finfo(preds.dtype).eps)


def centered(x: Tensor) -> Tensor:
    return x - x.mean(dim=-1, keepdim=True)


def decibels(numerator: Tensor, denominator: Tensor, eps: float) -> Tensor:
    return 10.0 * torch.log10((numerator + eps) / (denominator + eps))


def snr_values(preds: Tensor, target: Tensor, eps: float, zero_mean: bool) -> Tensor:
    """10 log10(|target|^2 / |target - preds|^2) per utterance, float64."""
    p, t = preds.to(F64), target.to(F64)
    if zero_mean:
        p, t = centered(p), centered(t)
    return decibels(t.square().sum(-1), (t - p).square().sum(-1), eps)


def si_sdr_values(preds: Tensor, target: Tensor, eps: float, zero_mean: bool) -> Tensor:
    """Scale-invariant SDR per utterance, float64: the target scaled by the least-squares gain
    alpha = <preds, target> / |target|^2 (each with eps), against the residual."""
    p, t = preds.to(F64), target.to(F64)
    if zero_mean:
        p, t = centered(p), centered(t)
    alpha = ((p * t).sum(-1, keepdim=True) + eps) / (t.square().sum(-1, keepdim=True) + eps)
    scaled = alpha * t
    return decibels(scaled.square().sum(-1), (scaled - p).square().sum(-1), eps)


def sa_sdr_values(preds: Tensor, target: Tensor, eps: float, scale_invariant: bool, zero_mean: bool) -> Tensor:
    """Source-aggregated SDR per mixture ([..., spk, time] -> [...]), float64: the energies of
    every speaker added before the ratio; one gain for all speakers when scale-invariant."""
    p, t = preds.to(F64), target.to(F64)
    if zero_mean:
        p, t = centered(p), centered(t)
    if scale_invariant:
        alpha = ((p * t).sum((-2, -1), keepdim=True) + eps) / (t.square().sum((-2, -1), keepdim=True) + eps)
        t = alpha * t
    return decibels(t.square().sum((-2, -1)), (t - p).square().sum((-2, -1)), eps)


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
    return p.reshape(*p.shape[:-3], -1), t.reshape(*t.shape[:-3], -1)
