"""UniversalImageQualityIndex, RootMeanSquaredErrorUsingSlidingWindow,
RelativeAverageSpectralError and SpatialCorrelationCoefficient: image metrics made of sliding
windows. State declarations only; the math is in torchtally.functional.image (float64).

State (all sum-reduced unless said; every rank's sums added equal one process's):

    UQI  mean/sum  uqi_sum float64 [], uqi_count int64 []: the UQI map summed over every map
                   value of every image, and the number of values (16 bytes)
         "none"    uqi_maps float64 "cat" (8 * C * H' * W' bytes per image: the map itself,
                   which is the result), map_shape int64 [3] "merge" (set by the first batch),
                   input_float int64 [1] "max" (the result's dtype follows the inputs)
    RMSE-SW        score_sum float64 [], images int64 []: per image, the mean of the windowed
                   RMSE map inside the border, summed (16 bytes)
    RASE           window_sums float64 [3 + 2 C H W] "merge": the image shape (C, H, W), then the
                   windowed RMSE maps and the windowed target means summed over the images
                   (torchmetrics keeps every image; its value is made from these sums);
                   images int64 []; input_float int64 [1] "max"
    SCC            scc_sum float64 [], images int64 []: per image, the mean spatial correlation

Differences from torchmetrics, common to these classes:

* windows are computed in float64 (torchmetrics: in the inputs' dtype, float32 for SCC) and
  summed in float64 (torchmetrics: float32 sums for UQI, RMSE-SW and SCC);
* RASE and UQI with reduction "none" keep per-pixel sums or maps, not the input images;
* UQI's mean divides by the number of map values (torchmetrics' class divides by
  N C (H - k0 + 1) (W - k1 + 1), which differs from the map's size for a non-square kernel);
* images too small for the window, and UQI's NaN or infinite pixels, raise ValueError naming the
  argument, with the state unchanged;
  later batches of another image shape raise ValueError where a per-pixel state holds a shape;
* no gradient (``is_differentiable`` is False).
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import torch
from torch import Tensor

from ..base.input_dtype import InputDtypeMixin
from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import uqi as uqi_fn
from ..functional.image.windows import check_kernel, check_reduction
from ..functional.regression import update as reg_update

__all__ = ["UniversalImageQualityIndex"]

F64 = torch.float64


def scalar(dtype: torch.dtype) -> Tensor:
    return torch.tensor(0, dtype=dtype)


class WindowMetric(Metric):
    is_differentiable = False
    full_state_update = False
    traceable_update = False  # shapes of earlier batches are read back in Python


class UniversalImageQualityIndex(InputDtypeMixin, WindowMetric):
    """Universal Image Quality Index of ``preds`` against ``target`` ([N, C, H, W], one float
    dtype): the UQI map under a Gaussian window (``kernel_size``, ``sigma``) averaged over every
    value of every image ("elementwise_mean"), summed ("sum"), or the maps themselves
    [N, C, H', W'] ("none"/None, in the inputs' dtype).

    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.image import UniversalImageQualityIndex
        >>> preds = torch.linspace(0, 1, 2 * 16 * 16).reshape(2, 1, 16, 16)
        >>> UniversalImageQualityIndex().update(preds, preds * 0.75).compute()
        tensor(0.9214)
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:
        uqi_sum: Tensor
        uqi_count: Tensor
        uqi_maps: Tensor
        map_shape: Tensor

    def __init__(
        self,
        kernel_size: Sequence[int] = (11, 11),
        sigma: Sequence[float] = (1.5, 1.5),
        reduction: Optional[str] = "elementwise_mean",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._how = check_reduction(reduction, uqi_fn.UQI_REDUCTIONS)
        self._kernel, self._sigma = check_kernel(kernel_size, sigma)
        self.kernel_size, self.sigma, self.reduction = kernel_size, sigma, reduction
        if self._how == "none":
            self.add_state("uqi_maps", torch.empty(0, dtype=F64), reduce="cat")
            self.add_state("map_shape", torch.empty(0, dtype=torch.int64), reduce="merge")
            self._add_input_dtype()
        else:
            self.add_state("uqi_sum", scalar(F64), reduce="sum")
            self.add_state("uqi_count", scalar(torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        maps = uqi_fn.uqi_batch_maps(preds, target, self._kernel, self._sigma)
        if self._how != "none":
            self.uqi_sum = self.uqi_sum + maps.sum().to(self.uqi_sum.device)
            self.uqi_count = self.uqi_count + maps.numel()
            return
        shape = tuple(maps.shape[1:])
        stored = tuple(self.map_shape.tolist())
        if stored and stored != shape:
            raise ValueError(
                f"preds: expected UQI maps of shape {list(stored)} as the batches before, got {list(shape)}"
            )
        self._note_input_dtype(preds)
        self.append_state("uqi_maps", maps.reshape(-1), copy=False)
        if not stored:
            self.map_shape = torch.tensor(shape, dtype=torch.int64, device=self.map_shape.device)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        shapes = {tuple(v.tolist()) for v in values if v.numel()}
        if len(shapes) > 1:
            raise ValueError(
                f"UniversalImageQualityIndex: the ranks saw UQI maps of different shapes: {sorted(shapes)}"
            )
        return next((v for v in values if v.numel()), values[0]).clone()

    def compute(self) -> Tensor:
        if self._how == "none":
            if not self.map_shape.numel():
                raise ValueError("UniversalImageQualityIndex: no images to return the maps of")
            dtype = reg_update.promoted(self.dtype, self._input_code())
            return self.uqi_maps.reshape(-1, *self.map_shape.tolist()).to(dtype)
        value = self.uqi_sum / self.uqi_count if self._how == "elementwise_mean" else self.uqi_sum
        return self.in_result_dtype(value)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        if self._how != "none":
            check_nonnegative(states, "uqi_count")
            return
        self._check_input_dtype(states)
        shape, maps = states["map_shape"].tolist(), states["uqi_maps"]
        if not shape:
            if maps.numel():
                raise ValueError(f"'map_shape': expected [C, H, W] for {maps.numel()} stored value(s), got []")
            return
        if len(shape) != 3 or min(shape) < 0:
            raise ValueError(f"'map_shape': expected [C, H, W] with non-negative sizes, got {shape}")
        per_image = shape[0] * shape[1] * shape[2]
        if (maps.numel() % per_image) if per_image else maps.numel():
            raise ValueError(
                f"'uqi_maps': expected a multiple of {per_image} values (map_shape {shape}), got {maps.numel()}"
            )


class PerImageMean(WindowMetric):
    """A float64 sum of one score per image and the number of images; the result is their mean."""

    if TYPE_CHECKING:
        images: Tensor

    def _add_states(self, name: str) -> None:
        self._sum_name = name
        self.add_state(name, scalar(F64), reduce="sum")
        self.add_state("images", scalar(torch.int64), reduce="sum")

    def _add_scores(self, scores: Tensor) -> None:
        total = getattr(self, self._sum_name)
        setattr(self, self._sum_name, total + scores.sum().to(total.device))
        self.images = self.images + scores.numel()

    def compute(self) -> Tensor:
        return self.in_result_dtype(getattr(self, self._sum_name) / self.images)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "images")
