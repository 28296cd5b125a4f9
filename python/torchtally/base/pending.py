"""Pending blocks of a "merge" state: an update that has checked its batch may keep it unfolded,
and the state is folded (by the metric's ``fold_pending_blocks``) when it is next read.

Why: folding a small batch into a merge state (e.g. a sparse table of counts) costs a
kernel call and a new tensor per update, several times what keeping the checked batch costs;
folding many such batches at once costs about one call. The blocks are the metric's own tensors
(copies, never the caller's), kept only for a bounded number of updates (the metric settles
them when it has kept enough), so the state stays the declared merge state for everything else.

A base of States (so a mixin of Metric). Where it lives: ``_pending`` (in ``__dict__``): state
name -> (its value before the blocks, the list of blocks). While a state has pending blocks its
name is absent from ``__dict__``, so reading ``self.<name>`` reaches ``States.__getattr__``,
which folds them (under the metric's lock). Every base method that reads states straight from
``__dict__`` calls ``settle_states()`` first (hold, checkpoint, share with a collection, combine
for forward, compute on swapped-in states, device moves), and every one that replaces states
drops the blocks it replaces (``drop_pending``): no path sees a state without its blocks, nor
blocks on a state they were not added to. Deepcopy and pickle copy the pending blocks with the
rest of ``__dict__``.

Only updates outside deferred device checks may keep blocks (on the CPU): a deferring update
compares the states before and after it.
"""

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple

import torch

# state name -> (the value before the blocks, the blocks)
Pending = Dict[str, Tuple[torch.Tensor, List[Any]]]


class PendingStates:
    """Base of States: merge states with checked blocks kept for a later fold (module docstring)."""

    if TYPE_CHECKING:
        _specs: Dict[str, Tuple[str, torch.Tensor]]

    def pend_state(self, name: str, block: Any) -> int:
        """Keep ``block`` (what the running update checked; the metric's own tensors, sharing no
        memory with the caller's) for "merge" state ``name``, folded by
        ``fold_pending_blocks(name, value, blocks)`` at the next read. Returns how many blocks
        are now pending for ``name``: the metric calls ``settle_states()`` when that is enough."""
        d = self.__dict__
        pending: Pending = d.setdefault("_pending", {})  # also a metric unpickled from before this key
        entry = pending.get(name)
        if entry is None:
            if self._specs.get(name, ("",))[0] != "merge":
                raise ValueError(f"pend_state: '{name}' is not a 'merge' state of {type(self).__name__}")
            entry = pending[name] = (d.pop(name), [])
        entry[1].append(block)
        return len(entry[1])

    def fold_pending_blocks(self, name: str, value: torch.Tensor, blocks: List[Any]) -> torch.Tensor:
        """Merge state ``name``'s ``value`` with the ``blocks`` kept by ``pend_state`` (in their
        order): the state as if each block's update had folded it at once. When blocks are
        folded depends on when the state is read, so the result must not depend on how the
        blocks are grouped into folds (an exact merge: integer counts, a sorted table; not a
        float merge whose rounding follows the grouping). A metric that calls ``pend_state``
        must override this."""
        raise NotImplementedError(
            f"{type(self).__name__} keeps pending blocks of '{name}' but does not implement "
            "fold_pending_blocks(name, value, blocks)"
        )

    def settle_states(self) -> None:
        """Fold every state's pending blocks into it now (nothing to do when none are pending)."""
        d = self.__dict__
        pending: Optional[Pending] = d.get("_pending")
        if not pending:
            return
        for name in list(pending):
            value, blocks = pending[name]
            folded = self.fold_pending_blocks(name, value, blocks)
            del pending[name]  # only once folded: a fold that raises leaves the blocks pending
            d[name] = folded

    def drop_pending(self, names: Optional[Iterable[str]] = None) -> None:
        """Forget the pending blocks of the states ``names`` (None: all), which the caller is
        replacing with values held from before those blocks came."""
        pending: Optional[Pending] = self.__dict__.get("_pending")
        if not pending:
            return
        if names is None:
            pending.clear()
            return
        for name in names:
            pending.pop(name, None)
