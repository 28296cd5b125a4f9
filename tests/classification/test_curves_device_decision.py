"""Binned curves on a device where a host read waits for it (CUDA): the probabilities-or-logits
rule is decided on the device (CurveTask._probabilities_on_device), NaN and undefined softmax
rows are left to binned_update's own check. Without a GPU the tests force that path on CPU
tensors through the one predicate it asks (kernels.reads_cost_a_sync) and compare it with the
CPU path, which reads min/max on the host."""

import contextlib

import pytest
import torch
from support.metric_tester import assert_rejects

from torchtally import BinaryAUROC, MulticlassAUROC, MultilabelAUROC, kernels
from torchtally.functional.curves.update import CurveTask

T = 11
SCORE_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
HOST_READS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__")


@pytest.fixture
def device_path(monkeypatch):
    monkeypatch.setattr(kernels, "reads_cost_a_sync", lambda t: True)


@contextlib.contextmanager
def counting_host_reads():
    """Counts every read of a tensor's values into Python (each one a sync on CUDA)."""
    count = [0]
    saved = {name: getattr(torch.Tensor, name) for name in HOST_READS}

    def counted(original):
        def read(self, *args, **kwargs):
            count[0] += 1
            return original(self, *args, **kwargs)

        return read

    try:
        for name, original in saved.items():
            setattr(torch.Tensor, name, counted(original))
        yield count
    finally:
        for name, original in saved.items():
            setattr(torch.Tensor, name, original)


def _batches(task: str, k: int, dtype: torch.dtype, g: torch.Generator):
    """(name, preds, target): probabilities, logits, and probabilities with one logit in them."""
    n = 37
    shape = (n,) if task == "binary" else (n, k)
    target = torch.randint(0, k, (n,), generator=g) if task == "multiclass" else torch.randint(0, 2, shape, generator=g)
    probabilities = torch.rand(shape, generator=g)
    logits = (torch.rand(shape, generator=g) - 0.5) * 12
    mixed = probabilities.clone()
    mixed.view(-1)[5] = 1.25
    edges = probabilities.clone()
    edges.view(-1)[:2] = torch.tensor([0.0, 1.0])  # [0, 1] is inclusive: still probabilities
    for name, preds in (("probabilities", probabilities), ("logits", logits), ("mixed", mixed), ("edges", edges)):
        yield name, preds.to(dtype), target


