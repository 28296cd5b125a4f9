"""Perceptual path length (PPL) of a generator: the distance between the images generated at two
nearby points of a path between random latent points, divided by the squared step, with the
lowest and highest values discarded before the mean and standard deviation
(torchmetrics.functional.image's perceptual_path_length).

The generator is the user's; the distance is the user's module, or LPIPS from the user's
backbone and weights (see lpips). Nothing is downloaded. Random numbers are drawn in torchmetrics'
order (the two latent batches from ``generator.sample``, then the labels with torch's global
generator), so under one seed both give the same samples.
"""

from typing import Any, Optional, Tuple, Union

import torch
from torch import Tensor, nn

from ...errors import MissingAttributeError, MissingMethodError
from .lpips import lpips_network
from .perceptual_nets import NET_TYPES, WeightsLike

__all__ = ["perceptual_path_length"]

_INTERPOLATIONS = ("lerp", "slerp_any", "slerp_unit")
_TINY = 1e-7  # below this a latent norm counts as zero, and 1 - |cos| as collinear


def check_ppl_options(
    num_samples: Any,
    conditional: Any,
    batch_size: Any,
    interpolation_method: Any,
    epsilon: Any,
    resize: Any,
    lower_discard: Any,
    upper_discard: Any,
) -> None:
    """torchmetrics' argument checks (ValueError, as torchmetrics)."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise ValueError(f"Argument `num_samples` must be a positive integer, but got {num_samples}.")
    if not isinstance(conditional, bool):
        raise ValueError(f"Argument `conditional` must be a boolean, but got {conditional}.")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"Argument `batch_size` must be a positive integer, but got {batch_size}.")
    if interpolation_method not in _INTERPOLATIONS:
        raise ValueError(
            f"Argument `interpolation_method` must be one of {_INTERPOLATIONS}, got {interpolation_method}."
        )
    if not isinstance(epsilon, float) or not epsilon > 0:
        raise ValueError(f"Argument `epsilon` must be a positive float, but got {epsilon}.")
    if resize is not None and (isinstance(resize, bool) or not isinstance(resize, int) or resize <= 0):
        raise ValueError(f"Argument `resize` must be a positive integer or `None`, but got {resize}.")
    for name, value in (("lower_discard", lower_discard), ("upper_discard", upper_discard)):
        if value is not None and not (isinstance(value, float) and 0 <= value <= 1):
            raise ValueError(f"Argument `{name}` must be a float between 0 and 1 or `None`, but got {value}.")


def check_generator(generator: Any, conditional: bool) -> None:
    """The generator needs ``sample(num_samples)``, and an int ``num_classes`` when conditional
    (torchmetrics' exception types, which are TypeErrors here too)."""
    if not hasattr(generator, "sample"):
        raise MissingMethodError(
            f"generator: got {type(generator).__name__}. The generator must have a `sample` method with signature "
            "`sample(num_samples: int) -> Tensor` returning "
            "latent points of shape (num_samples, z_size)."
        )
    if not callable(generator.sample):
        raise ValueError("The generator's `sample` method must be callable.")
    if conditional and not hasattr(generator, "num_classes"):
        raise MissingAttributeError(
            "generator: The generator must have a `num_classes` attribute when `conditional=True`."
        )
    if conditional and (isinstance(generator.num_classes, bool) or not isinstance(generator.num_classes, int)):
        raise ValueError("The generator's `num_classes` attribute must be an integer when `conditional=True`.")


def interpolate(start: Tensor, end: Tensor, epsilon: float, method: str) -> Tensor:
    """The point at fraction ``epsilon`` from ``start`` towards ``end`` (rows of latents):
    linear ("lerp"), along the great circle through their directions scaled by the endpoints
    ("slerp_any", linear where a point is zero or the two are collinear), or that point scaled
    to unit norm ("slerp_unit")."""
    if start.shape != end.shape:
        raise ValueError(f"Expected two batches of latent points of one shape, got {start.shape} and {end.shape}")
    if method == "lerp":
        return start + (end - start) * epsilon
    unit_start = start / (start**2).sum(dim=-1, keepdim=True).sqrt().clamp_min(_TINY)
    unit_end = end / (end**2).sum(dim=-1, keepdim=True).sqrt().clamp_min(_TINY)
    cos = (unit_start * unit_end).sum(dim=-1, keepdim=True)
    zero = (unit_start.norm(dim=-1, keepdim=True) < _TINY) | (unit_end.norm(dim=-1, keepdim=True) < _TINY)
    linear = (zero | (cos > 1 - _TINY) | (cos < -1 + _TINY)).expand_as(start)
    angle = cos.acos()
    sine = angle.sin().clamp_min(_TINY)
    out = ((1 - epsilon) * angle).sin() / sine * start + (epsilon * angle).sin() / sine * end
    out = torch.where(linear, start + (end - start) * epsilon, out)
    if method == "slerp_unit":
        out = out / (out**2).sum(dim=-1, keepdim=True).sqrt().clamp_min(_TINY)
    return out


def similarity_network(
    sim_net: Any, resize: Optional[int], net: Optional[nn.Module], weights: Optional[WeightsLike], metric: str
) -> nn.Module:
    """``sim_net`` itself when a module; for "alex", "vgg" or "squeeze", LPIPS from the user's
    ``net`` and ``weights`` with images resized to ``resize``."""
    if isinstance(sim_net, nn.Module):
        return sim_net
    if isinstance(sim_net, str) and sim_net in NET_TYPES:
        return lpips_network(metric, net, weights, sim_net, resize)
    raise ValueError(f"sim_net must be a nn.Module or one of 'alex', 'vgg', 'squeeze', got {sim_net}")


def path_distances(
    generator: Any,
    sim_net: nn.Module,
    num_samples: int,
    conditional: bool,
    batch_size: int,
    interpolation_method: str,
    epsilon: float,
    device: Union[str, torch.device],
) -> Tuple[Tensor, torch.dtype]:
    """Every pair's distance / epsilon^2 (float64 [num_samples]) and the generator's image dtype."""
    generator = generator.to(device)
    start = generator.sample(num_samples).to(device)
    end = generator.sample(num_samples).to(device)
    end = interpolate(start, end, epsilon, interpolation_method)
    labels = torch.randint(0, generator.num_classes, (num_samples,)).to(device) if conditional else None
    sim_net = sim_net.to(device)
    distances, dtype = [], torch.get_default_dtype()
    with torch.no_grad():
        for lo in range(0, num_samples, batch_size):
            z = torch.cat((start[lo : lo + batch_size], end[lo : lo + batch_size]))
            if labels is None:
                images = generator(z)
            else:
                y = labels[lo : lo + batch_size]
                images = generator(z, torch.cat((y, y)))
            first, second = images.chunk(2, dim=0)
            dtype = images.dtype
            # the generator's [0, 255] images to LPIPS' [-1, 1]
            dist = sim_net(2 * (first / 255) - 1, 2 * (second / 255) - 1)
            if not isinstance(dist, Tensor) or dist.numel() != first.shape[0]:
                raise ValueError(
                    f"sim_net: expected one distance per pair of images ({first.shape[0]}), got "
                    f"{dist.shape if isinstance(dist, Tensor) else type(dist).__name__}"
                )
            distances.append(dist.reshape(-1).to(torch.float64) / epsilon**2)
    return torch.cat(distances), dtype


def discard_and_summarise(
    distances: Tensor, lower_discard: Optional[float], upper_discard: Optional[float], dtype: torch.dtype
) -> Tuple[Tensor, Tensor, Tensor]:
    """Mean, standard deviation (unbiased) and the distances kept: those within the
    ``lower_discard`` and ``upper_discard`` quantiles (the lower of the two nearest values;
    without ``lower_discard`` those >= 0, as torchmetrics), in ``dtype``."""
    low = torch.quantile(distances, lower_discard, interpolation="lower") if lower_discard is not None else 0.0
    high = torch.quantile(distances, upper_discard, interpolation="lower") if upper_discard is not None else None
    keep = distances >= low
    if high is not None:
        keep &= distances <= high
    kept = distances[keep]
    return kept.mean().to(dtype), kept.std().to(dtype), kept.to(dtype)


def perceptual_path_length(
    generator: Any,
    num_samples: int = 10_000,
    conditional: bool = False,
    batch_size: int = 64,
    interpolation_method: str = "lerp",
    epsilon: float = 1e-4,
    resize: Optional[int] = 64,
    lower_discard: Optional[float] = 0.01,
    upper_discard: Optional[float] = 0.99,
    sim_net: Union[nn.Module, str] = "vgg",
    device: Union[str, torch.device] = "cpu",
    *,
    net: Optional[nn.Module] = None,
    weights: Optional[WeightsLike] = None,
) -> Tuple[Tensor, Tensor, Tensor]:
    """PPL of ``generator``: ``(mean, std, distances)`` of D(G(z1'), G(z2')) / epsilon^2 over
    ``num_samples`` latent pairs, z2' the point at ``epsilon`` from z1 towards z2, after
    discarding the distances below the ``lower_discard`` and above the ``upper_discard``
    quantiles.

    ``generator``: a module with ``sample(num_samples)`` giving latent points [num_samples, z]
    and ``forward(z)`` (``forward(z, labels)`` with ``conditional``, and an int ``num_classes``)
    giving images [n, C, H, W] in [0, 255]. It is moved to ``device``. ``sim_net``: a module
    called as ``sim_net(img1, img2)`` on images in [-1, 1], returning one distance per pair; or
    "alex", "vgg", "squeeze" for LPIPS (images resized to ``resize``) from the backbone ``net``
    and the linear layers ``weights`` (see learned_perceptual_image_patch_similarity). Results in
    the generator's image dtype; the distances are float64 before that.

    Differences from torchmetrics: the ``net`` and ``weights`` keywords (torchmetrics downloads
    torchvision's ImageNet weights for a named ``sim_net``; without them this raises
    ValueError), torchvision is not needed; a ``sim_net`` result that is not one distance per
    pair raises ValueError; the mean and standard deviation are float64 before the cast.

        >>> import torch
        >>> from torchtally.functional.image import perceptual_path_length
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
        >>> mean, std, distances = perceptual_path_length(Generator(), num_samples=10, sim_net=MeanSquare())
        >>> distances.shape
        torch.Size([9])
    """
    check_ppl_options(
        num_samples, conditional, batch_size, interpolation_method, epsilon, resize, lower_discard, upper_discard
    )
    check_generator(generator, conditional)
    network = similarity_network(sim_net, resize, net, weights, "perceptual_path_length")
    distances, dtype = path_distances(
        generator, network, num_samples, conditional, batch_size, interpolation_method, epsilon, device
    )
    return discard_and_summarise(distances, lower_discard, upper_discard, dtype)
