"""Curve metrics: the per-update input path (CurveTask._flatten / _probabilities / accumulate).

The update path has fast branches (CPU thresholds without a device lookup, 2-D inputs without
reshape, detach instead of a no_grad context, min/max read with .item() on CPU); these tests
pin what those branches must keep: the histogram of every layout and score dtype against a
naive one, the logits rule, the exact error texts, and no autograd graph in the state.
"""

import re

import pytest
import torch
from support.metric_tester import assert_rejects

from torchtally import BinaryAUROC, MulticlassAUROC, MultilabelAUROC
from torchtally.functional.curves.update import CurveTask

T = 11
SCORE_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _naive_hist(task: str, k: int, preds: torch.Tensor, target: torch.Tensor, thresholds: torch.Tensor) -> torch.Tensor:
    """hist[k, bin, is_positive] from the contract (csrc/API.md), on inputs already [N] / [N, K]."""
    scores = preds.double().reshape(-1, 1) if task == "binary" else preds.double()
    if task == "multiclass":
        positive = target.long()[:, None] == torch.arange(k)[None, :]
    else:
        positive = target.long().reshape(scores.shape) == 1
    bins = torch.searchsorted(thresholds.double(), scores.contiguous(), right=True)  # #{t <= s}
    hist = torch.zeros(k, thresholds.numel() + 1, 2, dtype=torch.int64)
    for col in range(k):
        hist[col].index_put_(
            (bins[:, col], positive[:, col].long()), torch.ones(len(bins), dtype=torch.int64), accumulate=True
        )
    return hist


def _layouts(g: torch.Generator):
    """(task, k, preds in probability scale, target, preds/target folded to [N] / [N, K])."""
    n, k = 13, 4
    p1 = torch.rand(n, generator=g)
    t1 = torch.randint(0, 2, (n,), generator=g)
    yield "binary", 1, p1, t1, lambda p, t: (p, t)
    p2 = torch.rand(n, 3, generator=g)
    t2 = torch.randint(0, 2, (n, 3), generator=g)
    yield "binary", 1, p2, t2, lambda p, t: (p.reshape(-1), t.reshape(-1))
    pc = torch.rand(n, k, generator=g)
    tc = torch.randint(0, k, (n,), generator=g)
    yield "multiclass", k, pc, tc, lambda p, t: (p, t)
    yield "multiclass", k, pc.t().contiguous().t(), tc, lambda p, t: (p, t)  # non-contiguous [N, K]
    pc3 = torch.rand(n, k, 5, generator=g)
    tc3 = torch.randint(0, k, (n, 5), generator=g)
    yield "multiclass", k, pc3, tc3, lambda p, t: (p.movedim(1, -1).reshape(-1, k), t.reshape(-1))
    pl = torch.rand(n, k, generator=g)
    tl = torch.randint(0, 2, (n, k), generator=g)
    yield "multilabel", k, pl, tl, lambda p, t: (p, t)
    pl3 = torch.rand(n, k, 2, generator=g)
    tl3 = torch.randint(0, 2, (n, k, 2), generator=g)
    yield "multilabel", k, pl3, tl3, lambda p, t: (p.movedim(1, -1).reshape(-1, k), t.movedim(1, -1).reshape(-1, k))


@pytest.mark.parametrize("dtype", SCORE_DTYPES)
@pytest.mark.parametrize("scale", ["probabilities", "logits"])
def test_histogram_of_every_layout_and_dtype_matches_naive(dtype, scale):
    g = torch.Generator().manual_seed(7)
    for task, k, preds, target, fold in _layouts(g):
        if scale == "logits":  # any value outside [0, 1]: the whole batch goes through sigmoid/softmax
            preds = (preds - 0.5) * 6
        preds = preds.to(dtype)
        curve = CurveTask(task, k, thresholds=T)
        hist = torch.zeros(curve.declare()[0][1].shape, dtype=torch.int64)
        curve.accumulate(hist, preds, target)
        p, t = fold(preds, target)
        if scale == "logits":
            p = p.softmax(dim=1) if task == "multiclass" else p.sigmoid()
        expected = _naive_hist(task, k, p, t, curve.thresholds.kernel)
        assert torch.equal(hist, expected), (task, tuple(preds.shape), dtype, scale)


