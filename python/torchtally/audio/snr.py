"""SignalNoiseRatio, ScaleInvariantSignalNoiseRatio and ComplexScaleInvariantSignalNoiseRatio
(torchmetrics.audio.snr's names): the mean over utterances of the functional forms' values
(torchtally.functional.audio.snr), each computed in float64.

State (torchtally.audio.utterance_mean): a float64 sum of the values and an int64 count, 16
bytes; a sync is one all_reduce per dtype. Results in ``self.dtype`` (torch's default dtype
when the metric was made), as torchmetrics' float states give them.

Differences from torchmetrics: float64 values and sums (torchmetrics: the inputs' dtype, summed
into a float32 state); bad inputs raise TypeError / ValueError naming the argument with the
state unchanged (mismatched shapes: torchtally.errors.ShapeError, also the RuntimeError
torchmetrics raises); results carry no gradient
(``is_differentiable`` is False; the functional forms do carry one).
"""

from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from ..base.input_guard import UNREADABLE_DTYPES
from ..functional.audio.sdr import check_flag
from ..functional.audio.signals import checked_pair, eps_of, si_sdr_values, snr_values, spectrogram_pair
from .utterance_mean import UtteranceMean

__all__ = ["ComplexScaleInvariantSignalNoiseRatio", "ScaleInvariantSignalNoiseRatio", "SignalNoiseRatio"]


class SignalNoiseRatio(UtteranceMean):
    """Mean signal-to-noise ratio (dB) of ``preds`` against ``target`` (float, ``(..., time)``),
    each utterance ``10 log10(|target|^2 / |target - preds|^2)``; ``zero_mean`` subtracts each
    signal's mean first.

    State: ``sum_snr`` float64 [], ``total`` int64 [] (16 bytes; one all_reduce per dtype to
    sync). Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import SignalNoiseRatio
        >>> SignalNoiseRatio().update(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])).compute()
        tensor(16.1805)
    """

    if TYPE_CHECKING:
        sum_snr: Tensor
        total: Tensor

    def __init__(self, zero_mean: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.zero_mean = zero_mean
        self._add_states("sum_snr", "total")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = checked_pair(preds, target)
        self._add_values(snr_values(p, t, eps_of(p), bool(self.zero_mean)), (p, t))


class ScaleInvariantSignalNoiseRatio(UtteranceMean):
    """Mean scale-invariant signal-to-noise ratio (dB) of ``preds`` against ``target`` (float,
    ``(..., time)``): SI-SDR of the zero-mean signals, per utterance.

    State: ``sum_si_snr`` float64 [], ``total`` int64 [] (16 bytes; one all_reduce per dtype to
    sync). Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import ScaleInvariantSignalNoiseRatio
        >>> m = ScaleInvariantSignalNoiseRatio()
        >>> m.update(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])).compute()
        tensor(15.0918)
    """

    if TYPE_CHECKING:
        sum_si_snr: Tensor
        total: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._add_states("sum_si_snr", "total")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = checked_pair(preds, target)
        self._add_values(si_sdr_values(p, t, eps_of(p), True), (p, t))


class ComplexScaleInvariantSignalNoiseRatio(UtteranceMean):
    """Mean complex scale-invariant signal-to-noise ratio (dB) of spectrograms ``preds`` against
    ``target``: real ``(..., frequency, time, 2)`` or complex ``(..., frequency, time)``, each
    flattened into one real signal and scored by SI-SDR (``zero_mean``: means subtracted first).

    State: ``ci_snr_sum`` float64 [], ``num`` int64 [] (16 bytes; one all_reduce per dtype to
    sync). Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import ComplexScaleInvariantSignalNoiseRatio
        >>> target = torch.linspace(-1, 1, 2 * 3 * 4 * 2).reshape(2, 3, 4, 2)
        >>> ComplexScaleInvariantSignalNoiseRatio().update(target + 0.1 * target.flip(-1), target).compute()
        tensor(43.6614)
    """

    if TYPE_CHECKING:
        ci_snr_sum: Tensor
        num: Tensor

    # complex spectrograms are read as (real, imaginary) pairs
    refused_input_dtypes = UNREADABLE_DTYPES - {torch.complex64, torch.complex128}

    def __init__(self, zero_mean: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.zero_mean = check_flag("zero_mean", zero_mean)
        self._add_states("ci_snr_sum", "num")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = spectrogram_pair(preds, target)
        self._add_values(si_sdr_values(p, t, eps_of(p), self.zero_mean), (p, t))
