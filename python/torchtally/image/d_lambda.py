"""SpectralDistortionIndex (D_lambda), SpatialDistortionIndex (D_s) and QualityWithNoReference
(QNR): pansharpening quality without a reference image. State declarations only; the math is
in torchtally.functional.image (d_lambda.py, d_s.py, qnr.py; float64).

torchmetrics keeps every image (preds, ms, pan, pan_lr) in lists and computes at the end; its
values are functions of mean UQI values over all images, i.e. of per-image mean UQI values
summed over images. This keeps exactly those sums:

    D_lambda  pair_sums float64 [1 + 2 P] "merge": C, then per channel pair k < r (P of them)
              the per-image mean UQI of target and of preds, summed over images
    D_s       channel_sums float64 [1 + 2 C] "merge": C, then per channel the per-image mean UQI
              of (ms, degraded pan) and of (preds, pan), summed over images
    QNR       both (pair_sums of preds against ms)
    all       images int64 [] "sum"

A "merge" state is empty until the first batch sets C; ranks add their sums (one holding none
is left out). Results are in ``self.dtype`` (float32 by default, as torchmetrics').

Differences from torchmetrics, common to these classes:

* UQI in float64 (torchmetrics: the inputs' dtype), sums in float64; O(C^2) numbers per metric
  instead of every image;
* batches may have different image sizes (torchmetrics' concatenation needs one size); a
  batch's ``pan_lr`` serves that batch (torchmetrics concatenates the ``pan_lr`` of the batches
  that had one and pairs them with all images);
* bad input raises at ``update`` with the state unchanged (torchmetrics: a window_size too
  large for ``ms`` raises only at ``compute``); the degraded pan needs no torchvision;
* no warning about memory (nothing grows with the data); no gradient.
"""

from typing import TYPE_CHECKING, Any, Dict, List

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import d_lambda as ps
from ..functional.image.shaped_sums import add_shaped, check_shaped, merge_shaped, split_shaped
from ..functional.image.windows import check_reduction

__all__ = ["SpectralDistortionIndex"]

_F64 = torch.float64


def _pairs(channels: int) -> int:
    return channels * (channels - 1) // 2


def split_target(target: Any) -> tuple:
    """(ms, pan, pan_lr or None) from torchmetrics' target dict."""
    if not isinstance(target, dict):
        raise TypeError(
            f"target: expected a dict with keys 'ms', 'pan' and optionally 'pan_lr', got {type(target).__name__}"
        )
    for key in ("ms", "pan"):
        if key not in target:
            raise ValueError(f"target: expected the key '{key}', got keys {sorted(target)}")
    return target["ms"], target["pan"], target.get("pan_lr")


class PansharpeningMetric(Metric):
    is_differentiable = False
    full_state_update = False
    traceable_update = False  # the channel count of earlier batches is read back in Python
    if TYPE_CHECKING:
        images: Tensor
        pair_sums: Tensor
        channel_sums: Tensor

    def _add_states(self, spectral: bool, spatial: bool) -> None:
        if spectral:
            self.add_state("pair_sums", torch.empty(0, dtype=_F64), reduce="merge")
        if spatial:
            self.add_state("channel_sums", torch.empty(0, dtype=_F64), reduce="merge")
        self.add_state("images", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        return merge_shaped(values, 1, f"{type(self).__name__} ({name})")

    def _nan(self) -> Tensor:
        return torch.tensor(float("nan"), dtype=self.dtype, device=self.images.device)

    def _d_lambda(self, p: int, reduction: str) -> Tensor:
        (channels,), sums = split_shaped(self.pair_sums, 1)
        return ps.spectral_from_sums(sums, channels, self.images, p, reduction)

    def _d_s(self, norm_order: int, reduction: str) -> Tensor:
        _, sums = split_shaped(self.channel_sums, 1)
        return ps.spatial_from_sums(sums, self.images, norm_order, reduction)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "images")
        if "pair_sums" in states:
            check_shaped(states["pair_sums"], 1, lambda s: 2 * _pairs(s[0]), "pair_sums")
        if "channel_sums" in states:
            check_shaped(states["channel_sums"], 1, lambda s: 2 * s[0], "channel_sums")


class SpectralDistortionIndex(PansharpeningMetric):
    """Spectral distortion index D_lambda of ``preds`` against ``target`` ([N, C, H, W] each, one
    float dtype, the same N and C): the p-mean over channel pairs of the difference between the
    pairs' mean UQI in target and in preds, over all images. A scalar for every ``reduction``
    (as torchmetrics).

    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.image import SpectralDistortionIndex
        >>> x = torch.arange(2 * 3 * 16 * 16.0).reshape(2, 3, 16, 16)
        >>> SpectralDistortionIndex().update((x * 0.37).sin(), (x * 0.41).cos()).compute()
        tensor(0.5932)
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(self, p: int = 1, reduction: str = "elementwise_mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.p = ps.check_positive_int("p", p)
        self.reduction = check_reduction(reduction, ps.REDUCTIONS)
        self._add_states(spectral=True, spatial=False)

    def update(self, preds: Tensor, target: Tensor) -> None:
        sums = ps.spectral_sums(preds, target)
        self.pair_sums = add_shaped(self.pair_sums, (preds.shape[1],), sums, "preds: number of channels")
        self.images = self.images + preds.shape[0]

    def compute(self) -> Tensor:
        if not self.pair_sums.numel():
            return self._nan()
        return self.in_result_dtype(self._d_lambda(self.p, self.reduction))
