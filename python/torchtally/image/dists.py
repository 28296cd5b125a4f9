"""``DeepImageStructureAndTextureSimilarity`` (torchmetrics.image.dists's names). DISTS."""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor, nn

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import dists as dists_fn
from ..functional.image.perceptual_nets import WeightsLike, add_scores
from .lpip import NetRef

__all__ = ["DeepImageStructureAndTextureSimilarity"]


class DeepImageStructureAndTextureSimilarity(Metric):
    """DISTS: one minus a learned weighting of per-channel structure (means) and texture
    (variances, covariance) similarities between the image and the VGG16 feature maps (with L2
    pooling) of ``preds`` and ``target``; lower is more similar. ``update(preds, target)``: RGB
    images [N, 3, H, W] in [0, 1]. ``reduction``: "mean" (default) or "sum" over the pairs.

    The network is yours; nothing is downloaded. ``net``: torchvision's ``vgg16().features``
    (ImageNet weights loaded from a local file; its max pooling layers 4, 9, 16 and 23 become L2
    pooling, and it is read after layers 3, 8, 15, 22 and 29), or any module returning the
    feature maps of the ImageNet-normalised image. ``weights``: alpha and beta, one per channel
    of the image and of each feature map (1475 for VGG16): a local path to a file holding
    ``{"alpha", "beta"}`` (the DISTS authors' weights, as torchmetrics bundles them), or such a
    dict. The backbone is put in eval mode.

    State: a float64 sum of the scores and an int64 count of pairs (16 bytes). Results in
    ``self.dtype`` (float32 by default).

    Differences from torchmetrics: the ``net`` and ``weights`` keywords (torchmetrics downloads
    torchvision's VGG16 weights; without either a ValueError says what to pass); the images are
    cast to the network's dtype (torchmetrics: float32 images only); float64 after the backbone,
    covariances from centred features, an int64 count (torchmetrics: float32); NaN or infinite
    values, differing shapes and non-floating images raise with the state unchanged; no
    gradient (``is_differentiable`` is False).

        >>> import torch
        >>> from torchtally.image import DeepImageStructureAndTextureSimilarity
        >>> class Maps(torch.nn.Module):  # a backbone returning its feature maps
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)
        ...     def forward(self, x):
        ...         return [self.conv(x).relu()]
        >>> _ = torch.manual_seed(0)
        >>> weights = {"alpha": torch.full((7,), 0.1), "beta": torch.full((7,), 0.1)}  # 3 + 4 channels
        >>> metric = DeepImageStructureAndTextureSimilarity(net=Maps(), weights=weights)
        >>> preds, target = torch.rand(2, 3, 16, 16), torch.rand(2, 3, 16, 16)
        >>> metric.update(preds, target).compute()
        tensor(0.4866)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    plot_lower_bound = 0.0
    traceable_update = False  # the images are checked in Python
    option_names = ("reduction",)
    if TYPE_CHECKING:
        score: Tensor
        total: Tensor

    def __init__(
        self,
        reduction: Optional[str] = "mean",
        *,
        net: Optional[nn.Module] = None,
        weights: Optional[WeightsLike] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        dists_fn.check_dists_reduction(reduction, ("mean", "sum"))
        self._net_ref = NetRef(dists_fn.dists_network(type(self).__name__, net, weights))
        self.reduction = reduction
        self.add_state("score", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    @property
    def net(self) -> nn.Module:
        """The DISTS network: ``net(preds, target)`` gives each pair's float64 score (not part of
        the metric's state or module tree)."""
        return self._net_ref.net

    def update(self, preds: Tensor, target: Tensor) -> None:
        with torch.no_grad():
            scores = dists_fn.dists_scores(self.net, preds, target)
        self.score, self.total = add_scores((self.score, self.total), scores)

    def compute(self) -> Tensor:
        value = self.score / self.total if self.reduction == "mean" else self.score
        return self.in_result_dtype(value)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total")
