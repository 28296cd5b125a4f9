"""``MemorizationInformedFrechetInceptionDistance`` (torchmetrics.image.mifid's names). FID divided
by a memorization penalty."""

from typing import Any, Union

import torch
from torch import Tensor, nn

from ..errors import NotComputableError
from ..functional.image.generative_features import resolve_extractor
from ..functional.image.generative_scores import frechet_distance, memorization_distance
from .feature_rows import RealFakeFeatureRows
from .fid import FID_LAYERS

__all__ = ["MemorizationInformedFrechetInceptionDistance"]


class MemorizationInformedFrechetInceptionDistance(RealFakeFeatureRows):
    """FID divided by a memorization penalty: the mean, over the real images, of the smallest
    cosine distance (1 - ``abs(cos)``) from its features to a generated image's, when that mean is
    below ``cosine_distance_eps`` (else 1); 0 when the FID is at most 1e-8. ``update(imgs,
    real)`` and ``feature`` / ``normalize`` as FrechetInceptionDistance (int ``feature``: 64,
    192, 768, 2048, weights from the torch hub cache only).

    State: the float32 features of every image (4 D bytes per image; module docstring); mean
    and covariance are taken in float64 at compute.

    Differences from torchmetrics: features are kept in float32 (torchmetrics: float64; equal
    for an extractor returning float32 or lower); the result is in ``self.dtype``; no weights
    are downloaded; NaN or infinite features (or float64 ones beyond float32's range), a width
    that changes, or not one row per image raise ValueError with the state unchanged; ``real``
    must be a bool.

        >>> import torch
        >>> from torchtally.image import MemorizationInformedFrechetInceptionDistance
        >>> _ = torch.manual_seed(0)
        >>> net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 4))
        >>> mifid = MemorizationInformedFrechetInceptionDistance(feature=net, cosine_distance_eps=0.5)
        >>> _ = mifid.update(torch.rand(20, 3, 2, 2), real=True)
        >>> _ = mifid.update(torch.rand(20, 3, 2, 2) * 0.5, real=False)
        >>> mifid.compute()
        tensor(0.9642)
    """

    def __init__(
        self,
        feature: Union[int, nn.Module] = 2048,
        reset_real_features: bool = True,
        normalize: bool = False,
        cosine_distance_eps: float = 0.1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.inception, self.used_custom_model = resolve_extractor(type(self).__name__, feature, list(FID_LAYERS))
        if not (isinstance(cosine_distance_eps, float) and 0 < cosine_distance_eps <= 1):
            raise ValueError("Argument `cosine_distance_eps` expected to be a float greater than 0 and less than 1")
        self.cosine_distance_eps = cosine_distance_eps
        self.declare_feature_rows(reset_real_features, normalize)

    def compute(self) -> Tensor:
        rows = self.rows()
        if rows is None:
            raise NotComputableError("MemorizationInformedFrechetInceptionDistance: no images were seen")
        real, fake = rows
        if real.shape[0] < 2 or fake.shape[0] < 2:
            raise NotComputableError(
                f"MiFID needs at least 2 real and 2 fake images, got {real.shape[0]} and {fake.shape[0]}"
            )
        fid = frechet_distance(real.mean(dim=0), torch.cov(real.T), fake.mean(dim=0), torch.cov(fake.T))
        if not bool(fid > 1e-8):
            return torch.zeros((), dtype=self.dtype, device=fid.device)
        distance = memorization_distance(real, fake, self.cosine_distance_eps)
        return self.in_result_dtype(fid / (distance + 1e-14))
