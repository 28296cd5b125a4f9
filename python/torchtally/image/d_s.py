"""``SpatialDistortionIndex`` (torchmetrics.image.d_s's names). Spatial distortion index D_s."""

from typing import Any, Dict

from torch import Tensor

from ..functional.image import d_lambda as ps
from ..functional.image.shaped_sums import add_shaped
from ..functional.image.windows import check_reduction, check_window_size
from .d_lambda import PansharpeningMetric, split_target

__all__ = ["SpatialDistortionIndex"]


class SpatialDistortionIndex(PansharpeningMetric):
    """Spatial distortion index D_s: ``update(preds, target)`` with the fused image ``preds``
    [N, C, H, W] and ``target`` a dict of ``"ms"`` [N, C, h, w] (h, w dividing H, W), ``"pan"``
    [N, C, H, W] and optionally ``"pan_lr"`` [N, C, h, w] (else pan blurred by a window_size
    window and resized to h x w). Per channel ``abs(UQI(ms, pan_lr) - UQI(preds, pan)) ** q`` over all
    images, reduced over channels ("none": per channel), to the power 1/q (q = ``norm_order``).

    Differences from torchmetrics: see torchtally.image.d_lambda.

        >>> import torch
        >>> from torchtally.image import SpatialDistortionIndex
        >>> x = torch.arange(2 * 3 * 32 * 32.0).reshape(2, 3, 32, 32)
        >>> preds, pan = (x * 0.37).sin(), (x * 0.41).cos()
        >>> target = {"ms": preds[..., ::2, ::2], "pan": pan, "pan_lr": pan[..., ::2, ::2]}
        >>> SpatialDistortionIndex().update(preds, target).compute()
        tensor(0.0380)
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self, norm_order: int = 1, window_size: int = 7, reduction: str = "elementwise_mean", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.norm_order = ps.check_positive_int("norm_order", norm_order)
        self.window_size = check_window_size(window_size)
        self.reduction = check_reduction(reduction, ps.REDUCTIONS)
        self._add_states(spectral=False, spatial=True)

    def update(self, preds: Tensor, target: Dict[str, Tensor]) -> None:
        ms, pan, pan_lr = split_target(target)
        sums = ps.spatial_sums(preds, ms, pan, pan_lr, self.window_size)
        self.channel_sums = add_shaped(self.channel_sums, (preds.shape[1],), sums, "preds: number of channels")
        self.images = self.images + preds.shape[0]

    def compute(self) -> Tensor:
        if not self.channel_sums.numel():
            return self._nan()
        return self.in_result_dtype(self._d_s(self.norm_order, self.reduction))
