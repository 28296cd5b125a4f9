"""SSIM and multi-scale SSIM: state declarations; the math lives in
torchtally.functional.image.structural (the windowed moments: the kernel route
torchtally.kernels.image.ssim, csrc/kernels/ssim_moments.c).

State, per update's images scored at update (float64):

* reduction "elementwise_mean" / "sum": ``similarity``, the float64 sum of the per-image
  scores, and ``total``, an int64 count of images; both sum-reduced (16 bytes in all);
* reduction "none" / None: ``similarity`` is a cat state of the per-image scores (8 bytes per
  image), ``total`` as above;
* SSIM with ``return_contrast_sensitivity``: ``image_return``, a cat state of each image's
  contrast sensitivity (8 bytes per image);
* SSIM with ``return_full_image``: ``image_return``, a cat state of the SSIM maps' values
  flattened (8 bytes per channel and pixel of the map: C * H * W * 8 per 2-D image) and
  ``image_shape``, a cat state of each image's map shape (40 bytes per image).

Results are in ``self.dtype`` (float32 by default, as torchmetrics' float32 state gives for
reduced scores; torchmetrics returns per-image scores and maps in the input's dtype).

Deliberate differences from torchmetrics: float64 moments and sums; integer, NaN or infinite
inputs, a non-positive data_range and images too small for the window's reflect padding raise
with the state unchanged; a window of 1 averages the contrast sensitivity over the whole image
(torchmetrics: NaN); no gradient (``is_differentiable`` is False).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import structural as sp

__all__ = ["StructuralSimilarityIndexMeasure", "MultiScaleStructuralSimilarityIndexMeasure"]


class _SimilarityBase(Metric):
    higher_is_better = True
    is_differentiable = False
    full_state_update = False
    # The update reads its scores in Python: a NaN score is explained (which input, why), not summed.
    traceable_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:  # declared states, read as attributes
        similarity: Tensor
        total: Tensor

    def _declare(self, reduction: Optional[str]) -> None:
        sp.check_reduction(reduction)
        self.reduction = reduction
        if reduction in ("elementwise_mean", "sum"):
            self.add_state("similarity", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        else:
            self.add_state("similarity", torch.empty(0, dtype=torch.float64), reduce="cat")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def _add_scores(self, scores: Tensor) -> None:
        if self.reduction in ("elementwise_mean", "sum"):
            self.similarity += scores.sum()
        else:
            self.append_state("similarity", scores, copy=False)
        self.total += scores.numel()

    def _reduced(self) -> Tensor:
        if self.reduction == "elementwise_mean":
            return self.in_result_dtype(self.similarity / self.total)
        return self.in_result_dtype(self.similarity)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total")


class StructuralSimilarityIndexMeasure(_SimilarityBase):
    """Structural similarity (SSIM) of image batches: ``update(preds, target)`` with floating
    [N, C, H, W] or [N, C, D, H, W] images; each image's SSIM (its map averaged over channels
    and pixels) is scored at update and the scores reduced by ``reduction``
    ("elementwise_mean", "sum", "none" or None). Arguments as in
    torchtally.functional.image.structural_similarity_index_measure; with
    ``return_full_image`` compute returns (scores, SSIM maps [N, C, ...]), with
    ``return_contrast_sensitivity`` (scores, each image's contrast sensitivity [N]).

    Differences from torchmetrics: see the module docstring (float64, bad inputs raise, no
    gradient).

        >>> import torch
        >>> from torchtally.image import StructuralSimilarityIndexMeasure
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 1, 16, 16, generator=g)
        >>> StructuralSimilarityIndexMeasure(data_range=1.0).update(preds, preds * 0.75).compute()
        tensor(0.9219)
    """

    if TYPE_CHECKING:
        image_return: Tensor
        image_shape: Tensor

    def __init__(
        self,
        gaussian_kernel: bool = True,
        sigma: Union[float, Sequence[float]] = 1.5,
        kernel_size: Union[int, Sequence[int]] = 11,
        reduction: Optional[str] = "elementwise_mean",
        data_range: Optional[Union[float, Tuple[float, float]]] = None,
        k1: float = 0.01,
        k2: float = 0.03,
        return_full_image: bool = False,
        return_contrast_sensitivity: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if return_full_image and return_contrast_sensitivity:
            raise ValueError("return_full_image, return_contrast_sensitivity: expected at most one of them to be True")
        self._opts = sp.check_options(gaussian_kernel, sigma, kernel_size, data_range, k1, k2)
        self._declare(reduction)
        self.gaussian_kernel, self.sigma, self.kernel_size = gaussian_kernel, sigma, kernel_size
        self.data_range, self.k1, self.k2 = data_range, k1, k2
        self.return_full_image = bool(return_full_image)
        self.return_contrast_sensitivity = bool(return_contrast_sensitivity)
        if self.return_full_image or self.return_contrast_sensitivity:
            self.add_state("image_return", torch.empty(0, dtype=torch.float64), reduce="cat")
        if self.return_full_image:
            self.add_state("image_shape", torch.empty(0, 5, dtype=torch.int64), reduce="cat")

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds, target = sp.check_images(preds, target)
        scores, cs, full = sp.per_image(
            preds, target, self._opts, self.return_contrast_sensitivity, self.return_full_image
        )
        self._add_scores(scores)
        if cs is not None:
            self.append_state("image_return", cs, copy=False)
        if full is not None:
            n, c, *spatial = full.shape
            row = torch.tensor([c, *spatial, *([1] * (3 - len(spatial))), len(spatial)], dtype=torch.int64)
            self.append_state("image_shape", row.to(full.device).expand(n, 5).clone(), copy=False)
            self.append_state("image_return", full.reshape(-1), copy=False)

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        scores = self._reduced()
        if self.return_contrast_sensitivity:
            return scores, self.in_result_dtype(self.image_return)
        if self.return_full_image:
            return scores, self._maps()
        return scores

    def _maps(self) -> Tensor:
        shapes = self.image_shape
        if shapes.shape[0] == 0:
            return self.in_result_dtype(self.image_return)
        if bool((shapes != shapes[0]).any()):
            raise ValueError("return_full_image: the updates' SSIM maps differ in shape; they cannot be concatenated")
        c, s0, s1, s2, spatial = (int(v) for v in shapes[0])
        shape = (c, s0, s1, s2)[: 1 + spatial]
        return self.in_result_dtype(self.image_return.reshape(-1, *shape))

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        shapes = states.get("image_shape")
        if shapes is not None and shapes.numel():
            check_nonnegative(states, "image_shape")
            per_image = shapes[:, :4].prod(1) if bool((shapes[:, 4] == 3).all()) else shapes[:, :3].prod(1)
            if int(per_image.sum()) != states["image_return"].numel():
                raise ValueError("'image_return': expected as many values as 'image_shape' describes")


class MultiScaleStructuralSimilarityIndexMeasure(_SimilarityBase):
    """Multi-scale SSIM of image batches: ``update(preds, target)`` with floating [N, C, H, W]
    or [N, C, D, H, W] images; each image's MS-SSIM is scored at update and the scores reduced by
    ``reduction``. Arguments (note kernel_size before sigma, as in torchmetrics) as in
    torchtally.functional.image.multiscale_structural_similarity_index_measure.

    Differences from torchmetrics: see the module docstring.

        >>> import torch
        >>> from torchtally.image import MultiScaleStructuralSimilarityIndexMeasure
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(1, 1, 180, 180, generator=g)
        >>> MultiScaleStructuralSimilarityIndexMeasure(data_range=1.0).update(preds, preds * 0.75).compute()
        tensor(0.9634)
    """

    def __init__(
        self,
        gaussian_kernel: bool = True,
        kernel_size: Union[int, Sequence[int]] = 11,
        sigma: Union[float, Sequence[float]] = 1.5,
        reduction: Optional[str] = "elementwise_mean",
        data_range: Optional[Union[float, Tuple[float, float]]] = None,
        k1: float = 0.01,
        k2: float = 0.03,
        betas: Tuple[float, ...] = sp.DEFAULT_BETAS,
        normalize: Optional[str] = "relu",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._opts = sp.check_options(gaussian_kernel, sigma, kernel_size, data_range, k1, k2)
        self.betas = sp.check_ms_options(betas, normalize)
        self._declare(reduction)
        self.gaussian_kernel, self.sigma, self.kernel_size = gaussian_kernel, sigma, kernel_size
        self.data_range, self.k1, self.k2, self.normalize = data_range, k1, k2, normalize

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds, target = sp.check_images(preds, target)
        self._add_scores(sp.ms_per_image(preds, target, self._opts, self.betas, self.normalize))

    def compute(self) -> Tensor:
        return self._reduced()
