"""The state every audio signal metric keeps: a float64 sum of one value per utterance (per
mixture for SA-SDR and PIT) and an int64 count of them; the result is their mean.

16 bytes whatever the data; both are "sum" states, so a sync is the plan's header plus one
all_reduce per dtype (float64, int64): inside a MetricCollection they share the collection's
packed buffers with every other metric's sums. Each rank's sums added equal one process's, so
the synced mean is the single-process mean (to float64 rounding of the order of addition).
"""

import math
from typing import TYPE_CHECKING, Dict, Optional, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.audio import signals as signals_fn

__all__ = ["UtteranceMean"]


class UtteranceMean(Metric):
    """A mean of per-utterance values: ``_add_states(sum_name, count_name)`` declares the two
    states (torchmetrics' names for each class), ``_add_values`` adds a batch's values."""

    is_differentiable = False  # results carry no gradient (see Metric); the functional forms do
    higher_is_better: Optional[bool] = True
    full_state_update = False
    plot_lower_bound: Optional[float] = None
    plot_upper_bound: Optional[float] = None
    if TYPE_CHECKING:
        _sum_name: str
        _count_name: str

    def _add_states(self, sum_name: str, count_name: str) -> None:
        self._sum_name, self._count_name = sum_name, count_name
        self.add_state(sum_name, torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state(count_name, torch.tensor(0, dtype=torch.int64), reduce="sum")

    def _add_values(self, values: Tensor, inputs: Optional[Tuple[Tensor, Tensor]] = None) -> None:
        """Add one batch's scores; given its ``inputs`` (preds, target), scores that are not all
        finite are refused first (signals_fn.refuse_non_finite)."""
        batch = values.detach().sum(dtype=torch.float64)  # any NaN or infinity reaches the sum
        if inputs is not None and not math.isfinite(batch.item()):
            signals_fn.refuse_non_finite(values, *inputs)
        total: Tensor = getattr(self, self._sum_name)
        count: Tensor = getattr(self, self._count_name)
        setattr(self, self._sum_name, total + batch.to(total.device))
        setattr(self, self._count_name, count + values.numel())

    def compute(self) -> Tensor:
        """The mean over every utterance seen (NaN over none, as torchmetrics' 0 / 0)."""
        return self.in_result_dtype(getattr(self, self._sum_name) / getattr(self, self._count_name))

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, self._count_name)