def _hist(curve: CurveTask, preds: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    hist = torch.zeros(curve.declare()[0][1].shape, dtype=torch.int64)
    curve.accumulate(hist, preds, target)
    return hist


@pytest.mark.parametrize("dtype", SCORE_DTYPES)
@pytest.mark.parametrize(
    "task,k,ignore_index",
    [
        ("binary", 1, None),
        ("binary", 1, -1),
        ("multiclass", 5, None),
        ("multiclass", 5, 2),
        ("multilabel", 3, None),
        ("multilabel", 3, 0),
    ],
)
def test_device_decision_equals_the_cpu_path(monkeypatch, task, k, ignore_index, dtype):
    g = torch.Generator().manual_seed(3)
    for name, preds, target in _batches(task, k, dtype, g):
        if ignore_index is not None and task != "multilabel":
            target = target.clone()
            target[::4] = ignore_index
            if name == "mixed":  # an ignored sample's score outside [0, 1] does not vote
                preds = preds.clone()
                preds[0] = 7.0
        expected = _hist(CurveTask(task, k, thresholds=T, ignore_index=ignore_index), preds, target)
        with monkeypatch.context() as m:
            m.setattr(kernels, "reads_cost_a_sync", lambda t: True)
            got = _hist(CurveTask(task, k, thresholds=T, ignore_index=ignore_index), preds, target)
        assert torch.equal(got, expected), (task, name, dtype, ignore_index)


def test_device_decision_converts_only_batches_outside_the_unit_interval(device_path):
    """Not a copy of the CPU path's outcome only: the histogram of a logit batch is the sigmoid's."""
    curve = CurveTask("binary", 1, thresholds=T)
    target = torch.tensor([0, 1, 1, 0])
    inside = torch.tensor([0.0, 1.0, 0.5, 0.25])
    above = torch.tensor([0.0, 1.0, 0.5, 1.5])
    assert torch.equal(
        _hist(curve, inside, target), _hist(CurveTask("binary", 1, thresholds=T, normalization=None), inside, target)
    )
    plain = _hist(CurveTask("binary", 1, thresholds=T, normalization=None), above.sigmoid(), target)
    assert torch.equal(_hist(curve, above, target), plain)


@pytest.mark.parametrize("dtype", SCORE_DTYPES)
@pytest.mark.parametrize("task,k", [("binary", 1), ("multiclass", 4), ("multilabel", 3)])
def test_device_decision_reads_nothing_on_the_host(device_path, task, k, dtype):
    g = torch.Generator().manual_seed(5)
    for ignore_index in (None, 1):
        curve = CurveTask(task, k, thresholds=T, ignore_index=ignore_index)
        hist = torch.zeros(curve.declare()[0][1].shape, dtype=torch.int64)
        for _, preds, target in _batches(task, k, dtype, g):
            with counting_host_reads() as reads:
                curve.accumulate(hist, preds, target)
            assert reads[0] == 0, (task, dtype, ignore_index)


def test_the_host_read_counter_sees_the_cpu_path():
    """The counter above can fail: the CPU path reads min/max on the host."""
    curve = CurveTask("binary", 1, thresholds=T)
    hist = torch.zeros(1, T + 1, 2, dtype=torch.int64)
    with counting_host_reads() as reads:
        curve.accumulate(hist, torch.rand(8) * 3, torch.randint(0, 2, (8,)))
    assert reads[0] > 0


def _nan_batches():
    nan = float("nan")
    yield BinaryAUROC, {}, torch.tensor([0.1, nan, 0.2, 0.9]), torch.tensor([0, 1, 0, 1]), "NaN at sample 1"
    yield BinaryAUROC, {}, torch.tensor([0.1, nan, 3.0, 0.9]), torch.tensor([0, 1, 0, 1]), "NaN at sample 1"
    # NaN in an ignored sample is refused too (as on the CPU path and in the kernels)
    yield BinaryAUROC, {"ignore_index": -1}, torch.tensor([0.1, nan, 0.2]), torch.tensor([0, -1, 1]), "NaN at sample 1"
    multiclass = torch.rand(4, 3)
    multiclass[2, 1] = nan
    yield MulticlassAUROC, {"num_classes": 3}, multiclass, torch.tensor([0, 1, 2, 0]), "NaN at sample 2"
    multilabel = torch.rand(4, 2) * 4
    multilabel[3, 1] = nan
    yield (
        MultilabelAUROC,
        {"num_labels": 2},
        multilabel,
        torch.tensor([[0, 1], [1, 0], [1, 1], [0, 0]]),
        "NaN at sample 3",
    )


@pytest.mark.parametrize("case", range(5))
def test_nan_batch_refused_state_unchanged(device_path, case):
    cls, kwargs, preds, target, where = list(_nan_batches())[case]
    metric = cls(thresholds=T, **kwargs)
    good = (torch.rand(4), torch.tensor([0, 1, 1, 0]))
    if cls is MulticlassAUROC:
        good = (torch.rand(4, 3), torch.tensor([0, 1, 2, 0]))
    if cls is MultilabelAUROC:
        good = (torch.rand(4, 2), torch.tensor([[0, 1], [1, 0], [1, 1], [0, 0]]))
    metric.update(*good)
    assert_rejects(metric, (preds, target), ValueError, f"^preds: {where}")


@pytest.mark.parametrize("row", [[0.5, float("inf"), 1.0], [-float("inf")] * 3])
def test_undefined_softmax_refused_with_its_cause(device_path, row):
    metric = MulticlassAUROC(num_classes=3, thresholds=T)
    metric.update(torch.rand(4, 3), torch.tensor([0, 1, 2, 0]))
    preds = torch.randn(4, 3)
    preds[1] = torch.tensor(row)
    assert_rejects(
        metric, (preds, torch.tensor([0, 1, 2, 0])), ValueError, r"^preds: NaN at sample 1.*softmax is undefined"
    )


def test_binary_softmax_normalization_still_refused_at_the_call(device_path):
    """normalization='softmax' keeps the host check: its refusal has no NaN to leave to the kernel."""
    metric = BinaryAUROC(thresholds=T, normalization="softmax")
    metric.update(torch.rand(4), torch.tensor([0, 1, 1, 0]))
    assert_rejects(metric, (torch.rand(4) * 3, torch.tensor([0, 1, 1, 0])), ValueError, "normalization='softmax'")


@pytest.mark.parametrize(
    "cls,kwargs,scale",
    [(BinaryAUROC, {}, 6), (MulticlassAUROC, {"num_classes": 4}, 6), (MultilabelAUROC, {"num_labels": 4}, 1)],
)
def test_metric_values_equal_the_cpu_path(monkeypatch, cls, kwargs, scale):
    g = torch.Generator().manual_seed(11)
    shape = (50,) if cls is BinaryAUROC else (50, 4)
    batches = []
    for i in range(4):
        preds = torch.rand(shape, generator=g) * (scale if i % 2 else 1)  # probability and logit batches
        target = (
            torch.randint(0, 4, (50,), generator=g)
            if cls is MulticlassAUROC
            else torch.randint(0, 2, shape, generator=g)
        )
        batches.append((preds, target))
    expected = cls(thresholds=T, **kwargs)
    for batch in batches:
        expected.update(*batch)
    monkeypatch.setattr(kernels, "reads_cost_a_sync", lambda t: True)
    got = cls(thresholds=T, **kwargs)
    for batch in batches:
        got.update(*batch)
    assert torch.equal(got.compute(), expected.compute())


def test_functional_forms_take_the_same_path(monkeypatch):
    from torchtally.functional.classification import binary_auroc, multiclass_roc

    g = torch.Generator().manual_seed(2)
    logits, target = torch.randn(40, 3, generator=g) * 3, torch.randint(0, 3, (40,), generator=g)
    expected = (binary_auroc(logits[:, 0], target.clamp(max=1), thresholds=T), multiclass_roc(logits, target, 3, T))
    monkeypatch.setattr(kernels, "reads_cost_a_sync", lambda t: True)
    got = (binary_auroc(logits[:, 0], target.clamp(max=1), thresholds=T), multiclass_roc(logits, target, 3, T))
    assert torch.equal(got[0], expected[0])
    assert all(torch.equal(a, b) for a, b in zip(got[1], expected[1]))
    logits[4, 1] = float("nan")
    with pytest.raises(ValueError, match="^preds: NaN at sample 4"):
        multiclass_roc(logits, target, 3, T)
