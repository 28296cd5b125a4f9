"""The "nccl" sync backend on a GPU: a gloo process group for the header, NCCL (loaded at run
time) for the data. World size 1, and world size 2 where it can run: one GPU per rank, or two
ranks on one GPU with NCCL >= 2.30.3 and NCCL_MULTI_RANK_GPU_ENABLE=1 (with an older NCCL the
backend must refuse the shared GPU on every rank, and that is what is checked then).
With NCCL >= 2.14 the communicator is non-blocking, and world size 1 also checks that setup with
a peer that never comes ends in TimeoutError (and an aborted communicator) instead of a hang.

Skips, with the reason, without a CUDA device or without a loadable NCCL.
"""

import os

import pytest
import torch

from torchtally.testing import run_distributed

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.distributed,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]


def nccl_version():
    import torchtally.sync.nccl as backend

    try:
        return backend.load()
    except backend.NcclUnavailable as exc:
        pytest.skip(f"no loadable NCCL: {exc}")


def backend_checks(rank: int, world_size: int, shared_gpu: bool) -> dict:
    import torch.distributed as td

    import torchtally.sync.nccl as backend
    from torchtally import MulticlassAccuracy
    from torchtally.sync.plan import StateSpec, SyncPlan
    from torchtally.sync.protocol import sync_states
    from torchtally.sync.transport import register_transport, transport_for, unregister_transport

    if shared_gpu:
        os.environ["NCCL_MULTI_RANK_GPU_ENABLE"] = "1"
    device = torch.device("cuda", 0 if shared_gpu else rank)
    torch.cuda.set_device(device)
    seen = {}
    try:
        comm = backend.enable(device=device, timeout=60)
    except backend.NcclUnavailable as exc:
        return {"refused": str(exc)}
    seen["transport"] = transport_for(None) is comm
    seen["nonblocking"] = comm.nonblocking

    # a packed sync: int64 sum (two states share one buffer), float64 max, a cat state
    plan = SyncPlan(
        [
            StateSpec("counts", "sum", torch.int64, (4,)),
            StateSpec("more", "sum", torch.int32, (2,)),
            StateSpec("worst", "max", torch.float64, (1,)),
            StateSpec("rows", "cat", torch.float32, (3,)),
        ]
    )
    values = [
        torch.arange(4, device=device) * (rank + 1),
        torch.tensor([rank, 1], dtype=torch.int32, device=device),
        torch.tensor([float(rank)], dtype=torch.float64, device=device),
        torch.full((rank + 2, 3), float(rank), device=device),
    ]
    if world_size > 1:
        synced = sync_states(plan, values)
        seen["synced"] = [t.cpu().tolist() for t in synced]
        seen["devices"] = sorted({str(t.device) for t in synced})
        # the same through gloo alone
        unregister_transport(None)
        plain = sync_states(plan, [v.cpu() for v in values])
        seen["plain"] = [t.tolist() for t in plain]
        register_transport(None, comm)
        # a metric on the GPU, synced at compute
        metric = MulticlassAccuracy(num_classes=5).to(device)
        g = torch.Generator().manual_seed(rank)
        metric.update(
            torch.randn(100 + 50 * rank, 5, generator=g).to(device),
            torch.randint(0, 5, (100 + 50 * rank,), generator=g).to(device),
        )
        seen["accuracy"] = float(metric.compute())
    # the communicator directly, on its own stream
    buf = torch.full((1000,), float(rank + 1), device=device)
    comm.all_reduce(buf, td.ReduceOp.SUM).wait()
    seen["all_reduce"] = float(buf[0])
    out = torch.empty(world_size * 3, dtype=torch.uint8, device=device)
    comm.all_gather_flat(out, torch.full((3,), rank, dtype=torch.uint8, device=device)).wait()
    seen["all_gather"] = out.cpu().tolist()
    # a timeout: rank 0 waits for a collective rank 1 never joins; the communicator is aborted.
    # The communicator's own timeout bounds the enqueue too (a non-blocking communicator may still
    # be connecting to the absent peer when ncclAllReduce returns ncclInProgress).
    if world_size > 1:
        import datetime

        if rank == 0:
            comm.timeout_s = 3.0
            try:
                comm.all_reduce(torch.ones(4, device=device)).wait(timeout=datetime.timedelta(seconds=3))
                seen["timeout"] = None
            except TimeoutError as exc:
                seen["timeout"] = str(exc)
            try:
                comm.all_reduce(torch.ones(4, device=device))
                seen["after_abort"] = None
            except RuntimeError as exc:
                seen["after_abort"] = str(exc)
        td.barrier()  # over gloo: rank 1 waits here while rank 0 times out
        if rank == 1:
            comm.abort("test over")
        unregister_transport(None)
    else:
        backend.disable()
        seen["disabled"] = transport_for(None) is None
        # setup of a 2-rank communicator whose rank 1 never comes (as if it died before enable())
        if comm.nonblocking:
            import time

            from torchtally import _nccl

            start = time.monotonic()
            try:
                backend.init_communicator(_nccl, 2, _nccl.unique_id(), 0, time.monotonic() + 3.0, timeout_s=3.0)
                seen["setup_timeout"] = None
            except TimeoutError as exc:
                seen["setup_timeout"] = str(exc)
            seen["setup_waited_s"] = time.monotonic() - start
    return seen


def test_world_size_1():
    nccl_version()
    (seen,) = run_distributed(backend_checks, 1, False, timeout=120.0)
    assert "refused" not in seen, seen
    assert seen["transport"] and seen["disabled"]
    assert seen["all_reduce"] == 1.0 and seen["all_gather"] == [0, 0, 0]
    if not seen["nonblocking"]:
        pytest.skip("NCCL < 2.14: setup is blocking, so the setup-timeout check cannot run (the rest was checked)")
    assert "NCCL communicator setup (rank 0 of 2) did not complete within 3s" in seen["setup_timeout"]
    assert "did not reach torchtally.nccl.enable()" in seen["setup_timeout"]
    assert 3.0 <= seen["setup_waited_s"] < 60.0  # it waited for the deadline, and it ended


def test_world_size_2():
    version = nccl_version()
    shared = torch.cuda.device_count() < 2
    runs = run_distributed(backend_checks, 2, shared, timeout=240.0)
    if shared and version < (2, 30, 3):
        for seen in runs:  # refused on every rank, before any NCCL communicator exists
            assert "two ranks of this group use one GPU" in seen.get("refused", ""), seen
        pytest.skip(f"two ranks on one GPU need NCCL >= 2.30.3, this one is {version}: the refusal was checked")
    for seen in runs:
        assert "refused" not in seen, seen
        assert seen["transport"]
        assert seen["synced"] == seen["plain"]
        counts, more, worst, rows = seen["synced"]
        assert counts == [0, 3, 6, 9] and more == [1, 2] and worst == [1.0] and len(rows) == 5
        assert all(d.startswith("cuda") for d in seen["devices"])
        assert seen["all_reduce"] == 3.0 and seen["all_gather"] == [0, 0, 0, 1, 1, 1]
    assert runs[0]["accuracy"] == runs[1]["accuracy"]
    assert "did not complete within 3s" in runs[0]["timeout"] and "aborted" in runs[0]["timeout"]
    assert "was aborted" in runs[0]["after_abort"]
