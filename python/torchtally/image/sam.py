"""SpectralAngleMapper and ErrorRelativeGlobalDimensionlessSynthesis: state declarations; the
math lives in torchtally.functional.image (sam.py, ergas.py).

States, by reduction:

* SAM, "elementwise_mean" / "sum": ``sum_sam`` float64 (the pixels' angles) and ``numel``
  int64 (the pixels), sum-reduced (16 bytes). "none"/None: ``sam_values``, a float64 "cat"
  state of every pixel's angle (8 * H * W bytes per image; torchmetrics keeps both images,
  2 * C * H * W values), ``image_size_min`` / ``image_size_max`` int64 [2] ("min" / "max":
  H and W, which must agree across batches and ranks) and ``dtypes_seen``;
* ERGAS, "elementwise_mean" / "sum": ``ergas_sum`` float64 and ``num_images`` int64 (16
  bytes); "none"/None: ``ergas_values``, a float64 "cat" state of one value per image (8 bytes
  per image; torchmetrics keeps both images); either way ``dtypes_seen`` int64 [5] ("max"),
  the inputs' dtypes, which torchmetrics' result takes.
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import pixel_inputs as px
from ..functional.image import sam as fn

__all__ = ["SpectralAngleMapper"]

F64 = torch.float64
_NO_SIZE = torch.iinfo(torch.int64).max


class SpectralAngleMapper(Metric):
    """Spectral angle mapper: per pixel, the angle (radians) between the predicted and the
    true spectrum over C > 1 bands. ``update(preds, target)``: images [N, C, H, W] of one
    floating dtype. ``reduction``: "elementwise_mean" (default) or "sum" over every pixel seen
    (float32, the metric's dtype), or "none"/None: the angles [N, H, W] of every image seen
    (in the inputs' dtype; every image must then have the same H and W). State: see the
    module docstring (16 bytes; 8 per pixel for "none").

    Differences from torchmetrics: float64 arithmetic; angles kept instead of both images for
    "none" (and no warning about memory); images of another size than the earlier ones raise
    ValueError at the update for "none" (torchmetrics: an error at compute); NaN or infinite
    values raise ValueError (torchmetrics: NaN for good); integer inputs raise TypeError; no
    gradient.

        >>> import torch
        >>> from torchtally.image import SpectralAngleMapper
        >>> preds = torch.tensor([[[[1.0]], [[0.0]]], [[[1.0]], [[1.0]]]])
        >>> target = torch.tensor([[[[0.0]], [[1.0]]], [[[1.0]], [[1.0]]]])
        >>> SpectralAngleMapper().update(preds, target).compute()
        tensor(0.7854)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    plot_lower_bound = 0.0
    traceable_update = False  # "none" reads the image size seen so far
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_sam: Tensor
        numel: Tensor
        sam_values: Tensor
        image_size_min: Tensor
        image_size_max: Tensor
        dtypes_seen: Tensor

    def __init__(self, reduction: Optional[str] = "elementwise_mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._initial_dtype = self.dtype  # results follow the inputs until set_dtype
        self.reduction = px.check_reduction(reduction)
        if self.reduction in ("elementwise_mean", "sum"):
            self.add_state("sum_sam", torch.tensor(0.0, dtype=F64), reduce="sum")
            self.add_state("numel", torch.tensor(0, dtype=torch.int64), reduce="sum")
            return
        self.add_state("sam_values", torch.empty(0, dtype=F64), reduce="cat")
        self.add_state("image_size_min", torch.full((2,), _NO_SIZE, dtype=torch.int64), reduce="min")
        self.add_state("image_size_max", torch.zeros(2, dtype=torch.int64), reduce="max")
        self.add_state("dtypes_seen", px.dtypes_seen_default(), reduce="max")

    def update(self, preds: Tensor, target: Tensor) -> None:
        angles = fn.sam_angles(preds, target)
        if self.reduction in ("elementwise_mean", "sum"):
            self.sum_sam = self.sum_sam + angles.sum()
            self.numel = self.numel + angles.numel()
            return
        size = list(angles.shape[1:])
        seen = self.image_size_max.tolist()
        if seen != [0, 0] and seen != size:
            raise ValueError(f"preds: expected images of {seen[0]} x {seen[1]} pixels (as before), got {size}")
        flags = self.dtypes_seen.clone()
        px.note_dtype(flags, preds)
        hw = torch.tensor(size, dtype=torch.int64, device=self.image_size_max.device)
        self.append_state("sam_values", angles.reshape(-1), copy=False)
        self.image_size_min = torch.minimum(self.image_size_min, hw)
        self.image_size_max = torch.maximum(self.image_size_max, hw)
        self.dtypes_seen = flags

    def compute(self) -> Tensor:
        if self.reduction == "elementwise_mean":
            return self.in_result_dtype(self.sum_sam / self.numel)
        if self.reduction == "sum":
            return self.in_result_dtype(self.sum_sam)
        low, high = self.image_size_min.tolist(), self.image_size_max.tolist()
        dtype = px.result_dtype(self.dtypes_seen, self.dtype, self.dtype, self._initial_dtype)
        if high == [0, 0]:
            return self.sam_values.to(dtype)
        if low != high:
            raise ValueError(f"SpectralAngleMapper: images of different sizes were seen ({low} and {high} pixels)")
        return px.squeezed(self.sam_values.reshape(-1, *high)).to(dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "sum_sam", "numel", "image_size_min", "image_size_max")
        px.check_flags(states)
