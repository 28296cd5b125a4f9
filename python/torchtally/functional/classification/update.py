"""Classification inputs: option checks, input shapes, and the per-batch update of the states.

The count states, accumulated by the kernels of csrc/API.md:

    binary      int64 [2, 2]     confmat_threshold   row = target, column = prediction
    multiclass  int64 [C, C]     confmat_scores (float [N, C] preds) or confmat_labels ([N] labels)
    multiclass  int64 [C, 3]     topk_update, for top_k > 1: (predicted, hit, support) per class
    multilabel  int64 [L, 2, 2]  confmat_threshold   [label, target, prediction]

and, for ``multidim_average="samplewise"``, one row per sample: binary [N, 2, 2] and multilabel
[N, L, 2, 2] (the same kernel, each sample a column), multiclass [N, C, 4] = (tp, fp, tn, fn).

Inputs are read as torchmetrics reads them:

* binary: preds and target of one shape [...] (flattened; samplewise: [N, ...], N samples);
  float preds are probabilities, or logits when any value of the batch lies outside [0, 1]
  (the kernel decides, with no host sync on CUDA: confmat_threshold's logit_threshold);
  integer/bool preds are labels 0/1. target: integer/bool labels, or floats (float16 to
  float64; float8 is a TypeError) holding 0 and 1 (and ignore_index); any other float value is
  an error, never truncated.
* multiclass: float scores [N, C, ...] (argmax / top k over dim 1) with target [N, ...], or
  integer labels of the same shape as target. Extra dims are flattened into samples (global).
  With top_k > 1 a sample's prediction is its target when that is among its k highest scores,
  else its highest-scoring class (torchmetrics 1.9's rule; ties: the lower class ranks first).
* multilabel: preds and target [N, L, ...]; preds and target as for binary, per element.

A logit batch is thresholded on the logit, `x > log(t / (1 - t))`, which is `sigmoid(x) > t`
without computing the sigmoid; torchmetrics compares the float32 sigmoid instead, so the two can
differ for a logit within a few ulps of the threshold's logit (e.g. x = 1e-9 at t = 0.5).

Everything that can be checked is checked before a kernel runs, and the kernels leave the state
unchanged when they raise (out-of-range label, NaN score, wrong dtype or device), so a rejected
update never changes a metric's state. Samplewise rows are made in a fresh tensor, checked to the
end (on CUDA: waited for) and only then appended.
"""

import functools
import math
from typing import Optional, Tuple, TypeGuard

import torch
from torch import Tensor

from ... import kernels

AVERAGES = ("micro", "macro", "weighted", "none", None)
_FLOAT_TARGETS = frozenset((torch.float16, torch.bfloat16, torch.float32, torch.float64))
MULTIDIM_AVERAGES = ("global", "samplewise")


# -- options ----------------------------------------------------------------------------------


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_count(name: str, value: object) -> int:
    """num_classes / num_labels: an int >= 2 (as torchmetrics)."""
    if not _is_int(value) or value < 2:
        raise ValueError(f"{name}: expected an int >= 2, got {value!r}")
    return value


def check_num_classes(num_classes: object) -> int:
    """num_classes: an int >= 2. torchmetrics also takes None with average="micro" (its micro
    counts then need no class count); torchtally keeps an exact per-class state and needs it."""
    if num_classes is None:
        raise ValueError(
            "num_classes: expected an int >= 2, got None (torchtally needs the number of classes to keep "
            "its per-class counts, also for average='micro')"
        )
    return check_count("num_classes", num_classes)


def check_threshold(threshold: object) -> float:
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise TypeError(f"threshold: expected a float in [0, 1], got {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold: expected a float in [0, 1], got {threshold!r}")
    return float(threshold)


def check_ignore_index(ignore_index: object) -> Optional[int]:
    """None or an int64 (the kernels compare labels with it as an int64)."""
    if ignore_index is not None and not _is_int(ignore_index):
        raise TypeError(f"ignore_index: expected None or an int, got {ignore_index!r}")
    if ignore_index is not None and not -(2**63) <= ignore_index < 2**63:
        raise ValueError(f"ignore_index: expected None or an int64, got {ignore_index!r}")
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


def check_multidim_average(multidim_average: object) -> str:
    """'global' (extra dims flattened into samples) or 'samplewise' (one result per sample)."""
    if multidim_average not in MULTIDIM_AVERAGES:
        raise ValueError(f"multidim_average: expected 'global' or 'samplewise', got {multidim_average!r}")
    return multidim_average


