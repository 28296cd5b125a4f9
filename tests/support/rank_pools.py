"""Distributed checks on kept processes: ``run_on_ranks(fn, world_size, *args, timeout=...)``
returns or raises as torchtally.testing.run_distributed does, on a RankPool kept for the rest of
the test session (one pool per world size and backend, per pytest-xdist worker).

Starting a rank costs seconds (each process imports torch and what the checks import), and the
metric tests make dozens of distributed checks. A run that fails closes its pool (RankPool's
rule), and the next run starts a fresh one. Checks that need fresh processes (a rank that dies,
a sync that times out, a process group's first sync, environment read at import) call
run_distributed instead."""

import atexit
from typing import Any, Callable, Dict, List, Tuple

from torchtally.testing import RankPool

_POOLS: Dict[Tuple[int, str], RankPool] = {}


def run_on_ranks(
    fn: Callable[..., Any], world_size: int, *args: Any, backend: str = "gloo", timeout: float = 120.0, **kwargs: Any
) -> List[Any]:
    pool = _POOLS.get((world_size, backend))
    if pool is None or pool.closed:
        pool = _POOLS[world_size, backend] = RankPool(world_size, backend=backend)
    return pool.run(fn, *args, timeout=timeout, **kwargs)


@atexit.register
def _close_pools() -> None:
    for pool in _POOLS.values():
        pool.close()
    _POOLS.clear()
