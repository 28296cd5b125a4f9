"""Every update is all-or-nothing and keeps nothing of the caller's.

* stored rows never alias an input: a caller refilling one buffer for every batch gets the
  same state as one passing fresh tensors (CatMetric kept the buffer itself);
* R2Score / ExplainedVariance write one state with two kernel calls: a batch refused by either
  leaves no half-written state behind;
* AverageLoss checks ``batch_size`` and the int64 sample count before it writes;
* unsupported dtypes (float8, uint16-uint64, complex) and meta tensors raise TypeError or
  ValueError naming the argument from every metric class and functional form, with the state
  (and the device of a fresh metric) unchanged.
"""

import warnings

import pytest
import sklearn.metrics
import torch
from support.metric_catalogue import FUNCTIONALS, METRICS, entry_id
from support.metric_tester import states_of
from support.state_checks import assert_same_states

import torchtally
from torchtally.aggregation import AverageLoss, CatMetric
from torchtally.regression import ExplainedVariance, R2Score

UNSUPPORTED_DTYPES = [
    torch.float8_e4m3fn,
    torch.float8_e5m2,
    torch.float8_e4m3fnuz,
    torch.float8_e5m2fnuz,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.complex64,
    torch.complex128,
]
# Aggregation reads any real tensor as float64 (torchmetrics' aggregators take float8 and
# uint tensors too): there only complex values are refused.
_AGGREGATING = ("aggregation", "loss")


@pytest.fixture
def float64_default():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


# -- stored rows never alias an input ---------------------------------------------------------


def test_cat_metric_does_not_keep_a_reused_buffer(float64_default):
    m = CatMetric()  # stores float64 values: the input's own dtype, which once meant its own memory
    buffer = torch.zeros(3)
    for b in range(3):
        buffer.fill_(b)
        m.update(buffer)
    assert m.compute().tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    buffer.fill_(7)
    m(buffer)  # forward stores the batch too
    buffer.fill_(9)
    assert m.compute().tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 7, 7, 7]


