"""``QualityWithNoReference`` (torchmetrics.image.qnr's names). Quality with No Reference."""

from typing import Any, Dict

from torch import Tensor

from ..functional.image import d_lambda as ps
from ..functional.image.shaped_sums import add_shaped
from ..functional.image.windows import check_reduction, check_window_size
from .d_lambda import PansharpeningMetric, split_target

__all__ = ["QualityWithNoReference"]


class QualityWithNoReference(PansharpeningMetric):
    """Quality with No Reference: (1 - D_lambda)^alpha (1 - D_s)^beta, D_lambda between ``preds``
    and ``target["ms"]`` with p = ``norm_order``, D_s as SpatialDistortionIndex (same inputs).

    Differences from torchmetrics: see torchtally.image.d_lambda.

        >>> import torch
        >>> from torchtally.image import QualityWithNoReference
        >>> x = torch.arange(2 * 3 * 32 * 32.0).reshape(2, 3, 32, 32)
        >>> preds, pan = (x * 0.37).sin(), (x * 0.41).cos()
        >>> target = {"ms": preds[..., ::2, ::2], "pan": pan, "pan_lr": pan[..., ::2, ::2]}
        >>> QualityWithNoReference().update(preds, target).compute()
        tensor(0.8914)
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        alpha: float = 1,
        beta: float = 1,
        norm_order: int = 1,
        window_size: int = 7,
        reduction: str = "elementwise_mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.alpha = ps.check_nonnegative_real("alpha", alpha)
        self.beta = ps.check_nonnegative_real("beta", beta)
        self.norm_order = ps.check_positive_int("norm_order", norm_order)
        self.window_size = check_window_size(window_size)
        self.reduction = check_reduction(reduction, ps.REDUCTIONS)
        self._add_states(spectral=True, spatial=True)

    def update(self, preds: Tensor, target: Dict[str, Tensor]) -> None:
        ms, pan, pan_lr = split_target(target)
        spectral = ps.spectral_sums(preds, ms, "ms")
        spatial = ps.spatial_sums(preds, ms, pan, pan_lr, self.window_size)
        channels = (preds.shape[1],)
        pair_sums = add_shaped(self.pair_sums, channels, spectral, "preds: number of channels")
        self.channel_sums = add_shaped(self.channel_sums, channels, spatial, "preds: number of channels")
        self.pair_sums = pair_sums
        self.images = self.images + preds.shape[0]

    def compute(self) -> Tensor:
        if not self.pair_sums.numel():
            return self._nan()
        d_lambda = self._d_lambda(self.norm_order, self.reduction)
        d_s = self._d_s(self.norm_order, self.reduction)
        return self.in_result_dtype(ps.qnr_from_parts(d_lambda, d_s, self.alpha, self.beta))
