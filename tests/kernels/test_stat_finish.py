"""torchtally._C.stat_finish, the confusion-matrix family's values from a count state (csrc/API.md).

* Differential: ``finish`` (the C core for a CPU state) against ``torch_value`` (the torch
  functions of functional/classification/compute.py, the oracle) on hypothesis-drawn states of
  every layout, with many zero counts (zero denominators, absent classes, zero total weights),
  for every metric and average; and ``finish`` on the reference backend is torch_value itself.
* Contract: every bad argument raises the documented exception naming the argument, and leaves
  ``out`` exactly as it was; a request's span may end at out's end but not one element past it.
* The metric classes whose compute is the finish give the C core's value and the reference's.
"""

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.kernel_inputs import kernels as kernel_module

from torchtally import MetricCollection, kernels
from torchtally.classification import (
    BinaryCohenKappa,
    BinaryJaccardIndex,
    BinaryMatthewsCorrCoef,
    BinaryNegativePredictiveValue,
    MulticlassAccuracy,
    MulticlassCohenKappa,
    MulticlassF1Score,
    MulticlassJaccardIndex,
    MulticlassMatthewsCorrCoef,
    MulticlassPrecision,
    MulticlassRecall,
    MultilabelMatthewsCorrCoef,
    MultilabelPrecision,
)
from torchtally.classification import MulticlassNegativePredictiveValue as MulticlassNPV
from torchtally.classification import MultilabelNegativePredictiveValue as MultilabelNPV
from torchtally.functional.classification.finish import AVERAGES, LAYOUTS, METRICS, Request, finish, torch_value

FINISH = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
SENTINEL = 7.0
FIELDS = 6  # metric, average, zero_division, parameter (beta, kappa's weights), ignore_index, offset


@pytest.fixture
def c_core():
    """torchtally._C itself (a failure, never a skip, when it is not built)."""
    return kernel_module("c")


# -- comparison ----------------------------------------------------------------------------------


def assert_within_one_ulp(got: torch.Tensor, want: torch.Tensor, what: str, cancels: bool = False) -> None:
    """Same shape, float32, NaN in the same places, and every other value equal to the oracle's or
    one float32 step away from it. The per-class ratios are the same float64 divisions on both
    sides, but a macro / weighted mean adds its float64 terms in another order (torch's
    vectorised sum, the C core's loop), so the float64 mean may differ in its last bits and
    round to the neighbouring float32. ``cancels``: a value formed as a difference of near-equal
    float64 sums (kappa's 1 - observed / expected, Matthews' covariance), whose last-bit
    difference is absolute there: also within 1e-12 of the oracle."""
    assert got.dtype == torch.float32 and want.dtype == torch.float32, f"{what}: {got.dtype} vs {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan), f"{what}: NaN at other places: {got} vs {want}"
    g, w = got[~nan], want[~nan]
    below = torch.nextafter(w, torch.full_like(w, -math.inf))
    above = torch.nextafter(w, torch.full_like(w, math.inf))
    close = (g >= below) & (g <= above)
    if cancels:
        close |= (g.double() - w.double()).abs() <= 1e-12
    assert bool(close.all()), f"{what}: C {got.tolist()} vs torch {want.tolist()}"


WHOLE_MATRIX = ("matthews_corrcoef", "cohen_kappa")


# -- drawing states and requests -----------------------------------------------------------------

# Mostly zeros and small counts (zero denominators, classes that never occur), now and then a
# large one (float64 ratios of big counts must still round like torch's).
COUNT = st.one_of(st.just(0), st.just(0), st.integers(1, 9), st.integers(0, 2**40))


def _tensor(draw, shape) -> torch.Tensor:
    n = math.prod(shape)
    return torch.tensor(draw(st.lists(COUNT, min_size=n, max_size=n)), dtype=torch.int64).reshape(shape)


