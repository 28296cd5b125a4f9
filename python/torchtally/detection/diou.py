"""``DistanceIntersectionOverUnion`` (torchmetrics.detection.diou's names). Mean distance IoU (IoU
- d^2 / (c^2 + 1e-7), d the distance of the centres, c the diagonal of the box enclosing both)
of predicted and target boxes."""

from typing import Optional

from .iou import IntersectionOverUnion

__all__ = ["DistanceIntersectionOverUnion"]


class DistanceIntersectionOverUnion(IntersectionOverUnion):
    """Mean distance IoU (IoU - d^2 / (c^2 + 1e-7), d the distance of the centres, c the diagonal
    of the box enclosing both) of predicted and target boxes; options, inputs, state and the
    differences from torchmetrics as IntersectionOverUnion (this module's docstring). Keys
    ``diou`` and ``diou/cl_<label>``.

        >>> import torch
        >>> from torchtally.detection import DistanceIntersectionOverUnion
        >>> preds = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 10.0]]), "labels": torch.tensor([3])}]
        >>> target = [{"boxes": torch.tensor([[0.0, 0.0, 10.0, 5.0]]), "labels": torch.tensor([3])}]
        >>> DistanceIntersectionOverUnion().update(preds, target).compute()
        {'diou': tensor(0.4688)}
    """

    higher_is_better: Optional[bool] = True
    _iou_type = "diou"
