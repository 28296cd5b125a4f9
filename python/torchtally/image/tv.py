"""TotalVariation: state declarations; the math lives in
torchtally.functional.image.gradients.

State, by reduction: "sum" and "mean": ``score`` float64 (the images' total variation) and
``num_elements`` int64 (the images), sum-reduced (16 bytes); "none"/None: ``score_list``, a
float64 "cat" state of one value per image (8 bytes per image), and ``dtypes_seen`` int64 [5]
("max"; the images' dtypes, which torchmetrics' per-image result takes).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import gradients as fn
from ..functional.image import pixel_inputs as px

__all__ = ["TotalVariation"]

_F64 = torch.float64


class TotalVariation(Metric):
    """Total variation of images: per image, the sum of the absolute differences of vertically
    and horizontally neighbouring pixels. ``update(img)``: images [N, C, H, W] (floating or
    signed integer). ``reduction``: "sum" (default) or "mean" over every image seen (float32,
    the metric's dtype), or "none"/None: one value per image (in the images' dtype; int64 for
    integer images). State: see the module docstring (16 bytes; 8 per image for "none").

    Differences from torchmetrics: integer images summed exactly in int64, floating ones in
    float64 (torchmetrics: in the images' dtype); uint8 and bool images raise TypeError
    (torchmetrics: uint8 differences wrap around modulo 256); NaN or infinite pixels, and
    integer images whose total variation could pass int64 (torchmetrics wraps), raise
    ValueError; no gradient.

        >>> import torch
        >>> from torchtally.image import TotalVariation
        >>> img = torch.arange(8.0).reshape(2, 1, 2, 2)
        >>> TotalVariation().update(img).compute()
        tensor(12.)
        >>> TotalVariation(reduction="mean").update(img).compute()
        tensor(6.)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    traceable_update = False  # the pixels are checked for NaN and infinity in Python
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        score: Tensor
        num_elements: Tensor
        score_list: Tensor
        dtypes_seen: Tensor

    def __init__(self, reduction: Optional[str] = "sum", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._initial_dtype = self.dtype  # results follow the inputs until set_dtype
        self.reduction = px.check_reduction(reduction, fn.TV_REDUCTIONS)
        if self.reduction in ("sum", "mean"):
            self.add_state("score", torch.tensor(0.0, dtype=_F64), reduce="sum")
            self.add_state("num_elements", torch.tensor(0, dtype=torch.int64), reduce="sum")
        else:
            self.add_state("score_list", torch.empty(0, dtype=_F64), reduce="cat")
            self.add_state("dtypes_seen", px.dtypes_seen_default(), reduce="max")

    def update(self, img: Tensor) -> None:
        scores, _ = fn.tv_scores(img)
        if self.reduction in ("sum", "mean"):  # added in place: no new state tensors per batch
            self.score += scores.sum()
            self.num_elements += scores.numel()
            return
        flags = self.dtypes_seen.clone()
        px.note_dtype(flags, img)
        self.append_state("score_list", scores, copy=False)
        self.dtypes_seen = flags

    def compute(self) -> Tensor:
        if self.reduction == "sum":
            return self.in_result_dtype(self.score)
        if self.reduction == "mean":
            return self.in_result_dtype(self.score / self.num_elements)
        dtype = px.result_dtype(self.dtypes_seen, torch.int64, self.dtype, self._initial_dtype)
        return px.squeezed(self.score_list).to(dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "score", "num_elements", "score_list")
        px.check_flags(states)
