"""torchmetrics.segmentation's place: ``from torchtally.segmentation import MeanIoU``."""

from .dice import DiceScore
from .generalized_dice import GeneralizedDiceScore
from .hausdorff_distance import HausdorffDistance
from .mean_iou import MeanIoU

__all__ = ["DiceScore", "GeneralizedDiceScore", "HausdorffDistance", "MeanIoU"]
