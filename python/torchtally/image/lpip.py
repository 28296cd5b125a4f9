"""Perceptual image metrics from a deep network: LPIPS, DISTS and the perceptual path length.
State declarations; the math lives in torchtally.functional.image (lpips, dists,
path_length, perceptual_nets). No C kernel: the network dominates the cost.

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

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

import torch
from torch import Tensor, nn

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image import dists as dists_fn
from ..functional.image import lpips as lpips_fn
from ..functional.image import perceptual_path_length as ppl_fn
from ..functional.image.perceptual_nets import WeightsLike, add_scores, check_net_type

__all__ = ["LearnedPerceptualImagePatchSimilarity", "DeepImageStructureAndTextureSimilarity", "PerceptualPathLength"]


class _NetRef:
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
        self._net_ref = _NetRef(lpips_fn.lpips_network(type(self).__name__, net, weights, self.net_type))
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
            return (self.sum_scores / self.total).to(self.dtype)
        if self.reduction == "sum":
            return self.sum_scores.to(self.dtype)
        return self.scores.to(self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total")
        if "scores" in states and states["scores"].shape[0] != int(states["total"]):
            raise ValueError("'scores': one score per counted pair ('total') expected")


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
        self._net_ref = _NetRef(dists_fn.dists_network(type(self).__name__, net, weights))
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
        return value.to(self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total")


class PerceptualPathLength(Metric):
    """Perceptual path length of a generator: ``update(generator)`` records it, ``compute()``
    returns ``(mean, std, distances)`` of D(G(z1'), G(z2')) / epsilon^2 over ``num_samples``
    latent pairs, z2' the point at ``epsilon`` from z1 towards z2, after discarding the
    distances below the ``lower_discard`` and above the ``upper_discard`` quantiles.

    ``generator``: a module with ``sample(num_samples)`` giving latent points and ``forward(z)``
    (``forward(z, labels)`` with ``conditional``, and an int ``num_classes``) giving images in
    [0, 255]. ``sim_net``: a module called as ``sim_net(img1, img2)`` on images in [-1, 1],
    returning one distance per pair; or "alex", "vgg", "squeeze" for LPIPS (images resized to
    ``resize``) from the backbone ``net`` and the linear layers ``weights`` (as
    LearnedPerceptualImagePatchSimilarity); nothing is downloaded. The samples are drawn at
    ``compute`` on ``self.device``, with torch's global random numbers in torchmetrics' order.

    State: none, as torchmetrics; in a distributed run each rank computes over its own samples,
    and the results differ with the ranks' seeds.

    Differences from torchmetrics: the ``net`` and ``weights`` keywords (torchmetrics downloads
    torchvision's ImageNet weights for a named ``sim_net``; without them a ValueError says what
    to pass), torchvision is not needed; ``batch_size`` is used (torchmetrics' class passes 64);
    a ``sim_net`` result that is not one distance per pair raises; mean and standard deviation
    in float64 before the cast to ``self.dtype``.

        >>> import torch
        >>> from torchtally.image import PerceptualPathLength
        >>> class Generator(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.layer = torch.nn.Linear(2, 3 * 8 * 8)
        ...     def forward(self, z):
        ...         return 255 * torch.sigmoid(self.layer(z)).reshape(-1, 3, 8, 8)
        ...     def sample(self, num_samples):
        ...         return torch.randn(num_samples, 2)
        >>> class MeanSquare(torch.nn.Module):
        ...     def forward(self, a, b):
        ...         return ((a - b) ** 2).mean((1, 2, 3))
        >>> _ = torch.manual_seed(0)
        >>> ppl = PerceptualPathLength(num_samples=10, sim_net=MeanSquare())
        >>> mean, std, distances = ppl.update(Generator()).compute()
        >>> distances.shape
        torch.Size([9])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = True
    traceable_update = False
    option_names = (
        "num_samples",
        "conditional",
        "batch_size",
        "interpolation_method",
        "epsilon",
        "resize",
        "lower_discard",
        "upper_discard",
    )

    def __init__(
        self,
        num_samples: int = 10_000,
        conditional: bool = False,
        batch_size: int = 128,
        interpolation_method: str = "lerp",
        epsilon: float = 1e-4,
        resize: Optional[int] = 64,
        lower_discard: Optional[float] = 0.01,
        upper_discard: Optional[float] = 0.99,
        sim_net: Union[nn.Module, str] = "vgg",
        *,
        net: Optional[nn.Module] = None,
        weights: Optional[WeightsLike] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        ppl_fn.check_ppl_options(
            num_samples, conditional, batch_size, interpolation_method, epsilon, resize, lower_discard, upper_discard
        )
        self.num_samples = num_samples
        self.conditional = conditional
        self.batch_size = batch_size
        self.interpolation_method = interpolation_method
        self.epsilon = epsilon
        self.resize = resize
        self.lower_discard = lower_discard
        self.upper_discard = upper_discard
        self._net_ref = _NetRef(ppl_fn.similarity_network(sim_net, resize, net, weights, type(self).__name__))
        self._generator_ref = _NetRef(None)

    @property
    def net(self) -> nn.Module:
        """The similarity network (not part of the metric's state or module tree)."""
        return self._net_ref.net

    @property
    def generator(self) -> Any:
        """The generator of the last update (None before one)."""
        return self._generator_ref.net

    def update(self, generator: Any) -> None:
        ppl_fn.check_generator(generator, self.conditional)
        self._generator_ref.net = generator

    def compute(self) -> Tuple[Tensor, Tensor, Tensor]:
        if self.generator is None:
            raise ValueError("PerceptualPathLength: no generator; call update(generator) first")
        distances, _ = ppl_fn.path_distances(
            self.generator,
            self.net,
            self.num_samples,
            self.conditional,
            self.batch_size,
            self.interpolation_method,
            self.epsilon,
            self.device,
        )
        return ppl_fn.discard_and_summarise(distances, self.lower_discard, self.upper_discard, self.dtype)
