"""``CosineSimilarity`` (torchmetrics.regression.cosine_similarity's names). Cosine similarity of
each row of [N, d] preds with the same row of target, reduced."""

from typing import Any, Dict, Optional

import torch
from torch import Tensor

from ..base.state_dict import check_nonnegative
from ..functional.regression import compute as reg_compute
from ..functional.regression import fused_sums
from ..functional.regression import update as reg_update
from ..kernels import regression as error_kinds
from .mse import F64, RegressionMetric

__all__ = ["CosineSimilarity"]


class CosineSimilarity(RegressionMetric):
    """Cosine similarity of each row of [N, d] preds with the same row of target, reduced.

    ``reduction``: "sum" (default, as torchmetrics) or "mean" keep two numbers; "none" (or
    None) keeps every row's similarity (a "cat" state of 8 bytes per row) and returns them all,
    in the order seen (across ranks: rank 0's rows, then rank 1's, ...). A zero row gives NaN.
    Results are float32, as torchmetrics' (``set_dtype`` changes that). Over no rows: a
    ValueError, as torchmetrics. Differences from torchmetrics: computed in float64, from two
    numbers per metric (or one per row for "none") instead of every input row; NaN/inf inputs
    raise ValueError; after updates with 0 rows only, still a ValueError (torchmetrics: 0 for
    "sum", NaN for "mean").

        >>> import torch
        >>> from torchtally.regression import CosineSimilarity
        >>> m = CosineSimilarity(reduction="mean")
        >>> m.update(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])).compute()
        tensor(0.8536)
    """

    higher_is_better = True

    def __init__(self, reduction: Optional[str] = "sum", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reduction = reg_update.check_cosine_reduction(reduction)
        self.set_dtype(torch.float32)  # torchmetrics computes it in float32 whatever the default dtype
        if self.reduction in ("none", None):
            self.add_state("similarities", torch.empty(0, dtype=F64), reduce="cat")
        else:
            self.add_state("similarity_sum", torch.tensor(0.0, dtype=F64), reduce="sum")
            self.add_state("num_rows", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        p, t = reg_update.rows(preds, target, self.device)
        if self.reduction in ("none", None):
            rows = torch.empty(p.shape[0], dtype=F64, device=p.device)
            if fused_sums.added(None, None, rows, p, t, error_kinds.COSINE):
                self.append_state("similarities", rows, copy=False)  # made here: a fresh tensor
                return
        elif fused_sums.added(self.similarity_sum, self.num_rows, None, p, t, error_kinds.COSINE):
            return
        sims = reg_update.cosine_rows(preds, target, self.device)
        if self.reduction in ("none", None):
            self.append_state("similarities", sims, copy=False)  # computed here: a fresh tensor
        else:
            self.similarity_sum += sims.sum()
            self.num_rows += sims.numel()

    def compute(self) -> Tensor:
        if self.reduction in ("none", None):
            sims = self.similarities
            if sims.numel() == 0:
                raise self._no_rows()
            return reg_compute.as_result(sims, self.dtype)
        n = int(self.num_rows)
        if n == 0:
            raise self._no_rows()
        values = reg_compute.scalars(self.similarity_sum)
        if values is not None:
            return reg_compute.scalar_result(values[0] if self.reduction == "sum" else values[0] / n, self.dtype)
        total = self.similarity_sum if self.reduction == "sum" else self.similarity_sum / n
        return reg_compute.as_result(total, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_rows")

    def _no_rows(self) -> ValueError:
        return ValueError("CosineSimilarity: no rows were seen, there is nothing to reduce (No samples to concatenate)")
