"""Helpers to check metrics across real processes: run_distributed, RankPool (the same on
processes kept for many runs) and count_collectives.

>>> from torchtally.testing import run_distributed
>>> def check(rank, world_size, scale):          # must be importable (module level)
...     return rank * scale
>>> run_distributed(check, 2, 10)                # doctest: +SKIP
[0, 10]
"""

import contextlib
import datetime
import functools
import importlib
import multiprocessing
import multiprocessing.connection
import os
import pickle
import socket
import time
import traceback
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

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
    one intra-op thread each. Starting the processes costs seconds (each imports torch): for
    many checks in a row, a ``RankPool`` keeps them.
    """
    if not failure_grace >= 0:  # before any process starts
        raise ValueError(f"failure_grace must be >= 0 seconds, got {failure_grace!r}")
    # fn's module is imported before the group exists, as unpickling fn at spawn would.
    module = getattr(fn, "__module__", None)
    imports = () if module in (None, "__main__") else (module,)
    with RankPool(world_size, backend=backend, timeout=timeout, imports=imports) as pool:
        return pool.run(
            fn, *args, timeout=timeout, return_exceptions=return_exceptions, failure_grace=failure_grace, **kwargs
        )


class RankPool:
    """``world_size`` processes joined in one ``backend`` process group, kept for many runs.

    ``pool.run(fn, *args, **kwargs)`` runs ``fn(rank, world_size, *args, **kwargs)`` on every
    rank and returns or raises exactly as ``run_distributed`` does, without starting new
    processes: a test suite with many distributed checks pays the start (seconds per process)
    once. ``timeout`` here is the process group's (gloo's) timeout; each run has its own.

    A run that fails, times out or loses a rank closes the pool (its processes are killed: a
    rank may be stuck in a collective its peer abandoned), and ``closed`` turns true; a run on a
    closed pool raises RuntimeError. What a run leaves in a process (imported modules, globals,
    torch settings other than the one intra-op thread, which every run gets) is seen by later
    runs: checks that need fresh processes use ``run_distributed``.

    ``imports`` names modules each process imports before it joins the group, for a library
    that behaves differently when imported inside an initialised group (Avalanche refuses to
    build its loggers on a non-main rank); ``run_distributed`` imports ``fn``'s module so.

        >>> with RankPool(2) as pool:                      # doctest: +SKIP
        ...     pool.run(check, 10), pool.run(check, 20)
        ([0, 10], [0, 20])
    """

    def __init__(
        self, world_size: int, backend: str = "gloo", timeout: float = 300.0, imports: Sequence[str] = ()
    ) -> None:
        if not isinstance(world_size, int) or world_size < 1:
            raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
        self.world_size = world_size
        ctx = multiprocessing.get_context("spawn")
        port = _free_port()
        self._procs: List[Any] = []
        self._conns: List[Any] = []
        try:
            for rank in range(world_size):
                here, there = ctx.Pipe(duplex=True)
                proc = ctx.Process(
                    target=_rank_loop,
                    args=(rank, world_size, port, backend, timeout, tuple(imports), there),
                    daemon=True,
                    name=f"torchtally-rank{rank}",
                )
                proc.start()
                there.close()
                self._procs.append(proc)
                self._conns.append(here)
        except BaseException:
            self._kill()
            raise

    @property
    def closed(self) -> bool:
        return not self._procs

    def run(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float = 120.0,
        return_exceptions: bool = False,
        failure_grace: float = 5.0,
        **kwargs: Any,
    ) -> List[Any]:
        """``fn`` on every rank; results, errors and ``timeout`` as in ``run_distributed``."""
        if not failure_grace >= 0:
            raise ValueError(f"failure_grace must be >= 0 seconds, got {failure_grace!r}")
        if self.closed:
            raise RuntimeError("RankPool.run: the pool is closed (an earlier run failed, or close() was called)")
        deadline = time.monotonic() + timeout
        job = pickle.dumps((fn, args, kwargs))
        try:
            for conn in self._conns:
                conn.send_bytes(job)
            outcomes = _collect(self._procs, self._conns, deadline, None if return_exceptions else failure_grace)
        except BaseException:
            self._kill()
            raise
        world_size = self.world_size
        if len(outcomes) < world_size or any(o[0] != "ok" for o in outcomes.values()):
            self._kill()
        if return_exceptions:
            return [_outcome_value(rank, outcomes.get(rank), timeout) for rank in range(world_size)]
        failed = sorted(r for r, o in outcomes.items() if o[0] != "ok")
        unfinished = [r for r in range(world_size) if r not in outcomes]
        if failed:
            _raise_rank_error(failed, outcomes, unfinished)
        if unfinished:
            raise TimeoutError(f"run_distributed: rank(s) {unfinished} did not finish within {timeout:g}s")
        return [outcomes[r][1] for r in range(world_size)]

    def close(self) -> None:
        """Stop the processes (each leaves the group once all have finished; killed after 10 s)."""
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send_bytes(_STOP)
        for proc in self._procs:
            proc.join(timeout=10)
        self._kill()

    def __enter__(self) -> "RankPool":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _kill(self) -> None:
        for proc in self._procs:
            if proc.is_alive():
                proc.kill()
        for proc in self._procs:
            proc.join(timeout=10)
        for conn in self._conns:
            conn.close()
        self._procs, self._conns = [], []


_STOP = b"stop"


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


def _rank_loop(rank, world_size, port, backend, timeout, imports, conn) -> None:
    """A pool's process: import ``imports``, join the group, then run each job that arrives
    until told to stop."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world_size),
    )
    joined: Optional[tuple] = None
    try:
        for module in imports:
            importlib.import_module(module)
        torch.distributed.init_process_group(
            backend,
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=timeout),
        )
    except BaseException as exc:
        joined = ("err", exc, traceback.format_exc())  # every job gets this error
    while True:
        try:
            job = conn.recv_bytes()
        except (EOFError, OSError):
            break
        if job == _STOP:
            break
        torch.set_num_threads(1)
        outcome = joined
        if outcome is None:
            try:
                fn, args, kwargs = pickle.loads(job)
                outcome = ("ok", fn(rank, world_size, *args, **kwargs), "")
            except BaseException as exc:  # report everything, including SystemExit/KeyboardInterrupt
                outcome = ("err", exc, traceback.format_exc())
        try:
            data = pickle.dumps(outcome)
        except Exception as exc:
            data = pickle.dumps(
                ("err", RuntimeError(f"result could not be pickled: {exc!r}; {outcome[1]!r}"), outcome[2])
            )
        conn.send_bytes(data)
    conn.close()
    if joined is None:
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