@st.composite
def layouts_and_states(draw):
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    c = draw(st.integers(1, 6))
    if layout == "multiclass":
        return layout, _tensor(draw, (c, c))
    if layout == "binary":
        return layout, _tensor(draw, draw(st.sampled_from([(2, 2), (1, 2, 2)])))
    if layout == "multilabel":
        return layout, _tensor(draw, (c, 2, 2))
    # top-k (predicted, hits, support) as an update leaves it: every missed sample is predicted as
    # some other class, so predicted = hits + the misses predicted as the class, support = hits +
    # the class's misses; hence hits <= predicted, hits <= support, sum(predicted) == sum(support).
    misses = _tensor(draw, (c, c))
    misses.fill_diagonal_(0)
    hits = _tensor(draw, (c,))
    return layout, torch.stack([hits + misses.sum(0), hits, hits + misses.sum(1)], dim=1).contiguous()


def _request_grid(draw, layout: str, classes: int):
    """Every metric under every average, each with drawn options, in a drawn order."""
    grid = []
    for metric in METRICS:
        if layout == "topk" and metric in ("jaccard_index", "matthews_corrcoef", "cohen_kappa"):
            # Not a combination any metric offers (these classes take no top_k), and the oracle
            # has none: its functions read a confusion matrix, not [C, 3] top-k counts.
            continue
        if layout == "multilabel" and metric == "cohen_kappa":
            continue  # no multilabel kappa (torchmetrics has none either)
        whole = metric in ("matthews_corrcoef", "cohen_kappa")
        for average in ("micro",) if whole else AVERAGES:
            grid.append(
                Request(
                    metric,
                    average,
                    zero_division=draw(st.sampled_from([0.0, 1.0, 0.5])),
                    beta=draw(st.sampled_from([0.5, 1.0, 2.0])),
                    ignore_index=(
                        draw(st.sampled_from([-1, 0, classes - 1, classes + 3])) if metric == "jaccard_index" else -1
                    ),
                    top_k=2 if layout == "topk" else 1,
                    weights=draw(st.sampled_from([None, "linear", "quadratic"])) if metric == "cohen_kappa" else None,
                )
            )
    return draw(st.permutations(grid))


@FINISH
@given(st.data())
def test_finish_matches_the_torch_functions(data):
    layout, state = data.draw(layouts_and_states())
    assert kernels.backend() == "c" and kernels.finishes(state), "the C core must serve a CPU state"
    classes = 1 if layout == "binary" else state.shape[0]
    grid = _request_grid(data.draw, layout, classes)
    # All the requests in one call (one output, each request its span of it) ...
    for r, got in zip(grid, finish(state, layout, grid)):
        assert_within_one_ulp(
            got, torch_value(state, layout, r), f"{layout} {state.tolist()} {r}", r.metric in WHOLE_MATRIX
        )
    # ... and one alone (its output is the whole value: 0-d, or [C] for "none").
    single = data.draw(st.sampled_from(grid))
    (got,) = finish(state, layout, [single])
    assert_within_one_ulp(
        got,
        torch_value(state, layout, single),
        f"{layout} {state.tolist()} {single} alone",
        single.metric in WHOLE_MATRIX,
    )


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.data())
def test_reference_backend_finish_is_the_torch_functions(data):
    layout, state = data.draw(layouts_and_states())
    classes = 1 if layout == "binary" else state.shape[0]
    grid = _request_grid(data.draw, layout, classes)
    previous = kernels.set_backend("reference")
    try:
        assert not kernels.finishes(state)
        values = finish(state, layout, grid)
    finally:
        kernels.set_backend(previous)
    for r, got in zip(grid, values):
        want = torch_value(state, layout, r)
        assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape
        assert torch.equal(got.view(torch.int32), want.view(torch.int32)), f"{layout} {state.tolist()} {r}"


# -- the contract, calling torchtally._C directly --------------------------------------------------


def row(metric=0, average=3, zero_division=0.0, beta=1.0, ignore_index=-1, offset=0):
    return [float(metric), float(average), float(zero_division), float(beta), float(ignore_index), float(offset)]


def table(*rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64).reshape(len(rows), FIELDS)


def confmat(c=3, seed=0) -> torch.Tensor:
    return torch.randint(0, 5, (c, c), generator=torch.Generator().manual_seed(seed))


