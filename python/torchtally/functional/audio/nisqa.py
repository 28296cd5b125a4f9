"""``non_intrusive_speech_quality_assessment`` (torchmetrics.functional.audio.nisqa's names):
NISQA's five scores (MOS, noisiness, discontinuity, coloration, loudness) of speech, from the
user's network.

Nothing downloads and torchtally ships no NISQA network: ``model`` is the network as an
``nn.Module`` called as ``model(segments, n_wins)`` (segments [B, max_segments, n_mels,
seg_length], n_wins [B] the valid segments per row) returning [B, 5], and ``args`` the settings
it was trained with (the ``args`` dict of NISQA's ``nisqa.tar`` checkpoint: ``ms_n_fft``,
``ms_hop_length``, ``ms_win_length``, ``ms_n_mels``, ``ms_fmax``, ``ms_seg_length``,
``ms_seg_hop_length``, ``ms_max_segments``). The mel spectrogram comes from `librosa`, as in
torchmetrics."""

import math
import warnings
from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
from torch import Tensor, nn

from .package_scores import check_positive_int, require, waveform_rows

__all__ = ["non_intrusive_speech_quality_assessment", "nisqa_scores", "check_nisqa_model"]

_ARGS: Tuple[str, ...] = ("ms_n_fft", "ms_hop_length", "ms_win_length", "ms_n_mels", "ms_fmax")
_ARGS += ("ms_seg_length", "ms_seg_hop_length", "ms_max_segments")


def check_nisqa_model(model: Any, args: Any) -> Tuple[nn.Module, Dict[str, Any]]:
    """(model, args) checked; a ValueError that says what to pass when either is missing."""
    if model is None or args is None:
        raise ValueError(
            "NISQA needs `model=` (the NISQA network as an nn.Module called as model(segments, n_wins) "
            "and returning [B, 5]) and `args=` (its settings: the 'args' dict of NISQA's nisqa.tar "
            "checkpoint, torch.load(path)['args']); nothing is downloaded"
        )
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected an nn.Module, got {type(model).__name__}")
    if not isinstance(args, dict) or any(k not in args for k in _ARGS):
        missing = [k for k in _ARGS if not isinstance(args, dict) or k not in args]
        raise ValueError(f"args: expected a dict with the keys {list(_ARGS)}, missing {missing}")
    return model, args


def _melspec(librosa: Any, audio: np.ndarray, fs: int, args: Dict[str, Any]) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Empty filters detected in mel frequency basis")
        mel = librosa.feature.melspectrogram(
            y=audio, sr=fs, n_fft=args["ms_n_fft"], hop_length=int(fs * args["ms_hop_length"]),
            win_length=int(fs * args["ms_win_length"]), window="hann", center=True, pad_mode="reflect",
            power=1.0, n_mels=args["ms_n_mels"], fmin=0.0, fmax=args["ms_fmax"], htk=False, norm="slaney",
        )  # fmt: skip
    return np.stack([librosa.amplitude_to_db(m, ref=1.0, amin=1e-4, top_db=80.0) for m in mel])


def _segments(mel: Tensor, args: Dict[str, Any]) -> Tuple[Tensor, int]:
    """[B, max_segments, n_mels, seg_length] windows of ``mel`` [B, n_mels, frames], zero
    padded, and the count of valid ones."""
    length, hop, most = args["ms_seg_length"], args["ms_seg_hop_length"], args["ms_max_segments"]
    starts = mel.shape[2] - (length - 1)
    if starts < 1:
        raise ValueError("preds: the signal is too short for one NISQA segment")
    windows = mel.unfold(2, length, 1).permute(0, 2, 1, 3)[:, ::hop]  # [B, n, n_mels, length]
    count = math.ceil(starts / hop)
    if count > most:
        raise ValueError(f"preds: {count} NISQA segments, more than the model's {most}: use shorter audio")
    out = torch.zeros(mel.shape[0], most, mel.shape[1], length, dtype=torch.float32)
    out[:, :count] = windows
    return out, count


def nisqa_scores(preds: Tensor, fs: int, model: nn.Module, args: Dict[str, Any]) -> np.ndarray:
    """float64 [B, 5] per utterance of the flattened batch."""
    librosa = require("librosa", "librosa", "NonIntrusiveSpeechQualityAssessment")
    audio, _, _ = waveform_rows(preds)
    if audio.shape[0] == 0:  # no utterance: no scores (the spectrogram stack needs one)
        return np.zeros((0, 5), dtype=np.float64)
    if float(np.abs(audio).max(initial=0.0)) > float(np.finfo(np.float32).max):
        raise ValueError("preds: expected samples within float32's range (the spectrogram is float32)")
    mel = torch.from_numpy(_melspec(librosa, audio.astype(np.float32), fs, args)).to(torch.float32)
    segments, count = _segments(mel, args)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(segments, torch.full((segments.shape[0],), count, dtype=torch.int64))
    finally:
        model.train(was_training)
    out = out.detach().to("cpu", torch.float64).reshape(segments.shape[0], -1)
    if out.shape[1] != 5:
        raise ValueError(f"model: expected [B, 5] scores, got {tuple(out.shape)}")
    return out.numpy()


def non_intrusive_speech_quality_assessment(
    preds: Tensor, fs: int, *, model: Optional[nn.Module] = None, args: Optional[Dict[str, Any]] = None
) -> Tensor:
    """NISQA of speech ``preds`` ``(..., time)`` at ``fs`` Hz: ``(..., 5)`` scores (MOS,
    noisiness, discontinuity, coloration, loudness) from the user's ``model`` and ``args``
    (module docstring; a ValueError says what to pass when they are missing). Needs `librosa`.

        >>> import torch
        >>> from torchtally.functional.audio import non_intrusive_speech_quality_assessment
        >>> class Net(torch.nn.Module):
        ...     def forward(self, x, n_wins):
        ...         return x.mean(dim=(2, 3))[:, :5] + n_wins[:, None]
        >>> args = dict(ms_n_fft=512, ms_hop_length=0.01, ms_win_length=0.02, ms_n_mels=16, ms_fmax=8000,
        ...             ms_seg_length=15, ms_seg_hop_length=4, ms_max_segments=40)
        >>> preds = torch.sin(torch.arange(8000) * 0.05)
        >>> non_intrusive_speech_quality_assessment(preds, 16000, model=Net(), args=args).shape
        torch.Size([5])
    """
    check_positive_int(fs, "fs")
    model, args = check_nisqa_model(model, args)
    batch = tuple(preds.shape[:-1]) if isinstance(preds, Tensor) else ()
    return torch.from_numpy(nisqa_scores(preds, fs, model, args)).to(torch.float32).reshape(*batch, 5)