@pytest.mark.parametrize("dtype", SCORE_DTYPES)
def test_logits_rule_at_the_unit_interval_edges(dtype):
    """[0, 1] inclusive is probabilities; one value just outside turns the batch into logits."""
    thresholds = torch.linspace(0, 1, T).double()
    target = torch.tensor([0, 1, 1, 0])
    inside = torch.tensor([0.0, 1.0, 0.5, 0.25], dtype=dtype)
    above = torch.tensor([0.0, 1.0, 0.5, 1.5], dtype=dtype)
    below = torch.tensor([-0.5, 1.0, 0.5, 0.25], dtype=dtype)
    for preds, scores in ((inside, inside), (above, above.sigmoid()), (below, below.sigmoid())):
        curve = CurveTask("binary", 1, thresholds=T)
        hist = torch.zeros(1, T + 1, 2, dtype=torch.int64)
        curve.accumulate(hist, preds, target)
        assert torch.equal(hist, _naive_hist("binary", 1, scores, target, thresholds)), preds.tolist()


def test_logits_rule_uses_kept_samples_only_with_ignore_index():
    """An ignored sample's score outside [0, 1] does not turn the batch into logits (binary)."""
    thresholds = torch.linspace(0, 1, T).double()
    preds = torch.tensor([0.2, 0.9, 7.0, 0.4])
    target = torch.tensor([0, 1, -1, 1])
    curve = CurveTask("binary", 1, thresholds=T, ignore_index=-1)
    hist = torch.zeros(1, T + 1, 2, dtype=torch.int64)
    curve.accumulate(hist, preds, target)
    kept = target != -1
    assert torch.equal(hist, _naive_hist("binary", 1, preds[kept], target[kept], thresholds))


def _good(cls):
    if cls is MulticlassAUROC:
        return torch.rand(4, 3), torch.tensor([0, 1, 2, 0])
    if cls is MultilabelAUROC:
        return torch.rand(4, 2), torch.tensor([[0, 1], [1, 0], [1, 1], [0, 0]])
    return torch.rand(4), torch.tensor([0, 1, 1, 0])


# (metric, kwargs, bad batch, exception, the whole message): the texts of the update path before
# it was made lean, checked verbatim.
_BAD = [
    (
        BinaryAUROC,
        {},
        (torch.rand(8, 2), torch.ones(8, 3, dtype=torch.long)),
        ValueError,
        "target: expected shape [8, 2] to match preds [8, 2], got int64 [8, 3]",
    ),
    (
        BinaryAUROC,
        {},
        (torch.ones(8, dtype=torch.int32), torch.ones(8, dtype=torch.long)),
        TypeError,
        "preds: expected a floating tensor of shape [N, ...], got int32 [8]",
    ),
    (
        BinaryAUROC,
        {},
        (torch.rand(8), torch.full((8,), 0.25)),
        ValueError,
        "target: expected 0 or 1 (a float target holds labels), got 0.25 at sample 0",
    ),
    (
        BinaryAUROC,
        {},
        (torch.rand(8), torch.ones(8, dtype=torch.complex64)),
        TypeError,
        "target: expected a tensor of integer, bool or float 0/1 labels, got complex64 [8]",
    ),
    (BinaryAUROC, {}, (torch.rand(8), [0, 1]), TypeError, "target: expected a tensor, got list"),
    (
        BinaryAUROC,
        {},
        (torch.tensor([0.1, float("nan"), 0.2]), torch.tensor([0, 1, 0])),
        ValueError,
        "preds: NaN at sample 1",
    ),
    (
        BinaryAUROC,
        {},
        (torch.rand(8), torch.ones(8, dtype=torch.long, device="meta")),
        ValueError,
        "target: expected a tensor on cpu (the device of the metric state), got meta",
    ),
    (
        MulticlassAUROC,
        {"num_classes": 3},
        (torch.rand(8, 3), torch.zeros(7, dtype=torch.long)),
        ValueError,
        "target: expected shape [8] to match preds [8, 3], got int64 [7]",
    ),
    (
        MulticlassAUROC,
        {"num_classes": 3},
        (torch.rand(8, 3), torch.zeros(8, 1, dtype=torch.long)),
        ValueError,
        "target: expected shape [8] to match preds [8, 3], got int64 [8, 1]",
    ),
    (
        MulticlassAUROC,
        {"num_classes": 3},
        (torch.rand(4, 3, 5), torch.zeros(4, 6, dtype=torch.long)),
        ValueError,
        "target: expected shape [4, 5] to match preds [4, 3, 5], got int64 [4, 6]",
    ),
    (
        MulticlassAUROC,
        {"num_classes": 3},
        (torch.rand(8, 4), torch.zeros(8, dtype=torch.long)),
        ValueError,
        "preds: expected a floating tensor of shape [N, C, ...] with C = 3, got float32 [8, 4]",
    ),
    (
        MulticlassAUROC,
        {"num_classes": 3},
        (torch.ones(8, 3, dtype=torch.long), torch.zeros(8, dtype=torch.long)),
        TypeError,
        "preds: expected a floating tensor of shape [N, C, ...] with C = 3, got int64 [8, 3]",
    ),
    (
        MulticlassAUROC,
        {"num_classes": 3},
        (torch.full((2, 3), float("nan")), torch.zeros(2, dtype=torch.long)),
        ValueError,
        "preds: NaN at sample 0",
    ),
    (
        MultilabelAUROC,
        {"num_labels": 2},
        (torch.rand(8, 2), torch.ones(8, 3, dtype=torch.long)),
        ValueError,
        "target: expected shape [8, 2] to match preds [8, 2], got int64 [8, 3]",
    ),
    (
        MultilabelAUROC,
        {"num_labels": 2},
        (torch.rand(8, 2, 3), torch.ones(8, 2, 4, dtype=torch.long)),
        ValueError,
        "target: expected shape [8, 2, 3] to match preds [8, 2, 3], got int64 [8, 2, 4]",
    ),
    (
        MultilabelAUROC,
        {"num_labels": 2},
        (torch.rand(8), torch.ones(8, dtype=torch.long)),
        ValueError,
        "preds: expected a floating tensor of shape [N, L, ...] with L = 2, got float32 [8]",
    ),
]