def test_writes_each_request_at_its_offset(c_core):
    state = confmat(4)
    requests = [Request("precision", "none"), Request("recall", "macro"), Request("fbeta", "weighted", beta=2.0)]
    rows = table(row(1, 3, offset=3), row(2, 1, offset=0), row(3, 2, beta=2.0, offset=8))
    out = torch.full((2, 5), SENTINEL)  # any shape, read flat
    c_core.stat_finish(out, state, rows, LAYOUTS["multiclass"])
    flat = out.reshape(-1)
    want = [torch_value(state, "multiclass", r) for r in requests]
    assert_within_one_ulp(flat[3:7], want[0], "precision none")
    assert_within_one_ulp(flat[0], want[1], "recall macro")
    assert_within_one_ulp(flat[8], want[2], "fbeta weighted")
    untouched = [1, 2, 7, 9]
    assert torch.equal(flat[untouched], torch.full((4,), SENTINEL))


def test_float64_out_rounds_once_to_the_float32_value(c_core):
    state = confmat(5, seed=3)
    rows = table(*(row(metric, 3, 0.5, 2.0, -1, 5 * metric) for metric in range(7)))  # each metric, none
    out32 = torch.full((35,), SENTINEL, dtype=torch.float32)
    out64 = torch.full((35,), SENTINEL, dtype=torch.float64)
    c_core.stat_finish(out32, state, rows, 0)
    c_core.stat_finish(out64, state, rows, 0)
    assert torch.equal(out64.to(torch.float32), out32)
    assert not torch.equal(out64, out64.to(torch.float32).double())  # the float64 values are not float32's


def test_ignore_index_outside_the_classes_ignores_nothing(c_core):
    state = confmat(4, seed=1)

    def jaccard(ignore):  # micro, macro, weighted
        out = torch.full((3,), SENTINEL)
        rows = table(*(row(6, average, ignore_index=ignore, offset=average) for average in range(3)))
        c_core.stat_finish(out, state, rows, LAYOUTS["multiclass"])
        return out

    nothing = jaccard(-1)
    assert torch.equal(jaccard(4), nothing) and torch.equal(jaccard(9), nothing)
    assert not torch.equal(jaccard(1)[:2], nothing[:2])  # class 1 left out changes micro and macro


def test_no_requests_writes_nothing(c_core):
    out = torch.full((4,), SENTINEL)
    c_core.stat_finish(out, confmat(), torch.zeros(0, FIELDS, dtype=torch.float64), 0)
    assert torch.equal(out, torch.full((4,), SENTINEL))


@pytest.mark.parametrize(
    "layout, state, average, width",
    [
        ("multiclass", confmat(4), "none", 4),
        ("topk", torch.tensor([[3, 2, 2], [1, 0, 2], [1, 1, 1]]), "none", 3),
        ("multilabel", torch.randint(0, 4, (5, 2, 2), generator=torch.Generator().manual_seed(2)), "none", 5),
        ("binary", torch.tensor([[1, 2], [3, 4]]), "none", 1),  # binary: one value whatever the average
        ("binary", torch.tensor([[[1, 2], [3, 4]]]), "macro", 1),
        ("multiclass", confmat(4), "micro", 1),
    ],
)
def test_a_span_may_end_at_the_end_of_out_but_not_past_it(c_core, layout, state, average, width):
    size = 9
    r = Request("recall", average, top_k=2 if layout == "topk" else 1)
    last = table(row(METRICS["recall"], AVERAGES[average], offset=size - width))
    out = torch.full((size,), SENTINEL)
    c_core.stat_finish(out, state, last, LAYOUTS[layout])
    want = torch_value(state, layout, r)
    assert_within_one_ulp(out[size - width :].reshape(want.shape), want, "last span")
    assert torch.equal(out[: size - width], torch.full((size - width,), SENTINEL))
    past = table(row(METRICS["recall"], AVERAGES[average], offset=size - width + 1))
    out = torch.full((size,), SENTINEL)
    with pytest.raises(ValueError, match="^requests: ") as info:
        c_core.stat_finish(out, state, past, LAYOUTS[layout])
    assert "offset" in str(info.value)
    assert torch.equal(out, torch.full((size,), SENTINEL))


def topk_state() -> torch.Tensor:
    """Top-k counts of 3 classes, (predicted, hits, support) per class, as an update leaves them."""
    return torch.tensor([[2, 1, 3], [1, 1, 1], [2, 1, 1]], dtype=torch.int64)


GOOD = row(0, 3)  # accuracy, none: C values at offset 0
C = 3


