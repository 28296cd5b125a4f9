"""``fleiss_kappa`` (torchmetrics.functional.nominal.fleiss_kappa's name): Fleiss' kappa, the
agreement of R raters who each put N samples into one of C categories, beyond chance.

Everything the statistic needs is a sum over samples: the ratings per category (C int64), the
sum of every sample's squared counts, the number of samples, and the number of raters R (the
same for every sample). FleissKappa keeps exactly these; the statistic is computed from them in
float64:

    P = (sum of squared counts / N - R) / (R (R - 1))     (mean agreement per sample)
    Pe = sum_j (ratings in category j / (N R))^2           (agreement by chance)
    kappa = (P - Pe) / (1 - Pe)
"""

import math
from typing import Tuple

import torch
from torch import Tensor

from ...kernels.nominal import rating_sums
from ...utilities.prints import rank_zero_warn

__all__ = ["fleiss_kappa"]

MODES = ("counts", "probs")
KERNEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def check_mode(mode: object) -> str:
    if mode not in MODES:
        raise ValueError(f"mode: expected one of {list(MODES)}, got {mode!r}")
    return str(mode)


def rating_counts(ratings: object, mode: str) -> Tensor:
    """ratings -> integer [N, C] counts: ``counts`` mode takes them as they are ([N, C] integer
    counts; batch_statistics checks them >= 0), ``probs`` mode counts each rater's argmax over the categories of
    [N, C, R] float scores. Every sample must have the same number of ratings."""
    if not isinstance(ratings, Tensor):
        raise TypeError(f"ratings: expected a torch.Tensor, got {type(ratings).__name__}")
    shape = list(ratings.shape)
    if mode == "probs":
        if ratings.dim() != 3 or not ratings.is_floating_point():
            raise ValueError(
                "ratings: with mode='probs', expected floating point scores [n_samples, n_categories, n_raters], "
                f"got {str(ratings.dtype).replace('torch.', '')} {shape}"
            )
        if bool(torch.isnan(ratings).any()):
            raise ValueError("ratings: NaN in the scores (a rater's choice would be the NaN's category)")
        categories = ratings.shape[1]
        if categories == 0 and ratings.shape[0] * ratings.shape[2]:
            raise ValueError(f"ratings: expected at least one category, got {shape}")
        choice = ratings.argmax(1) if categories else torch.empty(0, 0, dtype=torch.int64, device=ratings.device)
        counts = torch.zeros(ratings.shape[0], categories, dtype=torch.int64, device=ratings.device)
        counts.scatter_add_(1, choice, torch.ones_like(choice))
        return counts
    if ratings.dim() != 2 or ratings.is_floating_point() or ratings.is_complex():
        raise ValueError(
            "ratings: with mode='counts', expected integer counts [n_samples, n_categories], "
            f"got {str(ratings.dtype).replace('torch.', '')} {shape}"
        )
    # the kernel reads these dtypes in place (and checks counts >= 0); the rest become int64
    return ratings if ratings.dtype in KERNEL_DTYPES else ratings.to(torch.int64)


def batch_statistics(counts: Tensor) -> Tuple[Tensor, int, int, int]:
    """integer [N, C] counts -> (ratings per category, int64 [C], sum of squared counts, N, R),
    in one pass (the rating_sums kernel); R is -1 for no sample. ValueError for a negative count
    or samples with different numbers of ratings."""
    n, c = counts.shape
    out = torch.empty(c + 3, dtype=torch.int64, device=counts.device)
    rating_sums(out, counts)
    if n == 0:
        return out[:c], 0, 0, -1
    sum_squares, least, most = out[c:].tolist()
    if least != most:
        per_sample = counts.to(torch.int64).sum(1)
        raters = int(per_sample[0])
        at = int((per_sample != raters).nonzero()[0, 0])
        raise ValueError(
            "ratings: every sample must have the same number of ratings (Fleiss' kappa), "
            f"got {raters} for sample 0 and {int(per_sample[at])} for sample {at}"
        )
    return out[:c], sum_squares, n, least


def kappa_of(totals: Tensor, sum_squares: float, samples: int, raters: int) -> Tensor:
    """Fleiss' kappa (float64, 0-d) from the sums; NaN with a warning where it is undefined."""
    device = totals.device
    if samples == 0:
        return _undefined("without samples", device)
    if raters < 2:
        return _undefined(f"with {raters} rater(s) per sample (it needs at least 2)", device)
    ratings = samples * raters
    shares = totals.to(torch.float64) / ratings
    chance = (shares * shares).sum()
    observed = (sum_squares / samples - raters) / (raters * (raters - 1))
    if float(chance) >= 1.0:
        return _undefined("when every rating is in one category (agreement by chance is 1)", device)
    return (observed - chance) / (1.0 - chance)


def _undefined(why: str, device: torch.device) -> Tensor:
    rank_zero_warn(f"Fleiss' kappa is undefined {why}; returning NaN.", UserWarning)
    return torch.tensor(math.nan, dtype=torch.float64, device=device)


def fleiss_kappa(ratings: Tensor, mode: str = "counts") -> Tensor:
    """Fleiss' kappa of ``ratings``: [N, C] integer counts (how many raters put sample i in
    category j; every sample rated by the same number of raters) with ``mode="counts"``, or
    [N, C, R] float scores, each rater's choice the argmax over C, with ``mode="probs"``.

    1 is complete agreement, 0 the agreement expected by chance, below 0 less than chance.

    >>> ratings = torch.tensor([[3, 0, 0], [0, 2, 1], [1, 1, 1], [0, 0, 3]])
    >>> fleiss_kappa(ratings)
    tensor(0.3617)
    """
    counts = rating_counts(ratings, check_mode(mode))
    totals, sum_squares, samples, raters = batch_statistics(counts)
    return kappa_of(totals, sum_squares, samples, raters).to(torch.get_default_dtype())
