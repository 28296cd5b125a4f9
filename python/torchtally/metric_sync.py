"""A metric's compute over every rank: when to sync, the sync plan of its declared states, the
synced states swapped in for one compute, the rule for a metric no rank updated, and
torchmetrics' manual ``sync()`` / ``unsync()`` / ``sync_context()``.

A mixin of Metric (the packing and the collectives are torchtally.sync's).
"""
import contextlib
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch

from . import dist
from .errors import NotComputableError
from .metric_guard import locked
from .sync import UNCHANGED, StateSpec, SyncPlan, sync_states


# The attribute under which Metric's wrapped ``compute`` keeps (itself, the subclass's own
# function), so that compute_on (already under the metric's lock, at every step under a
# per-step sync) calls the function directly instead of going through the wrapper. Only when the
# class's compute is that very wrapper: a user's decorator around an inherited compute
# (functools.wraps copies the attribute) must still run.
SUBCLASS_COMPUTE = "_torchtally_subclass_compute"


class SyncedCompute:
    def _should_sync(self) -> bool:
        if not self.sync_on_compute:
            return False
        available = self.distributed_available_fn
        if available is not None and not available():
            return False
        return dist.needs_sync(self.process_group)

    def compute_on(self, states: Optional[Dict[str, torch.Tensor]],
                   compute: Optional[Callable[[Any], Any]] = None) -> Any:
        """Run the subclass's compute, on ``states`` swapped in for the call when given.
        ``compute``: the function to run instead of the class's compute (Metric's compute wrapper
        passes the function it wraps: a decorator around it has run already)."""
        d = self.__dict__
        chunks = self._cat_chunks
        saved: Dict[str, Any] = {}  # the original objects (cat lists may be shared in a collection)
        d["_computing"] = True
        try:
            if states is not None:
                for name, value in states.items():
                    if name in chunks:
                        saved[name], chunks[name] = chunks[name], [value]
                    else:
                        saved[name], d[name] = d[name], value
            if compute is None:
                compute = type(self).compute
                direct = getattr(compute, SUBCLASS_COMPUTE, None)
                if direct is not None and direct[0] is compute:
                    compute = direct[1]
            return compute(self)
        finally:
            d["_computing"] = False
            for name, old in saved.items():
                if name in chunks:
                    chunks[name] = old
                else:
                    d[name] = old

    def _compute_synced(self, cache: Optional[Tuple[Any]], rejected: Optional[ValueError] = None,
                        compute: Optional[Callable[[Any], Any]] = None) -> Any:
        synced = self._synced_states(dirty=cache is None, rejected=rejected)
        if synced is UNCHANGED:
            return cache[0]  # type: ignore[index]
        if synced is None:
            return None
        return self.compute_on(synced, compute)

    def _synced_states(self, dirty: bool = True, rejected: Optional[ValueError] = None,
                       gather_fn: Optional[Callable[..., Any]] = None, group: Optional[Any] = None) -> Any:
        """Every rank's states combined: {name: tensor}, UNCHANGED (nobody has new data), or None
        on a rank that is not the recipient."""
        names = list(self._specs)
        group = self.process_group if group is None else group
        gather_fn = gather_fn or self.dist_sync_fn
        if gather_fn is not None:
            if rejected is not None:
                raise rejected
            return {n: self.combine_states(n, list(gather_fn(getattr(self, n), group=group))) for n in names}

        def require_update(updated_anywhere: List[bool]) -> None:
            if not updated_anywhere[0]:
                self._never_updated(local=False)

        synced = sync_states(
            self._sync_plan(),
            self.state_values(),
            group=group,
            timeout_s=self.sync_timeout,
            recipient=self.recipient_rank,
            updated=[self._updated],
            merge=lambda i, values: self.merge_state_values(names[i], values),
            on_header=require_update,
            dirty=dirty,
            local_error=rejected,
        )
        if synced is UNCHANGED or synced is None:
            return synced
        return dict(zip(names, synced))

    def state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]:
        specs = []
        for name, (reduce, default) in self._specs.items():
            shape = tuple(default.shape[1:]) if reduce in ("cat", "merge") else tuple(default.shape)
            label = f"{label_prefix}{type(self).__name__}.{name}"
            specs.append(StateSpec(label, reduce, default.dtype, shape, unit))
        return specs

    def _sync_plan(self) -> SyncPlan:
        if self._plan is None:
            options = [(type(self).__name__, self.described_options)]
            self.__dict__["_plan"] = SyncPlan(self.state_specs(), n_units=1, options=options)
        return self._plan

    def _never_updated(self, local: bool) -> None:
        """compute() with no update (on this rank, or on any rank): torchmetrics warns and
        computes over the empty state; the ignite-style API raises NotComputableError."""
        where = "on this rank" if local else "on any rank"
        if self.__dict__["_if_never_updated"] == "raise":
            raise NotComputableError(
                f"{type(self).__name__}.compute() needs at least one update() {where} since the last reset(); "
                "none was made"
            )
        warnings.warn(
            f"The ``compute`` method of metric {type(self).__name__} was called before the ``update`` method "
            f"({where}): the result is computed over no data.",
            UserWarning,
            stacklevel=4,
        )

    @contextlib.contextmanager
    def raising_if_never_updated(self) -> Iterator["SyncedCompute"]:
        """Within this context, compute() raises NotComputableError when no rank updated the
        metric since its reset (ignite's rule), instead of warning (torchmetrics')."""
        d = self.__dict__
        before, d["_if_never_updated"] = d["_if_never_updated"], "raise"
        try:
            yield self
        finally:
            d["_if_never_updated"] = before

    # -- torchmetrics' manual sync ------------------------------------------------------

    @locked
    def sync(self, dist_sync_fn: Optional[Callable[..., Any]] = None, process_group: Optional[Any] = None,
             should_sync: bool = True, distributed_available: Optional[Callable[[], bool]] = None) -> None:
        """Replace the local states with every rank's combined states until ``unsync()``."""
        d = self.__dict__
        if d["_local_while_synced"] is not None and should_sync:
            raise RuntimeError("The Metric has already been synced.")
        available = distributed_available or self.distributed_available_fn
        group = self.process_group if process_group is None else process_group
        is_distributed = available() if callable(available) else dist.needs_sync(group)
        if not should_sync or not is_distributed:
            return
        synced = self._synced_states(gather_fn=dist_sync_fn, group=group)
        d["_local_while_synced"] = self.hold_states()
        if synced is not None:
            self._set_states(synced)

    @locked
    def unsync(self, should_unsync: bool = True) -> None:
        """Put back the local states that ``sync()`` replaced."""
        if not should_unsync:
            return
        held = self.__dict__["_local_while_synced"]
        if held is None:
            raise RuntimeError("The Metric has already been un-synced.")
        self.restore_states(held)
        self.__dict__["_local_while_synced"] = None

    @contextlib.contextmanager
    def sync_context(self, dist_sync_fn: Optional[Callable[..., Any]] = None, process_group: Optional[Any] = None,
                     should_sync: bool = True, should_unsync: bool = True,
                     distributed_available: Optional[Callable[[], bool]] = None) -> Iterator[None]:
        self.sync(dist_sync_fn, process_group, should_sync, distributed_available)
        try:
            yield
        finally:
            self.unsync(should_unsync=self.__dict__["_local_while_synced"] is not None and should_unsync)

