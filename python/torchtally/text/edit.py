"""``EditDistance`` (torchmetrics.text.edit's names). Character-level Levenshtein distance of each
(prediction, reference) pair."""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import error_counts as edit_update
from ..functional.text import error_rates as edit_compute
from .wer import I64

__all__ = ["EditDistance"]


class EditDistance(Metric):
    """Character-level Levenshtein distance of each (prediction, reference) pair: insertion and
    deletion cost 1, a substitution ``substitution_cost`` (an int >= 0). ``reduction``: "mean"
    (in ``self.dtype``), "sum" (int64), None or "none" (every pair's distance, int32 [N]).

    State: int64 ``edit_scores`` and ``num_elements`` for "mean" / "sum"; for None / "none" a
    "cat" state ``edit_scores_list``, int32, 4 bytes per sentence pair. Exact for every length
    (torchmetrics' beam search can overestimate long pairs); see this module's docstring.

        >>> from torchtally.text import EditDistance
        >>> EditDistance().update(["rain"], ["shine"]).compute()
        tensor(3.)
        >>> EditDistance(substitution_cost=2).update(["rain"], ["shine"]).compute()
        tensor(5.)
        >>> EditDistance(reduction=None).update(["rain", "lnaguaeg"], ["shine", "language"]).compute()
        tensor([3, 4], dtype=torch.int32)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    traceable_update = False  # the sentences are read in Python
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        edit_scores: Tensor
        num_elements: Tensor
        edit_scores_list: Tensor

    def __init__(self, substitution_cost: int = 1, reduction: Optional[str] = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.substitution_cost = edit_update.check_substitution_cost(substitution_cost)
        self.reduction = edit_compute.check_reduction(reduction)
        self._per_pair = reduction is None or reduction == "none"
        if self._per_pair:
            self.add_state("edit_scores_list", torch.empty(0, dtype=torch.int32), reduce="cat")
        else:
            self.add_state("edit_scores", torch.tensor(0, dtype=I64), reduce="sum")
            self.add_state("num_elements", torch.tensor(0, dtype=I64), reduce="sum")

    def update(self, preds: Any, target: Any) -> None:
        distance = edit_update.char_distances(preds, target, self.substitution_cost)
        if self._per_pair:
            self.append_state("edit_scores_list", edit_update.as_int32(distance), copy=False)
        else:
            self.edit_scores += distance.sum()
            self.num_elements += distance.numel()

    def compute(self) -> Tensor:
        if self._per_pair:
            return edit_compute.edit_distance_result(self.edit_scores_list, self._num_pairs(), None, self.dtype)
        return edit_compute.edit_distance_result(self.edit_scores, self.num_elements, self.reduction, self.dtype)

    def _num_pairs(self) -> Tensor:
        """The number of sentence pairs seen (int64)."""
        if self._per_pair:
            return torch.tensor(self.edit_scores_list.shape[0], dtype=I64)
        return self.num_elements

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "edit_scores", "num_elements", "edit_scores_list")
