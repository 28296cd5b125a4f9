"""Messages from rank 0 only, as torchmetrics.utilities.prints gives them: ``rank_zero_warn``,
``rank_zero_info``, ``rank_zero_debug``.

The rank is read when the message is sent: torch.distributed's rank when a process group is up,
else the ``LOCAL_RANK`` (then ``RANK``) environment variable, else 0. (torchmetrics reads
``LOCAL_RANK`` once, at import.)
"""

import logging
import os
import warnings
from typing import Any, Callable, Optional, TypeVar

import torch.distributed

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("torchtally")


def current_rank() -> int:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank()
    return int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", 0)))


def rank_zero_only(fn: F) -> F:
    """``fn`` that runs on rank 0 only (returns None elsewhere)."""

    def run(*args: Any, **kwargs: Any) -> Optional[Any]:
        return fn(*args, **kwargs) if current_rank() == 0 else None

    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run  # type: ignore[return-value]


@rank_zero_only
def rank_zero_warn(message: Any, category: Any = None, stacklevel: int = 4, **kwargs: Any) -> None:
    """``warnings.warn`` on rank 0."""
    warnings.warn(message, category, stacklevel=stacklevel, **kwargs)


@rank_zero_only
def rank_zero_info(*args: Any, **kwargs: Any) -> None:
    """``logging.info`` on the "torchtally" logger, on rank 0."""
    log.info(*args, **kwargs)


@rank_zero_only
def rank_zero_debug(*args: Any, **kwargs: Any) -> None:
    """``logging.debug`` on the "torchtally" logger, on rank 0."""
    log.debug(*args, **kwargs)
