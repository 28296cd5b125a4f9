"""KL and Jensen-Shannon divergences of row distributions, and the critical success index (a
count of thresholded elements); the math lives in torchtally.functional.regression.batch_sums.

torchmetrics' classes with its constructor signatures, accepted inputs, result dtypes and
shapes. "mean" and "sum" reductions keep a float64 sum and an int64 row count; "none" keeps
every row's divergence (a "cat" state of 8 bytes per row). The critical success index keeps
four int64 counts, or with ``keep_sequence_dim`` three per index of that dimension (a "cat"
state of 24 bytes per index).

Deliberate differences from torchmetrics: float64 accumulation; NaN or inf inputs (also a
-inf log-probability), negative probabilities and rows that sum to 0 raise ValueError with the
state unchanged (torchmetrics returns NaN); results carry no gradient.
"""

from typing import Any, Dict, Optional

import torch
from torch import Tensor

from ..base.input_dtype import InputDtypeMixin
from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds

__all__ = ["KLDivergence"]

_F64 = torch.float64


class RegressionMetric(Metric):
    is_differentiable = False  # results carry no gradient (see Metric)
    full_state_update = False
    traceable_update = False  # the finiteness and domain checks read the values: eager inside torch.compile


class Divergence(InputDtypeMixin, RegressionMetric):
    """Per-row divergences of [N, d] p and q, reduced over rows; the result dtype follows the
    inputs' float dtype as torchmetrics' (its "mean" / "sum" state is promoted by them, its
    "none" rows are in their dtype)."""

    higher_is_better = False
    _rows = staticmethod(sums.kl_rows)
    _kind = error_kinds.KL

    def __init__(self, log_prob: bool = False, reduction: Optional[str] = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log_prob = sums.check_log_prob(log_prob)
        self.reduction = sums.check_reduction(reduction)
        if self.reduction in ("mean", "sum"):
            self.add_state("measure_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
            self.add_state("num_rows", torch.tensor(0, dtype=torch.int64), reduce="sum")
        else:
            self.add_state("measures", torch.empty(0, dtype=_F64), reduce="cat")
        self._add_input_dtype()

    def update(self, p: Tensor, q: Tensor) -> None:
        x, y = sums.distributions(p, q, self.device)
        if self._fused(x, y):
            self._note_input_dtype(x, y)
            return
        rows = type(self)._rows(x, y, self.log_prob)
        self._note_input_dtype(x, y)
        if self.reduction in ("mean", "sum"):
            self.measure_sum += rows.sum()
            self.num_rows += rows.shape[0]
        else:
            self.append_state("measures", rows, copy=False)  # computed here: a fresh tensor

    def _fused(self, x: Tensor, y: Tensor) -> bool:
        """Whether the fused kernel added the checked batch (see fused_sums.added)."""
        log_prob = 1.0 if self.log_prob else 0.0
        if self.reduction in ("mean", "sum"):
            return fused_sums.added(self.measure_sum, self.num_rows, None, x, y, self._kind, log_prob)
        rows = torch.empty(x.shape[0], dtype=_F64, device=x.device)
        if not fused_sums.added(None, None, rows, x, y, self._kind, log_prob):
            return False
        self.append_state("measures", rows, copy=False)  # made here: a fresh tensor
        return True

    def compute(self) -> Tensor:
        code = self._input_code()
        if self.reduction in ("mean", "sum"):
            values = reg_compute.scalars(self.measure_sum, self.num_rows)
            if values is not None:
                total = reg_compute.ratio(*values) if self.reduction == "mean" else values[0]
                return reg_compute.scalar_result(total, reg_update.promoted(self.dtype, code))
            total = self.measure_sum / self.num_rows if self.reduction == "mean" else self.measure_sum
            return reg_compute.as_result(total, reg_update.promoted(self.dtype, code))
        return self.measures.to(reg_update.CODE_DTYPES[code] if code else self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_rows")
        self._check_input_dtype(states)


class KLDivergence(Divergence):
    """KL(p || q) of each row of [N, d] distributions, reduced over rows by ``reduction``
    ("mean", "sum", "none" or None: every row's value, in the order seen).

    ``log_prob=False``: p and q hold probabilities (>= 0), each row scaled to sum 1; a zero in
    q where p is positive gives inf. ``log_prob=True``: they hold log-probabilities (finite).

    Differences from torchmetrics: float64; NaN/inf inputs (a -inf log-probability too),
    negative probabilities and rows summing to 0 raise ValueError (torchmetrics: NaN); with
    ``reduction="none"`` and no update, an empty tensor (torchmetrics: ValueError).

        >>> import torch
        >>> from torchtally.regression import KLDivergence
        >>> KLDivergence().update(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1 / 3, 1 / 3, 1 / 3]])).compute()
        tensor(0.0853)
    """
