"""Binned curve metrics on a GPU: the probabilities-or-logits rule is decided on the device, so an
update makes no host synchronisation (torch's sync detector in "error" mode), the histograms
equal the CPU path's (given the same probabilities), and a NaN batch (or one whose softmax is undefined) is refused
by the kernel's deferred check with the state unchanged."""

import pytest
import torch

from torchtally import BinaryAUROC, MulticlassAUROC, MultilabelAUROC, kernels

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

T = 50


@pytest.fixture(autouse=True, scope="module")
def kernels_serve_the_device():
    status = kernels.cuda_device_status(torch.cuda.current_device())
    assert status.serves, str(status)


def _batches(cls, g):
    n = 4096
    if cls is BinaryAUROC:
        target = torch.randint(0, 2, (n,), generator=g)
        return [(torch.rand(n, generator=g), target), ((torch.rand(n, generator=g) - 0.5) * 8, target)]
    if cls is MulticlassAUROC:
        target = torch.randint(0, 5, (n,), generator=g)
        return [(torch.rand(n, 5, generator=g).softmax(1), target), (torch.randn(n, 5, generator=g) * 3, target)]
    target = torch.randint(0, 2, (n, 5), generator=g)
    return [(torch.rand(n, 5, generator=g), target), (torch.randn(n, 5, generator=g) * 3, target)]


KWARGS = {BinaryAUROC: {}, MulticlassAUROC: {"num_classes": 5}, MultilabelAUROC: {"num_labels": 5}}


@pytest.mark.parametrize("cls", list(KWARGS))
def test_update_makes_no_host_synchronisation_and_equals_the_cpu_path(cls):
    g = torch.Generator().manual_seed(0)
    batches = _batches(cls, g)
    cpu, gpu = cls(thresholds=T, **KWARGS[cls]), cls(thresholds=T, **KWARGS[cls]).cuda()
    gpu.update(*(t.cuda() for t in batches[0]))  # warm-up: kernels, workspace, thresholds placed
    cpu.update(*batches[0])
    on_gpu = [tuple(t.cuda() for t in b) for b in batches]
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for batch in on_gpu:
            gpu.update(*batch)
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    # the CPU metric gets the logit batch converted by the same op on the GPU (torch's CPU and CUDA
    # sigmoid may differ in the last bit): the histograms must then agree exactly
    softmax = cls is MulticlassAUROC
    logits = on_gpu[1][0]
    converted = (logits.softmax(dim=1) if softmax else logits.sigmoid()).cpu()
    for batch in (batches[0], (converted, batches[1][1])):
        cpu.update(*batch)
    gpu.compute()  # raises a rejected update, if any
    assert torch.equal(gpu.hist.cpu(), cpu.hist)


@pytest.mark.parametrize("row", [[0.5, float("nan"), 1.0], [0.5, float("inf"), 1.0], [-float("inf")] * 3])
def test_a_bad_multiclass_batch_is_refused_later_with_its_cause(row):
    metric = MulticlassAUROC(num_classes=3, thresholds=T).cuda()
    metric.update(torch.rand(8, 3, device="cuda"), torch.randint(0, 3, (8,), device="cuda"))
    before = metric.hist.clone()
    preds = torch.randn(8, 3) * 3
    preds[2] = torch.tensor(row)
    metric.update(preds.cuda(), torch.randint(0, 3, (8,)).cuda())  # deferred: returns at once
    with pytest.raises(ValueError, match=r"preds: NaN at sample 2, column 0 \(a NaN score, or a row of logits"):
        metric.compute()
    assert torch.equal(metric.hist, before)  # the batch was undone on the device
