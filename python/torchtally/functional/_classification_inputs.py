"""Classification inputs: option checks, input shapes, and the per-batch update of the states.

One count state per task, accumulated by the kernels of csrc/API.md:

    binary      int64 [2, 2]     confmat_threshold   row = target, column = prediction
    multiclass  int64 [C, C]     confmat_scores (float [N, C] preds) or confmat_labels ([N] labels)
    multiclass  int64 [C, 3]     topk_update, for top_k > 1: (in top k, hit, support) per class
    multilabel  int64 [L, 2, 2]  confmat_threshold   [label, target, prediction]

Inputs are read as torchmetrics reads them:

* binary: preds and target of one shape [...] (flattened); float preds are probabilities, or
  logits when any value of the batch lies outside [0, 1] (the kernel decides, with no host sync
  on CUDA: confmat_threshold's logit_threshold); integer/bool preds are labels 0/1.
* multiclass: float scores [N, C, ...] (argmax / top k over dim 1) with target [N, ...], or
  integer labels of the same shape as target. Extra dims are flattened into samples.
* multilabel: preds and target [N, L, ...]; preds as for binary, per element.

A logit batch is thresholded on the logit, `x > log(t / (1 - t))`, which is `sigmoid(x) > t`
without computing the sigmoid; torchmetrics compares the float32 sigmoid instead, so the two can
differ for a logit within a few ulps of the threshold's logit (e.g. x = 1e-9 at t = 0.5).

Everything that can be checked is checked before a kernel runs, and the kernels leave the state
unchanged when they raise (out-of-range label, NaN score, wrong dtype or device), so a rejected
update never changes a metric's state.
"""
import functools
import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _kernels

AVERAGES = ("micro", "macro", "weighted", "none", None)


# -- options ----------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_count(name: str, value: object) -> int:
    """num_classes / num_labels: an int >= 2 (as torchmetrics)."""
    if not _is_int(value) or value < 2:
        raise ValueError(f"{name}: expected an int >= 2, got {value!r}")
    return value


def check_threshold(threshold: object) -> float:
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise TypeError(f"threshold: expected a float in [0, 1], got {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold: expected a float in [0, 1], got {threshold!r}")
    return float(threshold)


def check_ignore_index(ignore_index: object) -> Optional[int]:
    if ignore_index is not None and not _is_int(ignore_index):
        raise TypeError(f"ignore_index: expected None or an int, got {ignore_index!r}")
    return ignore_index


def check_average(average: object) -> str:
    """'micro' | 'macro' | 'weighted' | 'none' (None is spelled 'none')."""
    if average not in AVERAGES:
        raise ValueError(f"average: expected one of 'micro', 'macro', 'weighted', 'none' or None, got {average!r}")
    return "none" if average is None else average


def check_top_k(top_k: object, num_classes: int) -> int:
    if not _is_int(top_k) or not 1 <= top_k <= num_classes:
        raise ValueError(f"top_k: expected an int in [1, num_classes = {num_classes}], got {top_k!r}")
    return top_k


def check_zero_division(zero_division: object) -> float:
    if zero_division not in (0, 1) or isinstance(zero_division, bool):
        raise ValueError(f"zero_division: expected 0 or 1, got {zero_division!r}")
    return float(zero_division)


def check_beta(beta: object) -> float:
    if not isinstance(beta, (int, float)) or isinstance(beta, bool) or not beta > 0:
        raise ValueError(f"beta: expected a number > 0, got {beta!r}")
    return float(beta)


def check_normalize(normalize: object) -> Optional[str]:
    """None | 'true' | 'pred' | 'all' ('none' is spelled None)."""
    if normalize not in (None, "none", "true", "pred", "all"):
        raise ValueError(f"normalize: expected None, 'none', 'true', 'pred' or 'all', got {normalize!r}")
    return None if normalize == "none" else normalize


def check_kappa_weights(weights: object) -> Optional[str]:
    """None | 'linear' | 'quadratic' ('none' is spelled None)."""
    if weights not in (None, "none", "linear", "quadratic"):
        raise ValueError(f"weights: expected None, 'none', 'linear' or 'quadratic', got {weights!r}")
    return None if weights == "none" else weights


def check_multidim_average(multidim_average: object) -> None:
    """torchmetrics' multidim_average: only 'global' (extra dims flattened into samples)."""
    if multidim_average != "global":
        raise ValueError(
            f"multidim_average: only 'global' is supported (extra dims are flattened into samples), "
            f"got {multidim_average!r}"
        )


# -- input shapes -----------------------------------------------------------------------------


