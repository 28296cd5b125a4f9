"""The decorators in one process: parsing, behaviour without a process group, and an ignite
metric with torchtally's decorators on ignite's Engine. Their sync across real processes is
tested in tests/distributed/test_sync.py; ignite's contract (spellings, exceptions and when
they are raised) under 1 and 2 ranks, against ignite's own decorators, in
tests/distributed/test_decorators_ignite_contract.py."""

import ignite.engine as ignite_engine
import ignite.exceptions as ignite_exceptions
import ignite.metrics as ignite_metrics
import numpy as np
import pytest
import torch

from torchtally import all_reduced_synchronized, reinit__is_reduced, sync_all_reduce
from torchtally.decorators import _MISSING, _as_state, _attribute_value, _parse
from torchtally.testing import count_collectives


def test_parse_accepts_ignite_spellings_only():
    assert _parse(["a", "b:SUM", "c:MAX", "d:MIN", "e:PRODUCT"]) == (
        ("a", "sum"),
        ("b", "sum"),
        ("c", "max"),
        ("d", "min"),
        ("e", "prod"),
    )
    # ignite 0.5.5 takes the op exactly as written: upper case, no spaces.
    for spec in ("a:sum", "c:MaX", "m:PROduCT", "n:MINN", "a:MEAN", "a:", "d: MIN", "d:MIN ", "a:SUM:MAX"):
        with pytest.raises(ValueError, match="Reduction operation is not valid"):
            _parse([spec])
    with pytest.raises(ValueError, match="named twice"):
        _parse(["a", "a:MAX"])
    with pytest.raises(TypeError):
        _parse([3])


def test_sync_all_reduce_checks_nothing_at_definition_or_in_one_process():
    """As ignite: the spelling and the attributes are checked when compute syncs, and in one
    process nothing syncs (every reduction is the identity there)."""

    class Loose:
        def __init__(self):
            self.text = "not a number"

        @sync_all_reduce("a:sum", "n:MINN", "missingattr", "text", "text", 3)
        def compute(self):
            return "computed"

    with count_collectives() as counter:
        assert Loose().compute() == "computed"
    assert counter.total == 0
    assert sync_all_reduce("n:MINN")._decorated and Loose.compute._decorated


def test_all_reduced_synchronized_checks_spellings_at_definition():
    with pytest.raises(ValueError, match="Reduction operation is not valid.*'sum'"):
        all_reduced_synchronized("a:sum")
    with pytest.raises(ValueError, match="named twice"):
        all_reduced_synchronized("a", "a:MIN")
    # ... but not the attributes themselves: those are the instance's, seen at compute.
    all_reduced_synchronized("missingattr")(type("Later", (), {"compute": lambda self: 1}))


class _Slotted:
    __slots__ = ("total", "unset")

    def __init__(self):
        self.total = 4


class _WithBuffer(torch.nn.Module):
    scale = 2

    def __init__(self):
        super().__init__()
        self.register_buffer("hits", torch.tensor([1, 2]))
        self.plain = 3

    @property
    def doubled(self):
        return 2 * self.plain


def test_attribute_value_takes_instance_attributes_only():
    module = _WithBuffer()
    assert _attribute_value(module, "plain") == 3
    assert _attribute_value(module, "hits") is module.hits
    assert _attribute_value(_Slotted(), "total") == 4
    # Class attributes, properties, unset slots and names ignite's Metric.__getattr__ makes up
    # are not state: ignite looks in the instance __dict__ only.
    for obj, name in ((module, "scale"), (module, "doubled"), (_Slotted(), "unset"), (IgniteCounts(), "missingattr")):
        assert _attribute_value(obj, name) is _MISSING, name


def test_values_to_sync_and_the_type_error_for_the_rest():
    # Real numbers travel as Python numbers of the built-in kinds (numpy's too), complex ones as tensors.
    for value, kind in ((True, bool), (3, int), (np.int32(3), int), (1.5, float), (np.float32(1.5), float)):
        synced = _as_state("M", "x", value, "sync_all_reduce")
        assert type(synced) is kind and synced == value
    tensor = _as_state("M", "x", 1 + 2j, "sync_all_reduce")
    assert tensor.dtype == torch.complex128 and tensor.dim() == 0 and tensor.item() == 1 + 2j
    state = torch.ones(2, requires_grad=True)
    assert not _as_state("M", "x", state, "sync_all_reduce").requires_grad
    for value in ("a string", None, [1, 2]):
        with pytest.raises(
            TypeError, match="Attribute provided to sync_all_reduce should be a number or tensor but `x`"
        ):
            _as_state("M", "x", value, "sync_all_reduce")
    with pytest.raises(OverflowError, match="int64"):
        _as_state("M", "x", 2**70, "sync_all_reduce")


@all_reduced_synchronized("correct", "seen:SUM", "worst:MAX")
class PlainAccuracy:
    def __init__(self):
        self.correct, self.seen, self.worst = 0, 0, 0.0

    def update(self, pred, target):
        self.correct += int((pred == target).sum())
        self.seen += target.numel()
        self.worst = max(self.worst, float((pred - target).abs().max()))

    def compute(self):
        return self.correct / self.seen, self.worst


def test_class_decorator_without_process_group_is_plain_compute():
    m = PlainAccuracy()
    m.update(torch.tensor([1, 2, 3, 4]), torch.tensor([1, 2, 0, 4]))
    with count_collectives() as counter:
        assert m.compute() == (0.75, 3.0)
    assert counter.total == 0
    assert (m.correct, m.seen) == (3, 4) and type(m.seen) is int


def test_class_decorator_needs_a_compute():
    with pytest.raises(TypeError, match="no compute"):
        all_reduced_synchronized("a")(type("NoCompute", (), {}))
    with pytest.raises(TypeError, match="decorates a class"):
        all_reduced_synchronized("a")(lambda: None)


def test_reinit_is_reduced_clears_result_and_returns_value():
    class Cached:
        def __init__(self):
            self._result = 5

        @reinit__is_reduced
        def update(self, x):
            return x * 2

    c = Cached()
    assert c.update(3) == 6
    assert c._result is None


class IgniteCounts(ignite_metrics.Metric):
    """A custom ignite metric whose only change is importing the decorators from torchtally."""

    @reinit__is_reduced
    def reset(self):
        self._num_correct = torch.tensor(0, device=self._device)
        self._num_examples = 0

    @reinit__is_reduced
    def update(self, output):
        y_pred, y = output
        self._num_correct += (y_pred.argmax(dim=1) == y).sum().to(self._device)
        self._num_examples += y.shape[0]

    @sync_all_reduce("_num_correct", "_num_examples:SUM")
    def compute(self):
        if self._num_examples == 0:
            raise ignite_exceptions.NotComputableError("no examples")
        return self._num_correct.item() / self._num_examples


def test_ignite_metric_with_torchtally_decorators_on_ignite_engine():
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(5, 3, generator=g), torch.randint(0, 3, (5,), generator=g)) for _ in range(4)]
    engine = ignite_engine.Engine(lambda engine, batch: batch)
    metric = IgniteCounts()
    metric.attach(engine, "acc")
    state = engine.run(data, max_epochs=1)
    want = sum(int((p.argmax(1) == y).sum()) for p, y in data) / 20
    assert state.metrics["acc"] == pytest.approx(want, abs=0)
    with pytest.raises(ignite_exceptions.NotComputableError):
        IgniteCounts().compute()
