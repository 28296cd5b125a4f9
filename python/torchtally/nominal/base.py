"""The state of the contingency-table metrics (CramersV, TschuprowsT,
PearsonsContingencyCoefficient, TheilsU): one int64 [C, C] table, row = target's category,
column = preds', summed across ranks.

State: 8 C^2 bytes, independent of the number of samples; a sync is one all_reduce of the
table, packed with the other fixed states of a collection. Metrics of this family with equal
``num_classes`` and NaN options share one table in a MetricCollection (``state_key``).
"""

from typing import TYPE_CHECKING, Any, Dict

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.nominal import utils

__all__ = ["ContingencyTableState"]


class ContingencyTableState(Metric):
    """Accumulates the contingency table of preds and target ([N] categories in
    [0, num_classes), or [N, C] scores whose argmax is the category)."""

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    fresh_compute_results = True
    traceable_update = False  # the NaN policy branches on the data

    if TYPE_CHECKING:  # declared state
        confmat: Tensor

    def __init__(
        self, num_classes: int, nan_strategy: str = "replace", nan_replace_value: Any = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = utils.check_num_classes(num_classes)
        self.nan_strategy, self.nan_replace_value = utils.check_nan_options(nan_strategy, nan_replace_value)
        c = self.num_classes
        self.add_state("confmat", torch.zeros(c, c, dtype=torch.int64), reduce="sum")
        self.state_key = ("nominal_contingency_table", c, self.nan_strategy, self.nan_replace_value)

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = utils.paired_labels(preds, target, self.nan_strategy, self.nan_replace_value)
        utils.table_update(self.confmat, p, t)

    def check_state_invariants(self, states: Dict[str, Any]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "confmat")
