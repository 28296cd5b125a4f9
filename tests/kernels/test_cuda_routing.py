"""Routing in torchtally.kernels: CPU tensors to torchtally._C (unchanged), CUDA
tensors to torchtally._C_cuda on the devices its kernels serve, else to the torch reference.
Runs without a GPU: a stand-in object that says is_cuda plays the CUDA tensor, spies replace the
modules, and a stand-in loader says which devices the kernels serve."""

import pytest
import torch

from torchtally import kernels
from torchtally.kernels import reference as _reference

KERNELS = (
    "confmat_labels",
    "confmat_scores",
    "confmat_threshold",
    "binned_update",
    "topk_update",
    "moments_update",
    "moments_merge",
    "comoments_update",
    "comoments_merge",
)


class Spy:
    """Records (kernel, arguments) and does nothing else."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))

        return call


class CudaStandIn:
    """What kernels looks at on a CUDA tensor."""

    is_cpu = False
    is_cuda = True
    requires_grad = False

    def __init__(self, device: int = 0):
        self.device_index = device

    def get_device(self) -> int:
        return self.device_index


class StandInLoader:
    """Serves the devices in `served`; counts how often each device was asked about."""

    def __init__(self, served=(0,)):
        self.served, self.asked = set(served), []

    def serves(self, device: int) -> bool:
        self.asked.append(device)
        return device in self.served

    def forget(self):
        pass


@pytest.fixture
def spies(monkeypatch):
    cuda, ref = Spy(), Spy()
    monkeypatch.setattr(kernels, "_CUDA_MODULE", cuda)
    monkeypatch.setattr(kernels, "_cuda", cuda)
    monkeypatch.setattr(kernels, "_reference", ref)
    monkeypatch.setattr(kernels, "_loader", StandInLoader())
    monkeypatch.setattr(kernels, "_served", {})
    return cuda, ref


def test_a_device_the_kernels_do_not_serve_takes_the_reference_and_is_asked_once(spies, monkeypatch):
    cuda, ref = spies
    loader = StandInLoader(served=(0,))
    monkeypatch.setattr(kernels, "_loader", loader)
    for _ in range(3):
        kernels.confmat_labels(CudaStandIn(0), CudaStandIn(0), CudaStandIn(0))
        kernels.confmat_labels(CudaStandIn(1), CudaStandIn(1), CudaStandIn(1))
    assert [name for name, _ in cuda.calls] == ["confmat_labels"] * 3
    assert [name for name, _ in ref.calls] == ["confmat_labels"] * 3
    assert sorted(loader.asked) == [0, 1]  # decided once per device, then remembered


def call(kernel: str, out) -> None:
    """The kernel with its required arguments: (state, other) for merges, (out, a, b) otherwise."""
    getattr(kernels, kernel)(out, *[CudaStandIn()] * (1 if kernel.endswith("merge") else 2))


@pytest.mark.parametrize("kernel", KERNELS)
def test_cuda_tensors_go_to_the_cuda_module(spies, kernel):
    cuda, ref = spies
    out = CudaStandIn()
    call(kernel, out)
    assert [name for name, _ in cuda.calls] == [kernel] and ref.calls == []
    assert cuda.calls[0][1][0] is out


def test_cuda_backend_switch(spies):
    cuda, ref = spies
    assert kernels.has_cuda() and kernels.cuda_backend() == "cuda"
    assert kernels.set_cuda_backend("reference") == "cuda"
    call("confmat_labels", CudaStandIn())
    assert (len(cuda.calls), [n for n, _ in ref.calls]) == (0, ["confmat_labels"])
    assert kernels.set_cuda_backend("cuda") == "reference"
    call("confmat_labels", CudaStandIn())
    assert len(cuda.calls) == 1
    with pytest.raises(ValueError, match="name"):
        kernels.set_cuda_backend("c")


def test_without_the_cuda_build_cuda_goes_to_the_reference(spies, monkeypatch):
    cuda, ref = spies
    monkeypatch.setattr(kernels, "_CUDA_MODULE", None)
    monkeypatch.setattr(kernels, "_cuda", None)
    assert not kernels.has_cuda() and kernels.cuda_backend() == "reference"
    call("topk_update", CudaStandIn())
    assert [n for n, _ in ref.calls] == ["topk_update"] and cuda.calls == []
    with pytest.raises(ImportError, match="torchtally._C_cuda is not importable"):
        kernels.set_cuda_backend("cuda")


def test_cpu_and_other_devices_never_reach_the_cuda_module(spies):
    cuda, ref = spies
    out = torch.zeros(3, 3, dtype=torch.int64)
    labels = torch.tensor([0, 1, 2, 2])
    kernels.confmat_labels(out, labels, labels)  # the real C core (or the reference when unbuilt)
    assert out.diagonal().tolist() == [1, 1, 2]
    meta = torch.zeros(3, 3, dtype=torch.int64, device="meta")
    kernels.confmat_labels(meta, labels, labels)
    assert cuda.calls == [] and [n for n, _ in ref.calls] == ["confmat_labels"]


def test_inputs_are_detached_on_the_cuda_route(spies):
    cuda, _ = spies
    scores = torch.randn(4, 3, requires_grad=True)
    kernels.confmat_scores(CudaStandIn(), scores, CudaStandIn())
    passed = cuda.calls[0][1][1]
    assert not passed.requires_grad and passed.data_ptr() == scores.data_ptr()


def test_the_real_cuda_module_matches_the_contract():
    """torchtally._C_cuda is always built and has every kernel of csrc/API.md (same names as _C)."""
    module = kernels._CUDA_MODULE
    assert module is not None
    assert all(callable(getattr(module, k, None)) for k in KERNELS)
    assert _reference is not module


# ---- when a CUDA batch rejected on the device raises ---------------------------------------------


class CudaState:
    """What the check helpers look at on a CUDA state tensor."""

    is_cuda = True

    def __init__(self, index: int, pointer: int, numel: int = 4):
        self.device = torch.device("cuda", index)
        self._pointer, self._numel = pointer, numel

    def data_ptr(self):
        return self._pointer

    def numel(self):
        return self._numel

    def element_size(self):
        return 8


@pytest.fixture
def checks_mode():
    previous = kernels.cuda_checks()
    yield
    kernels.set_cuda_checks(previous)


def test_set_cuda_checks_tells_the_cuda_module(spies, checks_mode):
    cuda, _ = spies
    assert kernels.set_cuda_checks("immediate") == "deferred"
    assert kernels.cuda_checks() == "immediate"
    assert kernels.set_cuda_checks("deferred") == "immediate"
    assert cuda.calls == [("set_immediate_checks", (True,)), ("set_immediate_checks", (False,))]


def test_set_cuda_checks_refuses_other_modes(spies, checks_mode):
    with pytest.raises(ValueError, match=r"^mode: expected one of \('deferred', 'immediate'\), got 'eager'"):
        kernels.set_cuda_checks("eager")
    assert kernels.cuda_checks() == "deferred" and spies[0].calls == []


def test_compute_time_check_waits_on_cuda_states_only(spies):
    cuda, _ = spies
    states = [torch.zeros(3), CudaState(1, 0x1000), CudaState(0, 0x2000, numel=0), CudaState(0, 0x3000)]
    kernels.raise_rejected_cuda_updates(states)
    assert cuda.calls == [("check", (1, 0x1000, 32, True)), ("check", (0, 0x3000, 32, True))]
    kernels.forget_rejected_cuda_updates(states)
    assert cuda.calls[2:] == [("discard", (1, 0x1000, 32)), ("discard", (0, 0x3000, 32))]


def test_rejections_made_before_a_switch_to_the_reference_still_surface(spies):
    cuda, _ = spies
    kernels.set_cuda_backend("reference")
    try:
        kernels.raise_rejected_cuda_updates([CudaState(0, 0x1000)])
    finally:
        kernels.set_cuda_backend("cuda")
    assert cuda.calls == [("check", (0, 0x1000, 32, True))]


def test_no_check_without_the_cuda_build(spies, monkeypatch):
    cuda, _ = spies
    monkeypatch.setattr(kernels, "_CUDA_MODULE", None)
    monkeypatch.setattr(kernels, "_cuda", None)
    kernels.raise_rejected_cuda_updates([CudaState(0, 0x1000)])
    kernels.forget_rejected_cuda_updates([CudaState(0, 0x1000)])
    assert cuda.calls == []


@pytest.mark.parametrize(
    "value, expected",
    [
        ("immediate", "immediate"),
        (" Deferred ", "deferred"),
        ("sometimes", "TORCHTALLY_CUDA_CHECKS: mode: expected one of"),
    ],
)
def test_cuda_checks_from_the_environment(value, expected):
    import os
    import subprocess
    import sys

    code = "from torchtally import kernels; print(kernels.cuda_checks())"
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "TORCHTALLY_CUDA_CHECKS": value},
    )
    assert expected in (run.stdout if run.returncode == 0 else run.stderr), run.stderr
    assert (run.returncode == 0) == (expected != "TORCHTALLY_CUDA_CHECKS: mode: expected one of")


def test_compute_and_reset_ask_about_rejected_cuda_updates(spies, monkeypatch):
    """A metric whose state is on CUDA waits for its deferred checks in compute() and drops them
    in reset(); the rejection raised by the CUDA module reaches the caller of compute()."""
    from torchtally import MetricCollection, MulticlassAccuracy

    cuda, _ = spies
    metric = MulticlassAccuracy(num_classes=3).update(torch.tensor([0, 1]), torch.tensor([0, 2]))
    metric.__dict__["device"] = torch.device("cuda", 0)  # as if its state lived there
    states = [CudaState(0, 0x5000)]
    monkeypatch.setattr(metric, "_tensor_states", lambda: states)
    metric.compute()
    assert cuda.calls == [("check", (0, 0x5000, 32, True))]

    def rejected(*args):
        raise ValueError("target: label 7 at index 1 is out of range [0, 3) (found on the GPU ...)")

    monkeypatch.setattr(cuda, "check", rejected, raising=False)
    with pytest.raises(ValueError, match=r"^target: label 7"):
        metric.compute_local()
    with pytest.raises(ValueError, match=r"^target: label 7"):
        MetricCollection({"acc": metric}).compute()
    monkeypatch.delattr(cuda, "check")
    cuda.calls.clear()
    metric.reset()
    assert cuda.calls == [("discard", (0, 0x5000, 32))]


def test_the_switch_is_public():
    import torchtally

    assert torchtally.set_cuda_checks is kernels.set_cuda_checks
    assert torchtally.cuda_checks is kernels.cuda_checks


def _metric_on_fake_cuda(monkeypatch, pointer: int):
    from torchtally import MulticlassAccuracy

    metric = MulticlassAccuracy(num_classes=3).update(torch.tensor([0, 1]), torch.tensor([0, 2]))
    metric.__dict__["device"] = torch.device("cuda", 0)  # as if its state lived there
    metric.__dict__["_tensor_states"] = lambda: [CudaState(0, pointer)]  # not monkeypatch: it would keep metric alive
    return metric


def test_moving_a_cuda_metric_first_raises_what_its_old_memory_holds(spies, monkeypatch):
    cuda, _ = spies
    metric = _metric_on_fake_cuda(monkeypatch, 0x7000)
    metric.to("cpu")
    assert cuda.calls == [("check", (0, 0x7000, 32, True))]


def test_loading_or_deleting_a_cuda_metric_forgets_its_rejections(spies, monkeypatch):
    import gc

    cuda, _ = spies
    metric = _metric_on_fake_cuda(monkeypatch, 0x8000)
    metric.persistent(True)
    saved = dict(metric.state_dict())
    assert saved
    metric.__dict__["check_state_dict"] = lambda states, strict, where=None: states  # no real GPU to load onto
    metric.load_state_dict(saved)
    assert cuda.calls == [("discard", (0, 0x8000, 32))]
    del metric
    gc.collect()
    assert cuda.calls[1:] == [("discard", (0, 0x8000, 32))]


def test_forwards_batch_check_asks_about_the_batch_and_the_accumulated_states(spies):
    """Metric.raise_rejected_batch, which forward calls between its batch update and the batch
    value: on CUDA it waits for the checks of the batch's fresh states, then of the accumulated
    states held aside; elsewhere it asks nothing."""
    from torchtally.base.states import HeldStates

    cuda, _ = spies
    metric = _metric_on_fake_cuda(None, 0x9000)
    held = HeldStates({"confmat": CudaState(0, 0xA000)}, True, 1, None)
    metric.raise_rejected_batch(held)
    assert cuda.calls == [("check", (0, 0x9000, 32, True)), ("check", (0, 0xA000, 32, True))]
    cuda.calls.clear()
    metric.__dict__["device"] = torch.device("cpu")
    metric.raise_rejected_batch(held)
    assert cuda.calls == []


def _rejecting_batch(metric, forgotten):
    def rejected(held):
        raise ValueError("target: label 7 at index 1 is out of range [0, 3) (found on the GPU ...)")

    metric.__dict__["raise_rejected_batch"] = rejected
    metric.__dict__["forget_rejected_cuda_updates"] = lambda: forgotten.append(dict(metric.metric_state))


@pytest.mark.parametrize("full_state_update", [False, True])
def test_forward_raises_a_rejected_batch_and_leaves_the_metric_as_it_was(full_state_update):
    """A batch the device rejected gives no value: forward raises its ValueError, forgets the
    rejections of the batch's own states (their memory is about to be reused) and puts the
    accumulated states back, count and cached result included."""
    from torchtally import MulticlassAccuracy

    metric = MulticlassAccuracy(num_classes=3).update(torch.tensor([0, 1]), torch.tensor([0, 2]))
    metric.__dict__["full_state_update"] = full_state_update  # both of forward's paths
    before, count = metric.confmat.clone(), metric.update_count
    forgotten = []
    _rejecting_batch(metric, forgotten)
    with pytest.raises(ValueError, match=r"^target: label 7"):
        metric(torch.tensor([2, 2]), torch.tensor([1, 1]))
    assert len(forgotten) == 1 and forgotten[0]["confmat"].sum() > 0  # the batch's states, not the held ones
    assert torch.equal(metric.confmat, before + (forgotten[0]["confmat"] if full_state_update else 0))
    assert metric.update_count == count + (1 if full_state_update else 0)


def test_a_collections_forward_raises_a_rejected_batch_and_leaves_every_metric_as_it_was():
    from torchtally import MetricCollection, MulticlassAccuracy, MulticlassF1Score

    coll = MetricCollection({"acc": MulticlassAccuracy(num_classes=3), "f1": MulticlassF1Score(num_classes=3)})
    coll.update(torch.tensor([0, 1]), torch.tensor([0, 2]))
    before = {k: v.clone() for k, v in coll["acc"].metric_state.items()}
    forgotten = []
    owner = coll["acc"]  # the one owner of the shared state
    _rejecting_batch(owner, forgotten)
    with pytest.raises(ValueError, match=r"^target: label 7"):
        coll(torch.tensor([2, 2]), torch.tensor([1, 1]))
    assert len(forgotten) == 1
    for name in ("acc", "f1"):
        assert all(torch.equal(coll[name].metric_state[k], v) for k, v in before.items())


def test_without_dlpacks_exchange_table_a_call_runs_on_its_tensors_device(spies, monkeypatch):
    """torch < 2.10: __dlpack__ refuses a CUDA tensor off the current device, so a call on cuda:1
    while cuda:0 is current runs inside torch.cuda.device(1); on the current device, as is."""
    cuda, _ = spies
    entered = []

    class Context:
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            entered.append(self.index)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(kernels, "_EXCHANGE_API", False)
    monkeypatch.setattr(kernels, "_device_context", Context)
    monkeypatch.setattr(kernels, "_loader", StandInLoader(served=(0, 1)))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    kernels.confmat_labels(CudaStandIn(1), CudaStandIn(1), CudaStandIn(1))
    kernels.confmat_labels(CudaStandIn(0), CudaStandIn(0), CudaStandIn(0))
    assert entered == [1] and [name for name, _ in cuda.calls] == ["confmat_labels"] * 2


def test_a_first_use_inside_graph_capture_raises_and_decides_nothing(spies, monkeypatch):
    loader = StandInLoader(served=(0,))
    monkeypatch.setattr(kernels, "_loader", loader)
    monkeypatch.setattr(kernels, "_capturing", lambda: True)
    with pytest.raises(ValueError, match="first update on cuda:0 cannot run inside CUDA graph capture"):
        kernels.confmat_labels(CudaStandIn(0), CudaStandIn(0), CudaStandIn(0))
    assert loader.asked == [] and kernels._served == {}
    monkeypatch.setattr(kernels, "_capturing", lambda: False)
    kernels.confmat_labels(CudaStandIn(0), CudaStandIn(0), CudaStandIn(0))  # decided outside capture
    assert loader.asked == [0]
