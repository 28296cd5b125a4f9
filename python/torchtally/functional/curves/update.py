"""What a curve metric accumulates, and how one batch is checked and turned into that state.

A CurveTask fixes the task ("binary", "multiclass", "multilabel"), its number of columns K
(1, num_classes or num_labels), the thresholds and ignore_index. Two metrics with the same
CurveTask hold the same state, so AUROC, AveragePrecision, ROC and PrecisionRecallCurve of one
task share it in a MetricCollection (`state_key`).

State
  binned (thresholds given)  "hist"   int64 [K, T + 1, 2], sum-reduced: binned_update's
                                      histogram, hist[k, bin, is_positive].
  exact (thresholds=None)    "scores" float32 [N] (binary) or [N, K], cat-reduced;
                             "labels" uint8 [N] (binary), [N, L] (multilabel: 0, 1 or 2 =
                                      ignored), or [N] class ids in the smallest integer dtype
                                      that holds C (multiclass: uint8 up to 256 classes).
  Bytes per sample: binary 5, multilabel 5 per label, multiclass 4*C + 1 (C <= 256).

Probabilities or logits (as torchmetrics): a batch whose scores all lie in [0, 1] is taken as
probabilities; otherwise sigmoid (binary, multilabel) or softmax over the classes (multiclass)
is applied to the whole batch. Binary and multiclass decide on the samples that are not
ignored, multilabel on every element. The decision costs one min/max pass, which also finds
NaN: a NaN score raises ValueError naming `preds` (also in an ignored sample, as the kernels),
before any state changes; so does a multiclass batch of logits whose softmax is undefined (a
+inf logit, or a row of -inf only: NaN probabilities). Binned mode on a device where a host read
waits for the device (CUDA: kernels.reads_cost_a_sync) decides the same rule there instead,
with no host read (torch.where on a device flag, values identical), and leaves NaN, and a
softmax that comes out NaN, to binned_update, which refuses the whole batch (deferred on CUDA)
with a message that names both causes. The binary classes' `normalization`
(torchmetrics' argument) can turn the decision off (None: scores kept as they are) or ask for
"softmax", which has no meaning for one score per sample: torchmetrics fails inside torch on
such a batch, here a ValueError says why.

On CPU a batch that needs no conversion (probabilities without NaN, labels in range) is
checked and stored by one C call (kernels.curves.curve_rows, rows identical to the torch path's);
any other batch takes the torch path described above, which converts it or raises.

Targets: integer or bool labels; binary and multilabel also take floating targets holding
0 or 1 (or ignore_index), as torchmetrics' BinaryAUROC does. Any other float value (0.5, NaN)
raises ValueError. Multiclass targets are class ids and must be integers.

Option checks. `thresholds` follows torchmetrics: None (exact mode), an int T >= 2 (torch.linspace(0, 1, T)
in float32), a list of floats in [0, 1] or a 1-D floating tensor. Unlike torchmetrics the
values must be non-decreasing: the histogram kernel needs sorted bin edges.
"""

import math
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch
from torch import Tensor

