"""torchmetrics.video's place: ``from torchtally.video import VideoMultiMethodAssessmentFusion``."""

from .vmaf import VideoMultiMethodAssessmentFusion

__all__ = ["VideoMultiMethodAssessmentFusion"]
