"""Regression metrics that rank or sort: Spearman's and Kendall's rank correlations, and the
continuous ranked probability score (CRPS) of an ensemble. State declarations; the math lives in
torchtally.functional.regression (ranks.py, ensemble.py).

torchmetrics' classes with its constructor signatures, accepted inputs, result dtypes and
shapes (a single-element result is 0-d; results in ``self.dtype``, torch's default dtype when
the metric was made).

* Rank correlations need every sample: SpearmanCorrCoef and KendallRankCorrCoef keep the
  (preds, target) pairs in one "cat" state, ``pairs`` [N, 2, num_outputs], synced in the one
  padded all_gather of cat states. Pairs are float32 (8 bytes per sample and output), or
  float64 (16 bytes) when the metric is made while torch's default dtype is float64 (as
  torchmetrics keeps them in the metric's dtype). float64 inputs (or int32/int64 ones) whose
  values float32 rounds are stored rounded, with a warning: values closer than float32's
  resolution become ties. The two metrics share the pairs inside a MetricCollection. Ranking
  happens at compute, O(N log N) per output and O(N) memory (torchmetrics' Kendall compares
  every pair: O(N^2) time).
* The CRPS keeps a float64 sum of per-sample scores and an int64 count ("sum" states): a sync
  is one all_reduce.

Deliberate differences from torchmetrics:

* exact where torchmetrics approximates: Spearman's rho is scipy.stats.spearmanr's value
  (torchmetrics adds 1e-6 to the denominator, which gives 0 for a constant column and moves
  every result off by up to 1e-6 / variance); here a constant column gives NaN with a warning;
  the CRPS is summed in float64 from sorted members (torchmetrics builds an M x M matrix per
  sample in the input's dtype);
* NaN or inf in preds or target is a ValueError (a NaN would rank anywhere), and so is a finite
  float64 value too large for float32 pairs; integer inputs are read (torchmetrics' Spearman
  raises TypeError);
* Kendall's tau with one output accepts [N, 1] inputs (torchmetrics fails on them); its
  results are in ``self.dtype`` for every variant (torchmetrics' tau-c follows the inputs'
  float dtype: float16 or float64 inputs give a float16 or float64 tau-c);
* results carry no gradient (``is_differentiable`` is False).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.regression import compute as reg_compute
from ..functional.regression import ensemble, ranks
from ..functional.regression import update as reg_update

__all__ = ["ContinuousRankedProbabilityScore", "KendallRankCorrCoef", "SpearmanCorrCoef"]

_F64 = torch.float64


class _RankPairs(Metric):
    """The (preds, target) pairs of every sample: a cat state [N, 2, num_outputs] (see the module
    docstring for its dtype), shared by the rank correlations inside a MetricCollection."""

    is_differentiable = False  # results carry no gradient (see Metric)
    traceable_update = False  # whether float32 rounds a value is read in Python
    if TYPE_CHECKING:  # a state declared with add_state (read as an attribute)
        pairs: Tensor

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self._pair_dtype = _F64 if self.dtype == _F64 else torch.float32
        self.add_state("pairs", torch.empty(0, 2, self.num_outputs, dtype=self._pair_dtype), reduce="cat")
        self.state_key = ("regression_rank_pairs", self.num_outputs, str(self._pair_dtype))

    def update(self, preds: Tensor, target: Tensor) -> None:
        rows, rounded = ranks.pair_rows(preds, target, self.num_outputs, self._pair_dtype, self.device)
        if rounded:
            ranks.rounding_warning(type(self).__name__)
        self.append_state("pairs", rows, copy=False)  # made here: a fresh tensor

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        if not bool(torch.isfinite(states["pairs"]).all()):
            raise ValueError("'pairs': NaN or inf (an update never stores one)")

    def _all_pairs(self) -> Tensor:
        pairs = self.pairs
        ranks.require_samples(pairs, type(self).__name__)
        return pairs


class SpearmanCorrCoef(_RankPairs):
    """Spearman's rank correlation per output ([N] or [N, D] with D = num_outputs): Pearson's
    correlation of the ranks, ties given their average rank (scipy.stats.spearmanr's value).

    State: every (preds, target) pair, float32 (8 bytes per sample and output) or float64 (16
    bytes) under a float64 default dtype; see this module's docstring. Over no samples: a
    ValueError, as torchmetrics. A constant column gives NaN with a warning (torchmetrics: 0).
    Differences from torchmetrics: in this module's docstring (exact, no eps in the
    denominator; NaN/inf inputs raise ValueError).

        >>> import torch
        >>> from torchtally.regression import SpearmanCorrCoef
        >>> m = SpearmanCorrCoef()
        >>> _ = m.update(torch.tensor([2.5, 0.0, 2.0]), torch.tensor([3.0, -0.5, 2.0]))
        >>> m.update(torch.tensor([8.0, 1.0]), torch.tensor([7.0, 2.0])).compute()
        tensor(0.9747)
    """

    higher_is_better = True
    full_state_update = False

    def compute(self) -> Tensor:
        return reg_compute.as_result(ranks.spearman(self._all_pairs()), self.dtype)


class KendallRankCorrCoef(_RankPairs):
    """Kendall's rank correlation tau per output ([N] or [N, D] with D = num_outputs).

    ``variant``: "a" ((C - D) / (C + D) over concordant C and discordant D pairs, as
    torchmetrics), "b" (default; ties in preds and target corrected, scipy.stats.kendalltau's)
    or "c" (Stuart's, for tables). ``t_test=True`` also returns the p-value of the asymptotic
    test of tau = 0 against ``alternative`` ("two-sided", "less" or "greater"): ``(tau, p)``.
    Ties as scipy. State: every (preds, target) pair, as SpearmanCorrCoef (shared with it in a
    MetricCollection). compute is O(N log N) per output (torchmetrics: every pair compared,
    O(N^2)). Over no samples: a ValueError, as torchmetrics; an undefined tau (a constant
    column) is NaN, with a warning. Differences from torchmetrics: in this module's docstring.

        >>> import torch
        >>> from torchtally.regression import KendallRankCorrCoef
        >>> preds, target = torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])
        >>> KendallRankCorrCoef().update(preds, target).compute()
        tensor(1.)
        >>> m = KendallRankCorrCoef(t_test=True)
        >>> m.update(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 3.0, 2.0, 4.0])).compute()
        (tensor(0.6667), tensor(0.1742))
    """

    higher_is_better = None
    full_state_update = True

    def __init__(
        self,
        variant: str = "b",
        t_test: bool = False,
        alternative: Optional[str] = "two-sided",
        num_outputs: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(num_outputs, **kwargs)
        self.variant = ranks.check_variant(variant)
        self.t_test = t_test
        self.alternative = ranks.check_t_test(t_test, alternative)  # None without a test

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return ranks.kendall_result(self._all_pairs(), self.variant, self.alternative, self.dtype)


class ContinuousRankedProbabilityScore(Metric):
    """Mean continuous ranked probability score of ensemble forecasts: ``preds`` [N, M] (M >= 2
    members per sample), ``target`` [N]. Per sample ``mean_i abs(x_i - y) - sum_ij abs(x_i - x_j)
    / (2 M^2)``, from the sorted members (O(M log M), no M x M matrix).

    State: a float64 sum of the scores and an int64 sample count ("sum" states, one all_reduce
    to sync). NaN over no samples (0 / 0, as torchmetrics). Differences from torchmetrics:
    float64 throughout (torchmetrics: the input's dtype); NaN/inf inputs raise ValueError.

        >>> import torch
        >>> from torchtally.regression import ContinuousRankedProbabilityScore
        >>> m = ContinuousRankedProbabilityScore()
        >>> m.update(torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 3.0]]), torch.tensor([1.0, 0.0])).compute()
        tensor(0.7222)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        score_sum: Tensor
        num_samples: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("score_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        scores = ensemble.crps_per_sample(preds, target, self.device)
        self.score_sum += scores.sum()
        self.num_samples += scores.numel()

    def compute(self) -> Tensor:
        return reg_compute.mean_of(self.score_sum, self.num_samples, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_samples")