from ... import kernels
from ...kernels import curves as curve_kernels


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
    (scores taken as they are) or "softmax" (accepted as torchmetrics does; see CurveTask)."""
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization: expected one of {list(NORMALIZATIONS)}, got {normalization!r}")
    return normalization


def check_max_fpr(max_fpr: Any) -> Optional[float]:
    if max_fpr is None:
        return None
    if (
        isinstance(max_fpr, bool)
        or not isinstance(max_fpr, (int, float))
        or not 0 < max_fpr <= 1
        or math.isnan(max_fpr)
    ):
        raise ValueError(f"max_fpr: expected None or a float in (0, 1], got {max_fpr!r}")
    return float(max_fpr)


LABEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
SCORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
IGNORED = 2  # exact multilabel: the stored label of an ignored element
TASKS = ("binary", "multiclass", "multilabel")
_LABEL_DTYPE_SET = frozenset(LABEL_DTYPES)  # membership tests on every update
_SCORE_DTYPE_SET = frozenset(SCORE_DTYPES)


def _describe(t: Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')} {list(t.shape)}"


def class_label_dtype(num_classes: int) -> torch.dtype:
    """The smallest integer dtype that holds class ids 0 .. num_classes - 1."""
    for dtype in (torch.uint8, torch.int16, torch.int32):
        if num_classes - 1 <= torch.iinfo(dtype).max:
            return dtype
    return torch.int64


class CurveTask:
    """The state layout of one task's curve metrics, and the update of that state.

    >>> task = CurveTask("binary", 1, thresholds=5)
    >>> hist = torch.zeros(task.declare()[0][1].shape, dtype=torch.int64)
    >>> task.accumulate(hist, torch.tensor([0.1, 0.8, 0.6]), torch.tensor([0, 1, 0]))
    >>> hist[0, :, 1].tolist()   # positives per bin: 0.8 lies in bin 4 (>= 0.75)
    [0, 0, 0, 0, 1, 0]
    """

    def __init__(
        self,
        task: str,
        num: int,
        thresholds: object = None,
        ignore_index: Optional[int] = None,
        normalization: Optional[str] = "sigmoid",
    ) -> None:
        if task not in TASKS:
            raise ValueError(f"task: expected one of {TASKS}, got {task!r}")
        self.task = task
        self.num = num
        self.thresholds: Optional[Thresholds] = parse_thresholds(thresholds)
        self.ignore_index = check_ignore_index(ignore_index)
        # Only the binary task takes an option here; multiclass always uses softmax, multilabel sigmoid.
        self.normalization = check_normalization(normalization) if task == "binary" else "auto"
        self.binned = self.thresholds is not None  # a plain attribute: read on every update
        # Per-update constants, derived once (the task never changes after construction).
        self._uniform = self.binned and self.thresholds.uniform  # type: ignore[union-attr]  # binned: thresholds set
        self._kernel_thresholds: Dict[torch.device, Tensor] = {}  # non-CPU device -> float64 thresholds on that device
        self._label_dtype = class_label_dtype(num) if task == "multiclass" else torch.uint8
        self._code = curve_kernels.TASK_CODES[task]
        self._size = torch.empty(1, dtype=torch.int64)  # curve_rows' row count, read at once after each call

    @property
    def state_key(self) -> tuple:
        bins = self.thresholds.key if self.binned else None  # type: ignore[union-attr]  # binned: thresholds set
        return ("torchtally.curves", self.task, self.num, bins, self.ignore_index, self.normalization)

    @property
    def label_dtype(self) -> torch.dtype:
        return self._label_dtype

    def declare(self) -> List[Tuple[str, Tensor, str]]:
        """(name, default, reduce) of every state."""
        if self.binned:
            t = self.thresholds.kernel.numel()  # type: ignore[union-attr]  # binned: thresholds set
            return [("hist", torch.zeros(self.num, t + 1, 2, dtype=torch.int64), "sum")]
        row = () if self.task == "binary" else (self.num,)
        label_row = row if self.task != "multiclass" else ()
        return [
            ("scores", torch.empty((0,) + row, dtype=torch.float32), "cat"),
            ("labels", torch.empty((0,) + label_row, dtype=self.label_dtype), "cat"),
        ]

    def check_states(self, states: Dict[str, Tensor]) -> None:
        """ValueError naming the state when `states` (as declared) could not come from updates:
        a negative histogram count; scores and labels of different lengths, a NaN score, or a
        label outside [0, 2) (binary, multilabel; IGNORED too with an ignore_index), [0, C)
        (multiclass)."""
        if self.binned:
            hist = states["hist"]
            if hist.numel() and int(hist.min()) < 0:
                raise ValueError(f"'hist': expected counts >= 0, got {int(hist.min())}")
            return
        scores, labels = states["scores"], states["labels"]
        if scores.shape[0] != labels.shape[0]:
            raise ValueError(
                f"'labels': expected one row per score row ({scores.shape[0]} in 'scores'), got {labels.shape[0]}"
            )
        if scores.numel() and bool(torch.isnan(scores).any()):
            raise ValueError("'scores': NaN (an update rejects NaN scores)")
        if self.task == "multiclass":
            hi = self.num
        else:  # multilabel also stores IGNORED for an ignored element
            hi = IGNORED + 1 if self.task == "multilabel" and self.ignore_index is not None else 2
        if labels.numel():
            lo, top = int(labels.min()), int(labels.max())
            if lo < 0 or top >= hi:
                bad = lo if lo < 0 else top
                raise ValueError(f"'labels': expected labels in [0, {hi}) for this {self.task} task, got {bad}")

    # -- one batch -------------------------------------------------------------------

    def accumulate(self, hist: Tensor, preds: Tensor, target: Tensor) -> None:
        """Binned mode: add the batch to `hist` (unchanged if anything is wrong)."""
        # No torch.no_grad() here (it costs about as much as the checks): _flatten detaches preds,
        # so the sigmoid/softmax below never records a graph.
        preds, target = self._flatten(preds, target, hist.device)
        if self.normalization != "softmax" and kernels.reads_cost_a_sync(preds):
            preds = self._probabilities_on_device(preds, target)
        else:
            preds = self._probabilities(preds, target)
        kernels.binned_update(hist, preds, target, None, self.ignore_index, self._thresholds_on(hist), self._uniform)

    def _thresholds_on(self, hist: Tensor) -> Tensor:
        """The kernel's float64 thresholds on hist's device (copied once per device)."""
        if hist.is_cpu:
            # already CPU, float64, contiguous (parse_thresholds); only binned tasks get here
            return self.thresholds.kernel  # type: ignore[union-attr]
        thresholds = self._kernel_thresholds.get(hist.device)
        if thresholds is None:
            thresholds = self.thresholds.kernel.to(hist.device)  # type: ignore[union-attr]  # binned: thresholds set
            self._kernel_thresholds[hist.device] = thresholds
        return thresholds

    def rows(self, preds: Tensor, target: Tensor, device: torch.device) -> Tuple[Tensor, Tensor]:
        """Exact mode: the (scores, labels) rows of the batch, checked, owned (never the caller's memory)."""
        given = (preds, target)
        preds, target = self._flatten(preds, target, device)  # detaches preds: no graph below
        if preds.is_cpu:
            stored = self._rows_as_given(preds, target)
            if stored is not None:
                return stored
        preds = self._probabilities(preds, target)
        if self.task == "multilabel":
            return _owned(preds, torch.float32, given[0]), self._multilabel_labels(target, given[1])
        keep = self._kept(target)
        _check_range(target, 2 if self.task == "binary" else self.num, keep)
        if keep is not None:
            preds, target = preds[keep], target[keep]
        return _owned(preds, torch.float32, given[0]), _owned(target, self.label_dtype, given[1])

    def _rows_as_given(self, preds: Tensor, target: Tensor) -> Optional[Tuple[Tensor, Tensor]]:
        """The rows of a batch that needs no conversion (probabilities, no NaN, labels in range),
        checked and copied by one kernel call (curve_rows); None for any other batch, which the
        general path converts or refuses with its own message."""
        scores = torch.empty(preds.shape, dtype=torch.float32)
        labels = torch.empty(target.shape, dtype=self._label_dtype)
        size = self._size
        curve_kernels.curve_rows(
            scores, labels, size, preds, target, self._code, self.ignore_index, self.normalization is not None
        )
        kept = int(size)
        if kept < 0:
            return None
        if kept < preds.shape[0]:  # ignored rows dropped: keep no unused tail in the state
            scores, labels = scores[:kept].clone(), labels[:kept].clone()
        return scores, labels

    def _kept(self, target: Tensor) -> Optional[Tensor]:
        return None if self.ignore_index is None else target != self.ignore_index

    def _multilabel_labels(self, target: Tensor, given: Tensor) -> Tensor:
        """uint8 labels: 0 or 1, and IGNORED where target == ignore_index."""
        keep = self._kept(target)
        _check_range(target, 2, keep)
        labels = _owned(target, torch.uint8, given)
        if keep is not None:
            labels.masked_fill_(~keep, IGNORED)
        return labels

    def _flatten(self, preds: Tensor, target: Tensor, device: torch.device) -> Tuple[Tensor, Tensor]:
        """Check types, device and shapes; fold extra dims into samples: [N] or [N, K].
        preds comes back detached (a batch that requires grad records no graph in the update)."""
        target = self._check_tensors(preds, target, device)
        if preds.requires_grad:
            preds = preds.detach()
        if self.task == "binary":
            if target.shape != preds.shape:
                raise ValueError(_target_shape_error(preds.shape, preds, target))
            return (preds, target) if preds.dim() == 1 else (preds.reshape(-1), target.reshape(-1))
        return self._fold_columns(preds, target)

    def _check_tensors(self, preds: Tensor, target: Tensor, device: torch.device) -> Tensor:
        """Check types and devices; returns the target as labels (a float target converted)."""
        if not isinstance(preds, Tensor):
            raise TypeError(f"preds: expected a tensor, got {type(preds).__name__}")
        if not isinstance(target, Tensor):
            raise TypeError(f"target: expected a tensor, got {type(target).__name__}")
        if preds.dtype not in _SCORE_DTYPE_SET:
            raise TypeError(f"preds: expected a floating tensor of shape {self._shape_text()}, got {_describe(preds)}")
        if not (preds.is_cpu and target.is_cpu and device.type == "cpu"):  # all on the one CPU: nothing to compare
            device = torch.device(device)
            for name, t in (("preds", preds), ("target", target)):
                if t.device != device:
                    raise ValueError(
                        f"{name}: expected a tensor on {device} (the device of the metric state), got {t.device}"
                    )
                if t.is_meta:
                    raise ValueError(f"{name}: expected a tensor holding values, got a meta tensor {_describe(t)}")
        if target.dtype not in _LABEL_DTYPE_SET:
            return self._float_labels(target)
        return target

    def _float_labels(self, target: Tensor) -> Tensor:
        """A floating binary/multilabel target holding whole numbers (0, 1, ignore_index) as int64
        labels; the range check that follows rejects other whole numbers."""
        if target.dtype not in _SCORE_DTYPE_SET or self.task == "multiclass":
            wanted = "integer class ids" if self.task == "multiclass" else "integer, bool or float 0/1 labels"
            raise TypeError(f"target: expected a tensor of {wanted}, got {_describe(target)}")
        labels = target.long()
        inexact = labels != target  # 0.5, NaN, inf
        if inexact.any():
            i = int(inexact.reshape(-1).nonzero()[0, 0])
            sample = i // max(1, target[0].numel())
            raise ValueError(
                "target: expected 0 or 1 (a float target holds labels), "
                f"got {target.reshape(-1)[i].item()} at sample {sample}"
            )
        return labels

    def _fold_columns(self, preds: Tensor, target: Tensor) -> Tuple[Tensor, Tensor]:
        """Multiclass / multilabel: preds [N, K, ...] -> [N, K]; target [N, ...] / [N, K, ...] alike."""
        k = self.num
        dims = preds.dim()
        if dims < 2 or preds.shape[1] != k:
            raise ValueError(f"preds: expected a floating tensor of shape {self._shape_text()}, got {_describe(preds)}")
        multiclass = self.task == "multiclass"
        if dims == 2:  # the common layout: nothing to fold, and a cheaper shape test than slicing
            ok = (
                (target.dim() == 1 and target.shape[0] == preds.shape[0]) if multiclass else target.shape == preds.shape
            )
            if not ok:
                raise ValueError(_target_shape_error(preds.shape[:1] if multiclass else preds.shape, preds, target))
            return preds, target
        want = preds.shape[:1] + preds.shape[2:] if multiclass else preds.shape
        if target.shape != want:
            raise ValueError(_target_shape_error(want, preds, target))
        preds = preds.movedim(1, -1).reshape(-1, k)
        target = target.reshape(-1) if multiclass else target.movedim(1, -1).reshape(-1, k)
        return preds, target

    def _shape_text(self) -> str:
        """The expected preds shape, for error messages."""
        if self.task == "binary":
            return "[N, ...]"
        dim = "C" if self.task == "multiclass" else "L"
        return f"[N, {dim}, ...] with {dim} = {self.num}"

    def _probabilities(self, preds: Tensor, target: Tensor) -> Tensor:
        """Raise on NaN; apply sigmoid/softmax when the batch is not in [0, 1] (see module doc)."""
        if preds.numel() == 0:
            return preds
        lo, hi = _min_max(preds)
        if lo != lo:  # NaN propagates through min/max
            bad = torch.isnan(preds).reshape(preds.shape[0], -1).any(1)
            raise ValueError(f"preds: NaN at sample {int(bad.nonzero()[0, 0])}")
        infinite = math.isinf(lo) or math.isinf(hi)
        if self.normalization is None:
            return preds
        keep = None if self.task == "multilabel" else self._kept(target)
        if keep is not None:
            kept = preds[keep]
            if kept.numel() == 0:
                return preds
            lo, hi = _min_max(kept)
        if lo >= 0 and hi <= 1:
            return preds
        if self.normalization == "softmax":
            raise ValueError(
                "preds: scores outside [0, 1] with normalization='softmax': a binary task has one score per "
                "sample, over which softmax is undefined; use normalization='sigmoid' (the default) or None"
            )
        if self.task != "multiclass":
            return preds.sigmoid()  # +-inf logits give 1 and 0
        probabilities = preds.softmax(dim=1)
        if infinite:  # a row with a +inf logit, or only -inf ones, has no softmax (NaN)
            bad = torch.isnan(probabilities).any(1)
            if bool(bad.any()):
                raise ValueError(
                    f"preds: the softmax of sample {int(bad.nonzero()[0, 0])} is undefined (a logit of +inf, "
                    "or every logit -inf); pass probabilities or finite logits"
                )
        return probabilities

    def _probabilities_on_device(self, preds: Tensor, target: Tensor) -> Tensor:
        """The rule of _probabilities without a host read (binned mode on a device where a read
        waits for it): the batch is converted or kept by torch.where on a device flag. NaN is
        left to binned_update, which refuses the whole batch (deferred on CUDA), and so is a
        softmax row that is undefined: it comes out NaN, and binned_update's multiclass message
        names that cause. Converted values are those of _probabilities bit for bit (the same
        sigmoid / softmax in the same dtype)."""
        if self.normalization is None or preds.numel() == 0:
            return preds
        inside = (preds >= 0) & (preds <= 1)  # NaN is outside: converted, and still NaN
        keep = None if self.task == "multilabel" else self._kept(target)
        if keep is not None:  # an ignored sample does not vote (binary, multiclass)
            inside |= ~keep.view((-1,) + (1,) * (preds.dim() - 1))
        outside = ~inside.all()
        converted = preds.softmax(dim=1) if self.task == "multiclass" else preds.sigmoid()
        return torch.where(outside, converted, preds)


def _min_max(t: Tensor) -> Tuple[float, float]:
    """(min, max) of a non-empty float tensor as Python floats (NaN if it holds a NaN)."""
    lo, hi = torch.aminmax(t)
    if t.is_cpu:
        return lo.item(), hi.item()  # two cheap reads; stacking first costs more than it saves
    return tuple(torch.stack((lo, hi)).tolist())  # one device sync instead of two


def _target_shape_error(want: torch.Size, preds: Tensor, target: Tensor) -> str:
    return f"target: expected shape {list(want)} to match preds {list(preds.shape)}, got {_describe(target)}"


def _check_range(target: Tensor, hi: int, keep: Optional[Tensor] = None) -> None:
    """Every (kept) label in [0, hi); else ValueError naming the first bad one."""
    if target.dtype == torch.bool or target.numel() == 0:
        return
    bad = (target < 0) | (target >= hi)
    if keep is not None:
        bad &= keep
    if bad.any():
        i = int(bad.reshape(-1).nonzero()[0, 0])
        value = int(target.reshape(-1)[i])
        sample = i // max(1, target[0].numel())
        raise ValueError(f"target: label {value} at sample {sample} is out of range [0, {hi})")


def _owned(t: Tensor, dtype: torch.dtype, given: Tensor) -> Tensor:
    """`t` as `dtype`, contiguous, copied if it still lives in the caller's tensor `given`."""
    out = t.to(dtype).contiguous()
    if out.numel() > 0 and out.untyped_storage().data_ptr() == given.untyped_storage().data_ptr():
        out = out.clone()
    return out
