"""The "nccl" sync backend: a sync's packed all_reduce and all_gather on NCCL, on a stream of
their own, for metric state that lives on the GPU.

``enable(group)`` makes an NCCL communicator over the ranks of a torch.distributed group and
registers it with the sync engine (torchtally.sync.transport.register_transport): from then on every sync
over that group sends its data collectives through it, while the small header exchange, the
agreement checks and the failure reports stay on torch.distributed. The process group itself
can be gloo: only the metric data needs NCCL. The collectives run on the communicator's own
CUDA stream, ordered after the work already queued on torch's current stream, so a metric sync
neither waits for nor delays the training's own NCCL traffic.

NCCL is loaded at run time by torchtally._nccl (csrc/nccl/loader.c), never linked: the path in
TORCHTALLY_NCCL_PATH if set, else "libnccl.so.2" (after ``import torch`` on a CUDA build, the
copy torch loaded), else the nvidia-nccl wheel's copy. A wait that exceeds the sync timeout
aborts the communicator (ncclCommAbort) and raises; the sync engine turns that into a
SyncError that names the ranks that did not reach the sync. Two ranks on one GPU need NCCL
2.30.3 or newer with NCCL_MULTI_RANK_GPU_ENABLE=1; otherwise ``enable`` refuses, on every rank.

Setup never hangs with NCCL >= 2.14: the communicator is made non-blocking
(ncclCommInitRankConfig, blocking = 0) and ``enable`` polls ncclCommGetAsyncError until it is
ready; past the setup timeout it aborts the communicator and raises TimeoutError (a rank that
died or never called ``enable``). On a non-blocking communicator a collective may return
ncclInProgress while NCCL is still enqueueing it; the launch then waits (same polling, same
timeout) before it orders anything after the collective. With an NCCL older than 2.14 (no
ncclCommInitRankConfig) setup uses the blocking ncclCommInitRank, which can block forever if a
rank never joins; NCCL_COMM_BLOCKING=1 in the environment makes NCCL keep the communicator
blocking too (the setup then returns only when every rank has joined).

Example (every rank, after torch.distributed.init_process_group):

    >>> import torchtally.nccl
    >>> comm = torchtally.nccl.enable()            # doctest: +SKIP
    >>> accuracy.compute()                         # its sync now moves data over NCCL  # doctest: +SKIP
    >>> torchtally.nccl.disable()                  # doctest: +SKIP
"""

import datetime
import hashlib
import os
import socket
import sys
import time
from types import ModuleType
from typing import Any, Callable, List, Optional, Tuple

import torch
import torch.distributed

from . import dist
from .transport import register_transport, unregister_transport

ENV_PATH = "TORCHTALLY_NCCL_PATH"
UNIQUE_ID_BYTES = 128
DEVICE_KEY_BYTES = 16
MULTI_RANK_GPU_VERSION = (2, 30, 3)

# ncclDataType_t and ncclRedOp_t codes (NCCL's nccl.h)
_DTYPE_CODES = {
    torch.int8: 0,
    torch.uint8: 1,
    torch.bool: 1,
    torch.int32: 2,
    torch.int64: 4,
    torch.float16: 6,
    torch.float32: 7,
    torch.float64: 8,
    torch.bfloat16: 9,
}
_NCCL_SUM, _NCCL_PROD, _NCCL_MAX, _NCCL_MIN = 0, 1, 2, 3
_RESULT_IN_PROGRESS = 7


class NcclUnavailable(RuntimeError):
    """NCCL, a GPU or torch.distributed is missing, so the nccl backend cannot be used."""


def _module() -> ModuleType:
    try:
        from .. import _nccl
    except ImportError as exc:  # pragma: no cover - built by every `make build`
        raise NcclUnavailable(f"torchtally._nccl is not built ({exc}); run `make build`") from exc
    return _nccl


def library_candidates() -> List[str]:
    """Where load() looks for NCCL, in order: TORCHTALLY_NCCL_PATH alone when it is set, else the
    soname (the copy torch loaded, or the loader's search path), then nvidia-nccl wheels."""
    explicit = os.environ.get(ENV_PATH)
    if explicit:
        return [explicit]
    candidates = ["libnccl.so.2"]
    for base in sys.path:
        path = os.path.join(base or ".", "nvidia", "nccl", "lib", "libnccl.so.2")
        if os.path.isfile(path) and path not in candidates:
            candidates.append(path)
    return candidates


