"""torchmetrics.audio's place (the signal metrics): ``from torchtally.audio import
ScaleInvariantSignalDistortionRatio``."""

from .pit import PermutationInvariantTraining
from .sdr import ScaleInvariantSignalDistortionRatio, SignalDistortionRatio, SourceAggregatedSignalDistortionRatio
from .snr import ComplexScaleInvariantSignalNoiseRatio, ScaleInvariantSignalNoiseRatio, SignalNoiseRatio

__all__ = [
    "ComplexScaleInvariantSignalNoiseRatio",
    "PermutationInvariantTraining",
    "ScaleInvariantSignalDistortionRatio",
    "ScaleInvariantSignalNoiseRatio",
    "SignalDistortionRatio",
    "SignalNoiseRatio",
    "SourceAggregatedSignalDistortionRatio",
]
