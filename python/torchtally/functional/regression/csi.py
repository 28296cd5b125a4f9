"""``critical_success_index`` (torchmetrics.functional.regression.csi's names). hits / (hits +
misses + false alarms) of the elements >= ``threshold`` (0 when none of either is)."""

from typing import Optional

from torch import Tensor

from . import batch_sums as sums

__all__ = ["critical_success_index"]


def critical_success_index(
    preds: Tensor, target: Tensor, threshold: float, keep_sequence_dim: Optional[int] = None
) -> Tensor:
    """hits / (hits + misses + false alarms) of the elements >= ``threshold`` (0 when none of
    either is); per index of dim ``keep_sequence_dim`` when given. float32, as torchmetrics.

    >>> critical_success_index(torch.tensor([[0.2, 0.7], [0.9, 0.3]]), torch.tensor([[0.4, 0.2], [0.8, 0.6]]), 0.5)
    tensor(0.3333)
    """
    threshold = sums.check_threshold(threshold)
    keep_sequence_dim = sums.check_keep_sequence_dim(keep_sequence_dim)
    counts = sums.csi_counts(preds, target, threshold, keep_sequence_dim)
    if keep_sequence_dim is None:
        return sums.csi_from_counts(counts[3], counts[1], counts[2])
    return sums.csi_from_counts(counts[:, 0], counts[:, 1], counts[:, 2])
