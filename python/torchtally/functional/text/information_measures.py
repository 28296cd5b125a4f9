"""InfoLM's information measures between two discrete distributions over the vocabulary, with
torchmetrics' parameter checks and formulas (its KL "divergence" is sum t log(p / t), i.e. minus
KL(t || p), and higher is better for it and the alpha divergence)."""

from typing import Any, Callable, Dict, List, Optional

import torch
from torch import Tensor

__all__: List[str] = []

MEASURES = (
    "kl_divergence",
    "alpha_divergence",
    "beta_divergence",
    "ab_divergence",
    "renyi_divergence",
    "l1_distance",
    "l2_distance",
    "l_infinity_distance",
    "fisher_rao_distance",
)
HIGHER_IS_BETTER: Dict[str, bool] = {name: name in ("kl_divergence", "alpha_divergence") for name in MEASURES}


def check_measure(information_measure: Any, alpha: Optional[float], beta: Optional[float]) -> str:
    """The measure's name, or a ValueError (torchmetrics' rules: alpha and beta must be floats)."""
    if not isinstance(information_measure, str) or information_measure.lower() not in MEASURES:
        raise ValueError(
            f"Invalid input: expected `information_measure` to be one of {list(MEASURES)}, got {information_measure!r}"
        )
    name = information_measure.lower()
    if name in ("alpha_divergence", "ab_divergence", "renyi_divergence") and not isinstance(alpha, float):
        raise ValueError(f"Parameter `alpha` is expected to be defined for {name}.")
    if name in ("beta_divergence", "ab_divergence") and not isinstance(beta, float):
        raise ValueError(f"Parameter `beta` is expected to be defined for {name}.")
    if name == "alpha_divergence" and alpha in (0, 1):
        raise ValueError(f"Parameter `alpha` is expected to be float differened from 0 and 1 for {name}.")
    if name == "beta_divergence" and beta in (0, -1):
        raise ValueError(f"Parameter `beta` is expected to be float differened from 0 and -1 for {name}.")
    if name == "ab_divergence" and 0 in (alpha, beta, (alpha or 0) + (beta or 0)):
        raise ValueError(f"Parameters `alpha`, `beta` and their sum are expected to be differened from 0 for {name}.")
    if name == "renyi_divergence" and alpha == 1:
        raise ValueError(f"Parameter `alpha` is expected to be float differened from 1 for {name}.")
    return name


def _ab(p: Tensor, t: Tensor, alpha: float, beta: float) -> Tensor:
    a = torch.log(torch.sum(t ** (beta + alpha), dim=-1)) / (beta * (beta + alpha))
    b = torch.log(torch.sum(p ** (beta + alpha), dim=-1)) / (alpha * (beta + alpha))
    c = torch.log(torch.sum(t**alpha * p**beta, dim=-1)) / (alpha * beta)
    return a + b - c


def _formulas(alpha: float, beta: float) -> Dict[str, Callable[[Tensor, Tensor], Tensor]]:
    return {
        "kl_divergence": lambda p, t: torch.sum(t * torch.log(p / t), dim=-1),
        "alpha_divergence": lambda p, t: (1 - torch.sum(t**alpha * p ** (1 - alpha), dim=-1)) / (alpha * (alpha - 1)),
        "beta_divergence": lambda p, t: _ab(p, t, 1.0, beta),
        "ab_divergence": lambda p, t: _ab(p, t, alpha, beta),
        "renyi_divergence": lambda p, t: torch.log(torch.sum(t**alpha * p ** (1 - alpha), dim=-1)) / (alpha - 1),
        "l1_distance": lambda p, t: torch.norm(t - p, p=1, dim=-1),
        "l2_distance": lambda p, t: torch.norm(t - p, p=2, dim=-1),
        "l_infinity_distance": lambda p, t: torch.norm(t - p, p=float("inf"), dim=-1),
        "fisher_rao_distance": lambda p, t: 2 * torch.acos(torch.clamp(torch.sqrt(p * t).sum(-1), 0, 1)),
    }


def information_measure(
    name: str, preds_distribution: Tensor, target_distribution: Tensor, alpha: Optional[float], beta: Optional[float]
) -> Tensor:
    """The measure per sentence ([N]); NaN and infinities replaced as torch.nan_to_num does
    (torchmetrics')."""
    formula = _formulas(alpha or 0.0, beta or 0.0)[name]
    return torch.nan_to_num(formula(preds_distribution, target_distribution))
