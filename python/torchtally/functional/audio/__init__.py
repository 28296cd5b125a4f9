"""torchmetrics.functional.audio's names (the package- and model-based forms)."""

from .dnsmos import deep_noise_suppression_mean_opinion_score
from .nisqa import non_intrusive_speech_quality_assessment
from .pesq import perceptual_evaluation_speech_quality
from .stoi import short_time_objective_intelligibility

__all__ = [
    "deep_noise_suppression_mean_opinion_score",
    "non_intrusive_speech_quality_assessment",
    "perceptual_evaluation_speech_quality",
    "short_time_objective_intelligibility",
]
