"""``FleissKappa`` (torchmetrics.nominal.fleiss_kappa's name)."""

from typing import TYPE_CHECKING, Any, Dict, List

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.nominal.fleiss_kappa import check_mode, kappa_of, rating_counts
from ..kernels.nominal import rating_update

__all__ = ["FleissKappa"]

_NONE = torch.iinfo(torch.int64).min  # the bounds of a metric without samples


class FleissKappa(Metric):
    """Fleiss' kappa: the agreement of R raters who each put every sample into one of C
    categories, beyond chance. ``ratings``: [N, C] integer counts (how many raters chose
    category j for sample i) with ``mode="counts"``, or [N, C, R] float scores, each rater's
    choice the argmax over C, with ``mode="probs"``. Every sample must have the same number of
    raters R >= 2, and every batch the same C and R.

    State (the statistic's sums, no per-sample data): the ratings per category (int64 [C], a
    ``merge`` state: the ranks' vectors are added, and so are forward's batch and the
    accumulated ones, so it stays [C]), the number of samples and the sum of their squared
    counts (int64), and the bounds of R and C (int64 [4], max-reduced, so that ranks that saw
    different R or C raise instead of mixing). 8 C + 48 bytes whatever the number of samples or
    of forward calls; a sync is 4 collectives (the header, an all_reduce of the sums, one of the
    bounds, a gather of C int64 per rank), each packed with a collection's other states of its
    kind. An update is one C call (the rating_update kernel): one pass over the batch for the
    column sums, the sum of squares and every sample's number of raters, added into the states
    after its checks.

    Differences from torchmetrics: exact (int64 counts, float64 statistic; torchmetrics adds
    1e-5 to the denominator); samples or batches rated by different numbers of raters raise
    ValueError (torchmetrics uses the largest number for every sample: a wrong value), so do
    negative counts and NaN scores; ``mode="probs"`` counts choices over the C categories
    (torchmetrics one-hots over R, failing when R < C); a value that is undefined (fewer than
    2 raters, every rating in one category) is NaN with a warning (torchmetrics: 0 or inf).

        >>> import torch
        >>> from torchtally.nominal import FleissKappa
        >>> ratings = torch.tensor([[3, 0, 0], [0, 2, 1], [1, 1, 1], [0, 0, 3]])
        >>> FleissKappa(mode="counts").update(ratings).compute()
        tensor(0.3617)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_upper_bound = 1.0
    fresh_compute_results = True

    if TYPE_CHECKING:  # declared states
        category_totals: Tensor
        sums: Tensor
        bounds: Tensor

    def __init__(self, mode: str = "counts", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mode = check_mode(mode)
        # [C] once a batch has set C (empty before): "merge" adds the ranks' (and forward's batch)
        # vectors, so the state stays C int64 (a "cat" state grew by C per forward until the
        # next update folded it)
        self.add_state("category_totals", torch.zeros(0, dtype=torch.int64), reduce="merge")
        self.add_state("sums", torch.zeros(2, dtype=torch.int64), reduce="sum")  # samples, sum of squared counts
        # max R, -min R, max C, -min C
        self.add_state("bounds", torch.full((4,), _NONE, dtype=torch.int64), reduce="max")

    def update(self, ratings: Tensor) -> None:
        counts = rating_counts(ratings, self.mode)
        if counts.device != self.sums.device:  # the kernel reads the batch where the states are
            counts = counts.to(self.sums.device)
        totals = self.category_totals
        if totals.numel() == 0 and counts.shape[0]:  # the first batch with samples sets C
            totals = torch.zeros(counts.shape[1], dtype=torch.int64, device=self.sums.device)
            rating_update(totals, self.sums, self.bounds, counts)  # checks first: states untouched on failure
            self.category_totals = totals
        else:  # one C call: the batch's sums added into the three states, R and C checked
            rating_update(totals, self.sums, self.bounds, counts)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        """category_totals of several ranks or metrics (or forward's batch): added; those
        without samples (empty) left out. Different C raise, as compute would."""
        held = [v for v in values if v.numel()]
        if not held:
            return values[0].clone()
        if len({v.numel() for v in held}) > 1:
            raise ValueError(
                "ratings: the ranks (or merged metrics) saw different numbers of categories "
                f"({sorted({v.numel() for v in held})}); Fleiss' kappa needs one"
            )
        return torch.stack(held).sum(0) if len(held) > 1 else held[0].clone()

    def compute(self) -> Tensor:
        samples, sum_squares = (int(v) for v in self.sums)
        max_r, neg_min_r, max_c, neg_min_c = (int(v) for v in self.bounds)
        if samples == 0:
            return self.in_result_dtype(kappa_of(torch.zeros(0), 0, 0, -1))
        if max_r != -neg_min_r or max_c != -neg_min_c:
            raise ValueError(
                f"ratings: the ranks (or merged metrics) saw different numbers of raters ({-neg_min_r} to {max_r}) "
                f"or categories ({-neg_min_c} to {max_c}); Fleiss' kappa needs one of each"
            )
        return self.in_result_dtype(kappa_of(self.category_totals, sum_squares, samples, max_r))

    def check_state_invariants(self, states: Dict[str, Any]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "category_totals", "sums")
