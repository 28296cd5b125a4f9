"""The CUDA path of the segmentation counts (functional/segmentation/counts.py), run here without a
GPU: torchtally.kernels routes to a stand-in for torchtally._C_cuda that keeps its status
contract (out partial, status = the key of the first bad element, nothing raised) on CPU tensors.
The update then reads nothing back to the host (the verdict goes to counts._defer, patched here as
the deferred-check registry will take it), adds to the states only what the device verdict lets
through, and the verdict's explanation is the C core's message. The real kernels' keys are
checked against the C core by the emulation (kernels/cuda/emulation/cases.py)."""

import pytest
import torch
from support.host_reads import count_host_reads
from test_segmentation_counts import C, batches, format_of, spoiled

import torchtally.segmentation as TS
from torchtally import _C, kernels
from torchtally.functional.segmentation import counts as seg_counts
from torchtally.kernels import deferred_checks
from torchtally.kernels.segmentation_status import CLEAR

_ROUTE = kernels._impl, kernels._CUDA_MODULE  # the real route, for the CPU answers


def _first(bad: torch.Tensor, side: int) -> torch.Tensor:
    """The key of the first True of `bad` (flattened) on `side`, CLEAR where none: device ops only."""
    flat = bad.reshape(-1)
    at = torch.arange(flat.numel()) + side * flat.numel()
    return torch.where(flat, at, torch.full_like(at, CLEAR)).amin() if flat.numel() else torch.tensor(CLEAR)


class StandIn:
    """torchtally._C_cuda's segmentation methods, on CPU tensors, without a host read."""

    def label_counts(self, out, status, preds, target, from_scores):
        classes = out.shape[1]
        p, t = preds.long(), target.long()
        key = torch.minimum(_first((p < 0) | (p >= classes), 0), _first((t < 0) | (t >= classes), 1))
        status.copy_(key.view(1))
        _C.label_counts(out, p.clamp(0, classes - 1), t.clamp(0, classes - 1), 0)

    def mask_counts(self, out, status, preds, target):
        p, t = preds.long(), target.long()
        key = torch.minimum(_first(((p < 0) | (p > 1)).any(-1), 0), _first(((t < 0) | (t > 1)).any(-1), 1))
        status.copy_(key.view(1))
        _C.mask_counts(out, p.clamp(0, 1), t.clamp(0, 1))

    def class_argmax(self, out, scores):
        _C.class_argmax(out, scores)


@pytest.fixture
def device_path(monkeypatch):
    """kernels route every tensor to the stand-in; the verdicts counts._defer gets, as a list."""
    stand_in = StandIn()
    monkeypatch.setattr(kernels, "_impl", lambda out: stand_in)
    monkeypatch.setattr(kernels, "_CUDA_MODULE", stand_in)
    verdicts = []
    return stand_in, verdicts


@pytest.fixture
def registry(monkeypatch, device_path):
    """counts._defer as the deferred-check registry will be: it keeps the verdict, reads nothing."""
    verdicts = device_path[1]
    monkeypatch.setattr(seg_counts, "_defer", lambda ok, explain: verdicts.append((ok, explain)))
    return verdicts


@pytest.fixture
def host_reads(monkeypatch):
    return count_host_reads(monkeypatch)


KEYS = ["index", "one-hot", "scores", "mixed", "mixed-masks"]
NAMES = ["MeanIoU", "DiceScore", "GeneralizedDiceScore"]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", NAMES)
def test_device_update_reads_nothing_back_and_counts_as_the_cpu(registry, host_reads, name, key):
    batch = batches()[key]
    with pytest.MonkeyPatch.context() as real:
        real.setattr(kernels, "_impl", _ROUTE[0])
        real.setattr(kernels, "_CUDA_MODULE", _ROUTE[1])
        on_cpu = getattr(TS, name)(num_classes=C, input_format=format_of(key))
        on_cpu.update(*batch)
    metric = getattr(TS, name)(num_classes=C, input_format=format_of(key))
    del host_reads[:]
    metric.update(*batch)
    assert host_reads == []
    assert len(registry) == 1 and registry[0][0].dtype == torch.bool
    assert bool(registry[0][0])
    for state in on_cpu.state_names:
        assert torch.equal(getattr(metric, state), getattr(on_cpu, state)), state


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", NAMES)
def test_a_batch_rejected_on_the_device_leaves_the_states_and_explains_as_the_cpu(registry, name, key):
    metric = getattr(TS, name)(num_classes=C, input_format=format_of(key))
    metric.update(*batches()[key])
    before = {s: getattr(metric, s).clone() for s in metric.state_names}
    batch, match = spoiled(key)
    metric.update(*batch)  # deferred: no raise here
    ok, explain = registry[-1]
    assert not bool(ok)
    assert pytest.raises(ValueError, _raise, explain).match(match)
    for state, value in before.items():
        assert torch.equal(getattr(metric, state), value), state


def _raise(explain):
    raise ValueError(explain())


@pytest.mark.parametrize("key", KEYS)
def test_outside_deferral_a_device_rejection_raises_at_the_call(device_path, key):
    metric = TS.DiceScore(num_classes=C, input_format=format_of(key))
    metric.update(*batches()[key])
    before = {s: getattr(metric, s).clone() for s in metric.state_names}
    batch, match = spoiled(key)
    with pytest.raises(ValueError, match=match):
        metric.update(*batch)
    for state, value in before.items():
        assert torch.equal(getattr(metric, state), value), state


@pytest.fixture
def deferral(monkeypatch, device_path):
    """The deferred-check registry as on CUDA in deferred mode, for the CPU stand-in."""
    monkeypatch.setattr(deferred_checks, "_pending", [])
    monkeypatch.setattr(deferred_checks, "DEVICE_TYPES", ("cuda", "cpu"))
    monkeypatch.setattr(deferred_checks, "defers", lambda t: True)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", NAMES)
def test_the_registry_raises_a_device_rejection_at_the_next_update_and_at_compute(deferral, name, key):
    metric = getattr(TS, name)(num_classes=C, input_format=format_of(key))
    metric.update(*batches()[key])
    before = {s: getattr(metric, s).clone() for s in metric.state_names}
    batch, match = spoiled(key)
    metric.update(*batch)  # deferred: returns, the batch undone on the device
    for state, value in before.items():
        assert torch.equal(getattr(metric, state), value), state
    with pytest.raises(ValueError, match=match):
        metric.update(*batches()[key])  # raises the rejection and does not run its own batch
    for state, value in before.items():
        assert torch.equal(getattr(metric, state), value), state
    metric.update(*batch)
    with pytest.raises(ValueError, match=match):
        metric.compute()