def load(path: Optional[str] = None) -> Tuple[int, int, int]:
    """Load NCCL (once; again only for another path) and return its version (major, minor, patch).

    Raises NcclUnavailable naming every place tried and why each failed (not found, or not an
    NCCL: a required symbol is missing).
    """
    nccl = _module()
    tried = []
    for candidate in [path] if path else library_candidates():
        try:
            return tuple(nccl.version_parts(nccl.load(candidate)))
        except OSError as exc:
            tried.append(str(exc))
    hint = "" if path or os.environ.get(ENV_PATH) else f" Set {ENV_PATH} to the path of libnccl.so.2."
    raise NcclUnavailable("torchtally: NCCL is unavailable: " + "; ".join(tried) + "." + hint)


def dtype_code(dtype: torch.dtype) -> int:
    """ncclDataType_t of a torch dtype (complex travels as its real pairs)."""
    code = _DTYPE_CODES.get(dtype)
    if code is None:
        raise TypeError(f"the nccl backend cannot carry {dtype}; expected one of {sorted(map(str, _DTYPE_CODES))}")
    return code


def op_code(op: Any) -> int:
    """ncclRedOp_t of a torch.distributed.ReduceOp (SUM, PRODUCT, MAX, MIN)."""
    ReduceOp = torch.distributed.ReduceOp
    for torch_op, code in (
        (ReduceOp.SUM, _NCCL_SUM),
        (ReduceOp.PRODUCT, _NCCL_PROD),
        (ReduceOp.MAX, _NCCL_MAX),
        (ReduceOp.MIN, _NCCL_MIN),
    ):
        if op == torch_op:
            return code
    raise ValueError(f"the nccl backend reduces by SUM, PRODUCT, MAX or MIN, got {op}")


def _as_real(t: torch.Tensor) -> torch.Tensor:
    return torch.view_as_real(t) if t.is_complex() else t


def _cuda_device(device: Optional[Any], bound: Optional[torch.device] = None) -> torch.device:
    """`device` as an indexed CUDA device; None: the device the group is bound to, else the
    current one."""
    d = (bound or torch.device("cuda")) if device is None else torch.device(device)
    if d.type != "cuda":
        raise ValueError(f"device: the nccl backend needs a CUDA device, got {d}")
    return torch.device("cuda", d.index if d.index is not None else torch.cuda.current_device())


def _version_at_least(version: Tuple[int, int, int], wanted: Tuple[int, int, int]) -> bool:
    return tuple(version) >= wanted


def wait_until_ready(
    nccl: Any,
    comm: int,
    deadline: float,
    what: str,
    *,
    timeout_s: float,
    done: Optional[Callable[[], bool]] = None,
    abort: Optional[Callable[[str], None]] = None,
    blame: str = "",
) -> None:
    """Poll NCCL until ``what`` on communicator ``comm`` is finished: ncclCommGetAsyncError
    (``nccl.comm_async_error``) no longer says ncclInProgress and ``done()`` (if given) is true.

    ``deadline`` is a time.monotonic() value; ``timeout_s`` is only for the message. Past the
    deadline the communicator is aborted and TimeoutError is raised ("<what> did not complete
    within <timeout_s>s; the communicator was aborted (<blame>)"); when NCCL reports an error the
    communicator is aborted and NcclError is raised with NCCL's text. ``abort(reason)`` defaults
    to ``nccl.comm_abort(comm)``. No CUDA calls of its own: ``done`` brings any.

        >>> wait_until_ready(_nccl, comm, time.monotonic() + 60, "NCCL setup", timeout_s=60)  # doctest: +SKIP
    """

    def give_up(reason: str) -> None:
        if abort is not None:
            abort(reason)
        else:
            nccl.comm_abort(comm)

    delay = 1e-5
    while True:
        try:
            code = nccl.comm_async_error(comm)  # None: this NCCL cannot tell (< 2.4)
        except nccl.NcclError as exc:
            give_up(f"ncclCommGetAsyncError failed during {what}: {exc}")
            raise
        if code not in (None, 0, _RESULT_IN_PROGRESS):
            text = f"{nccl.error_string(code)} (ncclResult_t {code})"
            give_up(f"NCCL reported an error during {what}: {text}")
            raise nccl.NcclError(f"torchtally nccl: {what} failed: {text}; the communicator was aborted")
        if code != _RESULT_IN_PROGRESS and (done is None or done()):
            return
        if time.monotonic() >= deadline:
            give_up(f"{what} did not complete within {timeout_s:g}s")
            why = f" ({blame})" if blame else ""
            raise TimeoutError(
                f"torchtally nccl: {what} did not complete within {timeout_s:g}s; the communicator was aborted{why}"
            )
        time.sleep(delay)
        delay = min(2 * delay, 1e-3)


