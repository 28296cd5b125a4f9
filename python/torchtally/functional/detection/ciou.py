"""``complete_intersection_over_union`` (torchmetrics.functional.detection.ciou's names). Complete
IoU, the distance IoU less alpha v, v = 4 / pi^2 (atan(w_p / h_p) - atan(w_t / h_t))^2 and alpha
= v / (1 - IoU + v + 1e-7), of boxes ``preds`` [N, 4] and ``target`` [M, 4]."""

from typing import Optional

from torch import Tensor

from .iou import overlap

__all__ = ["complete_intersection_over_union"]


def complete_intersection_over_union(
    preds: Tensor,
    target: Tensor,
    iou_threshold: Optional[float] = None,
    replacement_val: float = 0,
    aggregate: bool = True,
) -> Tensor:
    """Complete IoU, the distance IoU less alpha v, v = 4 / pi^2 (atan(w_p / h_p) - atan(w_t /
    h_t))^2 and alpha = v / (1 - IoU + v + 1e-7), of boxes ``preds`` [N, 4] and ``target``
    [M, 4]: the [N, M] matrix (``aggregate=False``) or the mean over the pairs (i, i). See this
    module's docstring.

        >>> import torch
        >>> from torchtally.functional.detection import complete_intersection_over_union
        >>> preds = torch.tensor([[0.0, 0.0, 10.0, 10.0], [20.0, 0.0, 30.0, 10.0]])
        >>> target = torch.tensor([[0.0, 0.0, 10.0, 5.0], [0.0, 0.0, 10.0, 10.0]])
        >>> complete_intersection_over_union(preds, target, iou_threshold=0.0, replacement_val=-1.0)
        tensor(-0.2672)
    """
    return overlap("ciou", preds, target, iou_threshold, replacement_val, aggregate)