# -- input shapes -----------------------------------------------------------------------------


def _tensors(preds: object, target: object) -> Tuple[Tensor, Tensor]:
    if not (isinstance(preds, Tensor) and isinstance(target, Tensor)):
        for name, value in (("preds", preds), ("target", target)):
            if not isinstance(value, Tensor):
                raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    return preds, target  # type: ignore[return-value]


def _shape(t: Tensor) -> str:
    return str(list(t.shape))


def _same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise ValueError(f"target: expected the shape of preds {_shape(preds)}, got {_shape(target)}")


def binary_labels(target: Tensor, ignore_index: Optional[int]) -> Tensor:
    """A float target holding 0 and 1 (and ignore_index) as int64 labels; other tensors as they are.

    Any other float value (0.5, NaN, 2.0) is an error, never truncated to a label: on CPU it is
    raised here; on CUDA (no host sync) it becomes the label 2 (3 when ignore_index is 2), which
    the kernel then rejects as out of range like any bad label."""
    if not target.is_floating_point():
        return target
    if target.dtype not in _FLOAT_TARGETS:  # float8: not a dtype the kernels (or torchmetrics) read labels from
        raise TypeError(
            f"target: expected integer or bool labels, or float16/bfloat16/float32/float64 0/1 labels, "
            f"got {str(target.dtype).replace('torch.', '')} {_shape(target)}"
        )
    valid = (target == 0) | (target == 1)
    if ignore_index is not None:
        valid |= target == ignore_index
    if target.device.type == "cpu" and not bool(valid.all()):
        flat = target.reshape(-1)
        at = int((~valid.reshape(-1)).nonzero()[0, 0])
        allowed = "0 or 1" + (f" (or ignore_index = {ignore_index})" if ignore_index is not None else "")
        raise ValueError(f"target: a float target must hold {allowed}, got {flat[at].item()!r} at index {at}")
    bad = 3 if ignore_index == 2 else 2
    return torch.where(valid, target, float(bad)).to(torch.int64)