def _tensors(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    return preds, target  # type: ignore[return-value]


def _shape(t: Tensor) -> str:
    return str(list(t.shape))


def _same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise ValueError(f"target: expected the shape of preds {_shape(preds)}, got {_shape(target)}")


def binary_inputs(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    """preds, target of one shape -> both flattened to [N]."""
    preds, target = _tensors(preds, target)
    _same_shape(preds, target)
    return preds.reshape(-1), target.reshape(-1)


def multiclass_inputs(preds: object, target: object, num_classes: int) -> Tuple[Tensor, Tensor]:
    """-> (scores [N, C], target [N]) or (labels [N], target [N])."""
    preds, target = _tensors(preds, target)
    if preds.dim() == target.dim() + 1 and preds.dim() >= 2:
        if not preds.is_floating_point():
            raise TypeError(
                f"preds: with one dim more than target, expected float scores [N, C, ...], got "
                f"{str(preds.dtype).replace('torch.', '')} {_shape(preds)}"
            )
        if preds.shape[1] != num_classes:
            raise ValueError(
                f"preds: expected scores [N, C, ...] with C = num_classes = {num_classes}, got {_shape(preds)}"
            )
        if preds.shape[:1] + preds.shape[2:] != target.shape:
            expected = [preds.shape[0]] + list(preds.shape[2:])
            raise ValueError(f"target: expected shape {expected} (preds without its class dim 1), got {_shape(target)}")
        if preds.dim() > 2:
            preds = preds.movedim(1, -1).reshape(-1, num_classes)
        return preds, target.reshape(-1)
    if preds.dim() == target.dim():
        _same_shape(preds, target)
        if preds.is_floating_point():
            raise TypeError(
                f"preds: expected integer class labels of the shape of target or float scores [N, C, ...] "
                f"with one dim more than target, got float labels {_shape(preds)}"
            )
        return preds.reshape(-1), target.reshape(-1)
    raise ValueError(
        f"preds: expected labels of the shape of target {_shape(target)} or scores [N, C, ...] with one dim "
        f"more than target, got {_shape(preds)}"
    )


def multilabel_inputs(preds: object, target: object, num_labels: int) -> Tuple[Tensor, Tensor]:
    """preds, target [N, L, ...] -> both [N', L] with the extra dims flattened into samples."""
    preds, target = _tensors(preds, target)
    if preds.dim() < 2 or preds.shape[1] != num_labels:
        raise ValueError(f"preds: expected shape [N, L, ...] with L = num_labels = {num_labels}, got {_shape(preds)}")
    _same_shape(preds, target)
    if preds.dim() > 2:
        preds = preds.movedim(1, -1).reshape(-1, num_labels)
        target = target.movedim(1, -1).reshape(-1, num_labels)
    return preds, target


@functools.lru_cache(maxsize=64)
def logit_threshold(threshold: float) -> float:
    """``threshold`` on the logit scale, ``log(t / (1 - t))``: -inf at 0, +inf at 1. The kernel
    compares float preds against it when a value of the batch lies outside [0, 1] or is NaN
    (torchmetrics' rule: logits), and against ``threshold`` itself otherwise (csrc/API.md)."""
    if threshold <= 0.0:
        return -math.inf
    if threshold >= 1.0:
        return math.inf
    return math.log(threshold) - math.log1p(-threshold)


# -- updates (state mutated in place by the kernels) ----------------------------------------


def binary_update(confmat: Tensor, preds: object, target: object, threshold: float,
                  ignore_index: Optional[int]) -> None:
    preds, target = binary_inputs(preds, target)
    _kernels.confmat_threshold(confmat, preds, target, None, ignore_index, threshold,
                               logit_threshold(threshold))


def multiclass_update(confmat: Tensor, preds: object, target: object, ignore_index: Optional[int]) -> None:
    preds, target = multiclass_inputs(preds, target, confmat.shape[0])
    if preds.dim() == 2:
        _kernels.confmat_scores(confmat, preds, target, None, ignore_index)
    else:
        _kernels.confmat_labels(confmat, preds, target, None, ignore_index)


def multiclass_topk_update(state: Tensor, preds: object, target: object, ignore_index: Optional[int],
                           top_k: int) -> None:
    preds, target = multiclass_inputs(preds, target, state.shape[0])
    if preds.dim() != 2:
        raise ValueError(f"preds: top_k = {top_k} needs float scores [N, C, ...], got labels {_shape(preds)}")
    _kernels.topk_update(state, preds, target, None, ignore_index, top_k)


def multilabel_update(confmat: Tensor, preds: object, target: object, threshold: float,
                      ignore_index: Optional[int]) -> None:
    preds, target = multilabel_inputs(preds, target, confmat.shape[0])
    _kernels.confmat_threshold(confmat, preds, target, None, ignore_index, threshold,
                               logit_threshold(threshold))


# -- fresh states (the functional forms accumulate one batch into one) -----------------------


def _device(preds: object) -> torch.device:
    return preds.device if isinstance(preds, Tensor) else torch.device("cpu")


def binary_confmat(preds: object, target: object, threshold: float, ignore_index: Optional[int]) -> Tensor:
    confmat = torch.zeros(2, 2, dtype=torch.int64, device=_device(preds))
    binary_update(confmat, preds, target, threshold, ignore_index)
    return _kernels.settled(confmat)


def multiclass_confmat(preds: object, target: object, num_classes: int, ignore_index: Optional[int]) -> Tensor:
    confmat = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=_device(preds))
    multiclass_update(confmat, preds, target, ignore_index)
    return _kernels.settled(confmat)


def multiclass_topk(preds: object, target: object, num_classes: int, ignore_index: Optional[int],
                    top_k: int) -> Tensor:
    state = torch.zeros(num_classes, 3, dtype=torch.int64, device=_device(preds))
    multiclass_topk_update(state, preds, target, ignore_index, top_k)
    return _kernels.settled(state)


def multilabel_confmat(preds: object, target: object, num_labels: int, threshold: float,
                       ignore_index: Optional[int]) -> Tensor:
    confmat = torch.zeros(num_labels, 2, 2, dtype=torch.int64, device=_device(preds))
    multilabel_update(confmat, preds, target, threshold, ignore_index)
    return _kernels.settled(confmat)
