"""PerceptualEvaluationSpeechQuality: the mean PESQ of the utterances seen (the `pesq`
package scores each one; torchtally.functional.audio.pesq). State: torchtally.audio.
scored_utterances (``sum_pesq`` float64, ``total`` and ``failed`` int64: 24 bytes; a sync is one header
exchange that carries them)."""

from typing import TYPE_CHECKING, Any

from torch import Tensor

from ..functional.audio.package_scores import require
from ..functional.audio.pesq import check_pesq_args, pesq_scores
from .scored_utterances import ScoredUtterances

__all__ = ["PerceptualEvaluationSpeechQuality"]


class PerceptualEvaluationSpeechQuality(ScoredUtterances):
    """Mean PESQ (ITU-T P.862, -0.5 to 4.5, higher is better) of degraded speech ``preds``
    against clean ``target``, both ``(..., time)``: ``update(preds, target)``; ``fs`` 8000 or
    16000 Hz, ``mode`` 'wb' or 'nb'. Needs the `pesq` package (``pip install pesq``;
    ModuleNotFoundError naming it otherwise). State: float64 ``sum_pesq``, int64 ``total`` and
    ``failed`` (24 bytes; a sync is one header exchange that carries them, whatever the data).

    Differences from torchmetrics: an utterance the package cannot score (no speech found, too
    short) does not abort the batch: it is counted in ``failed``, left out of the mean, and
    ``compute`` warns how many failed (torchmetrics: the package's error aborts the update);
    the sum is float64 (torchmetrics: float32); 'wb' at 8000 Hz raises ValueError at
    construction (torchmetrics: at update); scores are computed in this process whatever
    ``n_processes``.

        >>> import torch
        >>> from torchtally.audio import PerceptualEvaluationSpeechQuality
        >>> g = torch.Generator().manual_seed(1)
        >>> target = torch.sin(torch.arange(16000) * 0.05) * (torch.arange(16000) % 4000 < 2500)
        >>> preds = target + 0.1 * torch.randn(16000, generator=g)
        >>> metric = PerceptualEvaluationSpeechQuality(16000, "wb")
        >>> metric.update(torch.stack([preds, target]), torch.stack([target, target])).compute()
        tensor(2.8...)
    """

    plot_lower_bound = -0.5
    plot_upper_bound = 4.5
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_pesq: Tensor
        total: Tensor
        failed: Tensor

    def __init__(self, fs: int, mode: str, n_processes: int = 1, **kwargs: Any) -> None:
        super().__init__("sum_pesq", (), **kwargs)
        require("pesq", "pesq", type(self).__name__)
        check_pesq_args(fs, mode)
        if isinstance(n_processes, bool) or not isinstance(n_processes, int) or n_processes <= 0:
            raise ValueError(f"Expected argument `n_processes` to be an int larger than 0 but got {n_processes}")
        self.fs = fs
        self.mode = mode
        self.n_processes = n_processes

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.add_scores(pesq_scores(preds, target, self.fs, self.mode))
