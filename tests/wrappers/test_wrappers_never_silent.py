"""The wrappers never give a silently wrong number: BootStrapper's forward resamples the
positions update would (its sample counter used to double on every forward: 3, 9, 21, ...,
and overflow int64 at the 64th); updates made on a wrapped metric itself raise instead of
being dropped; a refused first batch leaves the wrapped metric on its device; a batch refused by
a later member of a collection leaves the wrapped metrics' counts. Ranks whose wrapped classes,
task names or collection prefix differ: tests/distributed/test_option_mismatch.py."""

import copy

import pytest
import torch

from torchtally import Metric, MetricCollection
from torchtally.aggregation import MeanMetric, SumMetric
from torchtally.classification import MulticlassAccuracy
from torchtally.wrappers import (
    BinaryTargetTransformer,
    BootStrapper,
    ClasswiseWrapper,
    LambdaInputTransformer,
    MinMaxMetric,
    Running,
)


def test_bootstrapper_forward_resamples_what_update_resamples():
    by_forward = BootStrapper(MeanMetric(), num_bootstraps=4, raw=True)
    by_update = copy.deepcopy(by_forward)  # the same hash stream: the same draws for the same positions
    g = torch.Generator().manual_seed(1)
    for _ in range(70):  # past the 64th forward, where the doubling counter overflowed
        batch = torch.rand(3, generator=g)
        by_forward(batch)
        by_update.update(batch)
    assert int(by_forward.next_position) == int(by_update.next_position) == 210
    torch.testing.assert_close(by_forward.compute()["raw"], by_update.compute()["raw"], rtol=0, atol=1e-12)


def test_updating_a_wrapped_copy_directly_raises_instead_of_not_counting():
    """The wrapper keeps its copies' states itself; an update of a copy (as torchmetrics' own
    tests make on ``BootStrapper.metrics``) used to be dropped, compute warning that nothing was
    updated. Now the wrapper's next call says so, its state unchanged."""
    boot = BootStrapper(MeanMetric(), num_bootstraps=2)
    boot.update(torch.tensor([1.0, 2.0]))
    before = copy.deepcopy(boot).compute()
    boot.metrics[0].update(torch.tensor([5.0]))
    with pytest.raises(RuntimeError, match="holds updates of its own"):
        boot.compute()
    with pytest.raises(RuntimeError, match="holds updates of its own"):
        boot.update(torch.tensor([3.0]))
    boot.metrics[0].reset()
    torch.testing.assert_close(boot.compute(), before, equal_nan=True)  # a copy may draw no sample: NaN


def test_wrapping_an_updated_metric_raises():
    updated = MeanMetric()
    updated.update(torch.tensor([4.0]))
    running = Running(updated, window=2)
    with pytest.raises(RuntimeError, match="before it was wrapped"):
        running.update(torch.tensor([1.0]))


WRAPPED_FRESH = {
    "ClasswiseWrapper": lambda: ClasswiseWrapper(MulticlassAccuracy(3, average=None)),
    "MinMaxMetric": lambda: MinMaxMetric(MulticlassAccuracy(3)),
    "LambdaInputTransformer": lambda: LambdaInputTransformer(MulticlassAccuracy(3), lambda p: p),
    "BinaryTargetTransformer": lambda: BinaryTargetTransformer(MulticlassAccuracy(3)),
}


@pytest.mark.parametrize("name", sorted(WRAPPED_FRESH))
def test_a_refused_first_batch_leaves_the_wrapped_metric_where_it_was(name):
    """A fresh metric follows its first input's device; a refused first batch (meta tensors)
    used to leave the wrapped metric on the meta device, failing every later update."""
    g = torch.Generator().manual_seed(2)
    batch = (torch.rand(6, 3, generator=g), torch.randint(0, 3, (6,), generator=g))
    wrapper, fresh = WRAPPED_FRESH[name](), WRAPPED_FRESH[name]()
    with pytest.raises(ValueError, match="meta"):
        wrapper.update(*(t.to("meta") for t in batch))
    assert all(m.device == torch.device("cpu") for m in wrapper.modules() if isinstance(m, Metric))
    wrapper.update(*batch)
    fresh.update(*batch)
    assert str(wrapper.compute()) == str(fresh.compute())


def test_a_batch_refused_by_a_later_member_leaves_the_wrapped_counts():
    """Running's wrapped metric counted a batch that BootStrapper, later in the collection,
    refused (the collection rolled Running's states back, not its wrapped metric's count)."""
    collection = MetricCollection(
        {"run": Running(SumMetric(), window=2), "boot": BootStrapper(MeanMetric(), num_bootstraps=2)}
    )
    collection.update(torch.tensor([1.0, 2.0]))
    wrapped = collection["run"].base_metric
    assert wrapped.update_count == 1
    with pytest.raises(ValueError, match="0-d tensor"):
        collection.update(torch.tensor(3.0))
    assert wrapped.update_count == 1
    assert float(collection["run"].compute()) == 3.0
