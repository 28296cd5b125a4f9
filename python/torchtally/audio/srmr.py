"""SpeechReverberationModulationEnergyRatio: the mean SRMR of the utterances seen (computed by
torchtally.functional.audio.srmr with the `gammatone` package's filters). State:
torchtally.audio.scored_utterances (``msum`` float64, ``total`` and ``failed`` int64: 24 bytes;
a sync is one header exchange that carries them)."""

from typing import TYPE_CHECKING, Any, Optional

from torch import Tensor

from ..functional.audio.package_scores import require
from ..functional.audio.srmr import check_srmr_args, srmr_scores
from .scored_utterances import ScoredUtterances

__all__ = ["SpeechReverberationModulationEnergyRatio"]


class SpeechReverberationModulationEnergyRatio(ScoredUtterances):
    """Mean SRMR (speech-to-reverberation modulation energy ratio, non-intrusive, higher is
    better) of the utterances ``preds`` ``(..., time)`` at ``fs`` Hz: ``update(preds)``. The
    arguments are torchmetrics' (see
    torchtally.functional.audio.speech_reverberation_modulation_energy_ratio). Needs the
    `gammatone` package (``pip install gammatone``; ModuleNotFoundError naming it otherwise),
    not torchaudio. State: float64 ``msum``, int64 ``total`` and ``failed`` (24 bytes; a sync is
    one header exchange that carries them, whatever the data).

    Differences from torchmetrics: a silent utterance is counted in ``failed``, left out of the
    mean, and ``compute`` warns how many failed (torchmetrics raises, or misaligns the batch);
    with ``fast`` the frames are counted on the gammatonegram's length, as SRMRpy; the sum is
    float64 (torchmetrics: float32); not differentiable (numpy and scipy compute it; torchmetrics
    declares it differentiable); the functional form's other differences apply.

        >>> import torch
        >>> from torchtally.audio import SpeechReverberationModulationEnergyRatio
        >>> g = torch.Generator().manual_seed(1)
        >>> preds = torch.sin(torch.arange(8000) * 0.3) * (torch.arange(8000) % 2000 < 1200)
        >>> srmr = SpeechReverberationModulationEnergyRatio(8000)
        >>> srmr(preds + 0.01 * torch.randn(8000, generator=g))
        tensor(17.7540)
    """

    plot_lower_bound = None
    plot_upper_bound = None
    if TYPE_CHECKING:  # declared states, read as attributes
        msum: Tensor
        total: Tensor
        failed: Tensor

    def __init__(
        self,
        fs: int,
        n_cochlear_filters: int = 23,
        low_freq: float = 125,
        min_cf: float = 4,
        max_cf: Optional[float] = None,
        norm: bool = False,
        fast: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__("msum", (), **kwargs)
        require("gammatone.filters", "gammatone", type(self).__name__)
        check_srmr_args(fs, n_cochlear_filters, low_freq, min_cf, max_cf, norm, fast)
        self.fs = fs
        self.n_cochlear_filters = n_cochlear_filters
        self.low_freq = low_freq
        self.min_cf = min_cf
        self.max_cf = max_cf
        self.norm = norm
        self.fast = fast

    def update(self, preds: Tensor) -> None:
        self.add_scores(
            srmr_scores(
                preds, self.fs, self.n_cochlear_filters, self.low_freq, self.min_cf, self.max_cf, self.norm, self.fast
            )
        )
