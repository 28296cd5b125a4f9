"""``CriticalSuccessIndex`` (torchmetrics.regression.csi's names). hits / (hits + misses + false
alarms) of the elements >= ``threshold`` in preds (forecast) and target (observed)."""

from typing import Any, Dict, Optional

import torch
from torch import Tensor

from ..base.state_dict import check_nonnegative
from ..functional.regression import batch_sums as sums
from ..functional.regression import compute as reg_compute
from .kl_divergence import RegressionMetric

__all__ = ["CriticalSuccessIndex"]


class CriticalSuccessIndex(RegressionMetric):
    """hits / (hits + misses + false alarms) of the elements >= ``threshold`` in preds (forecast)
    and target (observed); 0 when neither ever reaches it, as torchmetrics. float32 results, as
    torchmetrics' (``set_dtype`` changes that).

    ``keep_sequence_dim=k``: one value per index of dim k of every batch, in the order seen
    (torchmetrics' list state; here a "cat" state of three int64 counts per index).

    Differences from torchmetrics: NaN/inf inputs raise ValueError (a NaN is never >= the
    threshold: torchmetrics counts it as below); with ``keep_sequence_dim`` and no update, an
    empty tensor (torchmetrics: "No samples to concatenate").

        >>> import torch
        >>> from torchtally.regression import CriticalSuccessIndex
        >>> preds, target = torch.tensor([[0.2, 0.7], [0.9, 0.3]]), torch.tensor([[0.4, 0.2], [0.8, 0.6]])
        >>> CriticalSuccessIndex(0.5).update(preds, target).compute()
        tensor(0.3333)
        >>> CriticalSuccessIndex(0.5, keep_sequence_dim=0).update(preds, target).compute()
        tensor([0.0000, 0.5000])
    """

    higher_is_better = True

    def __init__(self, threshold: float, keep_sequence_dim: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.threshold = sums.check_threshold(threshold)
        self.keep_sequence_dim = sums.check_keep_sequence_dim(keep_sequence_dim)
        self.set_dtype(torch.float32)  # torchmetrics' result is float32 whatever the default dtype
        if self.keep_sequence_dim is None:  # (neither, misses, false alarms, hits)
            self.add_state("counts", torch.zeros(4, dtype=torch.int64), reduce="sum")
        else:  # (hits, misses, false alarms) per index
            self.add_state("sequence_counts", torch.empty(0, 3, dtype=torch.int64), reduce="cat")

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.keep_sequence_dim is None and sums.csi_counts_added(
            self.counts, preds, target, self.threshold, self.device
        ):
            return
        counts = sums.csi_counts(preds, target, self.threshold, self.keep_sequence_dim, self.device)
        if self.keep_sequence_dim is None:
            self.counts += counts
        else:
            self.append_state("sequence_counts", counts, copy=False)

    def compute(self) -> Tensor:
        if self.keep_sequence_dim is None:
            c = self.counts
            return reg_compute.as_result(sums.csi_from_counts(c[3], c[1], c[2]), self.dtype)
        c = self.sequence_counts
        return self.in_result_dtype(sums.csi_from_counts(c[:, 0], c[:, 1], c[:, 2]))

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "counts", "sequence_counts")
