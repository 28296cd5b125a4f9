"""Text metrics from edit distances: WordErrorRate, CharErrorRate, MatchErrorRate,
WordInfoLost, WordInfoPreserved and EditDistance. State declarations; the work lives in
torchtally.functional.text (error_counts.py: tokens and one C call per batch; error_rates.py).

torchmetrics' classes with its constructor signatures, accepted inputs (a str or a list of str
for ``preds`` and ``target``), values and result dtypes (rates in ``self.dtype``, torch's
default dtype when the metric was made). Words are ``str.split()``'s, characters Python str
characters (Unicode code points). Each pair's Levenshtein distance is computed in C, the whole
batch in one call without the GIL.

State: int64 sums ("sum" states, a sync is one all_reduce):

* WordErrorRate, CharErrorRate: ``errors`` (edit distance) and ``total`` (reference tokens);
* MatchErrorRate: ``errors`` and ``total`` (per pair, the longer side's words);
* WordInfoLost, WordInfoPreserved: ``errors`` (per pair, the edit distance minus the longer
  side's words: minus torchmetrics' count of hits), ``target_total`` and ``preds_total``
  (words);
* EditDistance: with reduction "mean" / "sum", ``edit_scores`` and ``num_elements``; with
  None / "none", every pair's distance in a "cat" state, ``edit_scores_list`` (int32, 4 bytes
  per sentence pair).

Where a total is 0 the value is what torchmetrics' division gives (NaN for 0 / 0, inf for
x / 0): e.g. WordErrorRate over empty references is NaN (no errors) or inf.

Deliberate differences from torchmetrics:

* exact: counts are int64 (torchmetrics sums them in float32, exact only up to 2^24 tokens)
  and the rates are divided in float64, then given in ``self.dtype``; EditDistance is the exact
  Levenshtein distance for every length (torchmetrics' beam search over a band around the
  diagonal can overestimate the distance of long pairs of unequal lengths);
* errors where torchmetrics accepts garbage: ``preds`` and ``target`` of different lengths are
  a ValueError for every metric (torchmetrics' rates silently score the shorter list's pairs);
  a non-str item is a ValueError, another type than str / list / tuple a TypeError, raised
  before any state changes;
* EditDistance with reduction None / "none" before any update gives int32 0 (as over no pairs;
  torchmetrics raises);
* MatchErrorRate, WordInfoLost and WordInfoPreserved follow torchmetrics (hits = the longer
  side's words - the distance), not jiwer, whose hits come from one chosen alignment: the two
  differ where an optimal alignment holds both an insertion and a deletion;
* results carry no gradient (``is_differentiable`` is False).
"""

from typing import TYPE_CHECKING, Any, Dict, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import error_counts as edit_update
from ..functional.text import error_rates as edit_compute

__all__ = ["WordErrorRate"]

I64 = torch.int64


class ErrorRate(Metric):
    """errors / total over sentence pairs; subclasses say the unit and the total."""

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    traceable_update = False  # the sentences are read in Python
    _unit = "words"
    _longer = False  # total: the longer side of each pair (MER) rather than the reference
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        errors: Tensor
        total: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("errors", torch.tensor(0, dtype=I64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=I64), reduce="sum")

    def update(self, preds: Any, target: Any) -> None:
        errors, target_total, _, longer_total = edit_update.error_sums(preds, target, self._unit)
        self.errors += errors
        self.total += longer_total if self._longer else target_total

    def compute(self) -> Tensor:
        return edit_compute.error_rate(self.errors, self.total, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "errors", "total")


class WordErrorRate(ErrorRate):
    """Word error rate: the word edit distance of each (prediction, reference) pair, summed,
    over the references' words. State: int64 ``errors`` and ``total`` (see this module's
    docstring, with the differences from torchmetrics).

        >>> from torchtally.text import WordErrorRate
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> WordErrorRate().update(preds, target).compute()
        tensor(0.5000)
    """


class WordInfo(Metric):
    """H^2 / (reference words x predicted words), H = -errors (see the module docstring)."""

    is_differentiable = False
    full_state_update = False
    traceable_update = False  # the sentences are read in Python
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        errors: Tensor
        target_total: Tensor
        preds_total: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("errors", torch.tensor(0, dtype=I64), reduce="sum")
        self.add_state("target_total", torch.tensor(0, dtype=I64), reduce="sum")
        self.add_state("preds_total", torch.tensor(0, dtype=I64), reduce="sum")

    def update(self, preds: Any, target: Any) -> None:
        errors, target_total, preds_total, longer_total = edit_update.error_sums(preds, target, "words")
        self.errors += errors - longer_total
        self.target_total += target_total
        self.preds_total += preds_total

    def _sums(self) -> Tuple[Tensor, Tensor, Tensor]:
        return self.errors, self.target_total, self.preds_total

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "target_total", "preds_total")
        errors = states.get("errors")
        if errors is not None and bool((errors > 0).any()):
            raise ValueError(f"'errors': expected values <= 0 (distance - longer side), got {errors.max().item()}")
