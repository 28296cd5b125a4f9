"""torchmetrics.image's place: ``from torchtally.image import StructuralSimilarityIndexMeasure``."""

from .d_lambda import SpectralDistortionIndex
from .d_s import SpatialDistortionIndex
from .dists import DeepImageStructureAndTextureSimilarity
from .ergas import ErrorRelativeGlobalDimensionlessSynthesis
from .fid import FrechetInceptionDistance
from .inception import InceptionScore
from .kid import KernelInceptionDistance
from .lpip import LearnedPerceptualImagePatchSimilarity
from .mifid import MemorizationInformedFrechetInceptionDistance
from .perceptual_path_length import PerceptualPathLength
from .psnr import PeakSignalNoiseRatio
from .psnrb import PeakSignalNoiseRatioWithBlockedEffect
from .qnr import QualityWithNoReference
from .rase import RelativeAverageSpectralError
from .rmse_sw import RootMeanSquaredErrorUsingSlidingWindow
from .sam import SpectralAngleMapper
from .scc import SpatialCorrelationCoefficient
from .ssim import MultiScaleStructuralSimilarityIndexMeasure, StructuralSimilarityIndexMeasure
from .tv import TotalVariation
from .uqi import UniversalImageQualityIndex
from .vif import VisualInformationFidelity

__all__ = [
    "SpectralDistortionIndex",
    "SpatialDistortionIndex",
    "DeepImageStructureAndTextureSimilarity",
    "ErrorRelativeGlobalDimensionlessSynthesis",
    "FrechetInceptionDistance",
    "InceptionScore",
    "KernelInceptionDistance",
    "LearnedPerceptualImagePatchSimilarity",
    "MemorizationInformedFrechetInceptionDistance",
    "PerceptualPathLength",
    "PeakSignalNoiseRatio",
    "PeakSignalNoiseRatioWithBlockedEffect",
    "QualityWithNoReference",
    "RelativeAverageSpectralError",
    "RootMeanSquaredErrorUsingSlidingWindow",
    "SpectralAngleMapper",
    "SpatialCorrelationCoefficient",
    "StructuralSimilarityIndexMeasure",
    "MultiScaleStructuralSimilarityIndexMeasure",
    "TotalVariation",
    "UniversalImageQualityIndex",
    "VisualInformationFidelity",
]
