"""BinaryHingeLoss, MulticlassHingeLoss, HingeLoss and their functional forms, against
scikit-learn's hinge_loss and torchmetrics: the shared tester (one process and 3 gloo ranks),
logits, ignore_index, extra dims, and bad input (state unchanged)."""

import functools

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.functional.classification as tmf
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.classification import BinaryHingeLoss, HingeLoss, MulticlassHingeLoss
from torchtally.functional import binary_hinge_loss, hinge_loss, multiclass_hinge_loss

P = functools.partial
G = torch.Generator().manual_seed(7)
N, C = 37, 4
BIN_P, BIN_T = torch.rand(N, generator=G), torch.randint(0, 2, (N,), generator=G)
MC_P = torch.rand(N, C, generator=G).softmax(1)
MC_T = torch.randint(0, C, (N,), generator=G)


def _split(*tensors, sizes=(5, 11, 1, 9, 11)):
    out, start = [], 0
    for s in sizes:
        out.append(tuple(t[start : start + s] for t in tensors))
        start += s
    return out


def _sk_binary(p, t):
    return skm.hinge_loss(2 * t.numpy() - 1, p.double().numpy())


def _sk_crammer_singer(p, t):
    return skm.hinge_loss(t.numpy(), p.double().numpy(), labels=np.arange(C))


CASES = [
    MetricCase("binary", BinaryHingeLoss, _split(BIN_P, BIN_T), _sk_binary, rtol=1e-6),
    MetricCase(
        "binary_squared",
        P(BinaryHingeLoss, squared=True),
        _split(BIN_P, BIN_T),
        lambda p, t: tmf.binary_hinge_loss(p, t, squared=True),
        rtol=1e-6,
    ),
    MetricCase("crammer_singer", P(MulticlassHingeLoss, C), _split(MC_P, MC_T), _sk_crammer_singer, rtol=1e-6),
    MetricCase(
        "one_vs_all_squared",
        P(MulticlassHingeLoss, C, squared=True, multiclass_mode="one-vs-all"),
        _split(MC_P, MC_T),
        lambda p, t: tmf.multiclass_hinge_loss(p, t, C, squared=True, multiclass_mode="one-vs-all"),
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES)


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("ignore_index", [None, 1])
def test_functional_forms_match_torchmetrics(squared, ignore_index):
    logits = torch.randn(6, 3, 5, generator=G)  # [N, C, extra]: logits get softmax / sigmoid
    target = torch.randint(0, 3, (6, 5), generator=G)
    for mode in ("crammer-singer", "one-vs-all"):
        ours = multiclass_hinge_loss(logits, target, 3, squared, mode, ignore_index)
        theirs = tmf.multiclass_hinge_loss(logits, target, 3, squared, mode, ignore_index)
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        task = hinge_loss(logits, target, "multiclass", 3, squared, mode, ignore_index)
        torch.testing.assert_close(task, theirs, rtol=1e-5, atol=1e-6)
    bt = torch.randint(0, 2, (6, 5), generator=G)
    for p in (logits[:, 0], logits[:, 0].sigmoid().double()):
        ours, theirs = (
            binary_hinge_loss(p, bt, squared, ignore_index),
            tmf.binary_hinge_loss(p, bt, squared, ignore_index),
        )
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
        assert ours.dtype == theirs.dtype
        torch.testing.assert_close(hinge_loss(p, bt, "binary", squared=squared, ignore_index=ignore_index), theirs)


def test_task_wrapper_and_class_match_torchmetrics_on_logits():
    import torchmetrics

    m = HingeLoss(task="multiclass", num_classes=C, multiclass_mode="one-vs-all")
    assert isinstance(m, MulticlassHingeLoss)
    ref = torchmetrics.classification.MulticlassHingeLoss(C, multiclass_mode="one-vs-all")
    for p, t in _split(torch.randn(N, C, generator=G) * 3, MC_T):
        m.update(p, t)
        ref.update(p, t)
    torch.testing.assert_close(m.compute(), ref.compute(), rtol=1e-5, atol=1e-6)
    assert isinstance(HingeLoss(task="binary", squared=True), BinaryHingeLoss)
    with pytest.raises(ValueError, match="task"):
        HingeLoss(task="multilabel", num_classes=3)
    with pytest.raises(ValueError, match="num_classes"):
        HingeLoss(task="multiclass")


def test_bad_input_leaves_state_unchanged():
    m = MulticlassHingeLoss(C)
    m.update(MC_P[:5], MC_T[:5])
    assert_rejects(m, (MC_P[:3], torch.tensor([0, 1, C])), ValueError, "target")
    assert_rejects(m, (torch.full((2, C), float("nan")), MC_T[:2]), ValueError, "NaN")
    assert_rejects(m, (MC_P[:3, :2], MC_T[:3]), ValueError, "preds")
    assert_rejects(m, (MC_T[:3, None].expand(3, C), MC_T[:3]), TypeError, "preds")
    b = BinaryHingeLoss()
    b.update(BIN_P[:4], BIN_T[:4])
    assert_rejects(b, (BIN_P[:3], torch.tensor([0, 2, 1])), ValueError, "target")
    assert_rejects(b, (BIN_P[:3], BIN_T[:2]), ValueError, "target")
    assert_rejects(b, (BIN_P[:2], torch.tensor([0.5, 1.0])), ValueError, "target")
    with pytest.raises(ValueError, match="multiclass_mode"):
        MulticlassHingeLoss(C, multiclass_mode="ovr")
    with pytest.raises(ValueError, match="squared"):
        BinaryHingeLoss(squared=1)