def _strided_out():
    return torch.full((2 * 8,), SENTINEL)[::2]


def _bad_calls():
    """(id, exception, argument named, out, state, requests, layout): one fault each."""
    cm = confmat(C)
    good = table(GOOD)
    out = lambda: torch.full((8,), SENTINEL)
    bad_row = lambda **kw: table(GOOD, row(**{"metric": 1, "average": 0, "offset": 5, **kw}))
    return [
        # out
        ("out int64", TypeError, "out", torch.full((8,), 7, dtype=torch.int64), cm, good, 0),
        ("out float16", TypeError, "out", torch.full((8,), SENTINEL, dtype=torch.float16), cm, good, 0),
        ("out strided", ValueError, "out", _strided_out(), cm, good, 0),
        ("out too small", ValueError, "requests", torch.full((2,), SENTINEL), cm, good, 0),
        # state
        ("state int32", TypeError, "state", out(), cm.int(), good, 0),
        ("state float64", TypeError, "state", out(), cm.double(), good, 0),
        ("state not a tensor", TypeError, "state", out(), cm.tolist(), good, 0),
        ("state strided", ValueError, "state", out(), confmat(C).t(), good, 0),
        ("multiclass not square", ValueError, "state", out(), torch.zeros(3, 4, dtype=torch.int64), good, 0),
        ("multiclass 1-D", ValueError, "state", out(), torch.zeros(9, dtype=torch.int64), good, 0),
        ("multiclass empty", ValueError, "state", out(), torch.zeros(0, 0, dtype=torch.int64), good, 0),
        ("topk not [C, 3]", ValueError, "state", out(), torch.zeros(3, 4, dtype=torch.int64), good, 1),
        ("topk empty", ValueError, "state", out(), torch.zeros(0, 3, dtype=torch.int64), good, 1),
        ("binary [2, 3]", ValueError, "state", out(), torch.zeros(2, 3, dtype=torch.int64), good, 2),
        ("binary [2, 2, 2]", ValueError, "state", out(), torch.zeros(2, 2, 2, dtype=torch.int64), good, 2),
        ("multilabel [L, 2, 3]", ValueError, "state", out(), torch.zeros(3, 2, 3, dtype=torch.int64), good, 3),
        ("multilabel 2-D", ValueError, "state", out(), torch.zeros(2, 2, dtype=torch.int64), good, 3),
        ("multilabel empty", ValueError, "state", out(), torch.zeros(0, 2, 2, dtype=torch.int64), good, 3),
        # requests: the table
        ("requests float32", TypeError, "requests", out(), cm, good.float(), 0),
        ("requests int64", TypeError, "requests", out(), cm, good.long(), 0),
        ("requests [R, 5]", ValueError, "requests", out(), cm, good[:, :5].contiguous(), 0),
        ("requests 1-D", ValueError, "requests", out(), cm, good[0].contiguous(), 0),
        ("requests strided", ValueError, "requests", out(), cm, torch.cat([good, good], 1)[:, ::2], 0),
        # requests: a bad row after a good one (nothing may be written, not even the good row)
        ("metric 10", ValueError, "requests", out(), cm, bad_row(metric=10), 0),
        ("Matthews of top-k counts", ValueError, "requests", out(), topk_state(), bad_row(metric=7), 1),
        ("kappa of top-k counts", ValueError, "requests", out(), topk_state(), bad_row(metric=8), 1),
        (
            "kappa multilabel",
            ValueError,
            "requests",
            out(),
            torch.zeros(2, 2, 2, dtype=torch.int64),
            bad_row(metric=8),
            3,
        ),
        ("kappa weights 3", ValueError, "requests", out(), cm, bad_row(metric=8, beta=3), 0),
        ("kappa weights 0.5", ValueError, "requests", out(), cm, bad_row(metric=8, beta=0.5), 0),
        ("metric -1", ValueError, "requests", out(), cm, bad_row(metric=-1), 0),
        ("metric 1.5", ValueError, "requests", out(), cm, bad_row(metric=1.5), 0),
        ("metric NaN", ValueError, "requests", out(), cm, bad_row(metric=math.nan), 0),
        ("average 4", ValueError, "requests", out(), cm, bad_row(average=4), 0),
        ("average -1", ValueError, "requests", out(), cm, bad_row(average=-1), 0),
        ("average 0.5", ValueError, "requests", out(), cm, bad_row(average=0.5), 0),
        ("average NaN", ValueError, "requests", out(), cm, bad_row(average=math.nan), 0),
        ("ignore_index -2", ValueError, "requests", out(), cm, bad_row(metric=6, ignore_index=-2), 0),
        ("ignore_index 0.5", ValueError, "requests", out(), cm, bad_row(metric=6, ignore_index=0.5), 0),
        ("ignore_index NaN", ValueError, "requests", out(), cm, bad_row(metric=6, ignore_index=math.nan), 0),
        ("ignore_index inf", ValueError, "requests", out(), cm, bad_row(metric=6, ignore_index=math.inf), 0),
        ("offset -1", ValueError, "requests", out(), cm, bad_row(offset=-1), 0),
        ("offset 0.5", ValueError, "requests", out(), cm, bad_row(offset=0.5), 0),
        ("offset NaN", ValueError, "requests", out(), cm, bad_row(offset=math.nan), 0),
        ("offset inf", ValueError, "requests", out(), cm, bad_row(offset=math.inf), 0),
        ("offset 1e300", ValueError, "requests", out(), cm, bad_row(offset=1e300), 0),
        ("offset past the end", ValueError, "requests", out(), cm, bad_row(offset=8), 0),
        ("span past the end", ValueError, "requests", out(), cm, bad_row(average=3, offset=6), 0),
        # layout
        ("layout 4", ValueError, "layout", out(), cm, good, 4),
        ("layout -1", ValueError, "layout", out(), cm, good, -1),
        ("layout float", TypeError, "layout", out(), cm, good, 0.0),
        ("layout str", TypeError, "layout", out(), cm, good, "multiclass"),
    ]


