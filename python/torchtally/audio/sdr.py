"""SignalDistortionRatio, ScaleInvariantSignalDistortionRatio and
SourceAggregatedSignalDistortionRatio (torchmetrics.audio.sdr's names): the mean over
utterances (mixtures, for SA-SDR) of the functional forms' values
(torchtally.functional.audio.sdr), each computed in float64.

State (torchtally.audio.utterance_mean): a float64 sum of the values and an int64 count, 16
bytes; a sync is one all_reduce per dtype. Results in ``self.dtype``.

Differences from torchmetrics: SI-SDR and SA-SDR values in float64 (torchmetrics: the inputs'
dtype) and every sum in float64 (torchmetrics: a float32 state); SDR's ``use_cg_iter`` is
accepted, the filter is always solved for exactly (torchmetrics with fast-bss-eval installed
approximates it by that many conjugate-gradient iterations); bad inputs and options raise
TypeError / ValueError naming the argument with the state unchanged; results carry no gradient
(``is_differentiable`` is False; the functional forms do carry one).
"""

from typing import TYPE_CHECKING, Any, Optional

from torch import Tensor

from ..functional.audio.sdr import check_flag, check_sdr_options, checked_sources, sdr_values
from ..functional.audio.signals import checked_pair, eps_of, sa_sdr_values, si_sdr_values
from .utterance_mean import UtteranceMean

__all__ = ["ScaleInvariantSignalDistortionRatio", "SignalDistortionRatio", "SourceAggregatedSignalDistortionRatio"]


class SignalDistortionRatio(UtteranceMean):
    """Mean signal-to-distortion ratio (dB, BSS Eval's for one source) of ``preds`` against
    ``target`` (float, ``(..., time)``): per utterance, the prediction's projection onto
    ``filter_length`` delayed copies of the target against the rest (see
    torchtally.functional.audio.sdr). ``zero_mean`` subtracts the means first; ``load_diag``
    regularises the system (silent targets).

    State: ``sum_sdr`` float64 [], ``total`` int64 [] (16 bytes; one all_reduce per dtype to
    sync). Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import SignalDistortionRatio
        >>> t = torch.linspace(0, 20, 400).sin()
        >>> SignalDistortionRatio(filter_length=16).update(t + 0.1 * torch.linspace(0, 137, 400).cos(), t).compute()
        tensor(19.9180)
    """

    if TYPE_CHECKING:
        sum_sdr: Tensor
        total: Tensor
    traceable_update = False  # the time axis's length picks the FFT size in Python

    def __init__(
        self,
        use_cg_iter: Optional[int] = None,
        filter_length: int = 512,
        zero_mean: bool = False,
        load_diag: Optional[float] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_sdr_options(use_cg_iter, filter_length, load_diag)
        self.use_cg_iter = use_cg_iter
        self.filter_length = filter_length
        self.zero_mean = zero_mean
        self.load_diag = load_diag
        self._add_states("sum_sdr", "total")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = checked_pair(preds, target)
        self._add_values(sdr_values(p, t, self.filter_length, bool(self.zero_mean), self.load_diag), (p, t))


class ScaleInvariantSignalDistortionRatio(UtteranceMean):
    """Mean scale-invariant signal-to-distortion ratio (dB) of ``preds`` against ``target``
    (float, ``(..., time)``): per utterance, the target scaled by the least-squares gain against
    the residual; ``zero_mean`` subtracts the means first.

    State: ``sum_si_sdr`` float64 [], ``total`` int64 [] (16 bytes; one all_reduce per dtype to
    sync). Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import ScaleInvariantSignalDistortionRatio
        >>> m = ScaleInvariantSignalDistortionRatio()
        >>> m.update(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])).compute()
        tensor(18.4030)
    """

    if TYPE_CHECKING:
        sum_si_sdr: Tensor
        total: Tensor

    def __init__(self, zero_mean: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.zero_mean = zero_mean
        self._add_states("sum_si_sdr", "total")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = checked_pair(preds, target)
        self._add_values(si_sdr_values(p, t, eps_of(p), bool(self.zero_mean)), (p, t))


class SourceAggregatedSignalDistortionRatio(UtteranceMean):
    """Mean source-aggregated signal-to-distortion ratio (dB) of ``preds`` against ``target``
    (float, ``(..., spk, time)``): per mixture, the speakers' energies added before the ratio;
    ``scale_invariant`` scales every speaker's target by one common gain.

    State: ``msum`` float64 [], ``mnum`` int64 [] (16 bytes; one all_reduce per dtype to sync).
    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.audio import SourceAggregatedSignalDistortionRatio
        >>> target = torch.tensor([[3.0, -0.5, 2.0, 7.0], [1.0, 2.0, -1.0, 0.5]])
        >>> SourceAggregatedSignalDistortionRatio().update(target + 0.3, target).compute()
        tensor(22.2228)
    """

    if TYPE_CHECKING:
        msum: Tensor
        mnum: Tensor

    def __init__(self, scale_invariant: bool = True, zero_mean: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale_invariant = check_flag("scale_invariant", scale_invariant)
        self.zero_mean = check_flag("zero_mean", zero_mean)
        self._add_states("msum", "mnum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = checked_sources(preds, target)
        self._add_values(sa_sdr_values(p, t, eps_of(p), self.scale_invariant, self.zero_mean), (p, t))
