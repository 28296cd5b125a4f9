"""The keyword arguments every torchmetrics metric accepts, checked as torchmetrics checks them.

torchtally's Metric takes them so that torchmetrics code runs unchanged; what each does here:

  compute_on_cpu            after each update, ``cat`` states (the ones that grow with the data)
                            are moved to the CPU; the result is computed there
  dist_sync_on_step         ``forward`` returns the batch's value synced over all ranks
                            (a collective on every call: every rank must call forward)
  process_group             the group to sync over (None: the world)
  dist_sync_fn              a torchmetrics-style gather ``fn(tensor, group=...) -> [tensor per
                            rank]``; when given, states are synced through it instead of
                            torchtally's packed collectives
  distributed_available_fn  ``fn() -> bool``: whether to sync at all (default: torch.distributed
                            is initialised with more than one rank)
  sync_on_compute           sync on ``compute()`` (default True)
  compute_with_cache        keep the result of ``compute()`` until the next update (default True)
"""
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional


@dataclass
class BaseOptions:
    compute_on_cpu: bool = False
    dist_sync_on_step: bool = False
    dist_sync_fn: Optional[Callable[..., Any]] = None
    distributed_available_fn: Optional[Callable[[], bool]] = None
    compute_with_cache: bool = True

    @classmethod
    def from_kwargs(cls, kwargs: Dict[str, Any]) -> "BaseOptions":
        """Take the torchmetrics options out of ``kwargs``; anything else left is an error
        (ValueError, as torchmetrics raises)."""
        options = cls()
        for name in ("compute_on_cpu", "dist_sync_on_step", "compute_with_cache"):
            if name in kwargs:
                value = kwargs.pop(name)
                if not isinstance(value, bool):
                    raise ValueError(f"Expected keyword argument `{name}` to be a `bool` but got {value!r}")
                setattr(options, name, value)
        for name in ("dist_sync_fn", "distributed_available_fn"):
            value = kwargs.pop(name, None)
            if value is not None and not callable(value):
                raise ValueError(f"Expected keyword argument `{name}` to be a callable function but got {value!r}")
            setattr(options, name, value)
        if kwargs:
            names = ", ".join(f"`{k}`" for k in sorted(kwargs))
            raise ValueError(f"Unexpected keyword arguments: {names}")
        return options


def checked_recipient_rank(recipient_rank: Any) -> Optional[int]:
    """torchtally's ``recipient_rank`` option (Metric's and MetricCollection's): None (the result
    on every rank) or a rank >= 0 of the process group (only that rank gets the result)."""
    if recipient_rank is not None and (not isinstance(recipient_rank, int) or recipient_rank < 0):
        raise ValueError(f"recipient_rank must be None or a rank >= 0, got {recipient_rank!r}")
    return recipient_rank
