"""``PerceptualPathLength`` (torchmetrics.image.perceptual_path_length's names). Perceptual path
length of a generator."""

from typing import Any, Optional, Tuple, Union

from torch import Tensor, nn

from ..base.metric import Metric
from ..functional.image.perceptual_nets import WeightsLike
from ..functional.image.perceptual_path_length import (
    check_generator,
    check_ppl_options,
    discard_and_summarise,
    path_distances,
    similarity_network,
)
from .lpip import NetRef

__all__ = ["PerceptualPathLength"]


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
        check_ppl_options(
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
        self._net_ref = NetRef(similarity_network(sim_net, resize, net, weights, type(self).__name__))
        self._generator_ref = NetRef(None)

    @property
    def net(self) -> nn.Module:
        """The similarity network (not part of the metric's state or module tree)."""
        return self._net_ref.net

    @property
    def generator(self) -> Any:
        """The generator of the last update (None before one)."""
        return self._generator_ref.net

    def update(self, generator: Any) -> None:
        check_generator(generator, self.conditional)
        self._generator_ref.net = generator

    def compute(self) -> Tuple[Tensor, Tensor, Tensor]:
        if self.generator is None:
            raise ValueError("PerceptualPathLength: no generator; call update(generator) first")
        distances, _ = path_distances(
            self.generator,
            self.net,
            self.num_samples,
            self.conditional,
            self.batch_size,
            self.interpolation_method,
            self.epsilon,
            self.device,
        )
        return discard_and_summarise(distances, self.lower_discard, self.upper_discard, self.dtype)
