"""Helpers to check metrics across real processes: run_distributed and count_collectives.

>>> from torchtally.testing import run_distributed
>>> def check(rank, world_size, scale):          # must be importable (module level)
...     return rank * scale
>>> run_distributed(check, 2, 10)                # doctest: +SKIP
[0, 10]
"""

import contextlib
import datetime
import functools
import multiprocessing
import multiprocessing.connection
import os
import pickle
import socket
import time
import traceback
from typing import Any, Callable, Dict, Iterator, List, Optional

import torch
import torch.distributed


def run_distributed(
    fn: Callable[..., Any],
    world_size: int,
    *args: Any,
    backend: str = "gloo",
    timeout: float = 120.0,
    return_exceptions: bool = False,
    failure_grace: float = 5.0,
    **kwargs: Any,
) -> List[Any]:
    """Run ``fn(rank, world_size, *args, **kwargs)`` on ``world_size`` fresh processes.

    Each process is started with the "spawn" method, joins a ``backend`` process group on
    loopback (a free TCP port) and runs ``fn``; so ``fn`` and its arguments must be picklable
    (``fn`` defined at module level of an importable module). Returns the per-rank results in
    rank order (results must be picklable; tensors are sent by value).

    If a rank raises, the exception is re-raised here with "rank <r>" and that rank's traceback
    in its message (same exception type where it can be rebuilt, with a ``rank`` attribute);
    when several ranks fail, the lowest failing rank is raised and every other rank's outcome
    is listed. After the first failure the other ranks get ``failure_grace`` seconds to finish
    (their own errors, or a SyncError from a sync the failed rank abandoned) before they are
    killed.

    ``return_exceptions=True`` waits for every rank (up to ``timeout``) and raises nothing for
    a rank's failure: the list holds, per rank, its result or what ended it: the exception it
    raised (unchanged message, with ``rank`` and ``remote_traceback`` attributes), a
    ``RankDied`` for a process that exited without a result, a ``TimeoutError`` for a rank
    still running at the deadline (then killed).

    Nothing hangs: after ``timeout`` seconds in all, the processes are killed; without
    ``return_exceptions`` a TimeoutError names the ranks that had not finished. Processes use
    one intra-op thread each.
    """
    if not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
    if not failure_grace >= 0:
        raise ValueError(f"failure_grace must be >= 0 seconds, got {failure_grace!r}")
    ctx = multiprocessing.get_context("spawn")
    port = _free_port()
    deadline = time.monotonic() + timeout
    grace = None if return_exceptions else failure_grace
    procs, conns = [], []
    try:
        for rank in range(world_size):
            receiver, sender = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=_child,
                args=(fn, rank, world_size, port, backend, timeout, args, kwargs, sender),
                daemon=True,
                name=f"torchtally-rank{rank}",
            )
            proc.start()
            sender.close()
            procs.append(proc)
            conns.append(receiver)
        outcomes = _collect(procs, conns, deadline, grace)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        for proc in procs:
            proc.join(timeout=10)
        for conn in conns:
            conn.close()
    if return_exceptions:
        return [_outcome_value(rank, outcomes.get(rank), timeout) for rank in range(world_size)]
    failed = sorted(r for r, o in outcomes.items() if o[0] != "ok")
    unfinished = [r for r in range(world_size) if r not in outcomes]
    if failed:
        _raise_rank_error(failed, outcomes, unfinished)
    if unfinished:
        raise TimeoutError(f"run_distributed: rank(s) {unfinished} did not finish within {timeout:g}s")
    return [outcomes[r][1] for r in range(world_size)]


class RankDied(RuntimeError):
    """A rank's process exited without reporting a result (killed, os._exit, a crash).

    Attributes: ``rank``, ``exitcode`` (negative: the signal that ended it)."""

    def __init__(self, rank: int, exitcode: Optional[int]) -> None:
        super().__init__(f"rank {rank} exited with code {exitcode} without a result")
        self.rank = rank
        self.exitcode = exitcode


def _collect(procs, conns, deadline: float, grace: Optional[float]) -> Dict[int, tuple]:
    """Read each rank's outcome from its pipe; a rank that dies closes its pipe (EOF). With a
    ``grace``, the deadline moves to ``grace`` seconds after the first failure."""
    outcomes: Dict[int, tuple] = {}
    waiting = {conn: rank for rank, conn in enumerate(conns)}
    failed_once = False
    while waiting:
        now = time.monotonic()
        if now >= deadline:
            break
        for conn in multiprocessing.connection.wait(list(waiting), timeout=deadline - now):
            rank = waiting.pop(conn)
            try:
                outcomes[rank] = pickle.loads(conn.recv_bytes())  # type: ignore[union-attr]  # a Connection we gave
            except EOFError:
                procs[rank].join(timeout=5)
                outcomes[rank] = ("died", procs[rank].exitcode, "")
            if outcomes[rank][0] != "ok" and not failed_once and grace is not None:
                failed_once = True
                deadline = min(deadline, time.monotonic() + grace)
    return outcomes


def _outcome_value(rank: int, outcome: Optional[tuple], timeout: float) -> Any:
    if outcome is None:
        err = TimeoutError(f"rank {rank} did not finish within {timeout:g}s")
        err.rank = rank  # type: ignore[attr-defined]
        return err
    kind, payload, remote_tb = outcome
    if kind == "ok":
        return payload
    if kind == "died":
        return RankDied(rank, payload)
    exc = payload if isinstance(payload, BaseException) else RuntimeError(str(payload))
    with contextlib.suppress(Exception):
        exc.rank = rank  # type: ignore[attr-defined]
        exc.remote_traceback = remote_tb  # type: ignore[attr-defined]
    return exc


