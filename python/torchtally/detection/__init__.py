"""torchmetrics.detection's place: ``from torchtally.detection import MeanAveragePrecision``."""

from .ciou import CompleteIntersectionOverUnion
from .diou import DistanceIntersectionOverUnion
from .giou import GeneralizedIntersectionOverUnion
from .iou import IntersectionOverUnion
from .mean_ap import MeanAveragePrecision
from .panoptic_qualities import ModifiedPanopticQuality, PanopticQuality

__all__ = [
    "CompleteIntersectionOverUnion",
    "DistanceIntersectionOverUnion",
    "GeneralizedIntersectionOverUnion",
    "IntersectionOverUnion",
    "MeanAveragePrecision",
    "PanopticQuality",
    "ModifiedPanopticQuality",
]
