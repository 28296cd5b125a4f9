"""Detection: the public functions (torchmetrics.functional.detection's names and signatures)."""

from typing import List

from .iou import complete_intersection_over_union, distance_intersection_over_union, generalized_intersection_over_union, intersection_over_union
from .map import mean_average_precision
from .panoptic_qualities import modified_panoptic_quality, panoptic_quality

__all__: List[str] = [
    "mean_average_precision",
    "intersection_over_union",
    "generalized_intersection_over_union",
    "distance_intersection_over_union",
    "complete_intersection_over_union",
    "panoptic_quality",
    "modified_panoptic_quality",
]
