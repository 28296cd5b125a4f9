"""ProcrustesDisparity: state declarations; the alignment lives in
torchtally.functional.shape.procrustes.

State: ``disparity`` float64 (the sum of the items' disparities) and ``total`` int64 (the
items), both sum-reduced: 16 bytes whatever the data, one all_reduce per dtype in a sync (packed
with the rest of a collection's fixed states).
"""

from typing import TYPE_CHECKING, Any, Dict

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.shape.procrustes import centred_clouds, disparities

__all__ = ["ProcrustesDisparity"]


class ProcrustesDisparity(Metric):
    """Procrustes disparity of pairs of point clouds, averaged (``reduction="mean"``, default) or
    summed (``"sum"``) over every item seen. ``update(point_cloud1, point_cloud2)``: two
    batches [N, M, D] (N items of M points in D dimensions); each item's disparity is
    ``scipy.spatial.procrustes``' (after the best translation, scaling and rotation of the
    second cloud onto the first), computed in float64. The result is in ``self.dtype``.

    State: a float64 sum of disparities and an int64 item count (16 bytes; a sync is part of one
    all_reduce per dtype).

    Differences from torchmetrics: float64 alignment and sum (torchmetrics: float32); an item
    whose points are all equal, NaN / inf values, integer inputs and differing shapes raise
    ValueError / TypeError with the state unchanged (torchmetrics: NaN, or a RuntimeError).

        >>> import torch
        >>> from torchtally.shape import ProcrustesDisparity
        >>> square = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
        >>> line = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]])
        >>> metric = ProcrustesDisparity()
        >>> _ = metric.update(square, 2.0 * square + 1.0)
        >>> metric.update(square, line).compute()
        tensor(0.3000)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:  # declared states, read as attributes
        disparity: Tensor
        total: Tensor

    def __init__(self, reduction: str = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if reduction not in ("mean", "sum"):
            raise ValueError(f"Argument `reduction` must be one of ['mean', 'sum'], got {reduction}")
        self.reduction = reduction
        self.add_state("disparity", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, point_cloud1: Tensor, point_cloud2: Tensor) -> None:
        a, b, norms = centred_clouds(point_cloud1, point_cloud2)
        disparity = disparities(a, b, norms)
        self.disparity = self.disparity + disparity.sum().to(self.disparity.device)
        self.total = self.total + disparity.numel()

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "disparity", "total")

    def compute(self) -> Tensor:
        if self.reduction == "mean":
            return self.in_result_dtype(self.disparity / self.total)
        return self.in_result_dtype(self.disparity)