@pytest.mark.parametrize("entry", METRICS, ids=entry_id)
def test_a_reused_input_buffer_gives_the_state_of_fresh_inputs(entry):
    """Feeding every batch through the same tensors (refilled in place) ends with exactly the
    state of feeding each batch as new tensors: no metric keeps a reference to its input."""
    g = torch.Generator().manual_seed(5)
    batches = [entry.batch(5, generator=g) for _ in range(3)]
    fresh, reused = entry.metric(), entry.metric()
    buffers = tuple(torch.empty_like(a) for a in batches[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for batch in batches:
            fresh.update(*(a.clone() for a in batch))
            for buf, a in zip(buffers, batch):
                buf.copy_(a)
            reused.update(*buffers)
        for buf in buffers:
            buf.fill_(0)
    assert_same_states(states_of(fresh), states_of(reused), entry.name)


class _Rows(torchtally.Metric):
    """A user metric appending its input (or what its ``how`` makes of it) to a cat state."""

    def __init__(self, how):
        super().__init__()
        self.how = how
        self.add_state("rows", torch.empty(0), reduce="cat")

    def update(self, x, extra=None):
        self.made = self.how(x, extra)
        self.append_state("rows", self.made)

    def compute(self):
        return self.rows


@pytest.mark.parametrize(
    "how",
    [
        lambda x, extra: x,  # the input itself
        lambda x, extra: x[1:],  # a view of it
        lambda x, extra: x.reshape(-1),  # a reshape that is a view
        lambda x, extra: extra["buf"],  # a tensor passed inside a dict
        lambda x, extra: extra["list"][0],  # inside a list
    ],
    ids=["input", "slice", "reshape", "in-dict", "in-list"],
)
def test_append_state_copies_a_block_that_shares_an_inputs_memory(how):
    x = torch.arange(4.0)
    buf = torch.arange(4.0)
    m = _Rows(how).update(x, {"buf": buf, "list": [buf]})
    expected = m.compute().clone()
    x.fill_(-1)
    buf.fill_(-1)
    assert torch.equal(m.compute(), expected)


def test_append_state_keeps_a_block_the_update_made_without_copying():
    m = _Rows(lambda x, extra: x * 2).update(torch.arange(3.0))
    assert m._cat_chunks["rows"][0].data_ptr() == m.made.data_ptr()  # stored as it is: no second copy


def test_append_state_copy_argument():
    m = _Rows(lambda x, extra: x)
    mine = torch.arange(3.0)
    m.append_state("rows", mine)  # outside an update: the caller's own tensor, copied
    m.append_state("rows", mine, copy=False)  # the caller says it will not touch it again
    m.append_state("rows", mine, copy=True)
    chunks = m._cat_chunks["rows"]
    assert [c.data_ptr() == mine.data_ptr() for c in chunks] == [False, True, False]


# -- two kernel calls, one state ----------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, reference",
    [(R2Score, sklearn.metrics.r2_score), (ExplainedVariance, sklearn.metrics.explained_variance_score)],
)
@pytest.mark.parametrize("bad", ["target-float8", "preds-float8", "target-meta", "target-complex"])
def test_moment_metrics_keep_no_half_written_batch(cls, reference, bad):
    p1, t1 = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 4.0])
    p2, t2 = torch.tensor([0.5, 2.5, 2.0]), torch.tensor([1.0, 3.0, 2.0])
    m = cls().update(p1, t1)
    before = states_of(m)
    which, kind = bad.split("-")
    convert = {
        "float8": lambda t: t.to(torch.float8_e4m3fn),
        "meta": lambda t: t.to("meta"),
        "complex": lambda t: t.to(torch.complex64),
    }[kind]
    args = (convert(p2), t2) if which == "preds" else (p2, convert(t2))
    with pytest.raises((TypeError, ValueError), match=which):
        m.update(*args)
    assert_same_states(before, states_of(m), f"{cls.__name__} after a refused {bad} batch")
    m.update(p2, t2)
    want = reference(torch.cat([t1, t2]).numpy(), torch.cat([p1, p2]).numpy())
    assert m.compute().item() == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("thresholds", [None, 10])
@pytest.mark.parametrize("how", ["metric", "functional"])
def test_multiclass_curves_refuse_logits_without_a_softmax(thresholds, how):
    """A +inf logit has no softmax (NaN): exact mode stored the NaN scores and computed a number."""
    good = (torch.tensor([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]), torch.tensor([1, 2]))
    bad = (torch.tensor([[2.0, 0.0, -1.0], [float("inf"), 0.0, 1.0]]), torch.tensor([0, 1]))
    if how == "functional":
        with pytest.raises(ValueError, match="preds: the softmax of sample 1 is undefined"):
            torchtally.functional.multiclass_auroc(*bad, num_classes=3, thresholds=thresholds)
        return
    m = torchtally.MulticlassAUROC(3, thresholds=thresholds).update(*good)
    before = states_of(m)
    with pytest.raises(ValueError, match="preds: the softmax of sample 1 is undefined"):
        m.update(*bad)
    assert_same_states(before, states_of(m), "after a +inf logit")


# -- Python numbers that become int64 state ---------------------------------------------------


@pytest.mark.parametrize("batch_size", [10**30, 2**63, 2**53 + 1, -1, 2.0, True])
def test_average_loss_checks_batch_size_before_writing(batch_size):
    m = AverageLoss().update(torch.tensor(2.0), 4)
    before = states_of(m)
    with pytest.raises(ValueError, match="batch_size"):
        m.update(torch.tensor(1.0), batch_size)
    assert_same_states(before, states_of(m), f"batch_size={batch_size!r}")
    assert m.compute().item() == 2.0


