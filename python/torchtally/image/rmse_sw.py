"""``RootMeanSquaredErrorUsingSlidingWindow`` (torchmetrics.image.rmse_sw's names). RMSE of
``preds`` against ``target`` ([N, C, H, W], one float dtype) over a sliding window_size x
window_size window."""

from typing import TYPE_CHECKING, Any

from torch import Tensor

from ..functional.image import rmse_sw as sw_fn
from ..functional.image.windows import check_window_size
from .uqi import PerImageMean

__all__ = ["RootMeanSquaredErrorUsingSlidingWindow"]


class RootMeanSquaredErrorUsingSlidingWindow(PerImageMean):
    """RMSE of ``preds`` against ``target`` ([N, C, H, W], one float dtype) over a sliding
    window_size x window_size window: per image, the windowed RMSE map averaged inside a border
    of round(window_size / 2) pixels; the result is the mean over images (NaN for
    window_size 1, whose border leaves nothing, as torchmetrics).

    Differences from torchmetrics: see torchtally.image.uqi.

        >>> import torch
        >>> from torchtally.image import RootMeanSquaredErrorUsingSlidingWindow
        >>> target = torch.linspace(0, 1, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> RootMeanSquaredErrorUsingSlidingWindow().update(target + 0.1, target).compute()
        tensor(0.1000)
    """

    higher_is_better = False
    plot_lower_bound = 0.0
    if TYPE_CHECKING:
        score_sum: Tensor

    def __init__(self, window_size: int = 8, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.window_size = check_window_size(window_size)
        self._add_states("score_sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        self._add_scores(sw_fn.rmse_sw_image_scores(preds, target, self.window_size))
