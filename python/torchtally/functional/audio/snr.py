"""``signal_noise_ratio``, ``scale_invariant_signal_noise_ratio`` and
``complex_scale_invariant_signal_noise_ratio`` (torchmetrics.functional.audio.snr's names):
one value per utterance, in decibels.

Computed in float64 and returned in torchmetrics' dtype (the inputs' promoted float dtype), with
the epsilon of preds' dtype as torchmetrics. Gradients flow through (usable as a training loss).

Differences from torchmetrics: float64 arithmetic (torchmetrics: the inputs' dtype; the values
agree to the inputs' rounding, and float16 / bfloat16 inputs no longer overflow their sums);
mismatched shapes or devices raise ValueError naming target (torchmetrics: RuntimeError);
non-float inputs raise TypeError naming the argument.
"""

from torch import Tensor

from .signals import checked_pair, eps_of, result_dtype, si_sdr_values, snr_values, spectrogram_pair

__all__ = ["complex_scale_invariant_signal_noise_ratio", "scale_invariant_signal_noise_ratio", "signal_noise_ratio"]


def signal_noise_ratio(preds: Tensor, target: Tensor, zero_mean: bool = False) -> Tensor:
    """Signal-to-noise ratio ``10 log10(|target|^2 / |target - preds|^2)`` of ``preds`` against
    ``target`` (float, shape ``(..., time)``) per utterance: shape ``(...)``. ``zero_mean``
    subtracts each signal's mean first.

        >>> import torch
        >>> from torchtally.functional.audio import signal_noise_ratio
        >>> signal_noise_ratio(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0]))
        tensor(16.1805)
    """
    p, t = checked_pair(preds, target)
    return snr_values(p, t, eps_of(p), bool(zero_mean)).to(result_dtype(p, t))


def scale_invariant_signal_noise_ratio(preds: Tensor, target: Tensor) -> Tensor:
    """Scale-invariant signal-to-noise ratio per utterance: SI-SDR of the zero-mean signals.
    ``preds``, ``target``: float, shape ``(..., time)``; result shape ``(...)``.

        >>> import torch
        >>> from torchtally.functional.audio import scale_invariant_signal_noise_ratio
        >>> scale_invariant_signal_noise_ratio(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0]))
        tensor(15.0918)
    """
    p, t = checked_pair(preds, target)
    return si_sdr_values(p, t, eps_of(p), True).to(result_dtype(p, t))


def complex_scale_invariant_signal_noise_ratio(preds: Tensor, target: Tensor, zero_mean: bool = False) -> Tensor:
    """Complex scale-invariant signal-to-noise ratio per spectrogram: SI-SDR of the spectrograms
    flattened into one real signal each. ``preds``, ``target``: real ``(..., frequency, time, 2)``
    or complex ``(..., frequency, time)``; result shape ``(...)``.

        >>> import torch
        >>> from torchtally.functional.audio import complex_scale_invariant_signal_noise_ratio
        >>> target = torch.linspace(-1, 1, 2 * 3 * 4 * 2).reshape(2, 3, 4, 2)
        >>> complex_scale_invariant_signal_noise_ratio(target + 0.1 * target.flip(-1), target)
        tensor([43.6614, 43.6614])
    """
    p, t = spectrogram_pair(preds, target)
    return si_sdr_values(p, t, eps_of(p), bool(zero_mean)).to(result_dtype(p, t))
