"""torchtally._C.exact_curve_points / exact_curve_finish, the exact curves of a curve state
(csrc/API_CURVES.md), against their torch reference (kernels/reference/exact_curve.py): points bit for
bit, readouts up to the order in which float64 terms are added."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.kernel_inputs import kernels as kernel_module

from torchtally.kernels.reference import exact_curve as reference

SENTINEL = 7.0
LABEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
SPECIAL = [0.0, -0.0, 1.0, 0.5, float("inf"), float("-inf"), float("nan"), 1e-45, -2.5]


@pytest.fixture
def c_core():
    """torchtally._C itself (a failure, never a skip, when it is not built)."""
    return kernel_module("c")


@st.composite
def states(draw):
    """(scores float32 [N, K], labels, task): few distinct scores (many ties), special values,
    columns of one class only, sometimes strided or sliced."""
    task = draw(st.sampled_from([0, 1, 2]))
    n = draw(st.sampled_from([0, 1, 2, 3, 7, 40, 300]))
    k = 1 if task == 0 else draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    levels = draw(st.sampled_from([2, 5, 50, 0]))  # 0: continuous
    if levels:
        scores = torch.randint(0, levels, (n, k), generator=g).float() / levels
    else:
        scores = torch.rand(n, k, generator=g)
    if n and draw(st.booleans()):
        picks = torch.tensor(SPECIAL)[torch.randint(0, len(SPECIAL), (n, k), generator=g)]
        scores = torch.where(torch.rand(n, k, generator=g) < 0.2, picks, scores)
    if task == 1:
        labels = torch.randint(0, k + 1, (n,), generator=g)  # k: a class no column has
    elif task == 2:
        labels = torch.randint(0, 3, (n, k), generator=g)  # 2 ignored
    else:
        labels = torch.randint(0, 2, (n,), generator=g)
    if draw(st.booleans()):  # one class only
        labels = labels.clamp(max=0) if draw(st.booleans()) else labels.clamp(min=1, max=1)
    dtype = draw(st.sampled_from(LABEL_DTYPES[1:] if task else LABEL_DTYPES))
    labels = labels.to(dtype)
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    if layout == "transposed":
        scores = scores.t().contiguous().t()
    elif layout == "sliced":
        scores = torch.cat([scores, scores], 1)[:, ::2] if n else scores
        labels = torch.stack([labels, labels], -1)[..., 0]
    return scores, labels, task


SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)


@SETTINGS
@given(states())
def test_points_match_the_reference_bit_for_bit(c_core, state):
    scores, labels, task = state
    n = scores.shape[0]
    for column in range(scores.shape[1]):
        got = torch.full((3, n), SENTINEL, dtype=torch.float64)
        want = torch.full((3, n), SENTINEL, dtype=torch.float64)
        got_size, want_size = torch.zeros(1, dtype=torch.int64), torch.zeros(1, dtype=torch.int64)
        c_core.exact_curve_points(got, got_size, scores, labels, task, column)
        reference.exact_curve_points(want, want_size, scores, labels, task, column)
        assert int(got_size) == int(want_size)
        m = int(got_size)
        # the same bits, NaN thresholds included (a -0.0 threshold too)
        assert torch.equal(got[:, :m].view(torch.int64), want[:, :m].view(torch.int64))
        assert bool((got[:, m:] == SENTINEL).all())  # nothing past the points


@SETTINGS
@given(states(), st.sampled_from([0, 1, 2, 3, 4, 5]), st.sampled_from([0.0, 0.25, 0.5, 0.9000000001, 1.0]))
def test_readouts_match_the_reference(c_core, state, metric, level):
    scores, labels, task = state
    k = scores.shape[1]
    got = torch.full((k, 4), SENTINEL, dtype=torch.float64)
    want = torch.full((k, 4), SENTINEL, dtype=torch.float64)
    c_core.exact_curve_finish(got, scores, labels, task, metric, level)
    reference.exact_curve_finish(want, scores, labels, task, metric, level)
    if metric < 2:  # float64 sums: their terms are added in another order
        torch.testing.assert_close(got[:, 0], want[:, 0], rtol=1e-12, atol=1e-15, equal_nan=True)
    else:  # float32 readouts of the float32 curve: the same bits
        assert torch.equal(got[:, 0].view(torch.int64), want[:, 0].view(torch.int64))
    assert torch.equal(got[:, 1:3], want[:, 1:3])
    assert torch.equal(got[:, 3].view(torch.int64), want[:, 3].view(torch.int64))


def test_ties_nan_and_signed_zero_form_the_torch_sort_points(c_core):
    scores = torch.tensor([[0.5], [float("nan")], [0.0], [-0.0], [0.5], [float("nan")], [1.0]])
    labels = torch.tensor([1, 0, 1, 0, 0, 1, 1], dtype=torch.uint8)
    points, size = torch.empty(3, 7, dtype=torch.float64), torch.empty(1, dtype=torch.int64)
    c_core.exact_curve_points(points, size, scores, labels, 0, 0)
    m = int(size)
    # NaN first, each its own point; the two 0.5 one point; 0.0 and -0.0 one point, whose
    # threshold is the last of them in input order (a stable sort)
    assert m == 5
    assert torch.isnan(points[0, :2]).all()
    assert points[0, 2:m].tolist() == [1.0, 0.5, -0.0]
    assert str(points[0, 4].item()) == "-0.0"
    assert points[1, :m].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert points[2, :m].tolist() == [1.0, 1.0, 1.0, 2.0, 3.0]


def test_a_column_without_samples_has_no_point_and_no_area(c_core):
    scores = torch.rand(4, 2)
    labels = torch.tensor([[2, 1], [2, 0], [2, 1], [2, 1]], dtype=torch.uint8)  # label 0 all ignored
    points, size = torch.full((3, 4), SENTINEL, dtype=torch.float64), torch.empty(1, dtype=torch.int64)
    c_core.exact_curve_points(points, size, scores, labels, 2, 0)
    assert int(size) == 0 and bool((points == SENTINEL).all())
    out = torch.empty(2, 4, dtype=torch.float64)
    c_core.exact_curve_finish(out, scores, labels, 2, 0, 0.0)
    assert torch.isnan(out[0, 0]) and out[0, 1:3].tolist() == [0.0, 0.0]
    assert out[1, 1:3].tolist() == [3.0, 1.0]


def _points_args(n=4, k=1):
    return torch.empty(3, n, dtype=torch.float64), torch.empty(1, dtype=torch.int64), torch.rand(n, k)


BAD_POINTS = [
    ("task 3", ValueError, "task", {"task": 3}),
    ("column out of range", ValueError, "column", {"column": 1}),
    ("scores float64", TypeError, "scores", {"scores": torch.rand(4, 1, dtype=torch.float64)}),
    ("scores int", TypeError, "scores", {"scores": torch.ones(4, 1, dtype=torch.int64)}),
    ("scores 1-D", ValueError, "scores", {"scores": torch.rand(4)}),
    ("binary two columns", ValueError, "scores", {"scores": torch.rand(4, 2)}),
    ("labels float", TypeError, "labels", {"labels": torch.zeros(4)}),
    ("labels short", ValueError, "labels", {"labels": torch.zeros(3, dtype=torch.int64)}),
    ("labels 2-D", ValueError, "labels", {"labels": torch.zeros(4, 1, dtype=torch.int64)}),
    ("points float32", TypeError, "points", {"points": torch.empty(3, 4)}),
    ("points [3, 5]", ValueError, "points", {"points": torch.empty(3, 5, dtype=torch.float64)}),
    ("points strided", ValueError, "points", {"points": torch.empty(4, 3, dtype=torch.float64).t()}),
    ("size float", TypeError, "size", {"size": torch.empty(1)}),
    ("size [2]", ValueError, "size", {"size": torch.empty(2, dtype=torch.int64)}),
]


@pytest.mark.parametrize("backend", ["c", "reference"])
@pytest.mark.parametrize("case", BAD_POINTS, ids=[c[0] for c in BAD_POINTS])
def test_bad_points_input_raises_naming_the_argument_and_leaves_the_outputs(backend, case):
    _, error, argument, change = case
    points, size, scores = _points_args()
    args = {"points": points, "size": size, "scores": scores, "labels": torch.zeros(4, dtype=torch.int64)}
    args.update({"task": 0, "column": 0})
    args.update(change)
    points, size = args["points"], args["size"]
    points.fill_(SENTINEL)
    size.fill_(-3)
    with pytest.raises(error, match=rf"^{argument}: "):
        kernel_module(backend).exact_curve_points(*args.values())
    assert bool((points == SENTINEL).all()) and bool((size == -3).all())


BAD_FINISH = [
    ("metric 6", ValueError, "metric", {"metric": 6}),
    ("level above 1", ValueError, "level", {"metric": 3, "level": 1.5}),
    ("level NaN", ValueError, "level", {"metric": 4, "level": float("nan")}),
    ("level str", TypeError, "level", {"level": "0.5"}),
    ("multilabel labels 1-D", ValueError, "labels", {"task": 2}),
    ("out [2, 4]", ValueError, "out", {"out": torch.empty(2, 4, dtype=torch.float64)}),
    ("out [1, 3]", ValueError, "out", {"out": torch.empty(1, 3, dtype=torch.float64)}),
    ("out float32", TypeError, "out", {"out": torch.empty(1, 4)}),
]


@pytest.mark.parametrize("backend", ["c", "reference"])
@pytest.mark.parametrize("case", BAD_FINISH, ids=[c[0] for c in BAD_FINISH])
def test_bad_finish_input_raises_naming_the_argument_and_leaves_out(backend, case):
    _, error, argument, change = case
    args = {"out": torch.empty(1, 4, dtype=torch.float64), "scores": torch.rand(4, 1)}
    args.update({"labels": torch.zeros(4, dtype=torch.int64), "task": 0, "metric": 0, "level": 0.5})
    args.update(change)
    out = args["out"]
    out.fill_(SENTINEL)
    with pytest.raises(error, match=rf"^{argument}: "):
        kernel_module(backend).exact_curve_finish(*args.values())
    assert bool((out == SENTINEL).all())
