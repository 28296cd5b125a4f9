"""LipVertexError: state declarations; the per-frame errors come from
torchtally.functional.multimodal.lve.

State: ``error_sum`` float64 (the frames' largest squared lip-vertex distances, summed) and
``num_frames`` int64, both sum-reduced: 16 bytes whatever the data, part of one all_reduce per
dtype in a sync. torchmetrics keeps every batch of vertices of both meshes in lists gathered
batch by batch.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.multimodal.lve import add_frame_errors, checked_mouth_map

__all__ = ["LipVertexError"]


class LipVertexError(Metric):
    """Lip Vertex Error over every frame seen: the mean of each frame's largest squared L2
    distance between predicted and true lip vertices. ``update(vertices_pred, vertices_gt)``:
    meshes [T, V, 3] and [T', V, 3]; the first min(T, T') frames of the batch count.
    ``mouth_map``: the lip vertices' indices. The result is in ``self.dtype``; NaN before any
    frame.

    State: a float64 sum of per-frame errors and an int64 frame count (16 bytes; a sync is part
    of one all_reduce per dtype), so any split of the frames over updates and ranks gives the
    one-process value.

    Differences from torchmetrics: torchmetrics keeps the vertices in ``dist_reduce_fx=None``
    list states gathered batch by batch, so ranks that made different numbers of updates get a
    partial value on one rank and a crash on another; here every rank gets the one-process
    value. Float64 arithmetic (torchmetrics: the inputs' dtype); the checks run also with
    ``validate_args=False`` (accepted and ignored), and integer inputs, NaN / inf vertices and
    indices below -V raise, with the state unchanged.

        >>> import torch
        >>> from torchtally.multimodal import LipVertexError
        >>> pred = torch.zeros(2, 4, 3)
        >>> gt = torch.zeros(2, 4, 3)
        >>> gt[0, 1, 0], gt[1, 2, 2] = 2.0, 1.0
        >>> metric = LipVertexError(mouth_map=[1, 2])
        >>> _ = metric.update(pred, gt)
        >>> metric.update(pred[:1], gt[:1]).compute()
        tensor(3.)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        error_sum: Tensor
        num_frames: Tensor

    def __init__(self, mouth_map: List[int], validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mouth_map = list(checked_mouth_map(mouth_map))
        self.validate_args = validate_args
        self.add_state("error_sum", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("num_frames", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, vertices_pred: Tensor, vertices_gt: Tensor) -> None:
        frames = add_frame_errors(self.error_sum, vertices_pred, vertices_gt, self._mouth)  # one C pass
        if frames:
            self.num_frames += frames

    @property
    def _mouth(self) -> Tuple[int, ...]:
        """``mouth_map`` as a tuple, made again only when the attribute was replaced."""
        kept = self.__dict__.get("_mouth_kept")
        if kept is None or kept[0] is not self.mouth_map:
            kept = self.__dict__["_mouth_kept"] = (self.mouth_map, tuple(self.mouth_map))
        return kept[1]

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "error_sum", "num_frames")

    def compute(self) -> Tensor:
        return self.in_result_dtype(self.error_sum / self.num_frames)
