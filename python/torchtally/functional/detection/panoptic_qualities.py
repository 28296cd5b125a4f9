"""Panoptic quality and modified panoptic quality of one batch (torchmetrics' functional forms)."""

from collections.abc import Collection

from torch import Tensor

from .panoptic_sums import category_table, new_states, panoptic_result, panoptic_update, parse_categories

__all__ = ["panoptic_quality", "modified_panoptic_quality"]


def panoptic_quality(
    preds: Tensor,
    target: Tensor,
    things: Collection[int],
    stuffs: Collection[int],
    allow_unknown_preds_category: bool = False,
    return_sq_and_rq: bool = False,
    return_per_class: bool = False,
) -> Tensor:
    """Panoptic quality of preds against target, integer maps ``[B, *spatial, 2]`` of (category id,
    instance id) per point (float64; see torchtally.detection.PanopticQuality for the options,
    the output shapes and the differences from torchmetrics).

    >>> import torch
    >>> preds = torch.tensor([[[[1, 0], [1, 0], [5, 0], [5, 0]], [[2, 0], [2, 0], [1, 1], [5, 0]]]])
    >>> target = torch.tensor([[[[1, 0], [1, 0], [5, 0], [2, 0]], [[1, 0], [2, 0], [5, 0], [2, 0]]]])
    >>> panoptic_quality(preds, target, things={1, 2}, stuffs={5})
    tensor(0.1481, dtype=torch.float64)
    >>> panoptic_quality(preds, target, things={1, 2}, stuffs={5}, return_per_class=True)
    tensor([[0.4444, 0.0000, 0.0000]], dtype=torch.float64)
    """
    thing_set, stuff_set = parse_categories(things, stuffs)
    states = new_states(len(thing_set) + len(stuff_set), preds.device if isinstance(preds, Tensor) else None)
    panoptic_update(states, preds, target, category_table(thing_set, stuff_set, False), allow_unknown_preds_category)
    return panoptic_result(*states, return_sq_and_rq, return_per_class)


def modified_panoptic_quality(
    preds: Tensor,
    target: Tensor,
    things: Collection[int],
    stuffs: Collection[int],
    allow_unknown_preds_category: bool = False,
) -> Tensor:
    """Modified panoptic quality: PQ for the things, the mean IoU of every (predicted, true)
    overlap per true segment for the stuffs (float64; inputs as ``panoptic_quality``).

    >>> import torch
    >>> preds = torch.tensor([[[[1, 0], [1, 0], [5, 0], [5, 0]], [[2, 0], [2, 0], [1, 1], [5, 0]]]])
    >>> target = torch.tensor([[[[1, 0], [1, 0], [5, 0], [2, 0]], [[1, 0], [2, 0], [5, 0], [2, 0]]]])
    >>> modified_panoptic_quality(preds, target, things={1, 2}, stuffs={5})
    tensor(0.2315, dtype=torch.float64)
    """
    thing_set, stuff_set = parse_categories(things, stuffs)
    states = new_states(len(thing_set) + len(stuff_set), preds.device if isinstance(preds, Tensor) else None)
    panoptic_update(states, preds, target, category_table(thing_set, stuff_set, True), allow_unknown_preds_category)
    return panoptic_result(*states)
