"""Exceptions raised by torchtally's metric layer.

Both derive from RuntimeError so code written against ignite or torchmetrics that catches
RuntimeError keeps working.
"""
from typing import List, Optional


class NotComputableError(RuntimeError):
    """compute() was called on a metric that no rank has updated since its last reset."""


class SyncError(RuntimeError):
    """A cross-rank sync failed: the ranks disagree on what to sync, or a rank did not answer.

    Attributes:
        missing_ranks: global ranks that did not reach the sync in time, when they could be
            determined (None when they could not, empty when every rank reached it).
        sync_id: the per-process-group sequence number of the failed sync (None before one
            was started).
    """

    def __init__(
        self,
        message: str,
        *,
        missing_ranks: Optional[List[int]] = None,
        sync_id: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.missing_ranks = missing_ranks
        self.sync_id = sync_id

    def __reduce__(self):
        # Keep the keyword-only attributes when the error crosses a process boundary.
        return (_rebuild_sync_error, (str(self), self.missing_ranks, self.sync_id))


def _rebuild_sync_error(message: str, missing_ranks, sync_id) -> SyncError:
    return SyncError(message, missing_ranks=missing_ranks, sync_id=sync_id)
