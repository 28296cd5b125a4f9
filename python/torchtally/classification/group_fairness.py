"""BinaryGroupStatRates and BinaryFairness (demographic parity, equal opportunity): binary
predictions compared across groups of samples.

State: ``group_stats`` int64 [num_groups, 4] = (tp, fp, tn, fn) per group, "sum" (16 x 2 bytes
per group, whatever the number of samples). ``update(preds, target, groups)``: preds and target
[N, ...] as the binary stat-score metrics read them, groups [N] integer ids in [0, num_groups).
Metrics with the same num_groups, threshold and ignore_index (and that read the targets) share
the state in a MetricCollection. Results and their keys: functional/classification/group_fairness.py.

Differences from torchmetrics:

* each sample is counted for its own group id; torchmetrics adds a batch's groups in the order
  they appear in it (the batch's lowest id into group 0, ...), so a batch that lacks a group
  shifts the others' counts into the wrong rows;
* a group id outside [0, num_groups), a non-integer ``groups`` or one not of one id per sample
  raises ValueError / TypeError naming ``groups``; bad preds or target raise as in the binary
  stat-score metrics, even with validate_args=False;
* compute warns when a group has no samples (or, for equal opportunity, no positive target):
  its rate counts as 0 (torchmetrics' rule), which then decides the reported ratio;
* ``num_groups`` must be an int >= 1 (torchmetrics' check lets anything through).
"""

import warnings
from typing import Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.classification import group_fairness as fair
from ..functional.classification import update as clf_update

__all__ = ["BinaryGroupStatRates", "BinaryFairness"]


class _GroupStatState(Metric):
    is_differentiable = False
    traceable_update = False  # the group ids are range-checked in Python: eager inside torch.compile
    higher_is_better: Optional[bool] = False
    full_state_update = False
    plot_lower_bound: Optional[float] = 0.0
    plot_upper_bound: Optional[float] = 1.0
    fresh_compute_results = True  # compute makes its own tensors

    def _declare(self, num_groups: int, threshold: float, ignore_index: Optional[int], reads_target: bool) -> None:
        self.num_groups = fair.check_num_groups(num_groups)
        self.threshold = clf_update.check_threshold(threshold)
        self.ignore_index = clf_update.check_ignore_index(ignore_index)
        self._reads_target = reads_target
        self.state_key = (
            "torchtally.binary_group_stats",
            self.num_groups,
            self.threshold,
            self.ignore_index,
            reads_target,
        )
        self.add_state("group_stats", torch.zeros(self.num_groups, 4, dtype=torch.int64), reduce="sum")

    def _add(self, preds: Tensor, target: Optional[Tensor], groups: Tensor) -> None:
        counts = fair.group_counts(preds, target, groups, self.num_groups, self.threshold, self.ignore_index)
        self.group_stats += counts

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """Counts >= 0, as every update leaves them (see Metric)."""
        super().check_state_invariants(states)
        check_nonnegative(states, *states)


class BinaryGroupStatRates(_GroupStatState):
    """Per group, the shares of true positives, false positives, true negatives and false
    negatives among its counted elements: ``{"group_0": tensor([tp, fp, tn, fn]) / total, ...}``
    (float32; NaN for a group without elements, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import BinaryGroupStatRates
    >>> preds, target = torch.tensor([0.9, 0.2, 0.7, 0.1]), torch.tensor([1, 0, 0, 0])
    >>> groups = torch.tensor([0, 0, 1, 1])
    >>> BinaryGroupStatRates(num_groups=2).update(preds, target, groups).compute()
    {'group_0': tensor([0.5000, 0.0000, 0.5000, 0.0000]), 'group_1': tensor([0.0000, 0.5000, 0.5000, 0.0000])}
    """

    def __init__(
        self,
        num_groups: int,
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._declare(num_groups, threshold, ignore_index, True)
        self.validate_args = bool(validate_args)

    def update(self, preds: Tensor, target: Tensor, groups: Tensor) -> None:
        """preds, target [N, ...] (binary); groups [N] integer ids in [0, num_groups)."""
        if target is None:
            raise TypeError("target: expected a torch.Tensor, got NoneType")
        self._add(preds, target, groups)

    def compute(self) -> Dict[str, Tensor]:
        return fair.group_stat_rates(self.group_stats)


class BinaryFairness(_GroupStatState):
    """Demographic parity (``{"DP_<lo>_<hi>": lowest / highest positive rate}``), equal
    opportunity (``{"EO_<lo>_<hi>": lowest / highest true positive rate}``) or both (task "all")
    across the groups; lo and hi are the group ids. With ``task="demographic_parity"`` the target
    is not read (pass None; a tensor given is ignored with torchmetrics' warning).

    >>> import torch
    >>> from torchtally.classification import BinaryFairness
    >>> preds, target = torch.tensor([0.9, 0.8, 0.7, 0.1]), torch.tensor([1, 0, 1, 1])
    >>> groups = torch.tensor([0, 0, 1, 1])
    >>> BinaryFairness(num_groups=2).update(preds, target, groups).compute()
    {'DP_1_0': tensor(0.5000), 'EO_1_0': tensor(0.5000)}
    """

    def __init__(
        self,
        num_groups: int,
        task: str = "all",
        threshold: float = 0.5,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.task = fair.check_fairness_task(task)
        self._declare(num_groups, threshold, ignore_index, self.task != "demographic_parity")
        self.validate_args = bool(validate_args)

    def update(self, preds: Tensor, target: Optional[Tensor], groups: Tensor) -> None:
        """preds, target [N, ...] (binary; target None for demographic parity); groups [N] ids."""
        if not self._reads_target:
            if target is not None:
                warnings.warn("The task demographic_parity does not require a target.", UserWarning, stacklevel=2)
            target = None
        elif target is None:
            raise TypeError(f"target: expected a torch.Tensor, got NoneType (task {self.task!r} needs the targets)")
        self._add(preds, target, groups)

    def compute(self) -> Dict[str, Tensor]:
        fair.warn_empty_groups(self.group_stats, self.task, type(self).__name__)
        return fair.fairness(self.group_stats, self.task)
