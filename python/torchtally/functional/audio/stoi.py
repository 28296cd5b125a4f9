"""``short_time_objective_intelligibility`` (torchmetrics.functional.audio.stoi's names), through
the `pystoi` package, and ``stoi_scores``: one score per utterance with NaN where the package
could not score it (an utterance shorter than one of its frames)."""

import numpy as np
import torch
from torch import Tensor

from .package_scores import check_bool, check_positive_int, require, score_rows, waveform_rows

__all__ = ["short_time_objective_intelligibility", "stoi_scores"]

# what pystoi raises for an utterance it cannot frame (numpy's AxisError is both)
_FAILURES = (ValueError, IndexError)


def stoi_scores(preds: Tensor, target: Tensor, fs: int, extended: bool) -> np.ndarray:
    """float64 [B]: pystoi's (E)STOI of each (target, preds) utterance, rows of the flattened
    batch; NaN where pystoi raised for that utterance."""
    backend = require("pystoi", "pystoi", "ShortTimeObjectiveIntelligibility")
    check_positive_int(fs, "fs")
    p, t, _ = waveform_rows(preds, target)
    if t is None:
        raise TypeError("target: expected a torch.Tensor of waveforms, got None")

    def one(ref: np.ndarray, deg: np.ndarray) -> float:
        return backend.stoi(ref, deg, fs, extended)

    return score_rows(one, list(zip(t, p)), _FAILURES)


def short_time_objective_intelligibility(
    preds: Tensor, target: Tensor, fs: int, extended: bool = False, keep_same_device: bool = False
) -> Tensor:
    """STOI (``extended``: ESTOI) of ``preds`` against clean ``target`` (same shape
    ``(..., time)``) at ``fs`` Hz, computed by the `pystoi` package (``pip install pystoi``).
    Returns float64 scores of shape ``(...)`` (on the CPU unless ``keep_same_device``); an
    utterance pystoi cannot score raises its error, as in torchmetrics.

    Differences from torchmetrics: ``fs`` must be a positive int and ``extended`` a bool
    (ValueError); NaN or infinite samples raise ValueError.

        >>> import torch
        >>> from torchtally.functional.audio import short_time_objective_intelligibility
        >>> g = torch.Generator().manual_seed(1)
        >>> target = torch.sin(torch.arange(16000) * 0.05) * (torch.arange(16000) % 4000 < 2500)
        >>> preds = target + 0.1 * torch.randn(16000, generator=g)
        >>> short_time_objective_intelligibility(preds, target, 16000)
        tensor(0.9045, dtype=torch.float64)
    """
    backend = require("pystoi", "pystoi", "short_time_objective_intelligibility")
    check_positive_int(fs, "fs")
    check_bool(extended, "extended")
    p, t, batch = waveform_rows(preds, target)
    if t is None:
        raise TypeError("target: expected a torch.Tensor of waveforms, got None")
    values = [float(backend.stoi(ref, deg, fs, extended)) for ref, deg in zip(t, p)]
    out = torch.tensor(values, dtype=torch.float64).reshape(batch)
    return out.to(preds.device) if keep_same_device else out