def _describe_outcome(rank: int, outcome: tuple) -> str:
    kind, payload, _ = outcome
    if kind == "ok":
        return f"rank {rank}: finished"
    if kind == "died":
        return f"rank {rank}: exited with code {payload} without a result"
    return f"rank {rank}: {type(payload).__name__}: {payload}"


def _raise_rank_error(failed: List[int], outcomes: Dict[int, tuple], unfinished: List[int]) -> None:
    rank = failed[0]
    kind, payload, remote_tb = outcomes[rank]
    others = [_describe_outcome(r, outcomes[r]) for r in failed[1:]]
    if unfinished:
        others.append(f"ranks {unfinished} did not finish")
    if len(failed) > 1:
        others.insert(0, f"ranks {failed[1:]} failed too")
    note = f" ({'; '.join(others)})" if others else ""
    if kind == "died":
        died = RankDied(rank, payload)
        died.args = (f"run_distributed: {died}{note}",)
        raise died
    exc = payload if isinstance(payload, BaseException) else RuntimeError(str(payload))
    message = f"rank {rank}: {type(exc).__name__}: {exc}{note}\n--- traceback on rank {rank} ---\n{remote_tb}"
    try:
        err = type(exc)(message)
    except Exception:
        err = RuntimeError(message)
    for key, value in getattr(exc, "__dict__", {}).items():
        with contextlib.suppress(Exception):
            setattr(err, key, value)
    err.rank = rank  # type: ignore[attr-defined]
    raise err from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(fn, rank, world_size, port, backend, timeout, args, kwargs, conn) -> None:
    torch.set_num_threads(1)
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world_size),
    )
    try:
        torch.distributed.init_process_group(
            backend,
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=timeout),
        )
        outcome: tuple = ("ok", fn(rank, world_size, *args, **kwargs), "")
    except BaseException as exc:  # report everything, including SystemExit/KeyboardInterrupt
        outcome = ("err", exc, traceback.format_exc())
    try:
        data = pickle.dumps(outcome)
    except Exception as exc:
        data = pickle.dumps(("err", RuntimeError(f"result could not be pickled: {exc!r}; {outcome[1]!r}"), outcome[2]))
    conn.send_bytes(data)
    conn.close()
    _finish(world_size)
    # Skip interpreter teardown: a process group left with a timed-out collective can block it.
    os._exit(0)


def _finish(world_size: int) -> None:
    """Wait (briefly, through the store, not gloo) until every rank is done, so that no rank
    closes its sockets while a peer still reads from them."""
    store: Any = getattr(torch.distributed.distributed_c10d, "_get_default_store", lambda: None)
    with contextlib.suppress(Exception):
        store = store()
        if store.add("torchtally/run_distributed/done", 1) == world_size:
            store.set("torchtally/run_distributed/all_done", "1")
        else:
            store.wait(["torchtally/run_distributed/all_done"], datetime.timedelta(seconds=30))


# -- counting collectives ----------------------------------------------------------------

# Calls that move data between ranks. Composite helpers (all_gather_object, ...) are not
# counted themselves: the primitives they call are.
_PRIMITIVES = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "_all_gather_base",
    "reduce",
    "gather",
    "scatter",
    "broadcast",
    "barrier",
    "monitored_barrier",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "all_reduce_coalesced",
    "all_gather_coalesced",
    "send",
    "recv",
    "isend",
    "irecv",
)


class CollectiveCounter:
    """Counts torch.distributed collective calls made inside ``count_collectives()``."""

    def __init__(self) -> None:
        self.by_name: Dict[str, int] = {}
        self._depth = 0

    @property
    def total(self) -> int:
        return sum(self.by_name.values())

    def reset(self) -> None:
        self.by_name.clear()

    def __repr__(self) -> str:
        return f"CollectiveCounter(total={self.total}, by_name={self.by_name})"


@contextlib.contextmanager
def count_collectives() -> Iterator[CollectiveCounter]:
    """Count collectives by wrapping torch.distributed's functions (both the package names and
    the distributed_c10d module globals they are defined in, so calls made from inside torch's
    own helpers are seen too). A primitive that calls another primitive counts once.

        >>> with count_collectives() as counter:           # doctest: +SKIP
        ...     metric.compute()
        >>> counter.total, counter.by_name                  # doctest: +SKIP
        (2, {'all_gather_single': 1, 'all_reduce': 1})
    """
    counter = CollectiveCounter()
    c10d = torch.distributed.distributed_c10d
    modules = (torch.distributed, c10d)
    saved = []
    for name in _PRIMITIVES:
        original = getattr(c10d, name, None) or getattr(torch.distributed, name, None)
        if original is None:
            continue
        wrapped = _counting(original, name, counter)
        for module in modules:
            if getattr(module, name, None) is original:
                saved.append((module, name, original))
                setattr(module, name, wrapped)
    try:
        yield counter
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def _counting(original: Callable, name: str, counter: CollectiveCounter) -> Callable:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if counter._depth == 0:
            counter.by_name[name] = counter.by_name.get(name, 0) + 1
        counter._depth += 1
        try:
            return original(*args, **kwargs)
        finally:
            counter._depth -= 1

    return wrapper