def binary_inputs(preds: object, target: object, ignore_index: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """preds, target of one shape -> both flattened to [N]."""
    preds, target = _tensors(preds, target)
    _same_shape(preds, target)
    if target.is_floating_point():
        target = binary_labels(target, ignore_index)
    if preds.dim() == 1:  # the common case: no view to make (a reshape costs more than the check)
        return preds, target
    return preds.reshape(-1), target.reshape(-1)


def multiclass_inputs(preds: object, target: object, num_classes: int) -> Tuple[Tensor, Tensor]:
    """-> (scores [N, C], target [N]) or (labels [N], target [N])."""
    preds, target = _tensors(preds, target)
    dims = preds.dim()
    if dims == target.dim() + 1 and dims >= 2:
        shape = preds.shape
        if not preds.is_floating_point():
            raise TypeError(
                f"preds: with one dim more than target, expected float scores [N, C, ...], got "
                f"{str(preds.dtype).replace('torch.', '')} {_shape(preds)}"
            )
        if shape[1] != num_classes:
            raise ValueError(
                f"preds: expected scores [N, C, ...] with C = num_classes = {num_classes}, got {_shape(preds)}"
            )
        # [N, C] and [N] (the common case: one compare, no shape tuples built), else preds' shape
        # without its class dim
        if (shape[0] != target.shape[0]) if dims == 2 else (shape[:1] + shape[2:] != target.shape):
            expected = [shape[0]] + list(shape[2:])
            raise ValueError(f"target: expected shape {expected} (preds without its class dim 1), got {_shape(target)}")
        if dims > 2:
            return preds.movedim(1, -1).reshape(-1, num_classes), target.reshape(-1)
        return preds, target  # [N, C], [N]: no views to make (each costs more than the checks)
    if preds.dim() == target.dim():
        _same_shape(preds, target)
        if preds.is_floating_point():
            raise TypeError(
                f"preds: expected integer class labels of the shape of target or float scores [N, C, ...] "
                f"with one dim more than target, got float labels {_shape(preds)}"
            )
        if preds.dim() == 1:
            return preds, target
        return preds.reshape(-1), target.reshape(-1)
    raise ValueError(
        f"preds: expected labels of the shape of target {_shape(target)} or scores [N, C, ...] with one dim "
        f"more than target, got {_shape(preds)}"
    )


def multilabel_inputs(
    preds: object, target: object, num_labels: int, ignore_index: Optional[int] = None
) -> Tuple[Tensor, Tensor]:
    """preds, target [N, L, ...] -> both [N', L] with the extra dims flattened into samples."""
    preds, target = _tensors(preds, target)
    if preds.dim() < 2 or preds.shape[1] != num_labels:
        raise ValueError(f"preds: expected shape [N, L, ...] with L = num_labels = {num_labels}, got {_shape(preds)}")
    _same_shape(preds, target)
    if target.is_floating_point():
        target = binary_labels(target, ignore_index)
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


# -- global updates (state mutated in place by the kernels) -----------------------------------


def binary_update(
    confmat: Tensor, preds: object, target: object, threshold: float, ignore_index: Optional[int]
) -> None:
    preds, target = binary_inputs(preds, target, ignore_index)
    kernels.confmat_threshold(confmat, preds, target, None, ignore_index, threshold, logit_threshold(threshold))


def multiclass_update(confmat: Tensor, preds: object, target: object, ignore_index: Optional[int]) -> None:
    preds, target = multiclass_inputs(preds, target, confmat.shape[0])
    if preds.dim() == 2:
        kernels.confmat_scores(confmat, preds, target, None, ignore_index)
    else:
        kernels.confmat_labels(confmat, preds, target, None, ignore_index)


def multiclass_topk_update(
    state: Tensor, preds: object, target: object, ignore_index: Optional[int], top_k: int
) -> None:
    preds, target = multiclass_inputs(preds, target, state.shape[0])
    if preds.dim() != 2:
        raise ValueError(f"preds: top_k = {top_k} needs float scores [N, C, ...], got labels {_shape(preds)}")
    kernels.topk_update(state, preds, target, None, ignore_index, top_k)


def multilabel_update(
    confmat: Tensor, preds: object, target: object, threshold: float, ignore_index: Optional[int]
) -> None:
    preds, target = multilabel_inputs(preds, target, confmat.shape[0], ignore_index)
    kernels.confmat_threshold(confmat, preds, target, None, ignore_index, threshold, logit_threshold(threshold))


# -- samplewise rows (multidim_average="samplewise") -------------------------------------------


def _need_dims(t: Tensor, dims: int, layout: str) -> None:
    if t.dim() < dims:
        raise ValueError(
            f"preds: multidim_average='samplewise' needs {layout} (at least {dims} dims: a sample dim N and "
            f"the dims each sample's statistics are taken over), got {_shape(t)}"
        )


def _elements_per_sample(t: Tensor, leading: int) -> int:
    return math.prod(t.shape[leading:])


def binary_sample_confmats(preds: object, target: object, threshold: float, ignore_index: Optional[int]) -> Tensor:
    """[N, 2, 2]: one confusion matrix per sample of preds, target [N, ...]. Each sample is one
    column of the multilabel kernel (the logits decision is taken over the whole batch)."""
    preds, target = _tensors(preds, target)
    _same_shape(preds, target)
    _need_dims(preds, 2, "preds and target [N, ...]")
    if target.is_floating_point():
        target = binary_labels(target, ignore_index)
    n, m = preds.shape[0], _elements_per_sample(preds, 1)
    out = torch.zeros(n, 2, 2, dtype=torch.int64, device=preds.device)
    kernels.confmat_threshold(
        out,
        preds.reshape(n, m).t(),
        target.reshape(n, m).t(),
        None,
        ignore_index,
        threshold,
        logit_threshold(threshold),
    )
    return kernels.settled(out)


def multilabel_sample_confmats(
    preds: object, target: object, num_labels: int, threshold: float, ignore_index: Optional[int]
) -> Tensor:
    """[N, L, 2, 2]: per sample and label, of preds, target [N, L, ...]."""
    preds, target = _tensors(preds, target)
    if preds.dim() < 2 or preds.shape[1] != num_labels:
        raise ValueError(f"preds: expected shape [N, L, ...] with L = num_labels = {num_labels}, got {_shape(preds)}")
    _same_shape(preds, target)
    _need_dims(preds, 3, "preds and target [N, L, ...]")
    if target.is_floating_point():
        target = binary_labels(target, ignore_index)
    n, m = preds.shape[0], _elements_per_sample(preds, 2)
    columns = n * num_labels
    out = torch.zeros(columns, 2, 2, dtype=torch.int64, device=preds.device)
    kernels.confmat_threshold(
        out,
        preds.reshape(columns, m).t(),
        target.reshape(columns, m).t(),
        None,
        ignore_index,
        threshold,
        logit_threshold(threshold),
    )
    return kernels.settled(out).reshape(n, num_labels, 2, 2)


def topk_predictions(scores: Tensor, target: Tensor, top_k: int) -> Tensor:
    """Per row of scores [R, C]: the target when its stable rank (``#{i: s_i > s_t} + #{i < t:
    s_i == s_t}``, as the top-k kernel) is below top_k, else the row's best class (first on ties).
    A target outside [0, C) (ignored, or rejected by the caller) is read as the nearest class."""
    c = scores.shape[1]
    t = target.long().clamp(0, c - 1)
    s_t = scores.gather(1, t[:, None])
    ahead = (scores > s_t) | ((scores == s_t) & (torch.arange(c, device=scores.device)[None, :] < t[:, None]))
    hit = ahead.sum(1) < top_k
    return torch.where(hit, t, scores.argmax(1))


def multiclass_sample_stats(
    preds: object, target: object, num_classes: int, top_k: int, ignore_index: Optional[int]
) -> Tensor:
    """[N, C, 4] = (tp, fp, tn, fn) per sample and class, of scores [N, C, ...] or labels [N, ...].

    The batch is first checked by the global kernel (same errors, NaN included) on a scratch
    state; the per-sample counts are then taken from the predicted labels with torch ops."""
    preds, target = _tensors(preds, target)
    scores = preds.dim() == target.dim() + 1
    _need_dims(preds, 3 if scores else 2, "scores [N, C, ...] or labels [N, ...]" if scores else "labels [N, ...]")
    n = target.shape[0]
    c = num_classes
    flat_preds, flat_target = multiclass_inputs(preds, target, c)
    if top_k > 1:
        scratch = torch.zeros(c, 3, dtype=torch.int64, device=preds.device)
        multiclass_topk_update(scratch, preds, target, ignore_index, top_k)
        labels = topk_predictions(flat_preds, flat_target, top_k)
    else:
        scratch = torch.zeros(c, c, dtype=torch.int64, device=preds.device)
        multiclass_update(scratch, preds, target, ignore_index)
        labels = flat_preds.argmax(1) if flat_preds.dim() == 2 else flat_preds.long()
    kernels.settled(scratch)
    m = _elements_per_sample(target, 1)
    sample = torch.arange(n, device=preds.device).repeat_interleave(m)
    t = flat_target.long()
    keep = torch.ones_like(t, dtype=torch.bool) if ignore_index is None else t != ignore_index
    # ignored elements count nowhere; their labels (not range-checked) must not index out of bounds
    t, labels = torch.where(keep, t, 0), torch.where(keep, labels, 0)
    at_target, at_pred = sample * c + t, sample * c + labels
    kept = keep.long()

    def count(index: Tensor, values: Tensor, size: int) -> Tensor:
        return torch.zeros(size, dtype=torch.int64, device=preds.device).index_add_(0, index, values)

    tp = count(at_target, kept * (labels == t), n * c).reshape(n, c)
    fn = count(at_target, kept, n * c).reshape(n, c) - tp
    fp = count(at_pred, kept, n * c).reshape(n, c) - tp
    tn = count(sample, kept, n)[:, None] - tp - fp - fn
    return torch.stack([tp, fp, tn, fn], dim=-1)


# -- fresh states (the functional forms accumulate one batch into one) -----------------------


def _device(preds: object) -> torch.device:
    return preds.device if isinstance(preds, Tensor) else torch.device("cpu")


def binary_confmat(preds: object, target: object, threshold: float, ignore_index: Optional[int]) -> Tensor:
    confmat = torch.zeros(2, 2, dtype=torch.int64, device=_device(preds))
    binary_update(confmat, preds, target, threshold, ignore_index)
    return kernels.settled(confmat)


def multiclass_confmat(preds: object, target: object, num_classes: int, ignore_index: Optional[int]) -> Tensor:
    confmat = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=_device(preds))
    multiclass_update(confmat, preds, target, ignore_index)
    return kernels.settled(confmat)


def multiclass_topk(preds: object, target: object, num_classes: int, ignore_index: Optional[int], top_k: int) -> Tensor:
    state = torch.zeros(num_classes, 3, dtype=torch.int64, device=_device(preds))
    multiclass_topk_update(state, preds, target, ignore_index, top_k)
    return kernels.settled(state)


def multilabel_confmat(
    preds: object, target: object, num_labels: int, threshold: float, ignore_index: Optional[int]
) -> Tensor:
    confmat = torch.zeros(num_labels, 2, 2, dtype=torch.int64, device=_device(preds))
    multilabel_update(confmat, preds, target, threshold, ignore_index)
    return kernels.settled(confmat)
