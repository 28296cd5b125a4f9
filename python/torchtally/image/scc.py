"""``SpatialCorrelationCoefficient`` (torchmetrics.image.scc's names). Spatial correlation
coefficient of ``preds`` and ``target`` ([N, C, H, W] or [N, H, W])."""

from typing import TYPE_CHECKING, Any, Optional

from torch import Tensor

from ..functional.image import scc as scc_fn
from ..functional.image.windows import check_window_size
from .uqi import PerImageMean

__all__ = ["SpatialCorrelationCoefficient"]


class SpatialCorrelationCoefficient(PerImageMean):
    """Spatial correlation coefficient of ``preds`` and ``target`` ([N, C, H, W] or [N, H, W]):
    both pass ``high_pass_filter`` (default: the 3 x 3 Laplacian), then their local correlation
    under a window_size x window_size uniform window is averaged per image; the result is the
    mean over images.

    Differences from torchmetrics: see torchtally.image.uqi; a filter with
    a side of 1 raises ValueError (torchmetrics mirrors the whole image into its border).

        >>> import torch
        >>> from torchtally.image import SpatialCorrelationCoefficient
        >>> x = torch.arange(2 * 16 * 16.0).reshape(2, 1, 16, 16)
        >>> SpatialCorrelationCoefficient().update((x * 0.37).sin(), (x * 0.41).cos()).compute()
        tensor(0.1121)
    """

    higher_is_better = True
    plot_lower_bound = -1.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:
        scc_sum: Tensor

    def __init__(self, high_pass_filter: Optional[Tensor] = None, window_size: int = 8, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hp_filter = scc_fn.check_hp_filter(high_pass_filter, "high_pass_filter")
        self.ws = check_window_size(window_size)
        self._add_states("scc_sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        self._add_scores(scc_fn.scc_image_scores(preds, target, self.hp_filter, self.ws))
