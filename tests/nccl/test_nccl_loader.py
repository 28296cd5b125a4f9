"""The run-time NCCL loader (csrc/nccl/loader.c, torchtally._nccl) and the nccl backend's error paths,
on the CPU: a missing library, a library without a required symbol, and a fake NCCL (compiled
here with cc) through which every binding passes its arguments and reports NCCL's errors."""

import pytest
import torch
from fake_nccl import compile_fake, hooks

import torchtally.sync.nccl as nccl_backend
from torchtally import _nccl


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fake_nccl")
    return {
        "full": compile_fake(folder, "libfake_nccl.so"),
        "old": compile_fake(folder, "libfake_nccl_old.so", version=2804, omit_init_config=True),
        "no_all_gather": compile_fake(folder, "libfake_nccl_partial.so", omit_all_gather=True),
    }


@pytest.fixture(autouse=True)
def nothing_loaded():
    """Every test starts and ends with no NCCL loaded in this process."""
    _nccl.unload()
    yield
    _nccl.unload()


def test_missing_library_names_the_path(tmp_path):
    path = str(tmp_path / "nowhere" / "libnccl.so.2")
    with pytest.raises(OSError, match=r"could not load NCCL from '.*nowhere/libnccl\.so\.2'"):
        _nccl.load(path)
    assert _nccl.loaded_path() is None
    with pytest.raises(nccl_backend.NcclUnavailable, match="nowhere/libnccl.so.2") as info:
        nccl_backend.load(path)
    assert "TORCHTALLY_NCCL_PATH" not in str(info.value)  # an explicit path needs no hint


def test_env_path_is_the_only_candidate(tmp_path, monkeypatch):
    path = str(tmp_path / "libmissing.so")
    monkeypatch.setenv(nccl_backend.ENV_PATH, path)
    assert nccl_backend.library_candidates() == [path]
    with pytest.raises(nccl_backend.NcclUnavailable, match="libmissing.so"):
        nccl_backend.load()
    monkeypatch.delenv(nccl_backend.ENV_PATH)
    assert nccl_backend.library_candidates()[0] == "libnccl.so.2"


def test_not_a_library(tmp_path):
    text = tmp_path / "libnccl.so.2"
    text.write_text("not an ELF file")
    with pytest.raises(OSError, match="could not load NCCL"):
        _nccl.load(str(text))


def test_missing_symbol_is_named(fakes):
    with pytest.raises(OSError, match=r"is not a usable NCCL: it has no symbol ncclAllGather"):
        _nccl.load(str(fakes["no_all_gather"]))
    assert _nccl.loaded_path() is None
    with pytest.raises(nccl_backend.NcclUnavailable, match="ncclAllGather"):
        nccl_backend.load(str(fakes["no_all_gather"]))


def test_versions(fakes):
    assert nccl_backend.load(str(fakes["full"])) == (2, 30, 3)
    assert _nccl.loaded_path() == str(fakes["full"])
    assert _nccl.has_nonblocking_init() is True  # ncclCommInitRankConfig and ncclCommGetAsyncError
    assert nccl_backend.load(str(fakes["old"])) == (2, 8, 4)  # another path replaces the first
    assert _nccl.loaded_path() == str(fakes["old"])
    assert _nccl.has_nonblocking_init() is False  # an NCCL before 2.14: no ncclCommInitRankConfig
    assert _nccl.version_parts(22703) == (2, 27, 3)
    assert _nccl.has_async_error() is True


def test_not_loaded():
    for call in (
        _nccl.unique_id,
        _nccl.has_async_error,
        _nccl.has_nonblocking_init,
        lambda: _nccl.comm_init_rank(1, bytes(128), 0),
        lambda: _nccl.comm_init_rank_nonblocking(1, bytes(128), 0),
    ):
        with pytest.raises(RuntimeError, match="not loaded"):
            call()


