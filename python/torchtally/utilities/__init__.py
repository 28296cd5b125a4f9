"""Helpers for writing metrics, under torchmetrics.utilities' names: ``from torchtally.utilities
import dim_zero_cat`` in place of ``from torchmetrics.utilities import dim_zero_cat``.

Submodules as torchmetrics': data (dim_zero_*, one-hot and top-k helpers, apply_to_collection),
distributed (reduce, class_reduce, gather_all_tensors), prints (rank_zero_*), checks
(check_forward_full_state_property), plot (the plot signature's type aliases). A low layer:
imports torch only, so the base and the metrics may use it.
"""

from .checks import check_forward_full_state_property
from .data import apply_to_collection, dim_zero_cat, dim_zero_max, dim_zero_mean, dim_zero_min, dim_zero_sum
from .distributed import class_reduce, reduce
from .prints import rank_zero_debug, rank_zero_info, rank_zero_warn

__all__ = [
    "apply_to_collection",
    "check_forward_full_state_property",
    "class_reduce",
    "dim_zero_cat",
    "dim_zero_max",
    "dim_zero_mean",
    "dim_zero_min",
    "dim_zero_sum",
    "rank_zero_debug",
    "rank_zero_info",
    "rank_zero_warn",
    "reduce",
]
