"""The decorators in one process: parsing, behaviour without a process group, and an ignite
metric with torchtally's decorators on ignite's Engine. Their sync across real processes is
tested in tests/distributed/test_sync.py (check_decorators, check_ignite_engine)."""
import ignite.engine as ignite_engine
import ignite.exceptions as ignite_exceptions
import ignite.metrics as ignite_metrics
import pytest
import torch

from torchtally import all_reduced_synchronized, reinit__is_reduced, sync_all_reduce
from torchtally.decorators import _parse
from torchtally.testing import count_collectives


def test_parse_attrs_and_ops():
    assert _parse(["a", "b:SUM", "c:max", "d: MIN", "e:PRODUCT"]) == (
        ("a", "sum"),
        ("b", "sum"),
        ("c", "max"),
        ("d", "min"),
        ("e", "prod"),
    )
    with pytest.raises(ValueError, match="reduction must be one of .* got 'MEAN'"):
        _parse(["a:MEAN"])
    with pytest.raises(ValueError, match="named twice"):
        _parse(["a", "a:MAX"])
    with pytest.raises(ValueError, match="not an attribute name"):
        _parse(["a b"])
    with pytest.raises(TypeError):
        _parse([3])


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
