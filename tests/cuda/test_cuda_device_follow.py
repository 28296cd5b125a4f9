"""Metric state follows the input's device, with real metrics on a GPU: metrics made without
``device=`` take CUDA batches, end with every state (and default) on the GPU and give the CPU
result; a metric holding GPU data refuses a CPU batch and keeps its state; reset() frees it to
move back; a collection's shared state stays one object on the GPU; and sync works on the moved
state (a world-size-1 gloo group: the packed buffers go through the CPU and the results come
back on the GPU; also over the "nccl" backend where NCCL loads).

Runs with the CUDA kernels (torchtally._C_cuda, which must serve the GPU) and with the torch reference
otherwise. Skips, with the reason, without a CUDA device. The same rules on CPU-only torch are
tests/base/test_placement.py.
"""

import pytest
import torch

from torchtally import (
    BinaryAUROC,
    MeanMetric,
    MeanSquaredError,
    MetricCollection,
    MulticlassAccuracy,
    MulticlassAUROC,
    MulticlassPrecision,
    MulticlassRecall,
    PearsonCorrCoef,
    kernels,
)
from torchtally.testing import run_distributed

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

C = 5


def gpu_device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device())


def batches(seed: int = 0):
    """Three batches of (scores [N, C], labels [N], binary scores [N], regression pairs)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for n in (64, 1, 200):
        out.append(
            {
                "scores": torch.randn(n, C, generator=g),
                "labels": torch.randint(0, C, (n,), generator=g),
                "prob": torch.rand(n, generator=g),
                "binary": torch.randint(0, 2, (n,), generator=g),
                "x": torch.randn(n, generator=g),
                "y": torch.randn(n, generator=g),
            }
        )
    return out


def feeds():
    """(name, factory, arguments of one batch) for metrics of each state kind."""
    return [
        ("accuracy", lambda: MulticlassAccuracy(C), lambda b: (b["scores"], b["labels"])),  # confusion matrix
        ("auroc_exact", lambda: BinaryAUROC(), lambda b: (b["prob"], b["binary"])),  # cat states
        ("auroc_binned", lambda: BinaryAUROC(thresholds=11), lambda b: (b["prob"], b["binary"])),  # histogram
        ("mse", lambda: MeanSquaredError(), lambda b: (b["x"], b["y"])),  # sums
        ("pearson", lambda: PearsonCorrCoef(), lambda b: (b["x"], b["y"])),  # merge (co-moments)
        ("mean", lambda: MeanMetric(), lambda b: (b["x"],)),
    ]


def on(device, args):
    return tuple(a.to(device) for a in args)


def devices_of(metric):
    out = {getattr(metric, name).device for name in metric.state_names}
    out |= {default.device for _, default in metric._specs.values()}
    out.add(metric.device)
    return out


@pytest.fixture(params=["cuda", "reference"])
def cuda_backend(request):
    if request.param == "cuda":
        status = kernels.cuda_device_status(0)
        assert status.serves, str(status)  # a GPU the kernels cannot serve is a failure here
    previous = kernels.set_cuda_backend(request.param)
    yield request.param
    kernels.set_cuda_backend(previous)


@pytest.mark.parametrize("case", range(len(feeds())), ids=[f[0] for f in feeds()])
def test_metric_made_without_device_follows_cuda_inputs(cuda_backend, case):
    name, factory, args = feeds()[case]
    gpu = gpu_device()
    on_gpu, on_cpu = factory(), factory()
    for b in batches():
        on_gpu.update(*on(gpu, args(b)))
        on_cpu.update(*args(b))
    assert devices_of(on_gpu) == {gpu}, name
    result = on_gpu.compute()
    assert result.device == gpu, name
    torch.testing.assert_close(result.cpu(), on_cpu.compute(), rtol=1e-5, atol=1e-6)

    before = on_gpu.state_dict()
    with pytest.raises(
        ValueError, match=rf"expected a tensor on {gpu}, where this metric's state is .* got one on cpu"
    ):
        on_gpu.update(*args(batches()[0]))
    assert devices_of(on_gpu) == {gpu}
    for key, value in on_gpu.state_dict().items():
        assert torch.equal(value, before[key]), (name, key)

    on_gpu.reset().update(*args(batches()[0]))  # free again after reset: back to the CPU
    assert devices_of(on_gpu) == {torch.device("cpu")}


def test_collection_follows_cuda_inputs_and_keeps_shared_state(cuda_backend):
    gpu = gpu_device()
    make = lambda: MetricCollection(
        {
            "acc": MulticlassAccuracy(C),
            "prec": MulticlassPrecision(C),
            "rec": MulticlassRecall(C),
            "auroc": MulticlassAUROC(C),
        }
    )
    col_gpu, col_cpu = make(), make()
    for b in batches(1):
        col_gpu.update(b["scores"].softmax(-1).to(gpu), b["labels"].to(gpu))
        col_cpu.update(b["scores"].softmax(-1), b["labels"])
    for name in col_gpu:
        assert devices_of(col_gpu[name]) == {gpu}, name
    acc, prec, rec = col_gpu["acc"], col_gpu["prec"], col_gpu["rec"]
    for state in acc.state_names:
        assert getattr(acc, state) is getattr(prec, state) is getattr(rec, state), state
    got, want = col_gpu.compute(), col_cpu.compute()
    for name in want:
        torch.testing.assert_close(got[name].cpu(), want[name], rtol=1e-5, atol=1e-6)


def sync_checks(rank: int, world_size: int) -> dict:
    """In a world-size-1 gloo group: the full sync protocol (forced: a world of 1 skips it) on
    state that moved to the GPU, through gloo (CPU buffers) and, where NCCL loads, through the
    "nccl" backend. Returns per transport: synced vs local results and their devices."""
    import torchtally.sync.nccl as backend

    gpu = gpu_device()
    seen = {}

    def run(tag):
        metric = MulticlassAccuracy(C)
        col = MetricCollection({"acc": MulticlassAccuracy(C), "rec": MulticlassRecall(C), "auroc": MulticlassAUROC(C)})
        for b in batches(2):
            metric.update(b["scores"].to(gpu), b["labels"].to(gpu))
            col.update(b["scores"].to(gpu).softmax(-1), b["labels"].to(gpu))
        synced = metric._compute_synced(None)
        col_synced = col._compute_synced(dirty=True)
        col_local = col.compute_local()
        seen[tag] = {
            "metric": (float(synced), float(metric.compute_local()), str(synced.device), str(metric.confmat.device)),
            "collection": {
                name: (float(col_synced[name]), float(col_local[name]), str(col_synced[name].device))
                for name in col_local
            },
            "shared": col["acc"].confmat is col["rec"].confmat,
        }

    run("gloo")
    try:
        backend.enable(device=gpu, timeout=60)
    except backend.NcclUnavailable as exc:
        seen["nccl_unavailable"] = str(exc)
    else:
        try:
            run("nccl")
        finally:
            backend.disable()
    return seen


def test_sync_on_moved_state():
    (seen,) = run_distributed(sync_checks, 1, timeout=180.0)
    gpu = str(gpu_device())
    tags = ["gloo"] + ([] if "nccl_unavailable" in seen else ["nccl"])
    for tag in tags:
        synced, local, device, state_device = seen[tag]["metric"]
        assert synced == local and device == gpu and state_device == gpu, (tag, seen)
        for name, (synced, local, device) in seen[tag]["collection"].items():
            assert synced == local and device == gpu, (tag, name, seen)
        assert seen[tag]["shared"], (tag, seen)
