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

from typing import TYPE_CHECKING, Any, Dict

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.regression import compute as reg_compute
from ..functional.regression import ranks
from ..functional.regression import update as reg_update

__all__ = ["SpearmanCorrCoef"]

F64 = torch.float64


class RankPairs(Metric):
    """The (preds, target) pairs of every sample: a cat state [N, 2, num_outputs] (see the module
    docstring for its dtype), shared by the rank correlations inside a MetricCollection."""

    is_differentiable = False  # results carry no gradient (see Metric)
    traceable_update = False  # whether float32 rounds a value is read in Python
    if TYPE_CHECKING:  # a state declared with add_state (read as an attribute)
        pairs: Tensor

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self._pair_dtype = F64 if self.dtype == F64 else torch.float32
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


class SpearmanCorrCoef(RankPairs):
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
