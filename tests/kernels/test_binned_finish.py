"""torchtally._C.binned_finish, the binned curves' AUROC and average precision per column of a
histogram (csrc/API.md), against the torch functions of torchtally.functional.curves.compute."""

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.kernel_inputs import kernels as kernel_module

from torchtally import kernels
from torchtally.classification import BinaryAUROC, MulticlassAUROC, MulticlassAveragePrecision, MultilabelAUROC
from torchtally.functional.curves import compute

SENTINEL = 7.0
COUNT = st.one_of(st.just(0), st.just(0), st.integers(1, 9), st.integers(0, 2**40))


@pytest.fixture
def c_core():
    """torchtally._C itself (a failure, never a skip, when it is not built)."""
    return kernel_module("c")


@st.composite
def histograms(draw):
    """int64 [R, T + 1, 2]: mostly small counts and zeros, so columns without positives or
    negatives, and empty bins, happen often."""
    rows, bins = draw(st.integers(1, 4)), draw(st.integers(2, 12))
    values = draw(st.lists(COUNT, min_size=rows * bins * 2, max_size=rows * bins * 2))
    hist = torch.tensor(values, dtype=torch.int64).reshape(rows, bins, 2)
    for r in range(rows):  # whole columns without positives or without negatives
        side = draw(st.sampled_from([None, 0, 1]))
        if side is not None:
            hist[r, :, side] = 0
    return hist


def oracle(hist: torch.Tensor, metric: int) -> torch.Tensor:
    """The torch path: Counts from the histogram, then the area or the average precision."""
    counts = compute.binned_counts(hist, torch.linspace(0, 1, hist.shape[1] - 1, dtype=torch.float64))
    return compute.auroc(counts) if metric == 0 else compute.average_precision(counts)


@settings(max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(histograms(), st.sampled_from([0, 1]))
def test_binned_finish_matches_the_torch_functions(c_core, hist, metric):
    out = torch.full((hist.shape[0], 3), SENTINEL, dtype=torch.float64)
    c_core.binned_finish(out, hist, metric)
    want = oracle(hist, metric)
    # the same float64 divisions; the area's terms are added in another order (torch's vectorised
    # sum, a loop here), so the last bits may differ
    torch.testing.assert_close(out[:, 0], want, rtol=1e-12, atol=1e-15, equal_nan=True)
    assert torch.equal(out[:, 1], hist[:, :, 1].sum(1).double())
    assert torch.equal(out[:, 2], hist[:, :, 0].sum(1).double())


BAD = [
    (
        "metric 2",
        ValueError,
        "metric",
        torch.zeros(2, 3, dtype=torch.float64),
        torch.zeros(2, 4, 2, dtype=torch.int64),
        2,
    ),
    ("hist float", TypeError, "hist", torch.zeros(2, 3, dtype=torch.float64), torch.zeros(2, 4, 2), 0),
    (
        "hist [R, 1, 2]",
        ValueError,
        "hist",
        torch.zeros(2, 3, dtype=torch.float64),
        torch.zeros(2, 1, 2, dtype=torch.int64),
        0,
    ),
    (
        "hist [R, T, 3]",
        ValueError,
        "hist",
        torch.zeros(2, 3, dtype=torch.float64),
        torch.zeros(2, 4, 3, dtype=torch.int64),
        0,
    ),
    (
        "hist strided",
        ValueError,
        "hist",
        torch.zeros(4, 3, dtype=torch.float64),
        torch.zeros(4, 2, 4, dtype=torch.int64).transpose(1, 2),
        0,
    ),
    ("out float32", TypeError, "out", torch.zeros(2, 3), torch.zeros(2, 4, 2, dtype=torch.int64), 0),
    (
        "out [R, 2]",
        ValueError,
        "out",
        torch.zeros(2, 2, dtype=torch.float64),
        torch.zeros(2, 4, 2, dtype=torch.int64),
        0,
    ),
    (
        "out other R",
        ValueError,
        "out",
        torch.zeros(3, 3, dtype=torch.float64),
        torch.zeros(2, 4, 2, dtype=torch.int64),
        0,
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_naming_the_argument_and_leaves_out_unchanged(c_core, case):
    _, error, argument, out, hist, metric = case
    out.fill_(SENTINEL)
    with pytest.raises(error, match=rf"^{argument}: "):
        c_core.binned_finish(out, hist, metric)
    assert bool((out == SENTINEL).all())


def _updated(make, reference: bool):
    previous = kernels.set_backend("reference") if reference else None
    try:
        g = torch.Generator().manual_seed(5)
        metric = make()
        for n in (50, 90):
            scores = torch.rand(n, 4, generator=g)
            target = torch.randint(0, 4, (n,), generator=g)
            target[target == 3] = 0  # class 3 never a positive: NaN AUROC, left out of macro
            if isinstance(metric, MultilabelAUROC):
                metric.update(scores, torch.randint(0, 2, (n, 4), generator=g))
            elif isinstance(metric, BinaryAUROC):
                metric.update(scores[:, 0], (target == 1).long())
            else:
                metric.update(scores, target)
        return metric.compute()
    finally:
        if previous is not None:
            kernels.set_backend(previous)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "make",
    [
        lambda: BinaryAUROC(thresholds=20),
        lambda: MulticlassAUROC(4, thresholds=20),
        lambda: MulticlassAUROC(4, average="weighted", thresholds=11),
        lambda: MulticlassAUROC(4, average=None, thresholds=11),
        lambda: MulticlassAveragePrecision(4, thresholds=20),
        lambda: MulticlassAveragePrecision(4, average=None, thresholds=20),
        lambda: MultilabelAUROC(4, average="micro", thresholds=15),
    ],
)
def test_the_curve_classes_give_the_reference_backends_values(make):
    got, want = _updated(make, reference=False), _updated(make, reference=True)
    assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=2 * 2**-23, atol=0, equal_nan=True)


def test_a_column_without_positives_still_warns_naming_it():
    metric = MulticlassAUROC(3, thresholds=10)
    metric.update(torch.rand(6, 3), torch.tensor([0, 1, 0, 1, 0, 1]))
    with pytest.warns(UserWarning, match=r"AUROC is undefined \(NaN\) for class \[2\]"):
        value = metric.compute()
    assert not math.isnan(value.item())
