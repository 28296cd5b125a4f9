"""torchmetrics.functional.video's names."""

from .vmaf import video_multi_method_assessment_fusion

__all__ = ["video_multi_method_assessment_fusion"]
