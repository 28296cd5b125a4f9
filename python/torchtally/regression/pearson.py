"""``PearsonCorrCoef`` (torchmetrics.regression.pearson's names). Pearson correlation of preds and
target per output ([N] or [N, D] with D = num_outputs)."""

from typing import Any, Dict, List, Optional

import torch
from torch import Tensor

from ..functional.regression import compute as reg_compute
from ..functional.regression import update as reg_update
from .mse import F64, InputFormMixin, RegressionMetric

__all__ = ["PearsonCorrCoef"]


class PearsonCorrCoef(InputFormMixin, RegressionMetric):
    """Pearson correlation of preds and target per output ([N] or [N, D] with D = num_outputs).

    Co-moments are merged with Chan's formula. An output whose preds or target have zero
    variance (exactly constant), or fewer than 2 samples, gives NaN with a warning.

    Differences from torchmetrics: exact where it approximates (it gives NaN whenever a variance
    is small against the largest deviation, e.g. float32 inputs of magnitude 1e-20; here only
    for a variance of exactly 0); NaN/inf inputs and a 1-D input with ``num_outputs > 1``
    raise ValueError.

        >>> import torch
        >>> from torchtally.regression import PearsonCorrCoef
        >>> PearsonCorrCoef().update(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 2.5])).compute()
        tensor(0.9820)
    """

    higher_is_better: Optional[bool] = None  # both -1 and 1 are optimal
    full_state_update = True

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = reg_update.check_num_outputs(num_outputs)
        self.add_state("comoments", torch.zeros(self.num_outputs, 6, dtype=F64), reduce="merge")
        self._add_input_form()
        # shared with ConcordanceCorrCoef in a MetricCollection
        self.state_key = ("regression_pearson_comoments", self.num_outputs)

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.pearson(preds, target, self.num_outputs, self.device)
        # torchmetrics' result dtype is promoted by [N, D] inputs only (1-D ones give 0-d batch
        # statistics, which torch's type promotion does not let change a state's dtype).
        code = reg_update.float_code(p, t) if preds.dim() == 2 else 0
        form = self._forms.check(self.input_form, (code,))
        reg_update.comoments_update(self.comoments, p, t)
        self._store_form(form)

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        if name == "input_form":
            return reg_update.form_merge_values(values)
        return reg_update.merge_moments(values, comoments=True)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        reg_update.check_moments_state("comoments", states["comoments"], comoments=True)

    def compute(self) -> Tensor:
        return reg_compute.as_result(reg_compute.pearson_from_comoments(self.comoments), self._result_dtype())
