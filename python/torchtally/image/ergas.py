"""``ErrorRelativeGlobalDimensionlessSynthesis`` (torchmetrics.image.ergas's names). ERGAS."""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import pixel_inputs as px
from ..functional.image import sam as fn
from .sam import F64

__all__ = ["ErrorRelativeGlobalDimensionlessSynthesis"]


class ErrorRelativeGlobalDimensionlessSynthesis(Metric):
    """ERGAS: per image, ``100 / ratio * sqrt(mean over bands of (RMSE_band /
    mean(target_band))^2)``, with ``ratio`` the ratio of high to low resolution pixel sizes.
    ``update(preds, target)``: images [N, C, H, W] of one floating dtype. ``reduction``:
    "elementwise_mean" (default) or "sum" over the images seen, or "none"/None: one value per
    image. Results have the inputs' dtype, as torchmetrics. State: see the module docstring
    (56 bytes; 8 per image for "none").

    Differences from torchmetrics: one float64 score per image computed at update (torchmetrics
    keeps both images until compute, and warns about it); float64 arithmetic; integer inputs
    raise TypeError; NaN or infinite values, ratio <= 0 and an unknown reduction raise
    ValueError; no gradient.

        >>> import torch
        >>> from torchtally.image import ErrorRelativeGlobalDimensionlessSynthesis
        >>> target = torch.ones(1, 2, 2, 2)
        >>> preds = target * torch.tensor([1.5, 0.5]).reshape(1, 2, 1, 1)
        >>> ErrorRelativeGlobalDimensionlessSynthesis().update(preds, target).compute()
        tensor(12.5000)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    traceable_update = False  # the pixels are checked for NaN and infinity in Python
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        ergas_sum: Tensor
        num_images: Tensor
        ergas_values: Tensor
        dtypes_seen: Tensor

    def __init__(self, ratio: float = 4, reduction: Optional[str] = "elementwise_mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._initial_dtype = self.dtype  # results follow the inputs until set_dtype
        self._ratio = px.check_positive("ratio", ratio)
        self.ratio = ratio
        self.reduction = px.check_reduction(reduction)
        if self.reduction in ("elementwise_mean", "sum"):
            self.add_state("ergas_sum", torch.tensor(0.0, dtype=F64), reduce="sum")
            self.add_state("num_images", torch.tensor(0, dtype=torch.int64), reduce="sum")
        else:
            self.add_state("ergas_values", torch.empty(0, dtype=F64), reduce="cat")
        self.add_state("dtypes_seen", px.dtypes_seen_default(), reduce="max")

    def update(self, preds: Tensor, target: Tensor) -> None:
        scores = fn.ergas_scores(preds, target, self._ratio)
        flags = self.dtypes_seen.clone()
        px.note_dtype(flags, preds)
        if self.reduction in ("elementwise_mean", "sum"):
            self.ergas_sum = self.ergas_sum + scores.sum()
            self.num_images = self.num_images + scores.numel()
        else:
            self.append_state("ergas_values", scores, copy=False)
        self.dtypes_seen = flags

    def compute(self) -> Tensor:
        dtype = px.result_dtype(self.dtypes_seen, self.dtype, self.dtype, self._initial_dtype)
        if self.reduction == "elementwise_mean":
            return (self.ergas_sum / self.num_images).to(dtype)
        if self.reduction == "sum":
            return self.ergas_sum.to(dtype)
        return px.squeezed(self.ergas_values).to(dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_images")
        px.check_flags(states)
