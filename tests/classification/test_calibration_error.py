"""BinaryCalibrationError, MulticlassCalibrationError, CalibrationError and their functional
forms, against torchmetrics (which keeps every confidence): the shared tester (one process and
3 gloo ranks), every norm, boundary confidences (0, a bin edge, 1), logits, ignore_index, and
bad input (state unchanged)."""

import functools

import pytest
import torch
import torchmetrics
import torchmetrics.functional.classification as tmf
from support.metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, run_distributed_cases

from torchtally.classification import BinaryCalibrationError, CalibrationError, MulticlassCalibrationError
from torchtally.functional import binary_calibration_error, calibration_error, multiclass_calibration_error

P = functools.partial
G = torch.Generator().manual_seed(11)
N, C = 41, 3
BIN_P = torch.rand(N, generator=G)
BIN_P[:4] = torch.tensor([0.0, 1.0, 0.2, 0.5])  # the first and last edge, two inner edges of 10 bins
BIN_T = torch.randint(0, 2, (N,), generator=G)
MC_P = (torch.rand(N, C, generator=G) * 4).softmax(1)
MC_T = torch.randint(0, C, (N,), generator=G)


def _split(*tensors, sizes=(6, 13, 1, 10, 11)):
    out, start = [], 0
    for s in sizes:
        out.append(tuple(t[start : start + s] for t in tensors))
        start += s
    return out


CASES = [
    MetricCase(
        f"binary_{norm}",
        P(BinaryCalibrationError, n_bins=10, norm=norm),
        _split(BIN_P, BIN_T),
        P(tmf.binary_calibration_error, n_bins=10, norm=norm),
        rtol=1e-5,
        atol=1e-6,
    )
    for norm in ("l1", "l2", "max")
] + [
    MetricCase(
        "multiclass_l1_and_max",
        CollectionFactory(
            l1=P(MulticlassCalibrationError, C, n_bins=7), top=P(MulticlassCalibrationError, C, n_bins=7, norm="max")
        ),
        _split(MC_P, MC_T),
        lambda p, t: {
            "l1": tmf.multiclass_calibration_error(p, t, C, n_bins=7),
            "top": tmf.multiclass_calibration_error(p, t, C, n_bins=7, norm="max"),
        },
        rtol=1e-5,
        atol=1e-6,
    )
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES)


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("ignore_index", [None, 2])
def test_functional_forms_match_torchmetrics(norm, ignore_index):
    logits = torch.randn(8, C, 3, generator=G) * 2
    target = torch.randint(0, C, (8, 3), generator=G)
    for n_bins in (1, 4, 15):
        ours = multiclass_calibration_error(logits, target, C, n_bins, norm, ignore_index)
        theirs = tmf.multiclass_calibration_error(logits, target, C, n_bins, norm, ignore_index)
        torch.testing.assert_close(ours, theirs.float(), rtol=1e-5, atol=1e-6)
        assert ours.dtype == torch.float32 and ours.shape == ()
        task = calibration_error(logits, target, "multiclass", n_bins, norm, C, ignore_index)
        torch.testing.assert_close(task, ours)
    bt = torch.randint(0, 2, (8, 3), generator=G)
    for p in (logits[:, 0], logits[:, 0].sigmoid().double()):
        ours = binary_calibration_error(p, bt, 5, norm, ignore_index)
        theirs = tmf.binary_calibration_error(p, bt, 5, norm, ignore_index)
        torch.testing.assert_close(ours, theirs.to(ours.dtype), rtol=1e-5, atol=1e-6)
        assert ours.dtype == p.dtype
        torch.testing.assert_close(calibration_error(p, bt, "binary", 5, norm, ignore_index=ignore_index), ours)


def test_class_matches_torchmetrics_over_logit_batches():
    m = CalibrationError(task="binary", n_bins=6, norm="l2")
    assert isinstance(m, BinaryCalibrationError)
    ref = torchmetrics.classification.BinaryCalibrationError(n_bins=6, norm="l2")
    for p, t in _split(torch.randn(N, generator=G) * 3, BIN_T):
        m.update(p, t)
        ref.update(p, t)
    torch.testing.assert_close(m.compute(), ref.compute(), rtol=1e-5, atol=1e-6)
    # the state is the bins: fixed size whatever the number of samples
    assert m.bin_counts.shape == (7,) and int(m.bin_counts.sum()) == N
    assert isinstance(CalibrationError(task="multiclass", num_classes=3), MulticlassCalibrationError)


def test_bad_input_leaves_state_unchanged():
    m = MulticlassCalibrationError(C)
    m.update(MC_P[:5], MC_T[:5])
    assert_rejects(m, (MC_P[:3], torch.tensor([0, 1, C])), ValueError, "target")
    assert_rejects(m, (torch.full((2, C), float("nan")), MC_T[:2]), ValueError, "NaN")
    assert_rejects(m, (MC_P[:3], MC_T[:2]), ValueError, "target")
    assert_rejects(m, (MC_P[:3], torch.tensor([0, 1, -1])), ValueError, r"label -1 at element 2 is out of range")
    one_nan = MC_P[:3].clone()
    one_nan[1, 0] = float("nan")  # one score: found by the probabilities' min and max, or by the search
    assert_rejects(m, (one_nan, MC_T[:3]), ValueError, "NaN")
    assert_rejects(MulticlassCalibrationError(C, ignore_index=-1), (one_nan, MC_T[:3]), ValueError, "NaN")
    MulticlassCalibrationError(C, ignore_index=-1).update(MC_P[:3], torch.tensor([0, -1, 1]))  # ignored: accepted
    b = BinaryCalibrationError()
    b.update(BIN_P[:4], BIN_T[:4])
    assert_rejects(b, (BIN_P[:3], torch.tensor([0, 2, 1])), ValueError, "target")
    assert_rejects(b, (BIN_T[:3], BIN_T[:3]), TypeError, "preds")
    for bad in ({"n_bins": 0}, {"norm": "l3"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            BinaryCalibrationError(**bad)


@pytest.mark.parametrize("n_bins", [1, 2000])
def test_any_number_of_bins_matches_torchmetrics(n_bins):
    # the C kernel keeps its private per-bin totals on the heap: no limit on n_bins
    g = torch.Generator().manual_seed(n_bins)
    preds, target = torch.rand(3000, generator=g), torch.randint(0, 2, (3000,), generator=g)
    ours = BinaryCalibrationError(n_bins=n_bins)
    for i in range(0, 3000, 1000):
        ours.update(preds[i : i + 1000], target[i : i + 1000])
    expected = torchmetrics.classification.BinaryCalibrationError(n_bins=n_bins)(preds, target)
    torch.testing.assert_close(ours.compute(), expected, rtol=1e-5, atol=1e-6)
