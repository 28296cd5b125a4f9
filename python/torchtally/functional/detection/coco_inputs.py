"""MeanAveragePrecision's first look at a batch: torchmetrics' structural checks, in its order
and with its wording (each message also names the offending image), and the normalisation of
an empty mask tensor (package-internal).

The structural checks run before the matcher's own (dtypes, shapes, values): lists of equal
length, then the keys of every dict (preds, then target), then that each value is a tensor;
each failure is a ValueError, as torchmetrics raises it. ``torch.tensor([])`` (any dtype) as an
image's ``masks`` means no objects, as torchmetrics takes it.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Dict, List, Tuple

import torch
from torch import Tensor

_VALUE_KEYS = {"bbox": "boxes", "segm": "masks"}


def check_structure(preds: Any, target: Any, iou_types: Tuple[str, ...]) -> None:
    """Raise torchmetrics' ValueError for the first structural fault of the batch, if any."""
    for name, seq in (("preds", preds), ("target", target)):
        if not isinstance(seq, Sequence) or isinstance(seq, (str, bytes)):
            raise ValueError(
                f"Expected argument `{name}` to be of type Sequence, but got {type(seq).__name__} "
                "(a list with one dict of tensors per image)"
            )
    if len(preds) != len(target):
        raise ValueError(
            f"Expected argument `preds` and `target` to have the same length, but got {len(preds)} and {len(target)}"
        )
    value_keys = [_VALUE_KEYS[t] for t in iou_types]
    wanted = {"preds": [*value_keys, "labels", "scores"], "target": [*value_keys, "labels"]}
    for name, seq in (("preds", preds), ("target", target)):
        for i, item in enumerate(seq):
            if not isinstance(item, Mapping):
                raise TypeError(f"{name}[{i}]: expected a dict of tensors, got {type(item).__name__}")
        for key in wanted[name]:
            for i, item in enumerate(seq):
                if key not in item:
                    raise ValueError(
                        f"Expected all dicts in `{name}` to contain the `{key}` key: "
                        f"{name}[{i}] has the keys {sorted(map(str, item))}"
                    )
    for name, seq in (("preds", preds), ("target", target)):
        for key in wanted[name]:
            for i, item in enumerate(seq):
                if not isinstance(item[key], Tensor):
                    raise ValueError(
                        f"Expected all {key} in `{name}` to be of type Tensor: "
                        f"{name}[{i}][{key!r}] is a {type(item[key]).__name__}"
                    )


def without_empty_masks(items: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """The dicts (shallow copies) with a 1-D ``masks`` tensor of no elements (any dtype) replaced
    by a bool [0, 0, 0]: an image without objects. Other values are left for the checks."""
    out = []
    for item in items:
        masks = item.get("masks")
        if isinstance(masks, Tensor) and masks.ndim == 1 and masks.numel() == 0:
            item = dict(item, masks=torch.zeros(0, 0, 0, dtype=torch.bool, device=masks.device))
        out.append(dict(item))
    return out
