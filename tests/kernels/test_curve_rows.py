"""torchtally._C.curve_rows, an exact curve update's batch stored as it is (csrc/API_CURVES.md):
against its torch reference, and the metric state it gives against the general (torch) path of
CurveTask.rows, bit for bit, for every task, layout, dtype and ignore_index."""

from unittest import mock

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.kernel_inputs import kernels as kernel_module

from torchtally.functional.curves.update import CurveTask, class_label_dtype

SCORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
LABEL_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
TASKS = ("binary", "multiclass", "multilabel")


@st.composite
def batches(draw):
    """(task name, K, preds, target, ignore_index): probabilities mostly, sometimes logits, NaN,
    out-of-range labels or an ignore_index that the target dtype cannot hold."""
    task = draw(st.sampled_from(TASKS))
    k = 1 if task == "binary" else draw(st.integers(2, 5))
    n = draw(st.sampled_from([0, 1, 3, 17, 64]))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    shape = (n,) if task == "binary" else (n, k)
    kind = draw(st.sampled_from(["probabilities", "probabilities", "edges", "logits", "nan"]))
    preds = torch.rand(shape, generator=g)
    if kind == "edges":
        preds = torch.where(preds < 0.5, torch.zeros_like(preds), torch.ones_like(preds))
    elif kind == "logits":
        preds = preds * 6 - 3
    elif kind == "nan" and n:
        preds.reshape(-1)[int(torch.randint(0, preds.numel(), (1,), generator=g))] = float("nan")
    preds = preds.to(draw(st.sampled_from(SCORE_DTYPES)))
    hi = k if task == "multiclass" else 2
    target_shape = (n, k) if task == "multilabel" else (n,)
    target = torch.randint(0, hi, target_shape, generator=g)
    ignore_index = draw(st.sampled_from([None, None, -1, 1, 255, 300]))
    if ignore_index is not None and n:
        target = torch.where(torch.rand(target_shape, generator=g) < 0.3, torch.full_like(target, ignore_index), target)
    if draw(st.integers(0, 5)) == 0 and n:  # a label out of range
        target.reshape(-1)[0] = hi + 1
    dtype = draw(st.sampled_from(LABEL_DTYPES if task != "multiclass" else LABEL_DTYPES[1:]))
    if dtype == torch.bool:
        target = target.clamp(0, 1)
    target = target.to(dtype)
    if draw(st.booleans()) and n:  # strided views
        preds = torch.stack([preds, preds], -1)[..., 1]
        target = torch.stack([target, target], -1)[..., 0]
    return task, k, preds, target, ignore_index


SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)


def _outputs(task, k, preds, target):
    dtype = class_label_dtype(k) if task == "multiclass" else torch.uint8
    return (
        torch.full(preds.shape, 7.0, dtype=torch.float32),
        torch.full(target.shape, 3, dtype=dtype),
        torch.full((1,), -9, dtype=torch.int64),
    )


@SETTINGS
@given(batches(), st.booleans())
def test_the_c_core_matches_the_reference(batch, convert):
    task, k, preds, target, ignore_index = batch
    code = TASKS.index(task)
    got, want = _outputs(task, k, preds, target), _outputs(task, k, preds, target)
    kernel_module("c").curve_rows(*got, preds, target, code, ignore_index, convert)
    kernel_module("reference").curve_rows(*want, preds, target, code, ignore_index, convert)
    assert int(got[2]) == int(want[2])
    assert torch.equal(got[0].view(torch.int32), want[0].view(torch.int32))  # NaN never stored: bits compare
    assert torch.equal(got[1], want[1])


def _general_rows(task: CurveTask, preds, target):
    with mock.patch.object(CurveTask, "_rows_as_given", lambda self, p, t: None):
        return task.rows(preds, target, torch.device("cpu"))


def _rows(task: CurveTask, preds, target):
    try:
        return task.rows(preds, target, torch.device("cpu"))
    except (TypeError, ValueError) as error:
        return type(error), str(error)


@SETTINGS
@given(batches())
def test_the_state_rows_equal_the_general_path_bit_for_bit(batch):
    name, k, preds, target, ignore_index = batch
    task = CurveTask(name, k, None, ignore_index)
    fast = _rows(task, preds, target)
    try:
        slow = _general_rows(task, preds, target)
    except (TypeError, ValueError) as error:
        assert fast == (type(error), str(error))  # the same refusal, word for word
        return
    assert not isinstance(fast[0], type)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b) or torch.equal(a.view(torch.uint8), b.view(torch.uint8))
        assert a.is_contiguous() and a.untyped_storage().size() == a.numel() * a.element_size()


def test_a_batch_of_probabilities_takes_the_kernel_and_logits_do_not():
    task = CurveTask("multiclass", 3)
    calls = []
    original = CurveTask._rows_as_given

    def spy(self, preds, target):
        out = original(self, preds, target)
        calls.append(out is not None)
        return out

    with mock.patch.object(CurveTask, "_rows_as_given", spy):
        task.rows(torch.rand(4, 3), torch.tensor([0, 1, 2, 0]), torch.device("cpu"))
        task.rows(torch.randn(4, 3) * 5, torch.tensor([0, 1, 2, 0]), torch.device("cpu"))
    assert calls == [True, False]


BAD = [
    ("task 3", ValueError, "task", {"task": 3}),
    ("preds int", TypeError, "preds", {"preds": torch.zeros(4, dtype=torch.int64)}),
    ("preds 2-D for binary", ValueError, "preds", {"preds": torch.rand(4, 1)}),
    ("target float", TypeError, "target", {"target": torch.zeros(4)}),
    ("target short", ValueError, "target", {"target": torch.zeros(3, dtype=torch.int64)}),
    ("scores float64", TypeError, "scores", {"scores": torch.zeros(4, dtype=torch.float64)}),
    ("scores [5]", ValueError, "scores", {"scores": torch.zeros(5)}),
    ("labels int64 for binary", TypeError, "labels", {"labels": torch.zeros(4, dtype=torch.int64)}),
    ("size [2]", ValueError, "size", {"size": torch.zeros(2, dtype=torch.int64)}),
]


@pytest.mark.parametrize("backend", ["c", "reference"])
@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_naming_the_argument_and_leaves_the_outputs(backend, case):
    _, error, argument, change = case
    args = {
        "scores": torch.full((4,), 7.0),
        "labels": torch.full((4,), 3, dtype=torch.uint8),
        "size": torch.full((1,), -9, dtype=torch.int64),
        "preds": torch.rand(4),
        "target": torch.zeros(4, dtype=torch.int64),
        "task": 0,
        "ignore_index": None,
        "convert": True,
    }
    args.update(change)
    before = [v.clone() for v in list(args.values())[:3]]
    with pytest.raises(error, match=rf"^{argument}: "):
        kernel_module(backend).curve_rows(*args.values())
    assert all(torch.equal(a, b) for a, b in zip(list(args.values())[:3], before))


def test_multiclass_labels_must_hold_every_class():
    preds, target = torch.rand(2, 300), torch.tensor([0, 299])
    with pytest.raises(TypeError, match="^labels: "):
        kernel_module("c").curve_rows(
            torch.empty(2, 300),
            torch.empty(2, dtype=torch.uint8),
            torch.empty(1, dtype=torch.int64),
            preds,
            target,
            1,
            None,
            True,
        )