def test_calls_reach_nccl_and_errors_come_back(fakes):
    path = str(fakes["full"])
    _nccl.load(path)
    fake = hooks(fakes["full"])
    uid = _nccl.unique_id()
    assert len(uid) == 128 and uid[0] == 7 and uid[1:] == b"\x5a" * 127
    comm = _nccl.comm_init_rank(1, uid, 0)
    assert fake.fake_alive() == 1

    send = torch.arange(5, dtype=torch.float32)
    recv = torch.zeros(5, dtype=torch.float32)
    assert (
        _nccl.all_reduce(
            comm,
            send.data_ptr(),
            recv.data_ptr(),
            5,
            nccl_backend.dtype_code(torch.float32),
            nccl_backend.op_code(torch.distributed.ReduceOp.SUM),
            0xABC0,
        )
        == 0
    )  # enqueued
    assert torch.equal(recv, 2 * send)
    assert fake.fake_last_stream() == 0xABC0

    with pytest.raises(_nccl.NcclError, match=r"ncclAllReduce failed: fake: unhandled system error \(ncclResult_t 2\)"):
        _nccl.all_reduce(
            comm, send.data_ptr(), recv.data_ptr(), 5, 7, nccl_backend.op_code(torch.distributed.ReduceOp.MAX), None
        )
    with pytest.raises(_nccl.NcclError, match="invalid usage"):
        _nccl.all_reduce(comm, send.data_ptr(), recv.data_ptr(), 5, nccl_backend.dtype_code(torch.int64), 0, None)
    with pytest.raises(ValueError, match="count"):
        _nccl.all_reduce(comm, send.data_ptr(), recv.data_ptr(), -1, 7, 0, None)
    with pytest.raises(TypeError, match="comm"):
        _nccl.all_reduce("comm", send.data_ptr(), recv.data_ptr(), 5, 7, 0, None)

    small = torch.tensor([1, 2, 3], dtype=torch.uint8)
    gathered = torch.zeros(6, dtype=torch.uint8)
    _nccl.all_gather(comm, small.data_ptr(), gathered.data_ptr(), 3, nccl_backend.dtype_code(torch.uint8), 0x10)
    assert gathered.tolist() == [1, 2, 3, 1, 2, 3] and fake.fake_last_stream() == 0x10

    assert _nccl.comm_async_error(comm) == 0
    assert "invalid argument" in _nccl.error_string(4)
    with pytest.raises(RuntimeError, match="still open"):
        _nccl.load(str(fakes["old"]))  # no switching libraries under a live communicator
    with pytest.raises(RuntimeError, match="still open"):
        _nccl.unload()
    _nccl.comm_destroy(comm)
    assert fake.fake_alive() == 0
    comm = _nccl.comm_init_rank(1, uid, 0)
    _nccl.comm_abort(comm)
    assert fake.fake_alive() == 0


def test_init_arguments_are_checked(fakes):
    _nccl.load(str(fakes["full"]))
    with pytest.raises(ValueError, match="unique_id: expected 128 bytes"):
        _nccl.comm_init_rank(1, b"short", 0)
    with pytest.raises(ValueError, match="rank"):
        _nccl.comm_init_rank(1, bytes(128), 1)
    with pytest.raises(_nccl.NcclError, match=r"ncclCommInitRank failed: fake: invalid argument \(ncclResult_t 4\)"):
        _nccl.comm_init_rank(1, bytes(128), 0)  # not an id from unique_id(): the fake refuses it
    with pytest.raises(TypeError, match="comm_init_rank"):
        _nccl.comm_init_rank(1, bytes(128))


def test_codes():
    ReduceOp = torch.distributed.ReduceOp
    assert [nccl_backend.op_code(op) for op in (ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MAX, ReduceOp.MIN)] == [
        0,
        1,
        2,
        3,
    ]
    with pytest.raises(ValueError, match="SUM, PRODUCT, MAX or MIN"):
        nccl_backend.op_code(ReduceOp.BAND)
    assert nccl_backend.dtype_code(torch.bfloat16) == 9 and nccl_backend.dtype_code(torch.bool) == 1
    with pytest.raises(TypeError, match="cannot carry"):
        nccl_backend.dtype_code(torch.complex64)  # complex travels as its real view


def test_enable_without_a_gpu_says_so():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the no-GPU error path cannot be reached here")
    with pytest.raises(nccl_backend.NcclUnavailable, match="needs a CUDA device"):
        nccl_backend.enable()
    with pytest.raises(nccl_backend.NcclUnavailable, match="needs a CUDA device"):
        nccl_backend.NcclCommunicator()


def test_fake_hooks_read_the_loaded_copy(fakes):
    """The ctypes view above must see the same copy the loader opened (else the stream checks
    would be vacuous): a communicator made through _nccl shows up in the fake's counter."""
    _nccl.load(str(fakes["full"]))
    fake = hooks(fakes["full"])
    before = fake.fake_alive()
    comm = _nccl.comm_init_rank(1, _nccl.unique_id(), 0)
    assert fake.fake_alive() == before + 1
    _nccl.comm_destroy(comm)
    assert fake.fake_alive() == before
