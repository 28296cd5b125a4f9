"""``signal_distortion_ratio``, ``scale_invariant_signal_distortion_ratio`` and
``source_aggregated_signal_distortion_ratio`` (torchmetrics.functional.audio.sdr's names).

SDR (BSS Eval's, for one source): the prediction is projected onto the ``filter_length``
delayed copies of the target; SDR is the energy of that projection against the rest, in dB.
With both signals scaled to unit norm, the projection's energy is the coherence ``c = b^T R^-1
b`` (R: the Toeplitz matrix of the target's autocorrelation, b: the cross-correlation, both
from one FFT each) and SDR is ``10 log10(c / (1 - c))``. Computed in float64 as torchmetrics,
with R solved exactly (Levinson's recursion, O(L^2) per utterance, instead of an LU factorisation of
the L x L matrix, O(L^3)).

Differences from torchmetrics: SI-SDR and SA-SDR are computed in float64 (torchmetrics: the
inputs' dtype; values agree to the inputs' rounding); ``use_cg_iter`` is accepted but the
system is always solved exactly (torchmetrics, with fast-bss-eval installed, runs that many
conjugate-gradient iterations, an approximation; without it, it warns and solves exactly, as
here, silently); mismatched shapes raise ValueError naming target (torchmetrics:
RuntimeError); signals with no samples raise ValueError for SDR (torchmetrics: a math error).
"""

import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from ...kernels.audio.toeplitz_solve import toeplitz_solve
from .signals import F64, centered, checked_pair, eps_of, result_dtype, sa_sdr_values, si_sdr_values

__all__ = [
    "scale_invariant_signal_distortion_ratio",
    "signal_distortion_ratio",
    "source_aggregated_signal_distortion_ratio",
]


def check_sdr_options(use_cg_iter: object, filter_length: object, load_diag: object) -> None:
    if use_cg_iter is not None and (
        isinstance(use_cg_iter, bool) or not isinstance(use_cg_iter, int) or use_cg_iter < 1
    ):
        raise ValueError(f"use_cg_iter: expected None or a positive integer, got {use_cg_iter!r}")
    if isinstance(filter_length, bool) or not isinstance(filter_length, int) or filter_length < 1:
        raise ValueError(f"filter_length: expected a positive integer, got {filter_length!r}")
    if load_diag is not None and (isinstance(load_diag, bool) or not isinstance(load_diag, (int, float))):
        raise ValueError(f"load_diag: expected None or a number, got {load_diag!r}")


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected a bool, got {value!r}")
    return value


def sdr_values(
    preds: Tensor, target: Tensor, filter_length: int, zero_mean: bool, load_diag: Optional[float]
) -> Tensor:
    """SDR per utterance ([..., time] -> [...]), float64 (see the module docstring)."""
    if preds.shape[-1] == 0:
        raise ValueError("preds: expected signals of at least one sample along the time axis, got 0")
    if preds.numel() == 0:  # no utterance (FFT libraries refuse an empty batch)
        return preds.new_zeros(preds.shape[:-1], dtype=F64)
    p, t = preds.to(F64), target.to(F64)
    if zero_mean:
        p, t = centered(p), centered(t)
    p = p / torch.linalg.norm(p, dim=-1, keepdim=True).clamp(min=1e-6)
    t = t / torch.linalg.norm(t, dim=-1, keepdim=True).clamp(min=1e-6)
    # correlations by FFT, zero-padded past the full linear correlation's length
    n_fft = 2 ** math.ceil(math.log2(2 * p.shape[-1] - 1))
    t_spec = torch.fft.rfft(t, n=n_fft, dim=-1)
    p_spec = torch.fft.rfft(p, n=n_fft, dim=-1)
    autocorr = torch.fft.irfft(t_spec.real.square() + t_spec.imag.square(), n=n_fft, dim=-1)[..., :filter_length]
    crosscorr = torch.fft.irfft(t_spec.conj() * p_spec, n=n_fft, dim=-1)[..., :filter_length]
    if load_diag is not None:
        autocorr = torch.cat([autocorr[..., :1] + load_diag, autocorr[..., 1:]], dim=-1)
    solution = _filter(autocorr, crosscorr)
    coherence = (crosscorr * solution).sum(-1)
    return 10.0 * torch.log10(coherence / (1 - coherence))


