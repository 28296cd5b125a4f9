"""MetricCollection's compute: every metric's result, with one packed sync of all the states
(a shared state once) when the collection has to sync; the rule for metrics no rank updated.

A mixin of MetricCollection; it works on the collection's metrics through Metric's interface
(``has_data``, ``cached_result``, ``compute_on``, ``state_specs``...).
"""
import contextlib
import warnings
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch

from . import dist
from .errors import NotComputableError
from .metric import Metric
from .metric_guard import caller_copy, locked
from .sync import UNCHANGED, SyncPlan, sync_states


class CollectionCompute:
    def _should_sync(self) -> bool:
        return self.sync_on_compute and dist.needs_sync(self.process_group)

    @locked
    def compute(self) -> Dict[str, Any]:
        """{key: result} for every metric; one packed sync for all of them when needed. The
        results are copies: editing one changes no cached result."""
        return caller_copy(self._renamed(self._compute_by_name()))

    def _compute_by_name(self) -> Dict[str, Any]:
        metrics = self._metrics
        rejected = None
        for name in self._owners:
            rejected = metrics[name].rejected_cuda_update()
            if rejected is not None:
                break
        cached = all(m.cached_result is not None for m in metrics.values())
        if self._should_sync():
            return self._compute_synced(dirty=not cached, rejected=rejected)
        if rejected is not None:
            raise rejected
        if cached:
            return {name: m.cached_result[0] for name, m in metrics.items()}
        not_updated = [n for n in self._owners if not metrics[n].has_data]
        if not_updated:
            self._never_updated(not_updated, "on this rank")
        results = {}
        for name, metric in metrics.items():
            results[name] = metric.compute_on(None)
            if metric.compute_with_cache:
                metric.keep_result(results[name])
        return results

    @locked
    def compute_local(self) -> Dict[str, Any]:
        """{key: compute_local()}: every metric on this rank's state only."""
        return self._renamed({name: metric.compute_local() for name, metric in self._metrics.items()})

    def _compute_synced(self, dirty: bool, rejected: Optional[ValueError] = None) -> Dict[str, Any]:
        plan, owners, slots, unit_of, spans = self._sync_parts()
        synced = sync_states(
            plan,
            [v for m in owners for v in m.state_values()],
            group=self.process_group,
            timeout_s=self.sync_timeout,
            recipient=self.recipient_rank,
            updated=[m.has_data for m in owners],
            merge=self._merge_synced,
            on_header=self._require_updates,
            dirty=dirty,
            local_error=rejected,
        )
        if synced is UNCHANGED:  # nobody has new data: every rank keeps its cached results
            return {name: m.cached_result[0] for name, m in self._metrics.items()}
        # each owner's synced states by name (None on a rank that is not the recipient)
        per_owner = [None if synced is None else dict(zip(names, synced[start:end])) for names, start, end in spans]
        results = {}
        for name, metric in self._metrics.items():
            states = per_owner[unit_of[name]]
            results[name] = result = None if states is None else metric.compute_on(states)
            metric.keep_result(result)
        return results

    def _require_updates(self, updated_anywhere: List[bool]) -> None:
        """The sync's on_header: the rule for metrics no rank updated."""
        never = [self._owners[u] for u, ok in enumerate(updated_anywhere) if not ok]
        if never:
            self._never_updated(never, "on any rank")

    def _merge_synced(self, i: int, values: List[torch.Tensor]) -> torch.Tensor:
        """The sync's merge for plan state i (a "merge" state of one owner)."""
        _, owners, slots, _, _ = self._sync_parts()
        u, state = slots[i]
        return owners[u].merge_state_values(state, values)

    def _sync_plan(self) -> SyncPlan:
        return self._sync_parts()[0]

    def _sync_parts(self) -> Tuple[SyncPlan, List[Metric], List[Tuple[int, str]], Dict[str, int],
                                   List[Tuple[List[str], int, int]]]:
        """The sync plan of the owners' states, the owners (plan units), each plan state's (unit,
        state name), each metric's unit and each owner's (state names, first and end plan
        index); built again only when the metrics or their declarations change, not at every
        sync."""
        key = tuple((id(m), m.declaration_version) for m in self._metrics.values())  # options count too
        if self._plan_parts is None or self._plan_key != key:
            owners = [self._metrics[n] for n in self._owners]
            specs = [s for u, m in enumerate(owners) for s in m.state_specs(f"{self._owners[u]}=", unit=u)]
            options = [(f"metric '{name}' ({type(m).__name__})", m.described_options)
                       for name, m in self._metrics.items()]
            self._plan = SyncPlan(specs, n_units=len(owners), options=options)  # shared by a clone
            self._plan_key = key
            position = {name: u for u, name in enumerate(self._owners)}
            unit_of = {name: position[self._owner_of[name]] for name in self._metrics}
            spans, start = [], 0
            for m in owners:
                names = list(m.state_names)
                spans.append((names, start, start + len(names)))
                start += len(names)
            slots = [(u, state) for u, (names, _, _) in enumerate(spans) for state in names]
            self._plan_parts = (self._plan, owners, slots, unit_of, spans)
        return self._plan_parts

    def _never_updated(self, names: List[str], where: str) -> None:
        message = f"MetricCollection.compute(): metric(s) {names} had no update() {where} since the last reset()"
        if self._if_never_updated == "raise":
            raise NotComputableError(message)
        warnings.warn(message + ": their results are computed over no data.", UserWarning, stacklevel=4)

    @contextlib.contextmanager
    def raising_if_never_updated(self) -> Iterator["CollectionCompute"]:
        """Within this context, compute() raises NotComputableError for metrics no rank updated
        since their reset (ignite's rule), instead of warning (torchmetrics')."""
        d = self.__dict__  # a plain attribute: skip nn.Module's __setattr__ (every step, per-step usages)
        before, d["_if_never_updated"] = d["_if_never_updated"], "raise"
        try:
            yield self
        finally:
            d["_if_never_updated"] = before
