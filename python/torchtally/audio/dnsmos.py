"""DeepNoiseSuppressionMeanOpinionScore: the mean DNSMOS (P.808 MOS, SIG, BAK, OVRL) of the
utterances seen, from the user's models (torchtally.functional.audio.dnsmos). State:
torchtally.audio.scored_utterances (``sum_dnsmos`` float64 [4], ``total`` and ``failed`` int64:
48 bytes; a sync is one header exchange that carries them)."""

from typing import TYPE_CHECKING, Any, Optional

from torch import Tensor

from ..functional.audio.dnsmos import dnsmos_scores, resolve_dnsmos_models
from ..functional.audio.package_scores import check_bool, check_positive_int, require
from .scored_utterances import ScoredUtterances

__all__ = ["DeepNoiseSuppressionMeanOpinionScore"]


class DeepNoiseSuppressionMeanOpinionScore(ScoredUtterances):
    """Mean DNSMOS of speech ``preds`` ``(..., time)`` at ``fs`` Hz: ``update(preds)``;
    ``compute`` gives [4]: P.808 MOS, SIG, BAK, OVRL. The models (nothing downloads):
    ``p808_model`` and ``sig_bak_ovr_model``, local paths to the DNS-Challenge's ONNX files
    (``DNSMOS/model_v8.onnx``; ``DNSMOS/sig_bak_ovr.onnx``, or ``pDNSMOS/sig_bak_ovr.onnx``
    when ``personalized``), onnxruntime sessions, or callables / ``nn.Module`` with the same
    input and output; without them the files at torchmetrics' cache are used if present, else a
    ValueError says what to pass. Needs `librosa` (features). State: float64 ``sum_dnsmos``
    [4], int64 ``total`` and ``failed`` (48 bytes; a sync is one header exchange that carries them).

    Differences from torchmetrics: the models are the user's (torchmetrics downloads them);
    ``device`` and ``cache_sessions`` are accepted and a path is loaded once, on the CPU.

        >>> import numpy as np, torch
        >>> from torchtally.audio import DeepNoiseSuppressionMeanOpinionScore
        >>> p808 = lambda mel: mel.mean(axis=(1, 2))[:, None] + 3.0
        >>> p835 = lambda wave: np.stack([3 + wave.std(-1), 3 + wave.mean(-1), 3 + np.abs(wave).mean(-1)], -1)
        >>> metric = DeepNoiseSuppressionMeanOpinionScore(16000, False, p808_model=p808, sig_bak_ovr_model=p835)
        >>> metric.update(torch.sin(torch.arange(16000) * 0.05)).compute()
        tensor([2.1672, 3.3771, 3.2480, 3.2078])
    """

    plot_lower_bound = 0.0
    plot_upper_bound = 5.0
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_dnsmos: Tensor
        total: Tensor
        failed: Tensor

    def __init__(
        self,
        fs: int,
        personalized: bool,
        device: Optional[str] = None,
        num_threads: Optional[int] = None,
        cache_sessions: bool = True,
        *,
        p808_model: Any = None,
        sig_bak_ovr_model: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__("sum_dnsmos", (4,), **kwargs)
        require("librosa", "librosa", type(self).__name__)
        self.fs = check_positive_int(fs, "fs")
        self.personalized = check_bool(personalized, "personalized")
        self.cal_device = device
        self.num_threads = num_threads
        self.cache_sessions = cache_sessions
        self._models = resolve_dnsmos_models(personalized, p808_model, sig_bak_ovr_model, num_threads)

    def update(self, preds: Tensor) -> None:
        self.add_scores(dnsmos_scores(preds, self.fs, self.personalized, self._models))
