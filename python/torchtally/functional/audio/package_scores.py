"""Per-utterance scores from a third-party package or a user's model (PESQ, STOI, SRMR,
DNSMOS, NISQA): the checks on the waveforms, the import that names the pip package, and the
loop that scores each utterance and counts the ones the package could not score.

A failed utterance is a NaN in the scores; the classes add the others to a float64 sum and
count the NaNs (torchtally.audio.scored_utterances)."""

import importlib
import math
from types import ModuleType
from typing import Any, Callable, Optional, Sequence, Tuple, Type

import numpy as np
import torch
from torch import Tensor

from ...errors import ShapeError

__all__ = ["require", "waveform_rows", "score_rows", "check_positive_int", "check_bool", "call_model"]


def require(module: str, pip_name: str, metric: str) -> ModuleType:
    """``import module``, or a ModuleNotFoundError that names the pip package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ModuleNotFoundError(
            f"{metric} requires the `{pip_name}` package, which is not installed: `pip install {pip_name}`"
        ) from err


def _check_waveform(value: object, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor of waveforms (..., time), got {type(value).__name__}")
    if value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"{name}: expected a real (float or integer) tensor, got {value.dtype}")
    if value.dim() < 1 or value.shape[-1] < 1:
        raise ValueError(f"{name}: expected a tensor of shape (..., time) with time >= 1, got {tuple(value.shape)}")
    return value


def waveform_rows(
    preds: Tensor, target: Optional[Tensor] = None
) -> Tuple[np.ndarray, Optional[np.ndarray], Tuple[int, ...]]:
    """(preds as float64 rows [B, time], target likewise or None, the batch shape ``(...)``)."""
    _check_waveform(preds, "preds")
    if target is not None:
        _check_waveform(target, "target")
        if preds.shape != target.shape:  # a ShapeError: a ValueError, and torchmetrics' RuntimeError
            raise ShapeError(
                "target: Predictions and targets are expected to have the same shape, "
                f"but got {tuple(preds.shape)} and {tuple(target.shape)}"
            )
    batch = tuple(preds.shape[:-1])

    def rows(x: Tensor) -> np.ndarray:
        # (math.prod, not -1: ambiguous for an empty batch)
        return x.detach().to("cpu", torch.float64).reshape(math.prod(batch), x.shape[-1]).numpy()

    p = rows(preds)
    if not np.isfinite(p).all():
        raise ValueError("preds: expected finite waveforms, got NaN or infinite samples")
    t = None if target is None else rows(target)
    if t is not None and not np.isfinite(t).all():
        raise ValueError("target: expected finite waveforms, got NaN or infinite samples")
    return p, t, batch


def score_rows(
    score: Callable[..., float], rows: Sequence[Tuple[np.ndarray, ...]], failures: Tuple[Type[BaseException], ...]
) -> np.ndarray:
    """float64 [len(rows)]: ``score(*row)`` per row; NaN where it raised one of ``failures``
    (the package could not score that utterance) or returned a non-finite value."""
    out = np.full(len(rows), np.nan, dtype=np.float64)
    for i, row in enumerate(rows):
        try:
            with np.errstate(all="ignore"):  # the packages divide silent input by its zero peak
                value = float(score(*row))
        except failures:
            continue
        if np.isfinite(value):
            out[i] = value
    return out


def check_positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"Expected argument `{name}` to be a positive int, but got {value!r}")
    return value


def check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"Expected argument `{name}` to be a bool, but got {value!r}")
    return value


def call_model(model: Any, array: np.ndarray, what: str) -> np.ndarray:
    """``model`` applied to the float32 ``array``: an onnxruntime session (``.run`` with the
    input named ``input_1``), an ``nn.Module`` (given a tensor, without gradient) or any callable
    (given the numpy array); the result as a float64 numpy array."""
    if hasattr(model, "run") and not isinstance(model, torch.nn.Module):
        out = model.run(None, {"input_1": array})[0]
    elif isinstance(model, torch.nn.Module):
        with torch.no_grad():
            out = model(torch.from_numpy(array))
    else:
        out = model(array)
    if isinstance(out, Tensor):
        out = out.detach().cpu().numpy()
    out = np.asarray(out, dtype=np.float64)
    if out.ndim == 0 or out.shape[0] != array.shape[0]:
        raise ValueError(f"{what}: expected one row of scores per input row ({array.shape[0]}), got {out.shape}")
    return out
