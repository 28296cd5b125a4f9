"""NonIntrusiveSpeechQualityAssessment: the mean NISQA scores of the utterances seen, from the
user's network (torchtally.functional.audio.nisqa). State: torchtally.audio.scored_utterances
(``sum_nisqa`` float64 [5], ``total`` and ``failed`` int64: 56 bytes; a sync is one header exchange
that carries them)."""

from typing import TYPE_CHECKING, Any, Dict, Optional

from torch import Tensor, nn

from ..functional.audio.nisqa import check_nisqa_model, nisqa_scores
from ..functional.audio.package_scores import check_positive_int, require
from .scored_utterances import ScoredUtterances

__all__ = ["NonIntrusiveSpeechQualityAssessment"]


class _ModelRef:
    """Holds the network outside the metric's module tree (it is not metric state)."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model


class NonIntrusiveSpeechQualityAssessment(ScoredUtterances):
    """Mean NISQA scores of speech ``preds`` ``(..., time)`` at ``fs`` Hz: ``update(preds)``;
    ``compute`` gives [5]: MOS, noisiness, discontinuity, coloration, loudness. ``model``: the
    NISQA network as an ``nn.Module`` called as ``model(segments, n_wins)`` returning [B, 5];
    ``args``: its settings (the ``args`` dict of NISQA's ``nisqa.tar``); nothing downloads and
    a ValueError says what to pass when they are missing. Needs `librosa`. State: float64
    ``sum_nisqa`` [5], int64 ``total`` and ``failed`` (56 bytes; a sync is one header exchange
    that carries them).

    Differences from torchmetrics: the network and its settings are the user's (torchmetrics
    downloads NISQA's weights into its own copy of the network); the sum is float64.

        >>> import torch
        >>> from torchtally.audio import NonIntrusiveSpeechQualityAssessment
        >>> class Net(torch.nn.Module):
        ...     def forward(self, x, n_wins):
        ...         return x.mean(dim=(2, 3))[:, :5] + n_wins[:, None]
        >>> args = dict(ms_n_fft=512, ms_hop_length=0.01, ms_win_length=0.02, ms_n_mels=16, ms_fmax=8000,
        ...             ms_seg_length=15, ms_seg_hop_length=4, ms_max_segments=40)
        >>> metric = NonIntrusiveSpeechQualityAssessment(16000, model=Net(), args=args)
        >>> metric.update(torch.sin(torch.arange(8000) * 0.05)).compute().shape
        torch.Size([5])
    """

    plot_lower_bound = 0.0
    plot_upper_bound = 5.0
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_nisqa: Tensor
        total: Tensor
        failed: Tensor

    def __init__(
        self, fs: int, *, model: Optional[nn.Module] = None, args: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> None:
        super().__init__("sum_nisqa", (5,), **kwargs)
        require("librosa", "librosa", type(self).__name__)
        self.fs = check_positive_int(fs, "fs")
        model, args = check_nisqa_model(model, args)
        self._model_ref = _ModelRef(model)
        self.args = dict(args)

    def update(self, preds: Tensor) -> None:
        self.add_scores(nisqa_scores(preds, self.fs, self._model_ref.model, self.args))