BAD_CALLS = _bad_calls()


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input_raises_naming_the_argument_and_leaves_out_unchanged(c_core, case):
    _, error, argument, out, state, requests, layout = case
    before = out.clone()
    with pytest.raises(error) as info:
        c_core.stat_finish(out, state, requests, layout)
    assert type(info.value) is error
    assert str(info.value).startswith(f"{argument}: "), str(info.value)
    assert torch.equal(out, before), "out changed by a failed call"
    # a bad second row: the first row, alone, is good (so the failed call wrote nothing, not
    # even the value of a row that passed its check)
    if argument == "requests" and requests.dtype == torch.float64 and requests.dim() == 2 and len(requests) == 2:
        c_core.stat_finish(out, state, requests[:1].contiguous(), layout)
        assert not torch.equal(out, before)


# -- the metric classes --------------------------------------------------------------------------

NUM_CLASSES, NUM_LABELS = 6, 4


def _multiclass_batches(seed, scores):
    g = torch.Generator().manual_seed(seed)
    for n in (50, 1, 200):
        target = torch.randint(0, NUM_CLASSES - 2, (n,), generator=g)  # classes 4 and 5 never in target
        preds = (
            torch.randn(n, NUM_CLASSES, generator=g) if scores else torch.randint(0, NUM_CLASSES - 1, (n,), generator=g)
        )
        yield preds, target


def _multilabel_batches(seed):
    g = torch.Generator().manual_seed(seed)
    for n in (30, 70):
        target = torch.randint(0, 2, (n, NUM_LABELS), generator=g)
        target[:, 0] = 0  # a label with no positives
        yield torch.rand(n, NUM_LABELS, generator=g), target


def _binary_batches(seed):
    g = torch.Generator().manual_seed(seed)
    for n in (40, 60):
        yield torch.rand(n, generator=g), torch.randint(0, 2, (n,), generator=g)


