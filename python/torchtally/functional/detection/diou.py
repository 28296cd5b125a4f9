"""``distance_intersection_over_union`` (torchmetrics.functional.detection.diou's names). Distance
IoU, IoU - d^2 / (c^2 + 1e-7) with d the distance of the boxes' centres and c the diagonal of
the box enclosing both, of boxes ``preds`` [N, 4] and ``target`` [M, 4]."""

from typing import Optional

from torch import Tensor

from .iou import overlap

__all__ = ["distance_intersection_over_union"]


def distance_intersection_over_union(
    preds: Tensor,
    target: Tensor,
    iou_threshold: Optional[float] = None,
    replacement_val: float = 0,
    aggregate: bool = True,
) -> Tensor:
    """Distance IoU, IoU - d^2 / (c^2 + 1e-7) with d the distance of the boxes' centres and c the
    diagonal of the box enclosing both, of boxes ``preds`` [N, 4] and ``target`` [M, 4]: the
    [N, M] matrix (``aggregate=False``) or the mean over the pairs (i, i). See this module's
    docstring.

        >>> import torch
        >>> from torchtally.functional.detection import distance_intersection_over_union
        >>> preds = torch.tensor([[0.0, 0.0, 10.0, 10.0], [20.0, 0.0, 30.0, 10.0]])
        >>> target = torch.tensor([[0.0, 0.0, 10.0, 5.0], [0.0, 0.0, 10.0, 10.0]])
        >>> distance_intersection_over_union(preds, target)
        tensor(0.0344)
    """
    return overlap("diou", preds, target, iou_threshold, replacement_val, aggregate)
