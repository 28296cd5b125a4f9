"""Visual information fidelity: state declarations; the math lives in
torchtally.functional.image.vif (its windowed moments: the SSIM moments kernel).

State, each image scored at update (float64): reduction "mean": ``vif_sum``, the float64 sum of
the per-image scores, and ``total``, an int64 count of images, both sum-reduced (16 bytes in
all; torchmetrics keeps every score); reduction "none": ``vif_score``, a cat state of the
per-image scores (8 bytes per image). Results are in ``self.dtype`` (float32 by default;
torchmetrics returns the input's dtype).

Deliberate differences from torchmetrics: float64 moments; integer, NaN or infinite inputs, a
target channel without variance (VIF 0/0) and images under 41 x 41 raise with the state
unchanged; sigma_n_sq <= 0 raises at construction; no gradient (``is_differentiable`` is
False).
"""

from typing import TYPE_CHECKING, Any, Dict

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import vif as vif_fn

__all__ = ["VisualInformationFidelity"]


class VisualInformationFidelity(Metric):
    """Visual information fidelity of image batches: ``update(preds, target)`` with floating
    [N, C, H, W] images (H, W >= 41); each image's VIF (averaged over its channels) is scored at
    update; compute gives their mean (``reduction="mean"``) or every score (``"none"``).
    ``sigma_n_sq``: the variance of the visual noise.

    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.image import VisualInformationFidelity
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 1, 48, 48, generator=g)
        >>> VisualInformationFidelity().update(preds, preds * 0.75).compute()
        tensor(1.7623)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    if TYPE_CHECKING:  # declared states, read as attributes
        vif_score: Tensor
        vif_sum: Tensor
        total: Tensor

    def __init__(self, sigma_n_sq: float = 2.0, reduction: str = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sigma_n_sq = vif_fn.check_sigma_n_sq(sigma_n_sq)
        vif_fn.check_reduction(reduction)
        self.reduction = reduction
        if reduction == "mean":
            self.add_state("vif_sum", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        else:
            self.add_state("vif_score", torch.empty(0, dtype=torch.float64), reduce="cat")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds, target = vif_fn.check_images(preds, target)
        scores = vif_fn.per_image(preds, target, self.sigma_n_sq)
        if self.reduction == "mean":
            self.vif_sum += scores.sum()
        else:
            self.append_state("vif_score", scores, copy=False)
        self.total += scores.numel()

    def compute(self) -> Tensor:
        if self.reduction == "mean":
            return self.in_result_dtype(self.vif_sum / self.total)
        return self.in_result_dtype(self.vif_score)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total")