CLASSES = [
    *(
        (f"MulticlassAccuracy {a}", lambda a=a: MulticlassAccuracy(NUM_CLASSES, average=a), "labels")
        for a in ("micro", "macro", "weighted", "none")
    ),
    *(
        (f"MulticlassAccuracy {a} top_k=2", lambda a=a: MulticlassAccuracy(NUM_CLASSES, average=a, top_k=2), "scores")
        for a in ("micro", "macro", "weighted", "none")
    ),
    ("MulticlassF1Score macro", lambda: MulticlassF1Score(NUM_CLASSES, average="macro"), "scores"),
    ("MulticlassF1Score top_k=2", lambda: MulticlassF1Score(NUM_CLASSES, top_k=2, zero_division=1), "scores"),
    ("MultilabelPrecision macro", lambda: MultilabelPrecision(NUM_LABELS, zero_division=1), "multilabel"),
    ("MultilabelPrecision none", lambda: MultilabelPrecision(NUM_LABELS, average="none"), "multilabel"),
    ("BinaryJaccardIndex", lambda: BinaryJaccardIndex(), "binary"),
    ("MulticlassJaccardIndex macro ignore 1", lambda: MulticlassJaccardIndex(NUM_CLASSES, ignore_index=1), "labels"),
    (
        "MulticlassJaccardIndex micro ignore 1",
        lambda: MulticlassJaccardIndex(NUM_CLASSES, average="micro", ignore_index=1),
        "labels",
    ),
    ("MulticlassJaccardIndex weighted", lambda: MulticlassJaccardIndex(NUM_CLASSES, average="weighted"), "labels"),
    ("BinaryMatthewsCorrCoef", lambda: BinaryMatthewsCorrCoef(), "binary"),
    ("MulticlassMatthewsCorrCoef", lambda: MulticlassMatthewsCorrCoef(NUM_CLASSES), "labels"),
    ("MultilabelMatthewsCorrCoef", lambda: MultilabelMatthewsCorrCoef(NUM_LABELS), "multilabel"),
    ("BinaryCohenKappa linear", lambda: BinaryCohenKappa(weights="linear"), "binary"),
    ("MulticlassCohenKappa", lambda: MulticlassCohenKappa(NUM_CLASSES), "labels"),
    ("MulticlassCohenKappa quadratic", lambda: MulticlassCohenKappa(NUM_CLASSES, weights="quadratic"), "scores"),
    ("BinaryNegativePredictiveValue", lambda: BinaryNegativePredictiveValue(zero_division=1), "binary"),
    *(
        (f"MulticlassNPV {a} top_k={k}", lambda a=a, k=k: MulticlassNPV(NUM_CLASSES, k, a), "scores")
        for a in ("micro", "macro", "weighted", "none")
        for k in (1, 2)
    ),
    ("MultilabelNPV macro", lambda: MultilabelNPV(NUM_LABELS, zero_division=1), "multilabel"),
]


def _batches(kind, seed):
    if kind in ("labels", "scores"):
        return list(_multiclass_batches(seed, kind == "scores"))
    return list(_multilabel_batches(seed) if kind == "multilabel" else _binary_batches(seed))


def _computed(make, batches):
    metric = make()
    for preds, target in batches:
        metric.update(preds, target)
    return metric, metric.compute()


@pytest.mark.parametrize("case", CLASSES, ids=[c[0] for c in CLASSES])
def test_metric_classes_compute_the_reference_value(c_core, case):
    name, make, kind = case
    assert make().value_request() is not None, f"{name}: its compute is not the finish"
    for seed in (0, 1):
        batches = _batches(kind, seed)
        assert kernels.backend() == "c"
        _, got = _computed(make, batches)
        previous = kernels.set_backend("reference")
        try:
            _, want = _computed(make, batches)
        finally:
            kernels.set_backend(previous)
        assert_within_one_ulp(got, want, f"{name} seed {seed}", "Kappa" in name or "Matthews" in name)


def test_a_collection_finishes_its_shared_state_like_the_reference(c_core):
    def make():
        return MetricCollection(
            {
                "acc": MulticlassAccuracy(NUM_CLASSES, average="macro"),
                "prec": MulticlassPrecision(NUM_CLASSES, average="weighted", zero_division=1),
                "rec": MulticlassRecall(NUM_CLASSES, average="none"),
                "f1": MulticlassF1Score(NUM_CLASSES, average="micro"),
                "jac": MulticlassJaccardIndex(NUM_CLASSES, average="macro"),
            }
        )

    batches = _batches("labels", 5)
    _, got = _computed(make, batches)
    previous = kernels.set_backend("reference")
    try:
        _, want = _computed(make, batches)
    finally:
        kernels.set_backend(previous)
    assert sorted(got) == sorted(want)
    for key in got:
        assert_within_one_ulp(got[key], want[key], key)