def nonblocking_init_available() -> bool:
    """Whether the loaded NCCL makes non-blocking communicators (ncclCommInitRankConfig, NCCL >=
    2.14), so that setup cannot hang. Loads NCCL first if needed."""
    nccl = _module()
    if nccl.loaded_path() is None:
        load()
    return bool(nccl.has_nonblocking_init())


def init_communicator(nccl: Any, nranks: int, unique_id: bytes, rank: int, deadline: float, *, timeout_s: float) -> int:
    """Make this rank's communicator (on the current CUDA device) and return it once it is ready.

    Non-blocking where the library can (NCCL >= 2.14): ncclCommInitRankConfig returns at once and
    wait_until_ready polls until setup is done; past ``deadline`` the communicator is aborted and
    TimeoutError says that the other ranks probably did not reach ``enable()``. Without
    ncclCommInitRankConfig the blocking ncclCommInitRank is used: it returns only when every rank
    has joined (it can block forever if one never does; ``deadline`` cannot help there).
    """
    if not nccl.has_nonblocking_init():
        return nccl.comm_init_rank(nranks, unique_id, rank)
    comm, _ = nccl.comm_init_rank_nonblocking(nranks, unique_id, rank)  # 0, or 7: in progress
    wait_until_ready(
        nccl,
        comm,
        deadline,
        f"NCCL communicator setup (rank {rank} of {nranks})",
        timeout_s=timeout_s,
        blame="the other ranks probably did not reach torchtally.nccl.enable(), or one died",
    )
    return comm


class NcclWork:
    """One collective in flight on the communicator's stream; ``wait`` as torch's Work.wait."""

    def __init__(self, comm: "NcclCommunicator", what: str) -> None:
        self.comm = comm
        self.what = what
        self.event = torch.cuda.Event()
        self.event.record(comm.stream)

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        """Block until the collective is done, then order torch's current stream after it.

        Polls the event and NCCL's asynchronous error state (wait_until_ready); past ``timeout``
        (default: the communicator's) the communicator is aborted and TimeoutError is raised.
        """
        seconds = timeout.total_seconds() if timeout is not None else self.comm.timeout_s
        if not self.event.query():
            comm = self.comm.handle()
            wait_until_ready(
                self.comm._nccl,
                comm,
                time.monotonic() + seconds,
                self.what,
                timeout_s=seconds,
                done=self.event.query,
                abort=self.comm.abort,
                blame="a rank that did not join the collective holds it",
            )
        torch.cuda.current_stream(self.comm.device).wait_event(self.event)
        return True

    def is_completed(self) -> bool:
        return bool(self.event.query())


