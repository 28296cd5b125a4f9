"""``continuous_ranked_probability_score`` (torchmetrics.functional.regression.crps's names). Mean
CRPS of ensemble forecasts ``preds`` [N, M] (M >= 2 members) for targets [N] (see ensemble.py)."""

from torch import Tensor

from . import ensemble, update

__all__ = ["continuous_ranked_probability_score"]


def continuous_ranked_probability_score(preds: Tensor, target: Tensor) -> Tensor:
    """Mean CRPS of ensemble forecasts ``preds`` [N, M] (M >= 2 members) for targets [N]
    (see ensemble.py); NaN for N = 0.

    >>> continuous_ranked_probability_score(torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 3.0]]), torch.tensor([1.0, 0.0]))
    tensor(0.7222)
    """
    scores = ensemble.crps_per_sample(preds, target)
    return scores.mean().to(update.functional_dtype(preds, target))
