"""PeakSignalNoiseRatio and PeakSignalNoiseRatioWithBlockedEffect: state declarations; the math
lives in torchtally.functional.image.psnr.

States (all sum-reduced unless said otherwise), by option:

* PSNR, ``dim=None``: ``sum_squared_error`` float64 and ``total`` int64 (16 bytes), so any
  split of the data over ranks gives the result of one process; with ``data_range=None`` also
  ``target_min`` / ``target_max`` float64, reduced by "min" / "max" (32 bytes in all);
* PSNR with ``dim`` and reduction "elementwise_mean" or "sum": ``psnr_sum`` float64 (the
  slices' PSNR in natural-log units) and ``num_slices`` int64, plus ``dtypes_seen`` int64 [5]
  ("max"; the inputs' dtypes, which torchmetrics' result takes): 56 bytes;
* PSNR with ``dim`` and reduction "none"/None: ``psnr_values``, a float64 "cat" state of one
  value per slice (8 bytes per image with ``dim=(1, 2, 3)`` on [N, C, H, W]), plus
  ``dtypes_seen``;
* PSNR-B: ``sum_squared_error`` and ``bef`` float64, ``total`` int64 (24 bytes).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import pixel_inputs as px
from ..functional.image import psnr as fn

__all__ = ["PeakSignalNoiseRatio"]

F64 = torch.float64


class PeakSignalNoiseRatio(Metric):
    """Peak signal-to-noise ratio: ``10 / log10(base) * log10(data_range**2 / MSE)``.
    ``update(preds, target)``: tensors of one shape (any dims; float, integer or bool).

    ``data_range``: the width of the value range, or a tuple (min, max) to which both inputs
    are clamped; None: max - min of every target seen (all ranks). ``dim``: the dims of each
    PSNR (e.g. (1, 2, 3): one per image), whose values ``reduction`` ("elementwise_mean",
    "sum", "none"/None) reduces; None: one PSNR over every value seen. Results: float32 (the
    metric's dtype) with ``dim=None``; with ``dim``, the inputs' dtype, as torchmetrics.
    State: see the module docstring (16 bytes in all by default).

    Differences from torchmetrics:

    * float64 accumulation, and per-slice PSNRs kept as float64 sums (torchmetrics: sums in
      the inputs' dtype, which overflow in float16, and every slice's error kept with ``dim``);
    * preds and target of different shapes raise ValueError (torchmetrics broadcasts them);
    * ``data_range=None`` takes the range from the targets (torchmetrics 1.9: TypeError);
      data_range <= 0, base <= 0 or 1, an unknown reduction and a dim out of range raise;
    * NaN or infinite pixels raise ValueError, state unchanged (torchmetrics: NaN for good);
    * no gradient (``is_differentiable`` is False).

        >>> import torch
        >>> from torchtally.image import PeakSignalNoiseRatio
        >>> preds = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
        >>> target = torch.tensor([[3.0, 2.0], [1.0, 0.0]])
        >>> PeakSignalNoiseRatio(data_range=3.0).update(preds, target).compute()
        tensor(2.5527)
        >>> m = PeakSignalNoiseRatio(data_range=(0.0, 2.0), reduction="none", dim=1)
        >>> m.update(preds, target).compute()
        tensor([2.0412, 2.0412])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # the pixels are checked for NaN and infinity in Python
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_squared_error: Tensor
        total: Tensor
        target_min: Tensor
        target_max: Tensor
        psnr_sum: Tensor
        num_slices: Tensor
        psnr_values: Tensor
        dtypes_seen: Tensor

    def __init__(
        self,
        data_range: Union[float, Tuple[float, float], None],
        base: float = 10.0,
        reduction: Optional[str] = "elementwise_mean",
        dim: Optional[Union[int, Tuple[int, ...]]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._initial_dtype = self.dtype  # results follow the inputs until set_dtype
        self._width, self._bounds, self.base, self.reduction, self.dim = fn.check_options(
            data_range, base, reduction, dim
        )
        self.data_range = data_range
        if self.dim is None:
            self.add_state("sum_squared_error", torch.tensor(0.0, dtype=F64), reduce="sum")
            self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")
            if self._width is None:
                self.add_state("target_min", torch.tensor(float("inf"), dtype=F64), reduce="min")
                self.add_state("target_max", torch.tensor(float("-inf"), dtype=F64), reduce="max")
            return
        if self.reduction in ("elementwise_mean", "sum"):
            self.add_state("psnr_sum", torch.tensor(0.0, dtype=F64), reduce="sum")
            self.add_state("num_slices", torch.tensor(0, dtype=torch.int64), reduce="sum")
        else:
            self.add_state("psnr_values", torch.empty(0, dtype=F64), reduce="cat")
        self.add_state("dtypes_seen", px.dtypes_seen_default(), reduce="max")

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.dim is None:
            if self._width is not None and self._bounds is None:  # a fixed range: the sums alone
                if fn.squared_error_added(self.sum_squared_error, self.total, preds, target):
                    return
            sums, n = fn.squared_error_and_range(preds, target, self._bounds)
            if sums.is_cpu:  # three host values (already read for the finiteness check): added in place
                error, lowest, highest = sums.tolist()
                self.sum_squared_error += error
                self.total += n
                # the range moves on few batches: a read costs less than a write (an empty
                # batch's range, +inf and -inf, moves nothing)
                if self._width is None and lowest < self.target_min.item():
                    self.target_min.fill_(lowest)
                if self._width is None and highest > self.target_max.item():
                    self.target_max.fill_(highest)
                return
            self.sum_squared_error = self.sum_squared_error + sums[0]
            self.total = self.total + n
            if self._width is None:  # an empty batch's range (+inf, -inf) changes nothing
                self.target_min = torch.minimum(self.target_min, sums[1])
                self.target_max = torch.maximum(self.target_max, sums[2])
            return
        p, t = fn.pair64(preds, target, self._bounds)
        assert self._width is not None
        values = fn.slice_log_psnr(p, t, self.dim, self._width).reshape(-1)
        flags = self.dtypes_seen.clone()
        px.note_dtype(flags, preds, target)
        if self.reduction in ("elementwise_mean", "sum"):
            self.psnr_sum = self.psnr_sum + values.sum()
            self.num_slices = self.num_slices + values.numel()
        else:
            self.append_state("psnr_values", values, copy=False)
        self.dtypes_seen = flags

    def compute(self) -> Tensor:
        scale = fn.scale(self.base)
        if self.dim is None:
            width = self._width if self._width is not None else self.target_max - self.target_min
            return self.in_result_dtype(fn.log_psnr(self.sum_squared_error, self.total, width) * scale)
        dtype = px.result_dtype(self.dtypes_seen, torch.float32, self.dtype, self._initial_dtype)
        if self.reduction == "elementwise_mean":
            value = self.psnr_sum / self.num_slices * scale
        elif self.reduction == "sum":
            value = self.psnr_sum * scale
        else:
            value = px.squeezed(self.psnr_values * scale)
        return value.to(dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "sum_squared_error", "total", "num_slices")
        px.check_flags(states)
