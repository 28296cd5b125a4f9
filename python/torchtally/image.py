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
from .metrics.image_fid import *  # noqa: F401,F403  (FID, MiFID)
from .metrics.image_gradients import *  # noqa: F401,F403  (TotalVariation)
from .metrics.image_kid_is import *  # noqa: F401,F403  (KernelInceptionDistance, InceptionScore)
from .metrics.image_pansharpening import *  # noqa: F401,F403  (SpectralDistortionIndex, SpatialDistortionIndex, QualityWithNoReference)
from .metrics.image_perceptual import *  # noqa: F401,F403  (LPIPS, DISTS, PerceptualPathLength)
from .metrics.image_psnr import *  # noqa: F401,F403  (PeakSignalNoiseRatio, PeakSignalNoiseRatioWithBlockedEffect)
from .metrics.image_spectral import *  # noqa: F401,F403  (SpectralAngleMapper, ErrorRelativeGlobalDimensionlessSynthesis)
from .metrics.image_ssim import *  # noqa: F401,F403  (SSIM, MS-SSIM)
from .metrics.image_vif import *  # noqa: F401,F403  (VisualInformationFidelity)
from .metrics.image_window import *  # noqa: F401,F403  (UniversalImageQualityIndex, RMSE-SW, RASE, SCC)

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
