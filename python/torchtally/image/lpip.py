"""Perceptual image metrics from a deep network: LPIPS, DISTS and the perceptual path length.
State declarations; the math lives in torchtally.functional.image (lpips, dists,
perceptual_path_length, perceptual_nets). No C kernel: the network dominates the cost.

The networks are the user's: torchtally never downloads weights and needs no torchvision. A
network is held outside the metric's module tree (it is not metric state: no ``state_dict``
entry, no sync, and the metric's ``.to()`` leaves it where the caller put it).

State:

* LearnedPerceptualImagePatchSimilarity and DeepImageStructureAndTextureSimilarity: the float64
  sum of the per-pair scores and an int64 count of pairs, both sum-reduced (16 bytes, one
  all_reduce); LPIPS with ``reduction="none"`` (or None) also keeps every pair's score in a
  float64 ``cat`` state (8 bytes per pair), in update order (rank order across ranks);
* PerceptualPathLength: none, as torchmetrics. ``update`` records the generator and ``compute``
  samples it; each rank computes over its own samples, with its own random numbers.
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor, nn

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import lpips as lpips_fn
from ..functional.image.perceptual_nets import WeightsLike, add_scores, check_net_type

__all__ = ["LearnedPerceptualImagePatchSimilarity"]


class NetRef:
    """Holds a network outside the metric's module tree (not metric state)."""

    def __init__(self, net: Any) -> None:
        self.net = net


class LearnedPerceptualImagePatchSimilarity(Metric):
    """LPIPS: the distance between two images as the weighted squared difference of their
    channel-normalised deep features, averaged over positions and summed over layers; lower is
    more similar. ``update(img1, img2)``: images [N, 3, H, W] in [-1, 1] (in [0, 1] with
    ``normalize=True``). ``reduction``: "mean" (default), "sum", or "none"/None for every pair's
    score in update order.

    The network is yours; nothing is downloaded. ``net``: an ``nn.Sequential`` laid out as
    torchvision's ``features`` of ``net_type`` ("alex": AlexNet, "vgg": VGG16, "squeeze":
    SqueezeNet 1.1; e.g. ``torchvision.models.alexnet().features`` with ImageNet weights loaded
    from a local file), read after the layers LPIPS taps, or any module returning the list of
    feature maps. ``weights``: the 1x1 linear layers: a local path to an LPIPS weight file (keys
    ``lin<k>.model.<i>.weight``, as the ``lpips`` package's ``alex.pth``), such a state dict, or
    one tensor of ``C_k`` elements per feature map. The backbone is put in eval mode.

    State: a float64 sum and an int64 count (16 bytes); with ``reduction="none"`` every pair's
    score too (8 bytes per pair). Results in ``self.dtype`` (float32 by default).

    Differences from torchmetrics:

    * the ``net`` and ``weights`` keywords: without either, a ValueError says what to pass
      (torchmetrics downloads torchvision's ImageNet weights and reads linear layers it bundles);
    * the images are cast to the network's dtype; float64 after the backbone (normalisation,
      differences, averages, sums; torchmetrics: the network's dtype, and a list of every score);
    * NaN or infinite values, differing shapes and non-floating images raise, with the state
      unchanged; ``FeatureShare`` does not share this network (no ``feature_network``); no
      gradient (``is_differentiable`` is False).

        >>> import torch
        >>> from torchtally.image import LearnedPerceptualImagePatchSimilarity
        >>> class TwoMaps(torch.nn.Module):  # a backbone returning its feature maps
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.a, self.b = torch.nn.Conv2d(3, 4, 3), torch.nn.Conv2d(4, 5, 3)
        ...     def forward(self, x):
        ...         h = self.a(x).relu()
        ...         return [h, self.b(h)]
        >>> _ = torch.manual_seed(0)
        >>> weights = [torch.full((4,), 0.5), torch.full((5,), 0.25)]
        >>> lpips = LearnedPerceptualImagePatchSimilarity(net=TwoMaps(), weights=weights)
        >>> img1, img2 = torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1
        >>> lpips.update(img1, img2).compute()
        tensor(0.9131)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    traceable_update = False  # the images' range is checked in Python
    option_names = ("net_type", "reduction", "normalize")
    if TYPE_CHECKING:
        sum_scores: Tensor
        total: Tensor
        scores: Tensor

    def __init__(
        self,
        net_type: str = "alex",
        reduction: Optional[str] = "mean",
        normalize: bool = False,
        *,
        net: Optional[nn.Module] = None,
        weights: Optional[WeightsLike] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.net_type = check_net_type(net_type)
        lpips_fn.check_lpips_options(reduction, normalize)
        self._net_ref = NetRef(lpips_fn.lpips_network(type(self).__name__, net, weights, self.net_type))
        self.reduction = reduction
        self.normalize = normalize
        self.add_state("sum_scores", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")
        if reduction in ("none", None):
            self.add_state("scores", torch.empty(0, dtype=torch.float64), reduce="cat")

    @property
    def net(self) -> nn.Module:
        """The LPIPS network: ``net(img1, img2, normalize=False)`` gives each pair's float64
        distance (not part of the metric's state or module tree)."""
        return self._net_ref.net

    def update(self, img1: Tensor, img2: Tensor) -> None:
        with torch.no_grad():
            scores = lpips_fn.lpips_scores(self.net, img1, img2, self.normalize)
        self.sum_scores, self.total = add_scores((self.sum_scores, self.total), scores)
        if self.reduction in ("none", None):
            self.append_state("scores", scores.to(self.device), copy=False)

    def compute(self) -> Tensor:
        if self.reduction == "mean":
            return self.in_result_dtype(self.sum_scores / self.total)
        if self.reduction == "sum":
            return self.in_result_dtype(self.sum_scores)
        return self.in_result_dtype(self.scores)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total")
        if "scores" in states and states["scores"].shape[0] != int(states["total"]):
            raise ValueError("'scores': one score per counted pair ('total') expected")