def _filter(autocorr: Tensor, crosscorr: Tensor) -> Tensor:
    """The distortion filter: R x = crosscorr, R the symmetric Toeplitz matrix of ``autocorr``
    (positive definite unless the target is silent): Levinson's O(L^2) recursion (the
    toeplitz_solve kernel); where it finds R not positive definite, the batch is solved by LU
    on the full matrices, which says whether R is singular."""
    rows = autocorr.reshape(-1, autocorr.shape[-1])
    solution = torch.empty_like(rows)
    toeplitz_solve(solution, rows, crosscorr.reshape(rows.shape))
    if bool(torch.isfinite(solution).all()):
        return solution.reshape(autocorr.shape)
    lags = torch.arange(autocorr.shape[-1], device=autocorr.device)
    toeplitz = autocorr[..., (lags[:, None] - lags[None, :]).abs()]
    try:
        return torch.linalg.solve(toeplitz, crosscorr.unsqueeze(-1)).squeeze(-1)
    except torch.linalg.LinAlgError as exc:  # torch says so only after trying: the system has no solution
        raise ValueError(
            "target: the distortion filter is undefined: the target's autocorrelation matrix is singular (a silent "
            "target, or one whose energy does not fit float64); give load_diag to regularise it"
        ) from exc


def signal_distortion_ratio(
    preds: Tensor,
    target: Tensor,
    use_cg_iter: Optional[int] = None,
    filter_length: int = 512,
    zero_mean: bool = False,
    load_diag: Optional[float] = None,
) -> Tensor:
    """Signal-to-distortion ratio of ``preds`` against ``target`` (float, ``(..., time)``) per
    utterance, shape ``(...)``: float64 for float64 preds, else float32 (torchmetrics' dtypes).
    ``filter_length``: the distortion filter's length; ``zero_mean``: subtract each signal's
    mean first; ``load_diag``: added to R's diagonal (regularises silent targets).

        >>> import torch
        >>> from torchtally.functional.audio import signal_distortion_ratio
        >>> t = torch.linspace(0, 20, 400).sin()
        >>> p = t + 0.1 * torch.linspace(0, 137, 400).cos()
        >>> signal_distortion_ratio(p, t, filter_length=16)
        tensor(19.9180)
    """
    p, t = checked_pair(preds, target)
    check_sdr_options(use_cg_iter, filter_length, load_diag)
    values = sdr_values(p, t, filter_length, bool(zero_mean), load_diag)
    return values if p.dtype == F64 else values.float()


def scale_invariant_signal_distortion_ratio(preds: Tensor, target: Tensor, zero_mean: bool = False) -> Tensor:
    """Scale-invariant signal-to-distortion ratio of ``preds`` against ``target`` (float,
    ``(..., time)``) per utterance, shape ``(...)``.

        >>> import torch
        >>> from torchtally.functional.audio import scale_invariant_signal_distortion_ratio
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> scale_invariant_signal_distortion_ratio(preds, target)
        tensor(18.4030)
    """
    p, t = checked_pair(preds, target)
    return si_sdr_values(p, t, eps_of(p), bool(zero_mean)).to(result_dtype(p, t))


def checked_sources(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """SA-SDR's inputs: [..., spk, time] of one shape (the shapes compared first, as torchmetrics)."""
    says = "The preds and target should have the shape (..., spk, time)"
    return checked_pair(preds, target, "(..., spk, time)", 2, says, same_shape_first=True)


def source_aggregated_signal_distortion_ratio(
    preds: Tensor, target: Tensor, scale_invariant: bool = True, zero_mean: bool = False
) -> Tensor:
    """Source-aggregated signal-to-distortion ratio of ``preds`` against ``target`` (float,
    ``(..., spk, time)``) per mixture, shape ``(...)``: every speaker's energies added before
    the ratio; ``scale_invariant`` scales all the speakers' targets by one common gain.

        >>> import torch
        >>> from torchtally.functional.audio import source_aggregated_signal_distortion_ratio
        >>> target = torch.tensor([[3.0, -0.5, 2.0, 7.0], [1.0, 2.0, -1.0, 0.5]])
        >>> source_aggregated_signal_distortion_ratio(target + 0.3, target)
        tensor(22.2228)
    """
    p, t = checked_sources(preds, target)
    values = sa_sdr_values(p, t, eps_of(p), bool(scale_invariant), bool(zero_mean))
    return values.to(result_dtype(p, t))
