"""``deep_noise_suppression_mean_opinion_score`` (torchmetrics.functional.audio.dnsmos's names):
Microsoft's DNSMOS P.808 and P.835 (SIG, BAK, OVRL) scores of speech, from the user's models.

Nothing downloads. The two models are the DNS-Challenge's ONNX files (``DNSMOS/model_v8.onnx``
for P.808 and ``DNSMOS/sig_bak_ovr.onnx``, or ``pDNSMOS/sig_bak_ovr.onnx`` when
``personalized``), given as local paths (loaded with onnxruntime), onnxruntime sessions, or
any callable / ``nn.Module`` with the same input and output; when none is given, the files at
torchmetrics' cache (``~/.torchmetrics/DNSMOS/...``) are used if present. The features (the
9.01 s windows, one second apart, and the P.808 model's log-mel spectrogram) come from
`librosa`, as in torchmetrics."""

import os
from typing import Any, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from .package_scores import call_model, check_bool, check_positive_int, require, waveform_rows

__all__ = ["deep_noise_suppression_mean_opinion_score", "dnsmos_scores", "resolve_dnsmos_models"]

SAMPLING_RATE = 16000
INPUT_LENGTH = 9.01
CACHE_DIR = "~/.torchmetrics/DNSMOS"

# the DNS-Challenge's cubic / quadratic maps from the raw model outputs to MOS (sig, bak, ovrl)
_POLY = {
    True: ((-0.01019296, 0.02751166, 1.19576786, -0.24348726), (-0.04976499, 0.44276479, -0.1644611, 0.96883132),
           (-0.00533021, 0.005101, 1.18058466, -0.11236046)),
    False: ((-0.08397278, 1.22083953, 0.0052439), (-0.13166888, 1.60915514, -0.39604546),
            (-0.06766283, 1.11546468, 0.04602535)),
}  # fmt: skip


def _load(model: Any, path_default: str, what: str, num_threads: Optional[int]) -> Any:
    if model is None:
        path = os.path.expanduser(path_default)
        if not os.path.exists(path):
            raise ValueError(
                f"{what}: no model given and none at {path_default}. Pass `{what}=`: a local path to the "
                "DNS-Challenge's ONNX file (github.com/microsoft/DNS-Challenge, folder DNSMOS: "
                "DNSMOS/model_v8.onnx for p808_model, DNSMOS/sig_bak_ovr.onnx or, when personalized, "
                "pDNSMOS/sig_bak_ovr.onnx for sig_bak_ovr_model), an onnxruntime.InferenceSession, or a "
                "callable / nn.Module with the same input and output; nothing is downloaded"
            )
        model = path
    if isinstance(model, (str, os.PathLike)):
        ort = require("onnxruntime", "onnxruntime", "DNSMOS with a model path")
        opts = ort.SessionOptions()
        if num_threads is not None:
            opts.inter_op_num_threads = num_threads
            opts.intra_op_num_threads = num_threads
        return ort.InferenceSession(
            os.path.expanduser(str(model)), providers=["CPUExecutionProvider"], sess_options=opts
        )
    if not callable(model) and not hasattr(model, "run"):
        raise TypeError(f"{what}: expected a path, an onnxruntime session or a callable, got {type(model).__name__}")
    return model


def resolve_dnsmos_models(
    personalized: bool, p808_model: Any = None, sig_bak_ovr_model: Any = None, num_threads: Optional[int] = None
) -> Tuple[Any, Any]:
    """(P.808 model, P.835 model) ready to call (module docstring)."""
    folder = "pDNSMOS" if personalized else "DNSMOS"
    p808 = _load(p808_model, f"{CACHE_DIR}/DNSMOS/model_v8.onnx", "p808_model", num_threads)
    p835 = _load(sig_bak_ovr_model, f"{CACHE_DIR}/{folder}/sig_bak_ovr.onnx", "sig_bak_ovr_model", num_threads)
    return p808, p835