class NcclCommunicator:
    """An NCCL communicator over the ranks of a torch.distributed group, with its own stream.

    It is a sync transport (see torchtally.sync.transport): ``device``, ``all_reduce`` and
    ``all_gather_flat`` with torch.distributed's calling convention. Made by ``enable``; every
    rank of the group must make it together (a collective). Setup raises TimeoutError after
    ``timeout_s`` if another rank never joins, where NCCL >= 2.14 allows a non-blocking
    communicator (``nonblocking``); with an older NCCL it blocks until every rank has joined.

        >>> comm = torchtally.nccl.enable()                    # doctest: +SKIP
        >>> buf = torch.ones(8, device=comm.device)           # doctest: +SKIP
        >>> comm.all_reduce(buf).wait()                        # doctest: +SKIP
        >>> buf[0].item() == comm.size                         # doctest: +SKIP
        True
    """

    def __init__(
        self,
        group: Optional[Any] = None,
        *,
        device: Optional[Any] = None,
        timeout_s: float = dist.DEFAULT_SYNC_TIMEOUT_S,
    ) -> None:
        if not torch.cuda.is_available():
            raise NcclUnavailable("the nccl sync backend needs a CUDA device; torch.cuda.is_available() is False")
        if not dist.initialized():
            raise NcclUnavailable("the nccl sync backend needs torch.distributed.init_process_group() first")
        self.version = load()
        self._nccl = _module()
        self.group = group
        self.timeout_s = float(timeout_s)
        info = dist.group_info(group)
        self.rank, self.size = info.rank, info.size
        self.device = _cuda_device(device, info.bound_device)
        self.comm: Optional[int] = None
        self._broken: Optional[str] = None
        self.nonblocking = bool(self._nccl.has_nonblocking_init())
        deadline = time.monotonic() + self.timeout_s  # for the whole setup: id exchange and init
        self._poll = info.nccl_only  # dist.wait: never NCCL's wait(timeout) on the user's group
        unique_id = self._exchange_setup(self.device if info.nccl_only else info.device_for(), deadline)
        with torch.cuda.device(self.device):
            self.stream = torch.cuda.Stream(self.device)
            self.comm = init_communicator(
                self._nccl, self.size, unique_id, self.rank, deadline, timeout_s=self.timeout_s
            )

    def _exchange_setup(self, header_device: torch.device, deadline: float) -> bytes:
        """One all_gather over the group: rank 0's ncclUniqueId, and every rank's GPU (to refuse
        two ranks on one GPU where NCCL cannot share it, on every rank alike)."""
        mine = self._nccl.unique_id() if self.rank == 0 else bytes(UNIQUE_ID_BYTES)
        props = torch.cuda.get_device_properties(self.device)
        gpu = f"{socket.gethostname()}/{getattr(props, 'uuid', self.device.index)}"
        key = hashlib.blake2b(gpu.encode(), digest_size=DEVICE_KEY_BYTES).digest()
        row = torch.tensor(list(mine + key), dtype=torch.uint8, device=header_device)
        table = torch.empty(self.size * row.numel(), dtype=torch.uint8, device=header_device)
        gather = getattr(torch.distributed, "all_gather_single", None) or torch.distributed.all_gather_into_tensor
        work = gather(table, row, group=self.group, async_op=True)
        dist.wait(work, deadline, poll=self._poll)
        rows = table.view(self.size, -1).cpu()
        keys = [bytes(r[UNIQUE_ID_BYTES:].tolist()) for r in rows]
        if len(set(keys)) < len(keys):
            shared = os.environ.get("NCCL_MULTI_RANK_GPU_ENABLE") == "1"
            if not (shared and _version_at_least(self.version, MULTI_RANK_GPU_VERSION)):
                raise NcclUnavailable(
                    f"two ranks of this group use one GPU; NCCL {'.'.join(map(str, self.version))} allows that only "
                    f"from 2.30.3 on with NCCL_MULTI_RANK_GPU_ENABLE=1 (set: {shared}); use one GPU per rank"
                )
        return bytes(rows[0, :UNIQUE_ID_BYTES].tolist())

    # -- state ----------------------------------------------------------------------------

    def error(self) -> RuntimeError:
        return self._nccl.NcclError(
            f"torchtally nccl communicator (rank {self.rank} of {self.size}) was aborted: "
            f"{self._broken}; call torchtally.nccl.enable() again on every rank"
        )

    def _usable(self, *tensors: torch.Tensor) -> None:
        if self._broken is not None:
            raise self.error()
        if self.comm is None:
            raise RuntimeError("torchtally nccl communicator is closed")
        for t in tensors:
            if t.device != self.device or not t.is_contiguous():
                raise ValueError(
                    f"the nccl backend needs contiguous tensors on {self.device}, got {t.device}, "
                    f"strides {tuple(t.stride())}"
                )

    def handle(self) -> int:
        """The live ncclComm_t; raises the abort's NcclError (or RuntimeError once closed)."""
        if self._broken is not None:
            raise self.error()
        if self.comm is None:
            raise RuntimeError("torchtally nccl communicator is closed")
        return self.comm

    def async_error(self) -> Optional[str]:
        """NCCL's description of an asynchronous failure of this communicator, or None."""
        if self.comm is None:
            return None
        code = self._nccl.comm_async_error(self.comm)
        if code is None or code in (0, _RESULT_IN_PROGRESS):
            return None
        return f"{self._nccl.error_string(code)} (ncclResult_t {code})"

    def abort(self, reason: str) -> None:
        """ncclCommAbort: frees the communicator and ends its pending work; it is unusable after."""
        if self.comm is not None and self._broken is None:
            self._broken = reason
            comm, self.comm = self.comm, None
            self._nccl.comm_abort(comm)

    def close(self) -> None:
        """ncclCommDestroy (waits for pending work); a no-op after abort or close."""
        if self.comm is not None:
            comm, self.comm = self.comm, None
            self._nccl.comm_destroy(comm)

    # -- the transport --------------------------------------------------------------------

    def _launch(self) -> int:
        self.stream.wait_stream(torch.cuda.current_stream(self.device))  # buffers are written there
        return self.stream.cuda_stream

    def _enqueued(self, result: int, what: str) -> NcclWork:
        """The work of a launched collective. On a non-blocking communicator NCCL may still be
        enqueueing it (ncclInProgress): until it has, neither another NCCL call nor an event on
        the stream is valid, so wait (same polling and timeout as any wait) before recording."""
        if result == _RESULT_IN_PROGRESS:
            wait_until_ready(
                self._nccl,
                self.handle(),
                time.monotonic() + self.timeout_s,
                f"enqueue of {what}",
                timeout_s=self.timeout_s,
                abort=self.abort,
                blame="a rank that did not join the collective holds it",
            )
        return NcclWork(self, what)

    def all_reduce(
        self, buf: torch.Tensor, op: Any = torch.distributed.ReduceOp.SUM, group: Any = None, async_op: bool = True
    ) -> NcclWork:
        """In-place all_reduce of ``buf`` over the communicator's ranks."""
        self._usable(buf)
        flat = _as_real(buf)
        code, reduce = dtype_code(flat.dtype), op_code(op)
        if buf.is_complex() and reduce != _NCCL_SUM:
            raise ValueError("the nccl backend reduces complex tensors only by SUM")
        stream = self._launch()
        result = 0
        if flat.numel():
            result = self._nccl.all_reduce(
                self.comm, flat.data_ptr(), flat.data_ptr(), flat.numel(), code, reduce, stream
            )
        buf.record_stream(self.stream)
        return self._enqueued(result, f"all_reduce of {buf.numel()} {str(buf.dtype)[6:]}")

    def all_gather_flat(
        self, out: torch.Tensor, inp: torch.Tensor, group: Any = None, async_op: bool = True
    ) -> NcclWork:
        """``out`` = every rank's ``inp``, concatenated in rank order."""
        self._usable(out, inp)
        if out.dtype != inp.dtype or out.numel() != inp.numel() * self.size:
            raise ValueError(
                f"all_gather_flat: out must hold {self.size} x {inp.numel()} {inp.dtype}, got {out.numel()} {out.dtype}"
            )
        src, dst = _as_real(inp), _as_real(out)
        stream = self._launch()
        result = 0
        if src.numel():
            result = self._nccl.all_gather(
                self.comm, src.data_ptr(), dst.data_ptr(), src.numel(), dtype_code(src.dtype), stream
            )
        inp.record_stream(self.stream)
        out.record_stream(self.stream)
        return self._enqueued(result, f"all_gather of {inp.numel()} {str(inp.dtype)[6:]} per rank")


