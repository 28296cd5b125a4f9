"""``generalized_intersection_over_union`` (torchmetrics.functional.detection.giou's names).
Generalized IoU, IoU - (C - U) / C with C the area of the smallest box enclosing both and U
their union, of boxes ``preds`` [N, 4] and ``target`` [M, 4] (x1, y1, x2, y2)."""

from typing import Optional

from torch import Tensor

from .iou import overlap

__all__ = ["generalized_intersection_over_union"]


def generalized_intersection_over_union(
    preds: Tensor,
    target: Tensor,
    iou_threshold: Optional[float] = None,
    replacement_val: float = 0,
    aggregate: bool = True,
) -> Tensor:
    """Generalized IoU, IoU - (C - U) / C with C the area of the smallest box enclosing both and
    U their union, of boxes ``preds`` [N, 4] and ``target`` [M, 4] (x1, y1, x2, y2): the [N, M]
    matrix (``aggregate=False``) or the mean over the pairs (i, i). See this module's docstring.

        >>> import torch
        >>> from torchtally.functional.detection import generalized_intersection_over_union
        >>> preds = torch.tensor([[0.0, 0.0, 10.0, 10.0], [20.0, 0.0, 30.0, 10.0]])
        >>> target = torch.tensor([[0.0, 0.0, 10.0, 5.0], [0.0, 0.0, 10.0, 10.0]])
        >>> generalized_intersection_over_union(preds, target, aggregate=False)
        tensor([[ 0.5000,  1.0000],
                [-0.5000, -0.3333]])
    """
    return overlap("giou", preds, target, iou_threshold, replacement_val, aggregate)