def _log_mel(librosa: Any, audio: np.ndarray) -> np.ndarray:
    """[B, frames, 120] log-mel features of the P.808 model, each scaled by its own peak."""
    mel = librosa.feature.melspectrogram(y=audio, sr=SAMPLING_RATE, n_fft=321, hop_length=160, n_mels=120)
    mel = np.swapaxes(mel, -1, -2)
    return np.stack([(librosa.power_to_db(m, ref=np.max) + 40) / 40 for m in mel])


def dnsmos_scores(preds: Tensor, fs: int, personalized: bool, models: Tuple[Any, Any]) -> np.ndarray:
    """float64 [B, 4] (P.808 MOS, SIG, BAK, OVRL) per utterance of the flattened batch."""
    librosa = require("librosa", "librosa", "DeepNoiseSuppressionMeanOpinionScore")
    audio, _, _ = waveform_rows(preds)
    if audio.shape[0] == 0:  # no utterance: no scores (the spectrogram stack needs one)
        return np.zeros((0, 4), dtype=np.float64)
    if fs != SAMPLING_RATE:
        audio = librosa.resample(audio, orig_sr=fs, target_sr=SAMPLING_RATE)
    need = int(INPUT_LENGTH * SAMPLING_RATE)
    while audio.shape[-1] < need:  # short clips repeat until one window fits
        audio = np.concatenate([audio, audio], axis=-1)
    hops = int(np.floor(audio.shape[-1] / SAMPLING_RATE) - INPUT_LENGTH) + 1
    total = np.zeros((audio.shape[0], 4), dtype=np.float64)
    used = 0
    for k in range(hops):
        window = audio[:, k * SAMPLING_RATE : int((k + INPUT_LENGTH) * SAMPLING_RATE)]
        if window.shape[-1] < need:
            continue
        p808 = call_model(models[0], _log_mel(librosa, window[:, :-160]).astype(np.float32), "p808_model")
        raw = call_model(models[1], window.astype(np.float32), "sig_bak_ovr_model").reshape(window.shape[0], 3)
        mos = np.concatenate([p808.reshape(-1, 1), raw], axis=-1)
        for col, coefs in enumerate(_POLY[personalized], start=1):
            mos[:, col] = np.polyval(coefs, mos[:, col])
        total += mos
        used += 1
    return total / used


def deep_noise_suppression_mean_opinion_score(
    preds: Tensor,
    fs: int,
    personalized: bool,
    device: Optional[str] = None,
    num_threads: Optional[int] = None,
    cache_session: bool = True,
    *,
    p808_model: Any = None,
    sig_bak_ovr_model: Any = None,
) -> Tensor:
    """DNSMOS of speech ``preds`` ``(..., time)`` at ``fs`` Hz: float64 ``(..., 4)``, the P.808
    MOS and the P.835 SIG, BAK and OVRL scores, averaged over 9.01 s windows one second apart
    (a shorter clip repeats until one fits). ``personalized``: the personalized P.835 model and
    its maps. The models: ``p808_model`` and ``sig_bak_ovr_model`` (module docstring), which
    nothing downloads; ``device`` and ``cache_session`` are accepted for torchmetrics'
    signature (a path is loaded on the CPU, once per call). Needs `librosa`.

        >>> import numpy as np, torch
        >>> from torchtally.functional.audio import deep_noise_suppression_mean_opinion_score
        >>> p808 = lambda mel: mel.mean(axis=(1, 2))[:, None] + 3.0
        >>> p835 = lambda wave: np.stack([3 + wave.std(-1), 3 + wave.mean(-1), 3 + np.abs(wave).mean(-1)], -1)
        >>> preds = torch.sin(torch.arange(16000) * 0.05)
        >>> deep_noise_suppression_mean_opinion_score(
        ...     preds, 16000, False, p808_model=p808, sig_bak_ovr_model=p835
        ... ).round(decimals=3)
        tensor([2.1670, 3.3770, 3.2480, 3.2080], dtype=torch.float64)
    """
    check_positive_int(fs, "fs")
    check_bool(personalized, "personalized")
    models = resolve_dnsmos_models(personalized, p808_model, sig_bak_ovr_model, num_threads)
    batch = tuple(preds.shape[:-1]) if isinstance(preds, Tensor) else ()
    return torch.from_numpy(dnsmos_scores(preds, fs, personalized, models)).reshape(*batch, 4)