def test_average_loss_refuses_a_count_that_would_overflow_int64():
    m = AverageLoss()
    m.persistent(True)
    m.load_state_dict({"loss_sum": torch.tensor(10.0, dtype=torch.float64), "num_samples": torch.tensor(2**63 - 5)})
    before = states_of(m)
    with pytest.raises(ValueError, match="batch_size"):
        m.update(1.0, 10)
    assert_same_states(before, states_of(m), "an overflowing count")
    m.update(1.0, 4)  # still fits
    assert int(m.num_samples) == 2**63 - 1


def test_average_loss_largest_batch_size_is_exact():
    m = AverageLoss().update(1.0, 2**53).update(3.0, 1)
    assert int(m.num_samples) == 2**53 + 1


@pytest.mark.parametrize("cls_name", ["BinaryAccuracy", "BinaryAUROC", "BinaryAUROC[binned]", "MulticlassAUROC"])
def test_ignore_index_beyond_int64_is_refused_at_construction(cls_name):
    entry = next(e for e in METRICS if e.name == cls_name)
    with pytest.raises(ValueError, match="ignore_index"):
        entry.make(**dict(entry.kwargs), ignore_index=2**70)


# -- unsupported dtypes and meta tensors, from every metric -----------------------------------


def _bad_batches(entry):
    """(argument name, what is wrong, batch) for every argument and every unsupported input."""
    for name in entry.arg_names:
        for dtype in UNSUPPORTED_DTYPES:
            yield name, str(dtype), entry.batch(dtypes={name: dtype})
        batch = list(entry.batch())
        i = entry.arg_names.index(name)
        batch[i] = batch[i].to("meta")
        yield name, "meta", tuple(batch)


def _accepted_exactly(entry, metric, batch, what):
    """Aggregation takes float8 and uint tensors: the result is that of their float64 values."""
    assert entry.family in _AGGREGATING and "complex" not in what, f"{entry.name} accepted {what}"
    twin = entry.metric()
    twin.update(*entry.batch(n=6, generator=torch.Generator().manual_seed(1)))
    twin.update(*(a.double() for a in batch))
    assert torch.equal(metric.compute(), twin.compute()), f"{entry.name}: {what} read inexactly"


@pytest.mark.parametrize("entry", METRICS, ids=entry_id)
def test_unsupported_inputs_raise_naming_the_argument_with_state_unchanged(entry):
    for name, what, batch in _bad_batches(entry):
        m = entry.metric()
        m.update(*entry.batch(n=6, generator=torch.Generator().manual_seed(1)))
        before = states_of(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                m.update(*batch)
            except (TypeError, ValueError) as exc:
                assert name in str(exc), f"{entry.name}, {what} {name}: the error does not name it: {exc}"
            else:
                _accepted_exactly(entry, m, batch, what)
                continue
        assert_same_states(before, states_of(m), f"{entry.name} after a refused {what} {name}")


@pytest.mark.parametrize("entry", METRICS, ids=entry_id)
def test_meta_inputs_to_a_fresh_metric_raise_and_leave_it_where_it_was(entry):
    """A fresh metric follows its input's device; a meta batch must not leave it on meta."""
    for i, name in enumerate(entry.arg_names):
        m = entry.metric()
        batch = list(entry.batch())
        batch[i] = batch[i].to("meta")
        with pytest.raises((TypeError, ValueError), match=name):
            m.update(*batch)
        assert m.device == torch.device("cpu") and not m.update_called
        assert all(t.device.type == "cpu" for t in states_of(m).values())
        m.update(*entry.batch())  # and it still works


@pytest.mark.parametrize("entry", FUNCTIONALS, ids=entry_id)
def test_functional_forms_refuse_unsupported_inputs_naming_the_argument(entry):
    for name, what, batch in _bad_batches(entry):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = entry.call(*batch)
            except (TypeError, ValueError) as exc:
                assert name in str(exc), f"{entry.name}, {what} {name}: the error does not name it: {exc}"
                continue
        assert entry.family in _AGGREGATING and "complex" not in what and what != "meta", (
            f"{entry.name} accepted {what} {name}"
        )
        assert torch.equal(result, entry.call(*(a.double() for a in batch)))