def enable(
    group: Optional[Any] = None, *, device: Optional[Any] = None, timeout: Optional[dist.TimeoutLike] = None
) -> NcclCommunicator:
    """Carry the data collectives of every sync over ``group`` (default: the world) on NCCL.

    Every rank of the group must call it (it makes one communicator together). ``device``: this
    rank's GPU (default: the current CUDA device). ``timeout``: how long setup may wait for the
    other ranks (seconds or timedelta; default as for syncs): past it the half-made communicator
    is aborted and TimeoutError is raised, with NCCL >= 2.14; with an older NCCL the final
    ncclCommInitRank blocks until every rank has joined (see nonblocking_init_available()).
    Replaces (and closes) a backend the group had. Raises NcclUnavailable without a GPU, without
    NCCL, or with two ranks on one GPU where NCCL cannot share it; NcclError when NCCL fails.
    """
    comm = NcclCommunicator(group, device=device, timeout_s=dist.timeout_seconds(timeout))
    disable(group)
    register_transport(group, comm)
    return comm


def disable(group: Optional[Any] = None) -> None:
    """Give ``group``'s syncs back to torch.distributed and close its NCCL communicator, if any."""
    previous = unregister_transport(group) if dist.initialized() else None
    if isinstance(previous, NcclCommunicator):
        previous.close()
