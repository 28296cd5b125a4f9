"""The scores of the generative-image metrics, from their states, in float64.

* ``gaussian_from_sums``: mean and unbiased covariance from a feature sum, a sum of outer
  products and a count (FID's sum states);
* ``frechet_distance``: ||mu1 - mu2||^2 + tr(S1) + tr(S2) - 2 tr((S1 S2)^(1/2)), the last
  trace as the sum of the square roots of the eigenvalues of S1 S2 (their real parts), as
  torchmetrics takes it;
* ``kid_subsets``: the unbiased polynomial-kernel MMD^2 on ``subsets`` random subsets of
  ``subset_size`` rows, drawn with ``torch.randperm`` from torch's default generator (real
  then fake, per subset), so the same ``torch.manual_seed`` draws torchmetrics' subsets;
* ``inception_splits``: exp(mean KL(p(y|x) || p(y))) on ``splits`` chunks of the logits after
  one ``torch.randperm`` (torchmetrics' order of draws);
* ``memorization_distance``: MiFID's mean over the real rows of the smallest cosine distance
  to a fake row, 1 when not below ``eps``.
"""

from typing import List, Optional, Tuple

import torch
from torch import Tensor

__all__ = ["frechet_distance", "gaussian_from_sums", "inception_splits", "kid_subsets", "memorization_distance"]


def gaussian_from_sums(total: Tensor, outer: Tensor, count: Tensor) -> Tuple[Tensor, Tensor]:
    """(mean [D], covariance [D, D]) in float64 from the sums of n >= 2 feature rows."""
    n = count.to(torch.float64)
    mean = total / n
    cov = (outer - n * torch.outer(mean, mean)) / (n - 1)
    return mean, cov


def frechet_distance(mu1: Tensor, sigma1: Tensor, mu2: Tensor, sigma2: Tensor) -> Tensor:
    """The Frechet distance between N(mu1, sigma1) and N(mu2, sigma2) (module docstring)."""
    diff = (mu1 - mu2).square().sum()
    traces = sigma1.trace() + sigma2.trace()
    root = torch.linalg.eigvals(sigma1 @ sigma2).sqrt().real.sum()
    return diff + traces - 2 * root


def _poly_kernel(a: Tensor, b: Tensor, degree: int, gamma: float, coef: float) -> Tensor:
    return (a @ b.T * gamma + coef) ** degree


def _mmd2(real: Tensor, fake: Tensor, degree: int, gamma: Optional[float], coef: float) -> Tensor:
    g = 1.0 / real.shape[1] if gamma is None else gamma
    m = real.shape[0]
    k_rr = _poly_kernel(real, real, degree, g, coef)
    k_ff = _poly_kernel(fake, fake, degree, g, coef)
    k_rf = _poly_kernel(real, fake, degree, g, coef)
    within = (k_rr.sum() - k_rr.diagonal().sum()) + (k_ff.sum() - k_ff.diagonal().sum())
    return within / (m * (m - 1)) - 2 * k_rf.sum() / (m * m)


def kid_subsets(
    real: Tensor, fake: Tensor, subsets: int, subset_size: int, degree: int, gamma: Optional[float], coef: float
) -> Tensor:
    """[subsets] MMD^2 values (module docstring); features in float64."""
    for rows, side in ((real, "real"), (fake, "fake")):
        if rows.shape[0] < subset_size:
            raise ValueError(
                f"Argument `subset_size` should be smaller than the number of samples: {subset_size} > "
                f"{rows.shape[0]} {side} images"
            )
    scores: List[Tensor] = []
    for _ in range(subsets):
        pick_real = torch.randperm(real.shape[0])[:subset_size]
        pick_fake = torch.randperm(fake.shape[0])[:subset_size]
        picked_real = real[pick_real.to(real.device)]
        picked_fake = fake[pick_fake.to(fake.device)]
        scores.append(_mmd2(picked_real, picked_fake, degree, gamma, coef))
    return torch.stack(scores)


def inception_splits(logits: Tensor, splits: int) -> Tensor:
    """[chunks] Inception Scores of the randomly permuted logits (float64), torch.chunk's split."""
    if logits.shape[0] == 0:
        raise ValueError("InceptionScore: no images were seen; update with at least one batch before compute")
    order = torch.randperm(logits.shape[0])
    shuffled = logits[order.to(logits.device)]
    log_p = shuffled.log_softmax(dim=1)
    scores = []
    for chunk in log_p.chunk(splits, dim=0):
        p = chunk.exp()
        log_marginal = p.mean(dim=0).log()
        scores.append((p * (chunk - log_marginal)).sum(dim=1).mean().exp())
    return torch.stack(scores)


def memorization_distance(real: Tensor, fake: Tensor, eps: float) -> Tensor:
    """For each real row with a nonzero sum: 1 - max |cos| with the fake rows (nonzero sums),
    averaged; 1 when the mean is not below ``eps`` (float64)."""
    a = real[real.sum(dim=1) != 0]
    b = fake[fake.sum(dim=1) != 0]
    a = a / a.norm(dim=1, keepdim=True)
    b = b / b.norm(dim=1, keepdim=True)
    distance = 1.0 - (a @ b.T).abs()
    mean_min = distance.min(dim=1).values.mean()
    return mean_min if bool(mean_min < eps) else torch.ones_like(mean_min)
