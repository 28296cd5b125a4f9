"""torchtally._C.exact_curve_rates, the float32 ROC / precision-recall curves of an exact curve
state (csrc/API_CURVES.md): bit for bit against its torch reference
(kernels/reference/exact_curve.py), and the reference against the curves compute.py forms from
the points (roc_rates / pr_curve), the numbers the curve classes returned before."""

import pytest
import torch
from hypothesis import given
from support.kernel_inputs import kernels as kernel_module
from test_exact_curve import SENTINEL, SETTINGS, states

from torchtally.functional.curves import compute
from torchtally.kernels.reference import exact_curve as reference


@pytest.fixture
def c_core():
    """torchtally._C itself (a failure, never a skip, when it is not built)."""
    return kernel_module("c")


def _outputs(scores):
    n, k = scores.shape
    curves = torch.full((k, 3, n + 1), SENTINEL, dtype=torch.float32)
    return curves, torch.full((k, 3), -3, dtype=torch.int64)


def _bits(x):
    return x.view(torch.int32)


@SETTINGS
@given(states())
def test_curves_match_the_reference_bit_for_bit(c_core, state):
    scores, labels, task = state
    for kind in (0, 1, 2):
        got, got_sizes = _outputs(scores)
        want, want_sizes = _outputs(scores)
        c_core.exact_curve_rates(got, got_sizes, scores, labels, task, kind)
        reference.exact_curve_rates(want, want_sizes, scores, labels, task, kind)
        assert torch.equal(got_sizes, want_sizes)
        # NaN thresholds and recalls, -0.0 thresholds: the same bits; SENTINEL past the curve
        assert torch.equal(_bits(got), _bits(want))


@SETTINGS
@given(states())
def test_the_reference_is_the_curve_compute_forms_from_the_points(state):
    scores, labels, task = state
    for kind, form in ((0, compute.roc_rates), (1, compute.pr_curve)):
        curves, sizes = _outputs(scores)
        reference.exact_curve_rates(curves, sizes, scores, labels, task, kind)
        for column in range(scores.shape[1]):
            c = compute.exact_counts(*reference.column_points(scores, labels, task, column))
            x, y, t = form(c)
            m = int(sizes[column, 0])
            assert sizes[column, 1:].tolist() == [int(c.pos), int(c.neg)]
            assert torch.equal(_bits(curves[column, 0, : m + 1]), _bits(x[0].float()))
            assert torch.equal(_bits(curves[column, 1, : m + 1]), _bits(y[0].float()))
            assert torch.equal(_bits(curves[column, 2, : t.numel()]), _bits(t))


def test_a_column_without_positives_reads_its_recall_by_kind(c_core):
    scores, labels = torch.tensor([[0.2], [0.7], [0.7]]), torch.zeros(3, dtype=torch.int64)
    for kind, recall in ((1, float("nan")), (2, 1.0)):
        curves, sizes = _outputs(scores)
        c_core.exact_curve_rates(curves, sizes, scores, labels, 0, kind)
        assert sizes.tolist() == [[2, 0, 3]]
        assert curves[0, 0, :3].tolist() == [0.0, 0.0, 1.0]  # precision, then the end point
        torch.testing.assert_close(curves[0, 1, :3], torch.tensor([recall, recall, 0.0]), equal_nan=True)
        assert curves[0, 2, :2].tolist() == pytest.approx([0.2, 0.7])
        assert curves[0, 2, 2].item() == SENTINEL


BAD_RATES = [
    ("kind 3", ValueError, "kind", {"kind": 3}),
    ("task 3", ValueError, "task", {"task": 3}),
    ("scores float64", TypeError, "scores", {"scores": torch.rand(4, 1, dtype=torch.float64)}),
    ("labels short", ValueError, "labels", {"labels": torch.zeros(3, dtype=torch.int64)}),
    ("curves float64", TypeError, "curves", {"curves": torch.empty(1, 3, 5, dtype=torch.float64)}),
    ("curves [1, 3, 4]", ValueError, "curves", {"curves": torch.empty(1, 3, 4)}),
    ("curves strided", ValueError, "curves", {"curves": torch.empty(5, 3, 1).permute(2, 1, 0)}),
    ("sizes float", TypeError, "sizes", {"sizes": torch.empty(1, 3)}),
    ("sizes [1, 2]", ValueError, "sizes", {"sizes": torch.empty(1, 2, dtype=torch.int64)}),
]


@pytest.mark.parametrize("backend", ["c", "reference"])
@pytest.mark.parametrize("case", BAD_RATES, ids=[c[0] for c in BAD_RATES])
def test_bad_rates_input_raises_naming_the_argument_and_leaves_the_outputs(backend, case):
    _, error, argument, change = case
    args = {"curves": torch.empty(1, 3, 5), "sizes": torch.empty(1, 3, dtype=torch.int64)}
    args.update({"scores": torch.rand(4, 1), "labels": torch.zeros(4, dtype=torch.int64), "task": 0, "kind": 0})
    args.update(change)
    curves, sizes = args["curves"], args["sizes"]
    curves.fill_(SENTINEL)
    sizes.fill_(-3)
    with pytest.raises(error, match=rf"^{argument}: "):
        kernel_module(backend).exact_curve_rates(*args.values())
    assert bool((curves == SENTINEL).all()) and bool((sizes == -3).all())
