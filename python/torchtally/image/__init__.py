"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from types import ModuleType
from typing import Tuple

from .metrics import (
    image_fid,
    image_gradients,
    image_kid_is,
    image_pansharpening,
    image_perceptual,
    image_psnr,
    image_spectral,
    image_ssim,
    image_vif,
    image_window,
)
from .image.fid import *  # noqa: F401,F403  (FID, MiFID)
from .image.tv import *  # noqa: F401,F403  (TotalVariation)
from .image.kid import *  # noqa: F401,F403  (KernelInceptionDistance, InceptionScore)
from .image.d_lambda import *  # noqa: F401,F403  (SpectralDistortionIndex, SpatialDistortionIndex, QualityWithNoReference)
from .image.lpip import *  # noqa: F401,F403  (LPIPS, DISTS, PerceptualPathLength)
from .image.psnr import *  # noqa: F401,F403  (PeakSignalNoiseRatio, PeakSignalNoiseRatioWithBlockedEffect)
from .image.sam import *  # noqa: F401,F403  (SpectralAngleMapper, ErrorRelativeGlobalDimensionlessSynthesis)
from .image.ssim import *  # noqa: F401,F403  (SSIM, MS-SSIM)
from .image.vif import *  # noqa: F401,F403  (VisualInformationFidelity)
from .image.uqi import *  # noqa: F401,F403  (UniversalImageQualityIndex, RMSE-SW, RASE, SCC)

_MODULES: Tuple[ModuleType, ...] = (
    image_psnr,
    image_gradients,
    image_spectral,
    image_ssim,
    image_vif,
    image_window,
    image_pansharpening,
    image_perceptual,
    image_fid,
    image_kid_is,
)

__all__ = [name for module in _MODULES for name in module.__all__]
