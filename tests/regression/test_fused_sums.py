"""The fused error-sums path of the regression classes (functional/regression/fused_sums.py) and
their one-number computes in Python floats (functional/regression/compute.py): on every float
dtype (integers too), strided and N-D inputs, batches below and above the libm limit, the fused
path gives the torch path's values and, for a refused batch, its error text with the states
unchanged; the Python computes give the tensor computes' bits, errors and NaNs."""

import math

import pytest
import torch
from support.metric_tester import states_of
from support.state_checks import assert_same_states

import torchtally.functional.regression.compute as reg_compute
import torchtally.functional.regression.fused_sums as fused_sums
import torchtally.regression as R
from torchtally.functional.regression.batch_sums import rse_from

F64 = torch.float64
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]

# (class, options, what its inputs are: "pos" values > 0, "rows" [N, d] vectors, "dist" [N, d] rows of
# probabilities)
CLASSES = [
    (R.MeanSquaredError, {}, "pos"),
    (R.MeanSquaredError, {"squared": False}, "pos"),
    (R.MeanSquaredError, {"num_outputs": 3}, "cols"),
    (R.MeanAbsoluteError, {}, "pos"),
    (R.MeanAbsoluteError, {"num_outputs": 3}, "cols"),
    (R.MeanAbsolutePercentageError, {}, "pos"),
    (R.SymmetricMeanAbsolutePercentageError, {}, "pos"),
    (R.WeightedMeanAbsolutePercentageError, {}, "pos"),
    (R.MeanSquaredLogError, {}, "pos"),
    (R.LogCoshError, {}, "pos"),
    (R.LogCoshError, {"num_outputs": 3}, "cols"),
    (R.MinkowskiDistance, {"p": 3}, "pos"),
    (R.MinkowskiDistance, {"p": 1.5}, "pos"),
    (R.MinkowskiDistance, {"p": 2}, "pos"),
    (R.CosineSimilarity, {}, "rows"),
    (R.CosineSimilarity, {"reduction": "mean"}, "rows"),
    (R.CosineSimilarity, {"reduction": "none"}, "rows"),
    (R.KLDivergence, {}, "dist"),
    (R.KLDivergence, {"reduction": "sum", "log_prob": True}, "logdist"),
    (R.KLDivergence, {"reduction": "none"}, "dist"),
    (R.JensenShannonDivergence, {}, "dist"),
    (R.JensenShannonDivergence, {"reduction": "none", "log_prob": True}, "logdist"),
    (R.RelativeSquaredError, {}, "pos"),
    (R.RelativeSquaredError, {"num_outputs": 3, "squared": False}, "cols"),
]
IDS = [f"{cls.__name__}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for cls, kw, _ in CLASSES]


def _batch(form, n, dtype, g, strided=False):
    shape = {"pos": (n,), "cols": (n, 3), "rows": (n, 5), "dist": (n, 5), "logdist": (n, 5)}[form]
    x = torch.rand(shape, generator=g, dtype=F64) + 0.05
    y = torch.rand(shape, generator=g, dtype=F64) + 0.05
    if form == "rows":
        x, y = x - 0.5, y - 0.5
    if form == "logdist":
        x, y = torch.log_softmax(x * 3, -1), torch.log_softmax(y * 3, -1)
    x, y = x.to(dtype), y.to(dtype)
    if strided:  # every other element of a wider tensor, or a transposed copy read back
        if x.dim() == 1:
            wide = torch.zeros(2 * n, dtype=dtype)
            wide[::2] = x
            x = wide[::2]
        else:
            x = x.t().contiguous().t()
    return x, y


def _torch_path(monkeypatch):
    monkeypatch.setattr(fused_sums, "added", lambda *args, **kwargs: False)


def _run(cls, kw, batches):
    m = cls(**kw)
    for x, y in batches:
        m.update(x, y)
    return m


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls,kw,form", CLASSES, ids=IDS)
def test_the_fused_path_gives_the_torch_paths_values(monkeypatch, cls, kw, form, dtype):
    g = torch.Generator().manual_seed(3)
    sizes = (1, 37, fused_sums.LIBM_LIMIT + 5)  # the last above the libm limit (log-cosh, Minkowski: torch there)
    batches = [_batch(form, n, dtype, g, strided=i % 2 == 1) for i, n in enumerate(sizes)]
    fused = _run(cls, kw, batches)
    with monkeypatch.context() as patch:
        _torch_path(patch)
        plain = _run(cls, kw, batches)
    torch.testing.assert_close(fused.compute(), plain.compute(), rtol=1e-12, atol=1e-14)
    for name, value in fused.metric_state.items():
        other = plain.metric_state[name]
        if isinstance(value, list):
            value, other = torch.cat(value), torch.cat(other)
        torch.testing.assert_close(value, other, rtol=1e-12, atol=1e-14)


def test_integer_and_n_d_inputs_take_the_fused_path():
    g = torch.Generator().manual_seed(4)
    x, y = torch.randint(1, 9, (4, 3, 5), generator=g), torch.randint(1, 9, (4, 3, 5), generator=g)
    for cls in (R.MeanSquaredError, R.MeanAbsolutePercentageError, R.MeanSquaredLogError, R.MinkowskiDistance):
        m = cls(p=3) if cls is R.MinkowskiDistance else cls()
        m.update(x, y)
        want = {
            R.MeanSquaredError: ((y - x).double() ** 2).mean(),
            R.MeanAbsolutePercentageError: ((y - x).double().abs() / y.double()).mean(),
            R.MeanSquaredLogError: ((x.double().log1p() - y.double().log1p()) ** 2).mean(),
            R.MinkowskiDistance: ((y - x).double().abs() ** 3).sum() ** (1 / 3),
        }[cls]
        torch.testing.assert_close(m.compute().double(), want, rtol=1e-6, atol=0)


def _bad_batches():
    """(class, options, preds, target) that the metric refuses."""
    good = torch.rand(20) + 0.5
    nan = good.clone()
    nan[7] = float("nan")
    below = good.clone()
    below[4] = -1.5
    rows = torch.rand(6, 4) + 0.1
    negative = rows.clone()
    negative[2, 1] = -0.25
    zero = rows.clone()
    zero[3] = 0.0
    inf_rows = rows.clone()
    inf_rows[5, 0] = float("inf")
    cases = [(cls, kw, good, nan) for cls, kw, form in CLASSES if form == "pos"]
    cases += [(cls, kw, nan, good) for cls, kw, form in CLASSES if form == "pos"]
    cases += [(R.MeanSquaredLogError, {}, below, good), (R.MeanSquaredLogError, {}, good, below)]
    cases += [(cls, kw, inf_rows, rows) for cls, kw, form in CLASSES if form in ("rows", "dist", "logdist")]
    for cls in (R.KLDivergence, R.JensenShannonDivergence):
        cases += [(cls, {}, rows, negative), (cls, {}, negative, rows), (cls, {}, zero, rows), (cls, {}, rows, zero)]
    return cases


@pytest.mark.parametrize("cls,kw,preds,target", _bad_batches())
def test_a_refused_batch_raises_the_torch_paths_error_with_the_state_unchanged(monkeypatch, cls, kw, preds, target):
    g = torch.Generator().manual_seed(5)
    first = (torch.rand(preds.shape, generator=g) + 0.2, torch.rand(preds.shape, generator=g) + 0.2)
    messages = []
    for take_torch_path in (False, True):
        with monkeypatch.context() as patch:
            if take_torch_path:
                _torch_path(patch)
            m = cls(**kw)
            m.update(*first)
            before = states_of(m)
            with pytest.raises(ValueError) as info:
                m.update(preds, target)
            assert_same_states(before, states_of(m), f"{cls.__name__} refused batch")
            messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "cls,kw,batch",
    [
        (R.MeanSquaredError, {}, (torch.tensor([0.0, 3e5]), torch.tensor([1.0, -3e5]))),
        (R.MeanSquaredError, {"squared": False}, (torch.tensor([0.5, 1.0]), torch.tensor([1.0, 3.0]))),
        (R.MeanAbsolutePercentageError, {}, (torch.tensor([0.5, 1.0]), torch.tensor([0.0, 3.0]))),
        (R.WeightedMeanAbsolutePercentageError, {}, (torch.tensor([0.5, 1.0]), torch.tensor([0.0, 0.0]))),
        (R.MinkowskiDistance, {"p": 2}, (torch.tensor([0.5, 1.0]), torch.tensor([1.0, 3.0]))),
        (R.MinkowskiDistance, {"p": 2.5}, (torch.tensor([0.5, 1.0]), torch.tensor([1.0, 3.0]))),
        (R.KLDivergence, {"reduction": "sum"}, (torch.tensor([[0.2, 0.8]]), torch.tensor([[0.5, 0.5]]))),
        (R.CosineSimilarity, {"reduction": "mean"}, (torch.tensor([[0.2, 0.8]]), torch.tensor([[0.5, 0.5]]))),
        (R.MeanSquaredLogError, {}, (torch.empty(0), torch.empty(0))),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_python_computes_give_the_tensor_computes_bits_and_errors(monkeypatch, cls, kw, batch, dtype):
    results = []
    for tensor_path in (False, True):
        with monkeypatch.context() as patch:
            if tensor_path:
                patch.setattr(reg_compute, "scalars", lambda *states: None)
            m = cls(**kw)
            m.set_dtype(dtype)
            m.update(*batch)
            try:
                results.append(m.compute())
            except ValueError as err:  # a finite value that does not fit float16
                results.append(str(err))
    fused, plain = results
    if isinstance(plain, str):
        assert fused == plain
        return
    assert fused.dtype == plain.dtype and fused.shape == plain.shape
    assert torch.equal(fused, plain) or (math.isnan(fused.item()) and math.isnan(plain.item()))


@pytest.mark.parametrize("cls,kw,form", CLASSES, ids=IDS)
def test_a_small_cpu_batch_is_added_by_the_kernel(monkeypatch, cls, kw, form):
    taken = []
    real = fused_sums.added
    monkeypatch.setattr(fused_sums, "added", lambda *args, **kwargs: taken.append(real(*args, **kwargs)) or taken[-1])
    m = cls(**kw)
    m.update(*_batch(form, 8, torch.float32, torch.Generator().manual_seed(6)))
    assert taken == [True]


@pytest.mark.parametrize("squared", [True, False])
@pytest.mark.parametrize(
    "batch",
    [
        (torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])),
        (torch.tensor([2.5, 0.0]), torch.tensor([3.0, 3.0])),  # a constant target: SS_tot clamped to eps
        (torch.empty(0), torch.empty(0)),  # no samples: NaN
    ],
)
def test_relative_squared_errors_python_compute_gives_the_tensor_computes_bits(batch, squared):
    m = R.RelativeSquaredError(squared=squared)
    m.update(*batch)
    fast = m.compute()
    plain = reg_compute.as_result(rse_from(m.error_sum, m.target_moments, squared, m.dtype), m.dtype)
    assert fast.shape == plain.shape and fast.dtype == plain.dtype
    assert torch.equal(fast, plain) or (fast.isnan().all() and plain.isnan().all())
