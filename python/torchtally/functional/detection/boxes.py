"""Box formats as torchmetrics' detection metrics take them, and torchvision's conversions
between them (the same arithmetic in the boxes' dtype, so a converted box is bit-equal to
torchvision's box_convert)."""

import torch
from torch import Tensor

BOX_FORMATS = ("xyxy", "xywh", "cxcywh")
IOU_TYPES = ("bbox", "segm")


def to_xyxy(boxes: Tensor, box_format: str) -> Tensor:
    """Boxes [N, 4] in (x1, y1, x2, y2)."""
    if box_format == "xyxy" or boxes.numel() == 0:
        return boxes
    a, b, c, d = boxes.unbind(-1)
    if box_format == "xywh":
        return torch.stack((a, b, a + c, b + d), -1)
    return torch.stack((a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d), -1)


def to_xywh(boxes: Tensor, box_format: str) -> Tensor:
    """Boxes [N, 4] in (x, y, w, h); from cxcywh through xyxy, as torchvision converts."""
    if box_format == "xywh" or boxes.numel() == 0:
        return boxes
    x1, y1, x2, y2 = to_xyxy(boxes, box_format).unbind(-1)
    return torch.stack((x1, y1, x2 - x1, y2 - y1), -1)
