"""MutualInfoScore, and the base of every label-comparing clustering metric: a sparse
contingency table of int64 counts.

State (every label metric of this family: MutualInfoScore, NormalizedMutualInfoScore,
AdjustedMutualInfoScore, RandScore, AdjustedRandScore, FowlkesMallowsIndex, HomogeneityScore,
CompletenessScore, VMeasureScore):

    contingency  int64 [K, 3], "merge": one row (pred label, target label, count) per distinct
                 pair of labels seen, sorted, counts >= 1 (torchtally.functional.clustering.utils).
                 24 bytes per distinct pair, whatever the number of samples (torchmetrics keeps
                 every preds and target value: 16 bytes per sample, gathered at each sync).
                 Sync: the ranks' rows travel in the collection's one padded all_gather of
                 int64 cat/merge states; rows with equal keys are added after it.

A batch of at most 256 samples (CPU) waits as a [2, N] int64 copy of its checked labels and is
counted into the table together with the others (one kernel call) when the table is next read
(base/pending.py), or once 64 batches wait: 16 bytes per waiting sample, at most 256 KiB.

The table is shared (``state_key``) by all these metrics in one MetricCollection: one update per
batch, one slot in the sync. Labels are integers of any value (no number of classes); results
are scikit-learn's values, in ``self.dtype``.

Differences from torchmetrics, common to these classes:

* floating-point or complex labels, or preds and target of different shapes, raise TypeError /
  ValueError naming the argument, with the state unchanged (torchmetrics keeps them and fails
  at compute);
* values are scikit-learn's where torchmetrics' differ: see each class;
* compute before any update warns and gives the value of no samples (scikit-learn's), where
  torchmetrics fails to concatenate its empty lists.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.clustering.utils import (
    check_cluster_labels,
    check_table,
    fold_contingency,
    merge_contingency,
    mutual_info_from_table,
)

__all__ = ["MutualInfoScore", "ContingencyMetric"]

# Updates of at most PENDING_SAMPLES samples keep their labels pending, up to PENDING_BLOCKS
# batches (16 bytes per sample, at most 256 KiB per metric), where one fold per update would cost
# several times the update itself; larger batches are folded at once.
PENDING_SAMPLES = 256
PENDING_BLOCKS = 64


class ContingencyMetric(Metric):
    """Base of the label-comparing clustering metrics: the contingency table (module docstring).
    ``update(preds, target)``: 1-D integer labels of equal length."""

    is_differentiable = False
    traceable_update = False  # torch.unique's output size depends on the data
    full_state_update = False
    fresh_compute_results = True
    state_key = "torchtally.clustering_contingency"

    if TYPE_CHECKING:
        contingency: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("contingency", torch.zeros(0, 3, dtype=torch.int64), reduce="merge")

    def update(self, preds: Tensor, target: Tensor) -> None:
        """preds, target: [N] integer cluster labels (any values)."""
        p, t = check_cluster_labels(preds, target)
        if p.is_cpu and p.shape[0] <= PENDING_SAMPLES:
            # A small batch waits as a [2, N] copy and is counted in with the others at the next
            # read of the table (base/pending.py): one kernel call for many batches.
            if self.pend_state("contingency", torch.stack((p, t))) >= PENDING_BLOCKS:
                self.settle_states()
        else:
            self.contingency = fold_contingency(self.contingency, p, t)

    def fold_pending_blocks(self, name: str, value: Tensor, blocks: List[Tensor]) -> Tensor:
        """The table ``value`` with the pending [2, N] label pairs counted in (one kernel call)."""
        pairs = blocks[0] if len(blocks) == 1 else torch.cat(blocks, dim=1)
        return fold_contingency(value, pairs[0], pairs[1])

    def merge_state_values(self, name: str, values: List[Tensor]) -> Tensor:
        """Tables of several ranks or metrics: counts of equal (pred, target) keys added."""
        return merge_contingency(values)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Counts >= 1, keys distinct and sorted (see Metric)."""
        super().check_state_invariants(states)
        check_table("contingency", states["contingency"])

    def _result(self, value: float) -> Tensor:
        return torch.tensor(value, dtype=torch.float64).to(device=self.contingency.device, dtype=self.dtype)


class MutualInfoScore(ContingencyMetric):
    """Mutual information (natural log) between the clusterings ``preds`` and ``target``;
    scikit-learn's mutual_info_score (0 when either side has one cluster; terms below float64's
    eps dropped and the sum clipped at 0, where torchmetrics may give a tiny negative value).
    State and differences: see torchtally.clustering.mutual_info_score.

    >>> import torch
    >>> from torchtally.clustering import MutualInfoScore
    >>> MutualInfoScore().update(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1])).compute()
    tensor(1.0549)
    """

    higher_is_better: Optional[bool] = True
    plot_lower_bound: Optional[float] = 0.0

    def compute(self) -> Tensor:
        return self._result(mutual_info_from_table(self.contingency))
