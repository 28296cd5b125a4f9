"""Exceptions raised by torchtally's metric layer.

Each derives from the exception ignite or torchmetrics raises in its place (RuntimeError, or
ValueError for InputTypeError), so code written against them that catches that keeps working.
"""

import os
import sys
from types import FrameType
from typing import Any, Callable, Dict, List, Optional, Tuple


class NotComputableError(RuntimeError):
    """compute() was called on a metric that no rank has updated since its last reset."""


class ShapeError(ValueError, RuntimeError):
    """An input of the wrong shape (preds and target that differ, ...): a ValueError
    (torchtally's rule for bad input) and a RuntimeError (what torchmetrics raises there)."""


class InputTypeError(TypeError, ValueError):
    """An input of the wrong type where torchmetrics raises ValueError for it (a list where the
    IoU family expects a tensor of boxes, ...): a TypeError (torchtally's rule for a wrong type)
    and a ValueError, so code that catches torchmetrics' exception keeps working."""


class MissingMethodError(TypeError, NotImplementedError):
    """An input object without a method the metric calls (a generator without ``sample``): a
    TypeError (torchtally's rule for bad input) and a NotImplementedError (torchmetrics')."""


class MissingAttributeError(TypeError, AttributeError):
    """An input object without an attribute the metric reads (a conditional generator without
    ``num_classes``): a TypeError and an AttributeError (torchmetrics')."""


class SyncError(RuntimeError):
    """A cross-rank sync failed: the ranks disagree on what to sync, or a rank did not answer.

    Attributes:
        missing_ranks: global ranks lost to the sync (did not reach it, or were lost inside
            it), when they could be determined (None when they could not, empty when every
            rank reached it and none was lost).
        lost_at: global rank -> where and how that rank was lost, e.g. "did not reach this sync
            (its process is gone: ...)" or "was lost in the data collectives (no answer: ...)";
            None when not determined.
        stage: where this rank's sync failed ("header", "all_reduce", ...); None when the sync
            failed on a check rather than on a collective.
        sync_id: the per-process-group sequence number of the failed sync (None before one
            was started).
    """

    def __init__(
        self,
        message: str,
        *,
        missing_ranks: Optional[List[int]] = None,
        sync_id: Optional[int] = None,
        lost_at: Optional[Dict[int, str]] = None,
        stage: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.missing_ranks = missing_ranks
        self.sync_id = sync_id
        self.lost_at = lost_at
        self.stage = stage

    def __reduce__(self) -> Tuple[Callable[..., "SyncError"], Tuple[Any, ...]]:
        # Keep the keyword-only attributes when the error crosses a process boundary.
        return (_rebuild_sync_error, (str(self), self.missing_ranks, self.sync_id, self.lost_at, self.stage))


def _rebuild_sync_error(
    message: str,
    missing_ranks: Optional[List[int]],
    sync_id: Optional[int],
    lost_at: Optional[Dict[int, str]] = None,
    stage: Optional[str] = None,
) -> SyncError:
    return SyncError(message, missing_ranks=missing_ranks, sync_id=sync_id, lost_at=lost_at, stage=stage)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def stacklevel_outside_torchtally() -> int:
    """The stacklevel, for a warning raised by the caller of this function, of the first frame
    outside torchtally: the user's line, however deep inside the package the warning arose."""
    frame: Optional[FrameType] = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
