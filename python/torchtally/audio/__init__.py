"""torchmetrics.audio's place: ``from torchtally.audio import ScaleInvariantSignalDistortionRatio``.

The signal metrics (SNR, SI-SNR, SI-SDR, C-SI-SNR, SDR, SA-SDR, PIT) keep float64 sums; the
package- and model-based ones (PESQ, STOI, SRMR, DNSMOS, NISQA) import without their packages, and
constructing one without its package raises ModuleNotFoundError naming it."""

from .dnsmos import DeepNoiseSuppressionMeanOpinionScore
from .nisqa import NonIntrusiveSpeechQualityAssessment
from .pesq import PerceptualEvaluationSpeechQuality
from .pit import PermutationInvariantTraining
from .sdr import ScaleInvariantSignalDistortionRatio, SignalDistortionRatio, SourceAggregatedSignalDistortionRatio
from .snr import ComplexScaleInvariantSignalNoiseRatio, ScaleInvariantSignalNoiseRatio, SignalNoiseRatio
from .srmr import SpeechReverberationModulationEnergyRatio
from .stoi import ShortTimeObjectiveIntelligibility

__all__ = [
    "ComplexScaleInvariantSignalNoiseRatio",
    "DeepNoiseSuppressionMeanOpinionScore",
    "NonIntrusiveSpeechQualityAssessment",
    "PerceptualEvaluationSpeechQuality",
    "PermutationInvariantTraining",
    "ScaleInvariantSignalDistortionRatio",
    "ScaleInvariantSignalNoiseRatio",
    "ShortTimeObjectiveIntelligibility",
    "SignalDistortionRatio",
    "SignalNoiseRatio",
    "SourceAggregatedSignalDistortionRatio",
    "SpeechReverberationModulationEnergyRatio",
]
