"""Communicator setup that cannot hang, on the CPU, through the fake NCCL (fake_nccl.py).

NCCL >= 2.14: the communicator is made non-blocking (ncclCommInitRankConfig, blocking = 0, a 2.14
ncclConfig_t) and polled with ncclCommGetAsyncError until ready; a communicator that stays in
progress (a peer that died) is aborted at the deadline with TimeoutError, an asynchronous error
aborts it with NcclError. Collectives on such a communicator may return ncclInProgress and must
be waited for before the completion event is recorded. Without ncclCommInitRankConfig (NCCL <
2.14) the blocking ncclCommInitRank is used. Checked at the torchtally._nccl level and at the
Python helpers (wait_until_ready, init_communicator), which need no CUDA.
"""

import time

import pytest
import torch
from fake_nccl import compile_fake, hooks, release_leftovers

import torchtally.sync.nccl as nccl_backend
from torchtally import _nccl

IN_PROGRESS = 7
FOREVER = -1
SHORT_S = 0.2  # the small timeout of the "dead peer" tests
NO_HANG_S = 30.0  # far above SHORT_S: only says the wait ended at all


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fake_nccl_nonblocking")
    return {
        "new": compile_fake(folder, "libfake_nccl_new.so"),
        "pre214": compile_fake(folder, "libfake_nccl_pre214.so", version=21305, omit_init_config=True),
    }


@pytest.fixture(autouse=True)
def nothing_loaded(fakes):
    _nccl.unload()
    yield
    for path in fakes.values():
        release_leftovers(_nccl, path)
    _nccl.unload()


def load(path):
    """Loads the fake through _nccl and returns its hooks, with the script and records reset."""
    _nccl.load(str(path))
    fake = hooks(path)
    fake.fake_reset()
    return fake


def deadline(seconds=SHORT_S):
    return time.monotonic() + seconds


# ---- torchtally._nccl -------------------------------------------------------------------------


def test_nonblocking_init_passes_a_2_14_config(fakes):
    fake = load(fakes["new"])
    assert _nccl.has_nonblocking_init() is True
    comm, result = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    assert result == 0 and fake.fake_alive() == 1
    assert fake.fake_config_calls() == 1 and fake.fake_init_calls() == 0  # not ncclCommInitRank
    assert fake.fake_seen_blocking() == 0
    assert fake.fake_seen_magic() == 0xCAFEBEEF
    assert fake.fake_seen_size() == 24  # size_t, two unsigned, int: ncclConfig_v21400 with its padding
    assert fake.fake_seen_version() == 21400  # NCCL_VERSION(2, 14, 0)
    assert _nccl.comm_async_error(comm) == 0
    _nccl.comm_destroy(comm)
    assert fake.fake_alive() == 0


def test_nonblocking_init_in_progress_is_not_an_error(fakes):
    fake = load(fakes["new"])
    fake.fake_script(3, 0, 0)  # three polls in progress, then ready
    comm, result = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    assert result == IN_PROGRESS and fake.fake_alive() == 1
    assert [_nccl.comm_async_error(comm) for _ in range(4)] == [IN_PROGRESS] * 3 + [0]
    _nccl.comm_abort(comm)
    assert fake.fake_last_aborted() == comm and fake.fake_alive() == 0


def test_collective_in_progress_returns_7(fakes):
    fake = load(fakes["new"])
    fake.fake_script(0, 2, 0)  # setup ready at once, each collective enqueues over two polls
    comm, _ = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    send = torch.arange(4, dtype=torch.float32)
    recv = torch.zeros(4, dtype=torch.float32)
    assert _nccl.all_reduce(comm, send.data_ptr(), recv.data_ptr(), 4, 7, 0, None) == IN_PROGRESS
    assert torch.equal(recv, 2 * send)
    # NCCL's rule, which the fake enforces: no next call while in progress
    with pytest.raises(_nccl.NcclError, match="invalid usage"):
        _nccl.all_reduce(comm, send.data_ptr(), recv.data_ptr(), 4, 7, 0, None)
    assert fake.fake_misuses() == 1
    assert [_nccl.comm_async_error(comm) for _ in range(3)] == [IN_PROGRESS, IN_PROGRESS, 0]
    small = torch.tensor([1, 2], dtype=torch.uint8)
    out = torch.zeros(4, dtype=torch.uint8)
    assert _nccl.all_gather(comm, small.data_ptr(), out.data_ptr(), 2, 1, None) == IN_PROGRESS
    assert out.tolist() == [1, 2, 1, 2]
    _nccl.comm_abort(comm)