@pytest.mark.parametrize("thresholds", [None, T])
@pytest.mark.parametrize("case", range(len(_BAD)))
def test_bad_input_message_verbatim_and_state_unchanged(case, thresholds):
    cls, kwargs, args, exc, message = _BAD[case]
    metric = cls(thresholds=thresholds, **kwargs)
    metric.update(*_good(cls))
    assert_rejects(metric, args, exc, "^" + re.escape(message) + "$")


def test_preds_on_another_device_than_the_state_named():
    """The device test behind the CPU fast path: preds off the state's device is named too."""
    curve = CurveTask("binary", 1, thresholds=T)
    hist = torch.zeros(1, T + 1, 2, dtype=torch.int64)
    with pytest.raises(
        ValueError, match=r"^preds: expected a tensor on cpu \(the device of the metric state\), got meta$"
    ):
        curve.accumulate(hist, torch.rand(4, device="meta"), torch.ones(4, dtype=torch.long))
    assert not hist.any()


@pytest.mark.parametrize("thresholds", [None, T])
@pytest.mark.parametrize("scale", ["probabilities", "logits"])
def test_preds_requiring_grad_leave_no_graph(thresholds, scale):
    """The update detaches preds instead of running under no_grad: still no graph in the state,
    no gradient on the input, and grad mode untouched for the caller."""
    base = torch.rand(6, 3) if scale == "probabilities" else torch.randn(6, 3) * 4
    preds = base.clone().requires_grad_(True)
    target = torch.tensor([0, 1, 2, 0, 1, 2])
    metric = MulticlassAUROC(3, thresholds=thresholds, average="none")
    metric.update(preds, target)
    assert torch.is_grad_enabled()
    for name in metric.state_names:
        state = getattr(metric, name)
        assert not state.requires_grad and state.grad_fn is None, name
    assert preds.grad is None
    if thresholds is None:  # the rows that exact mode stores, before the Metric base sees them
        scores, labels = CurveTask("multiclass", 3).rows(preds, target, torch.device("cpu"))
        assert not scores.requires_grad and scores.grad_fn is None
    reference = MulticlassAUROC(3, thresholds=thresholds, average="none").update(base, target)
    torch.testing.assert_close(metric.compute(), reference.compute(), equal_nan=True)


def test_kernel_thresholds_per_device():
    """CPU uses the parsed float64 thresholds as they are; another device gets one cached copy,
    made again for a different device (here "meta": its tensors have no data, only placement)."""
    curve = CurveTask("multiclass", 3, thresholds=[0.0, 0.3, 0.7, 1.0])
    cpu = curve._thresholds_on(torch.zeros(1))
    assert cpu is curve.thresholds.kernel and cpu.dtype == torch.float64 and cpu.is_contiguous()
    meta = curve._thresholds_on(torch.zeros(1, device="meta"))
    assert meta.device.type == "meta" and meta.dtype == torch.float64 and meta.shape == (4,)
    assert curve._thresholds_on(torch.zeros(1, device="meta")) is meta  # cached: no copy per update
    assert curve._thresholds_on(torch.zeros(1)) is cpu


def test_metric_thresholds_follow_the_state_after_to():
    """After .to(), the update reads thresholds on the state's new device ("meta": placement
    only, so no update runs there), while the CPU copy stays the parsed one."""
    metric = MulticlassAUROC(3, thresholds=T)
    cpu = metric._curve._thresholds_on(metric.hist)
    metric.to("meta")
    assert metric.hist.device.type == "meta"
    assert metric._curve._thresholds_on(metric.hist).device.type == "meta"
    assert metric._curve._thresholds_on(torch.zeros(1)) is cpu
