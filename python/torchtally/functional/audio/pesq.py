"""``perceptual_evaluation_speech_quality`` (torchmetrics.functional.audio.pesq's names), through
the `pesq` package (ITU-T P.862), and ``pesq_scores``: one score per utterance with NaN where the
package could not score it (no utterance found, too short), for the class's failure count."""

import numpy as np
import torch
from torch import Tensor

from .package_scores import require, score_rows, waveform_rows

__all__ = ["perceptual_evaluation_speech_quality", "pesq_scores", "check_pesq_args"]

_METRIC = "PerceptualEvaluationSpeechQuality"


def check_pesq_args(fs: object, mode: object) -> None:
    """ValueError naming ``fs`` / ``mode`` unless fs is 8000 or 16000, mode 'wb' or 'nb', and not
    wide band at 8000 Hz (which the package refuses)."""
    if isinstance(fs, bool) or fs not in (8000, 16000):
        raise ValueError(f"Expected argument `fs` to either be 8000 or 16000 but got {fs}")
    if mode not in ("wb", "nb"):
        raise ValueError(f"Expected argument `mode` to either be 'wb' or 'nb' but got {mode}")
    if fs == 8000 and mode == "wb":
        raise ValueError("Expected argument `mode` to be 'nb' when `fs` is 8000: there is no wide band at 8000 Hz")


def check_float32_range(p: np.ndarray, t: np.ndarray) -> None:
    """The package scores float32 samples: larger ones would turn to infinity (and its
    arithmetic to NaN) inside it."""
    limit = float(np.finfo(np.float32).max)
    for name, x in (("preds", p), ("target", t)):
        if x.size and float(np.abs(x).max()) > limit:
            raise ValueError(f"{name}: expected samples within float32's range (the package scores float32)")


def pesq_scores(preds: Tensor, target: Tensor, fs: int, mode: str) -> np.ndarray:
    """float64 [B]: the package's PESQ of each (target, preds) utterance, rows of the flattened
    batch; NaN where the package raised its PesqError for that utterance."""
    backend = require("pesq", "pesq", _METRIC)
    check_pesq_args(fs, mode)
    p, t, _ = waveform_rows(preds, target)
    if t is None:
        raise TypeError("target: expected a torch.Tensor of waveforms, got None")
    check_float32_range(p, t)

    def one(ref: np.ndarray, deg: np.ndarray) -> float:
        return backend.pesq(fs, ref, deg, mode)

    return score_rows(one, list(zip(t, p)), (backend.PesqError,))


def perceptual_evaluation_speech_quality(
    preds: Tensor, target: Tensor, fs: int, mode: str, keep_same_device: bool = False, n_processes: int = 1
) -> Tensor:
    """PESQ of degraded speech ``preds`` against clean ``target`` (same shape ``(..., time)``),
    computed by the `pesq` package (``pip install pesq``); ``fs`` 8000 or 16000 Hz, ``mode``
    'wb' (wide band) or 'nb' (narrow band). Returns a float32 scalar for one utterance, else a
    1-D tensor of one score per utterance (on the CPU unless ``keep_same_device``).

    As torchmetrics: an utterance the package cannot score raises its error when
    ``n_processes == 1`` and is left out of the result otherwise. Differences: the scores are
    computed in this process whatever ``n_processes`` (the same values, no worker processes);
    'wb' at 8000 Hz raises ValueError before any scoring; NaN or infinite samples raise
    ValueError.

        >>> import torch
        >>> from torchtally.functional.audio import perceptual_evaluation_speech_quality
        >>> g = torch.Generator().manual_seed(1)
        >>> target = torch.sin(torch.arange(16000) * 0.05) * (torch.arange(16000) % 4000 < 2500)
        >>> preds = target + 0.1 * torch.randn(16000, generator=g)
        >>> perceptual_evaluation_speech_quality(preds, target, 16000, "wb")
        tensor(1.0206)
    """
    backend = require("pesq", "pesq", "perceptual_evaluation_speech_quality")
    check_pesq_args(fs, mode)
    p, t, _ = waveform_rows(preds, target)
    if t is None:
        raise TypeError("target: expected a torch.Tensor of waveforms, got None")
    if preds.dim() == 1:
        out = torch.tensor(float(backend.pesq(fs, t[0], p[0], mode)), dtype=torch.float32)
    elif n_processes == 1:
        values = [float(backend.pesq(fs, ref, deg, mode)) for ref, deg in zip(t, p)]
        out = torch.tensor(values, dtype=torch.float64).to(torch.float32)
    else:
        scores = pesq_scores(preds, target, fs, mode)
        out = torch.from_numpy(scores[~np.isnan(scores)]).to(torch.float32)
    return out.to(preds.device) if keep_same_device else out