def test_blocking_communicator_collectives_return_0(fakes):
    fake = load(fakes["new"])
    fake.fake_script(0, 2, 0)  # only non-blocking communicators may be in progress
    comm = _nccl.comm_init_rank(1, _nccl.unique_id(), 0)
    send = torch.ones(3, dtype=torch.float32)
    recv = torch.zeros(3, dtype=torch.float32)
    assert _nccl.all_reduce(comm, send.data_ptr(), recv.data_ptr(), 3, 7, 0, None) == 0
    _nccl.comm_destroy(comm)


def test_nonblocking_init_error_at_the_call(fakes):
    fake = load(fakes["new"])
    with pytest.raises(
        _nccl.NcclError, match=r"ncclCommInitRankConfig failed: fake: invalid argument \(ncclResult_t 4\)"
    ):
        _nccl.comm_init_rank_nonblocking(1, bytes(128), 0)  # not an id from unique_id()
    assert fake.fake_alive() == 0
    with pytest.raises(ValueError, match="rank"):
        _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 1)
    with pytest.raises(TypeError, match="comm_init_rank_nonblocking"):
        _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id())


def test_library_before_2_14_has_no_nonblocking_init(fakes):
    load(fakes["pre214"])
    assert _nccl.has_nonblocking_init() is False
    with pytest.raises(RuntimeError, match="lacks ncclCommInitRankConfig"):
        _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)


# ---- the Python helpers -----------------------------------------------------------------------


def test_wait_until_ready_returns_when_ready(fakes):
    fake = load(fakes["new"])
    fake.fake_script(5, 0, 0)
    comm, result = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    assert result == IN_PROGRESS
    nccl_backend.wait_until_ready(_nccl, comm, deadline(NO_HANG_S), "setup", timeout_s=NO_HANG_S)
    assert fake.fake_polls() == 6 and fake.fake_abort_calls() == 0  # five in progress, one ready
    assert _nccl.comm_async_error(comm) == 0
    _nccl.comm_destroy(comm)


def test_wait_until_ready_times_out_and_aborts(fakes):
    fake = load(fakes["new"])
    fake.fake_script(FOREVER, 0, 0)  # a peer that never comes
    comm, result = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    assert result == IN_PROGRESS
    start = time.monotonic()
    with pytest.raises(
        TimeoutError,
        match=r"torchtally nccl: the setup did not complete within 0\.2s; the "
        r"communicator was aborted \(nobody came\)",
    ):
        nccl_backend.wait_until_ready(_nccl, comm, deadline(), "the setup", timeout_s=SHORT_S, blame="nobody came")
    waited = time.monotonic() - start
    assert SHORT_S <= waited < NO_HANG_S
    assert fake.fake_abort_calls() == 1 and fake.fake_last_aborted() == comm and fake.fake_alive() == 0


def test_wait_until_ready_error_aborts_with_nccls_text(fakes):
    fake = load(fakes["new"])
    fake.fake_script(2, 0, 6)  # two polls in progress, then ncclRemoteError
    comm, _ = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    with pytest.raises(
        _nccl.NcclError,
        match=r"the setup failed: fake: remote process exited or there was a "
        r"network error \(ncclResult_t 6\); the communicator was aborted",
    ):
        nccl_backend.wait_until_ready(_nccl, comm, deadline(NO_HANG_S), "the setup", timeout_s=NO_HANG_S)
    assert fake.fake_abort_calls() == 1 and fake.fake_last_aborted() == comm and fake.fake_alive() == 0


def test_wait_until_ready_with_done_and_own_abort(fakes):
    """As NcclWork.wait uses it: also until `done()` (the CUDA event there), aborting through the
    communicator's own abort."""
    fake = load(fakes["new"])
    comm, _ = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    answers = iter([False, False, True])
    nccl_backend.wait_until_ready(
        _nccl, comm, deadline(NO_HANG_S), "work", timeout_s=NO_HANG_S, done=lambda: next(answers)
    )
    assert next(answers, "used up") == "used up"  # polled until done() said True, not beyond
    reasons = []

    def abort(reason):
        reasons.append(reason)
        _nccl.comm_abort(comm)

    with pytest.raises(TimeoutError, match="all_reduce of 4 float32 did not complete within 0.2s"):
        nccl_backend.wait_until_ready(
            _nccl, comm, deadline(), "all_reduce of 4 float32", timeout_s=SHORT_S, done=lambda: False, abort=abort
        )
    assert reasons == ["all_reduce of 4 float32 did not complete within 0.2s"]
    assert fake.fake_abort_calls() == 1 and fake.fake_alive() == 0


def test_init_communicator_nonblocking_ready(fakes):
    fake = load(fakes["new"])
    fake.fake_script(4, 0, 0)
    comm = nccl_backend.init_communicator(_nccl, 1, _nccl.unique_id(), 0, deadline(NO_HANG_S), timeout_s=NO_HANG_S)
    assert fake.fake_config_calls() == 1 and fake.fake_init_calls() == 0 and fake.fake_seen_blocking() == 0
    assert _nccl.comm_async_error(comm) == 0 and fake.fake_abort_calls() == 0  # returned only once ready
    _nccl.comm_destroy(comm)
    assert fake.fake_alive() == 0


