"""ShortTimeObjectiveIntelligibility: the mean STOI of the utterances seen (the `pystoi`
package scores each one; torchtally.functional.audio.stoi). State: torchtally.audio.
scored_utterances (``sum_stoi`` float64, ``total`` and ``failed`` int64: 24 bytes; a sync is one header
exchange that carries them)."""

from typing import TYPE_CHECKING, Any

from torch import Tensor

from ..functional.audio.package_scores import check_bool, check_positive_int, require
from ..functional.audio.stoi import stoi_scores
from .scored_utterances import ScoredUtterances

__all__ = ["ShortTimeObjectiveIntelligibility"]


class ShortTimeObjectiveIntelligibility(ScoredUtterances):
    """Mean STOI (``extended``: ESTOI) of ``preds`` against clean ``target``, both
    ``(..., time)`` at ``fs`` Hz: ``update(preds, target)``. Needs the `pystoi` package
    (``pip install pystoi``; ModuleNotFoundError naming it otherwise). State: float64
    ``sum_stoi``, int64 ``total`` and ``failed`` (24 bytes; a sync is one header exchange that
    carries them, whatever the data).

    Differences from torchmetrics: an utterance pystoi cannot score (shorter than its frame)
    does not abort the batch: it is counted in ``failed``, left out of the mean, and
    ``compute`` warns how many failed (torchmetrics: the error aborts the update); the sum is
    float64 (torchmetrics: float32); ``fs`` must be a positive int, ``extended`` a bool.

        >>> import torch
        >>> from torchtally.audio import ShortTimeObjectiveIntelligibility
        >>> g = torch.Generator().manual_seed(1)
        >>> target = torch.sin(torch.arange(16000) * 0.05) * (torch.arange(16000) % 4000 < 2500)
        >>> preds = target + 0.1 * torch.randn(16000, generator=g)
        >>> ShortTimeObjectiveIntelligibility(16000).update(preds, target).compute()
        tensor(0.9045)
    """

    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_stoi: Tensor
        total: Tensor
        failed: Tensor

    def __init__(self, fs: int, extended: bool = False, **kwargs: Any) -> None:
        super().__init__("sum_stoi", (), **kwargs)
        require("pystoi", "pystoi", type(self).__name__)
        self.fs = check_positive_int(fs, "fs")
        self.extended = check_bool(extended, "extended")

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.add_scores(stoi_scores(preds, target, self.fs, self.extended))
