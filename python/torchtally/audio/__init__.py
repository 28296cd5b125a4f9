"""torchmetrics.audio's place: ``from torchtally.audio import PerceptualEvaluationSpeechQuality``.

The package- and model-based metrics import without their packages; constructing one without
its package raises ModuleNotFoundError naming it."""

from .dnsmos import DeepNoiseSuppressionMeanOpinionScore
from .nisqa import NonIntrusiveSpeechQualityAssessment
from .pesq import PerceptualEvaluationSpeechQuality
from .stoi import ShortTimeObjectiveIntelligibility

__all__ = [
    "DeepNoiseSuppressionMeanOpinionScore",
    "NonIntrusiveSpeechQualityAssessment",
    "PerceptualEvaluationSpeechQuality",
    "ShortTimeObjectiveIntelligibility",
]
