"""The status of the CUDA segmentation kernels (csrc/cuda/segmentation.cu) and its explanation.

On CUDA, label_counts and mask_counts do not raise at a bad value: they write int64 ``status``
[1], ``CLEAR`` (INT64_MAX) when every value passed, else the key of the first bad one in the C
core's order, and leave partial counts in ``out``. The caller gates on ``status == CLEAR`` on
the device and, when it must raise, turns the key into the C core's message here (reading the
bad element: the error path only).

Keys: label_counts ``side * N * P + n * P + p``, mask_counts ``side * N * C + n * C + c``, side 0
for preds (looked at first, as the C core), 1 for target.
"""

from types import ModuleType
from typing import Any, Callable

import torch
from torch import Tensor

CLEAR = 2**63 - 1


def _side(key: int, per_side: int) -> tuple:
    side, at = divmod(key, per_side)
    return ("preds", "target")[side], at


def label_counts_message(key: int, preds: Tensor, target: Tensor, classes: int, from_scores: int) -> str:
    """The C core's ValueError text for a label_counts status `key` over preds / target [N, P]."""
    n, pixels = preds.shape
    name, at = _side(key, n * pixels)
    sample, pixel = divmod(at, pixels)
    value = int((preds if name == "preds" else target)[sample, pixel])
    scored = from_scores & (1 if name == "preds" else 2)
    if scored and value == -1:
        return f"{name}: NaN in the scores of sample {sample}"
    return f"{name}: sample {sample}: class index {value} is out of range [0, {classes})"


def mask_counts_message(key: int, preds: Tensor) -> str:
    """The C core's ValueError text for a mask_counts status `key` over preds / target [N, C, P]."""
    n, classes = preds.shape[:2]
    name, at = _side(key, n * classes)
    sample, cls = divmod(at, classes)
    return f"{name}: sample {sample}, class {cls}: expected a one-hot (0/1) mask per class, got values outside {{0, 1}}"


STATUS_KERNELS = ("label_counts", "mask_counts")  # torchtally._C_cuda's methods that take a status


def call_like_c_core(module: Any, kernel: str, args: list, wrap: Callable[[list], list] = list) -> None:
    """``module.kernel`` with the C core's arguments and contract (checks: the known-answer check,
    the emulation): for a status kernel of torchtally._C_cuda, a status is passed, read back (one
    host synchronisation), and a rejected batch restores ``out`` and raises the C core's message,
    as the segmentation update's gate does. ``wrap``: how tensors reach ``module`` (the
    emulation's stand-ins)."""
    if kernel not in STATUS_KERNELS or not (isinstance(module, ModuleType) and module.__name__ == "torchtally._C_cuda"):
        getattr(module, kernel)(*wrap(args))
        return
    out, preds, target = args[:3]
    before = out.clone()
    status = torch.empty(1, dtype=torch.int64, device=out.device)
    getattr(module, kernel)(*wrap([out, status, *args[1:]]))
    key = int(status[0])
    if key == CLEAR:
        return
    out.copy_(before)
    if kernel == "label_counts":
        raise ValueError(label_counts_message(key, preds, target, out.shape[1], int(args[3])))
    raise ValueError(mask_counts_message(key, preds))
