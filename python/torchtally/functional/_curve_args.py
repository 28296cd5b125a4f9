"""Option checks of the curve metrics (AUROC, AveragePrecision, ROC, PrecisionRecallCurve).

`thresholds` follows torchmetrics: None (exact mode), an int T >= 2 (torch.linspace(0, 1, T)
in float32), a list of floats in [0, 1] or a 1-D floating tensor. Unlike torchmetrics the
values must be non-decreasing: the histogram kernel needs sorted bin edges.
"""
import math
from typing import Any, NamedTuple, Optional, Sequence, Tuple

import torch
from torch import Tensor


class Thresholds(NamedTuple):
    """The binned mode's thresholds: as returned to the user and as the kernel reads them."""

    values: Tensor  # [T] in the user's dtype (float32 for an int or a list, as torchmetrics)
    kernel: Tensor  # [T] float64, contiguous: the bin edges of binned_update
    uniform: bool  # evenly spaced (an int T): the kernel may compute bins directly

    @property
    def key(self) -> Tuple[float, ...]:
        """A hashable that identifies the bin edges (part of the state_key)."""
        return tuple(self.kernel.tolist())


def parse_thresholds(thresholds: Any) -> Optional[Thresholds]:
    """None for exact mode, else the Thresholds of the binned mode (checked)."""
    if thresholds is None:
        return None
    if isinstance(thresholds, bool):
        raise TypeError("thresholds: expected None, an int >= 2, a list of floats or a 1-D tensor, got bool")
    if isinstance(thresholds, int):
        if thresholds < 2:
            raise ValueError(f"thresholds: an int must be >= 2, got {thresholds}")
        values = torch.linspace(0, 1, thresholds)
        return Thresholds(values, values.double(), True)
    if isinstance(thresholds, (list, tuple)):
        values = _from_list(thresholds)
    elif isinstance(thresholds, Tensor):
        if not thresholds.is_floating_point() or thresholds.dim() != 1 or thresholds.numel() == 0:
            raise ValueError(
                f"thresholds: expected a non-empty 1-D floating tensor, got {thresholds.dtype} {list(thresholds.shape)}"
            )
        values = thresholds.detach().cpu().clone()
    else:
        raise TypeError(
            f"thresholds: expected None, an int >= 2, a list of floats or a 1-D tensor, got {type(thresholds).__name__}"
        )
    kernel = values.double().contiguous()
    if torch.isnan(kernel).any():
        raise ValueError("thresholds: NaN in the thresholds")
    if (kernel[1:] < kernel[:-1]).any():
        raise ValueError(f"thresholds: expected non-decreasing values, got {values.tolist()}")
    return Thresholds(values, kernel, False)


def _from_list(values: Sequence[Any]) -> Tensor:
    if len(values) == 0:
        raise ValueError("thresholds: expected a non-empty list")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ValueError(f"thresholds: a list must hold numbers in [0, 1], got {list(values)}")
    return torch.tensor([float(v) for v in values])


def check_num(name: str, value: Any, minimum: int) -> int:
    """num_classes / num_labels: an int >= minimum."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {value!r}")
    return value


def check_ignore_index(ignore_index: Any) -> Optional[int]:
    """None or an int64 (labels are compared with it as int64 tensors)."""
    if ignore_index is not None and (isinstance(ignore_index, bool) or not isinstance(ignore_index, int)):
        raise ValueError(f"ignore_index: expected None or an int, got {ignore_index!r}")
    if ignore_index is not None and not -(2**63) <= ignore_index < 2**63:
        raise ValueError(f"ignore_index: expected None or an int64, got {ignore_index!r}")
    return ignore_index


def check_average(average: Any, allowed: Tuple[Optional[str], ...]) -> Optional[str]:
    """One of `allowed`; "none" and None mean the same (no averaging) and are returned as None."""
    if average not in allowed:
        raise ValueError(f"average: expected one of {allowed}, got {average!r}")
    return None if average == "none" else average


NORMALIZATIONS = ("sigmoid", "softmax", None)


def check_normalization(normalization: Any) -> Optional[str]:
    """How binary scores outside [0, 1] are turned into probabilities: "sigmoid" (default), None
    (scores taken as they are) or "softmax" (accepted as torchmetrics does; see _curve_inputs)."""
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization: expected one of {list(NORMALIZATIONS)}, got {normalization!r}")
    return normalization


def check_max_fpr(max_fpr: Any) -> Optional[float]:
    if max_fpr is None:
        return None
    if isinstance(max_fpr, bool) or not isinstance(max_fpr, (int, float)) or not 0 < max_fpr <= 1 or math.isnan(max_fpr):
        raise ValueError(f"max_fpr: expected None or a float in (0, 1], got {max_fpr!r}")
    return float(max_fpr)
