"""``CompleteIntersectionOverUnion`` (torchmetrics.detection.ciou's names). Mean complete IoU (the
distance IoU less alpha v, v = 4 / pi^2 (atan(w_p / h_p) - atan(w_t / h_t))^2, alpha = v / (1 -
IoU + v + 1e-7)) of predicted and target boxes."""

from typing import Optional

from .iou import IntersectionOverUnion

__all__ = ["CompleteIntersectionOverUnion"]


class CompleteIntersectionOverUnion(IntersectionOverUnion):
    """Mean complete IoU (the distance IoU less alpha v, v = 4 / pi^2 (atan(w_p / h_p) -
    atan(w_t / h_t))^2, alpha = v / (1 - IoU + v + 1e-7)) of predicted and target boxes; options,
    inputs, state and the differences from torchmetrics as IntersectionOverUnion (this module's
    docstring). Keys ``ciou`` and ``ciou/cl_<label>``.

        >>> import torch
        >>> from torchtally.detection import CompleteIntersectionOverUnion
        >>> preds = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 10.0]]), "labels": torch.tensor([3])}]
        >>> target = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 5.0]]), "labels": torch.tensor([3])}]
        >>> CompleteIntersectionOverUnion().update(preds, target).compute()
        {'ciou': tensor(0.4655)}
    """

    higher_is_better: Optional[bool] = True
    _iou_type = "ciou"
