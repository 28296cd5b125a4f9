"""HausdorffDistance: the Hausdorff distance between the edges of predicted and target masks,
one per image and class at update (torchtally.functional.segmentation.hausdorff_distance), reduced
by a sum.

State: distance_sum float64 [], pairs int64 [] (the (sample, class) pairs summed), "sum".
The result is their mean in ``self.dtype``: inf as soon as one pair has one empty mask, NaN
before any defined pair.

Differences from torchmetrics:

* a pair whose masks are both empty has no distance: the functional form gives NaN and the
  class leaves it out of the mean (torchmetrics raises a RuntimeError from torch.max);
* images that are not square get exact distances (torchmetrics indexes its distance map by the
  image height and returns wrong values or fails);
* ``spacing`` may be a tensor (torchmetrics accepts one, then fails at update); it must be 2
  positive numbers; only 2-D images are accepted, as torchmetrics' distance transform;
* bad input raises naming the argument, state unchanged (as the overlap metrics), and sums are
  float64; results carry no gradient.
"""

from typing import Any, Dict, Optional, Sequence, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.segmentation import counts as seg_counts
from ..functional.segmentation.hausdorff_distance import check_distance_metric, check_spacing, distances

__all__ = ["HausdorffDistance"]


class HausdorffDistance(Metric):
    """Hausdorff distance between the edges of the predicted and target masks, averaged over
    images and classes (background left out unless ``include_background``); ``directed``: from
    the predicted edges to the target edges only. ``distance_metric`` "euclidean", "chessboard"
    or "taxicab", pixel ``spacing`` (rows, columns). Inputs as MeanIoU's, 2-D images.

    >>> import torch
    >>> from torchtally.segmentation import HausdorffDistance
    >>> preds = torch.zeros(1, 6, 6, dtype=torch.long)
    >>> target = torch.zeros(1, 6, 6, dtype=torch.long)
    >>> preds[0, 1:3, 1:3] = 1
    >>> target[0, 2:5, 2:5] = 1
    >>> HausdorffDistance(num_classes=2, input_format="index").update(preds, target).compute()
    tensor(2.8284)
    """

    is_differentiable = False
    traceable_update = False  # the checks read the masks' values (0/1, index range): eager in torch.compile
    higher_is_better: Optional[bool] = False
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    fresh_compute_results = True

    def __init__(
        self,
        num_classes: int,
        include_background: bool = False,
        distance_metric: str = "euclidean",
        spacing: Optional[Union[Tensor, Sequence[float]]] = None,
        directed: bool = False,
        input_format: str = "one-hot",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = seg_counts.check_num_classes(num_classes)
        self.include_background = seg_counts.check_bool("include_background", include_background)
        self.distance_metric = check_distance_metric(distance_metric)
        self.spacing = spacing
        self._steps = check_spacing(spacing)
        self.directed = seg_counts.check_bool("directed", directed)
        self.input_format = seg_counts.check_input_format(input_format)
        self.add_state("distance_sum", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("pairs", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds, target: per ``input_format`` (see MeanIoU), 2-D images."""
        d = distances(
            preds,
            target,
            self.num_classes,
            self.include_background,
            self.distance_metric,
            self._steps,
            self.directed,
            self.input_format,
        )
        defined = ~d.isnan()
        self.distance_sum += d[defined].sum().to(self.distance_sum.device)
        self.pairs += int(defined.sum())

    def compute(self) -> Tensor:
        return self.in_result_dtype(self.distance_sum / self.pairs)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Sum and count >= 0 (see Metric)."""
        super().check_state_invariants(states)
        check_nonnegative(states, *states)