def test_init_communicator_dead_peer_times_out(fakes):
    fake = load(fakes["new"])
    fake.fake_script(FOREVER, 0, 0)
    with pytest.raises(TimeoutError) as info:
        nccl_backend.init_communicator(_nccl, 1, _nccl.unique_id(), 0, deadline(), timeout_s=SHORT_S)
    text = str(info.value)
    assert "NCCL communicator setup (rank 0 of 1) did not complete within 0.2s" in text
    assert "aborted" in text and "did not reach torchtally.nccl.enable()" in text
    assert fake.fake_abort_calls() == 1 and fake.fake_alive() == 0


def test_init_communicator_async_error(fakes):
    fake = load(fakes["new"])
    fake.fake_script(1, 0, 2)  # ncclSystemError after one poll in progress
    with pytest.raises(
        _nccl.NcclError,
        match=r"NCCL communicator setup \(rank 0 of 1\) failed: fake: unhandled "
        r"system error \(ncclResult_t 2\)",
    ):
        nccl_backend.init_communicator(_nccl, 1, _nccl.unique_id(), 0, deadline(NO_HANG_S), timeout_s=NO_HANG_S)
    assert fake.fake_abort_calls() == 1 and fake.fake_alive() == 0


def test_init_communicator_before_2_14_blocks(fakes):
    fake = load(fakes["pre214"])
    fake.fake_script(FOREVER, 0, 0)  # would time out if it were polled: the blocking path is not
    comm = nccl_backend.init_communicator(_nccl, 1, _nccl.unique_id(), 0, deadline(), timeout_s=SHORT_S)
    assert fake.fake_init_calls() == 1 and fake.fake_config_calls() == 0 and fake.fake_alive() == 1
    assert nccl_backend.nonblocking_init_available() is False
    _nccl.comm_destroy(comm)


def test_nonblocking_init_available(fakes, monkeypatch):
    monkeypatch.setenv(nccl_backend.ENV_PATH, str(fakes["new"]))
    assert nccl_backend.nonblocking_init_available() is True  # loads the library itself
    assert _nccl.loaded_path() == str(fakes["new"])


class RecordedWork:
    """Stands in for NcclWork (which records a CUDA event): notes the communicator's state at the
    moment the completion event would be recorded."""

    def __init__(self, comm, what):
        self.state_at_record = _nccl.comm_async_error(comm.comm)
        self.what = what


def bare_communicator(comm, timeout_s):
    """A NcclCommunicator around an existing communicator, without the CUDA and process-group setup."""
    c = object.__new__(nccl_backend.NcclCommunicator)
    c._nccl, c.comm, c._broken, c.timeout_s, c.rank, c.size = _nccl, comm, None, timeout_s, 0, 1
    return c


def test_collective_in_progress_waits_before_recording(fakes, monkeypatch):
    fake = load(fakes["new"])
    monkeypatch.setattr(nccl_backend, "NcclWork", RecordedWork)
    fake.fake_script(0, 3, 0)
    comm, _ = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    c = bare_communicator(comm, NO_HANG_S)
    send = torch.ones(2, dtype=torch.float32)
    result = _nccl.all_reduce(comm, send.data_ptr(), send.data_ptr(), 2, 7, 0, None)
    assert result == IN_PROGRESS
    work = c._enqueued(result, "all_reduce of 2 float32")
    assert work.state_at_record == 0 and work.what == "all_reduce of 2 float32"  # enqueue was complete
    assert fake.fake_misuses() == 0
    assert _nccl.all_reduce(comm, send.data_ptr(), send.data_ptr(), 2, 7, 0, None) == IN_PROGRESS  # allowed now
    c.abort("test over")


def test_collective_stuck_in_progress_times_out(fakes, monkeypatch):
    fake = load(fakes["new"])
    monkeypatch.setattr(nccl_backend, "NcclWork", RecordedWork)
    fake.fake_script(0, FOREVER, 0)
    comm, _ = _nccl.comm_init_rank_nonblocking(1, _nccl.unique_id(), 0)
    c = bare_communicator(comm, SHORT_S)
    send = torch.ones(2, dtype=torch.float32)
    result = _nccl.all_reduce(comm, send.data_ptr(), send.data_ptr(), 2, 7, 0, None)
    with pytest.raises(TimeoutError, match=r"enqueue of all_reduce of 2 float32 did not complete within 0\.2s"):
        c._enqueued(result, "all_reduce of 2 float32")
    assert fake.fake_last_aborted() == comm and fake.fake_alive() == 0
    assert c.comm is None and "did not complete" in c._broken
    with pytest.raises(_nccl.NcclError, match="was aborted"):
        c.handle()
