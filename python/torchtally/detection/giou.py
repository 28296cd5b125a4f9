"""``GeneralizedIntersectionOverUnion`` (torchmetrics.detection.giou's names). Mean generalized IoU
(IoU - (C - U) / C, C the area of the box enclosing both boxes, U their union) of predicted and
target boxes."""

from typing import Optional

from .iou import IntersectionOverUnion

__all__ = ["GeneralizedIntersectionOverUnion"]


class GeneralizedIntersectionOverUnion(IntersectionOverUnion):
    """Mean generalized IoU (IoU - (C - U) / C, C the area of the box enclosing both boxes, U
    their union) of predicted and target boxes; options, inputs, state and the differences from
    torchmetrics as IntersectionOverUnion (this module's docstring). Keys ``giou`` and
    ``giou/cl_<label>``.

        >>> import torch
        >>> from torchtally.detection import GeneralizedIntersectionOverUnion
        >>> preds = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 10.0], [10.0, 0.0, 20.0, 10.0]]),
        ...           "labels": torch.tensor([1, 1])}]
        >>> target = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 5.0]]), "labels": torch.tensor([1])}]
        >>> GeneralizedIntersectionOverUnion().update(preds, target).compute()
        {'giou': tensor(0.1250)}
    """

    higher_is_better: Optional[bool] = True
    _iou_type = "giou"
