"""MetricHook in one process: padding dropped exactly (every rank simulated through
DistributedSampler(num_replicas=W, rank=r)), usages, output transforms, errors, placement."""

import pytest
import torch
from support.metric_tester import states_of
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, TensorDataset

from torchtally import Metric
from torchtally.adapters.dataparallel import _gather_device, check_no_metrics_inside, metric_device
from torchtally.adapters.hook import MetricHook, Usage, as_update_args, resolve_usage
from torchtally.adapters.sampler import SamplerWarning, UnpaddedDistributedSampler


class Collect:
    """Duck-typed metric that keeps every target it was given, and logs its calls."""

    def __init__(self):
        self.calls = []
        self.seen = []

    def reset(self):
        self.calls.append("reset")
        self.seen = []

    def update(self, preds, target):
        self.calls.append(("update", len(target)))
        assert preds.shape[0] == target.shape[0]
        self.seen.append(target.clone())
        return self

    def compute(self):
        self.calls.append("compute")
        return torch.cat(self.seen) if self.seen else torch.empty(0, dtype=torch.long)


def dataset(n):
    return TensorDataset(torch.randn(n, 3), torch.arange(n))


def loader_for(ds, w, r, batch_size, shuffle=True, via_batch_sampler=False, epoch=0):
    sampler = DistributedSampler(ds, num_replicas=w, rank=r, shuffle=shuffle, seed=3)
    sampler.set_epoch(epoch)
    if via_batch_sampler:
        return DataLoader(ds, batch_sampler=BatchSampler(sampler, batch_size, drop_last=False))
    return DataLoader(ds, batch_size=batch_size, sampler=sampler)


@pytest.mark.parametrize("via_batch_sampler", [False, True])
def test_every_sample_counted_once_across_simulated_ranks(via_batch_sampler):
    for w in (2, 3, 4):
        for n in (w, 2 * w, 2 * w + 1, 3 * w - 1, w - 1, 1, 0):
            for batch_size in (1, 2, 3, 7):
                for shuffle in (False, True):
                    seen = []
                    for r in range(w):
                        loader = loader_for(dataset(n), w, r, batch_size, shuffle, via_batch_sampler)
                        hook = MetricHook(Collect())
                        with hook.epoch(loader):
                            for x, y in loader:
                                hook.update(x, y)
                        seen += hook.result.tolist()
                    assert sorted(seen) == list(range(n)), (w, n, batch_size, shuffle)


def test_without_drop_padding_duplicates_are_kept():
    n, w = 5, 4
    seen = []
    for r in range(w):
        loader = loader_for(dataset(n), w, r, 2)
        hook = MetricHook(Collect(), drop_padding=False)
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y)
        seen += hook.result.tolist()
    assert len(seen) == 8 and sorted(set(seen)) == list(range(n))


def test_epoch_after_epoch_restarts_the_position_counter():
    n, w, r = 7, 2, 1  # rank 1 holds positions 1, 3, 5, 7(padding)
    ds = dataset(n)
    hook = MetricHook(Collect())
    for epoch in range(3):
        loader = loader_for(ds, w, r, 3, epoch=epoch)
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y)
        assert len(hook.result) == 3
        expected = list(loader.sampler)[:3]
        assert hook.result.tolist() == expected


class Rows(Metric):
    """A torchtally metric that records the length of every update."""

    def __init__(self):
        super().__init__()
        self.add_state("lengths", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, preds, target):
        self.append_state("lengths", torch.tensor([len(target)]))

    def compute(self):
        return self.lengths.tolist()


def test_a_batch_of_only_padding():
    n, w, r = 5, 4, 3  # rank 3: positions 3 (real) and 7 (padding)
    loader = loader_for(dataset(n), w, r, 1, shuffle=False)
    # another library's metric may reject empty input: the batch is skipped
    metric = Collect()
    hook = MetricHook(metric)
    with hook.epoch(loader):
        for x, y in loader:
            hook.update(x, y)
    assert metric.calls == ["reset", ("update", 1), "compute"]
    assert hook.result.tolist() == [3]
    # a torchtally metric gets a zero-row update, so every rank updates before a running sync
    for usage in ("epoch_wise", "running"):
        hook = MetricHook(Rows(), usage=usage)
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y)
        assert hook.result == [1, 0]


def test_usages_call_reset_update_compute_at_the_right_events():
    loader = loader_for(dataset(12), 2, 0, 2)  # 3 batches per rank
    expected = {
        "epoch_wise": ["reset"] + [("update", 2)] * 3 + ["compute"],
        "batch_wise": ["reset", ("update", 2), "compute"] * 3,
        "running": ["reset", ("update", 2), ("update", 2), "compute", ("update", 2), "compute"],
    }
    for name, calls in expected.items():
        metric = Collect()
        hook = MetricHook(metric, usage=name, every=2)
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y)
        assert metric.calls == calls, name
        assert len(hook.result) == (2 if name == "batch_wise" else 6)


def test_running_over_the_whole_run_does_not_reset_per_epoch():
    loader = loader_for(dataset(8), 2, 1, 2)
    metric = Collect()
    hook = MetricHook(metric, usage="running_batch_wise")  # ignite's name
    hook.start_run()
    for _ in range(2):
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y)
    assert metric.calls.count("reset") == 1
    assert len(hook.result) == 8


def test_resolve_usage_accepts_ignite_usage_objects():
    from ignite.metrics.metric import BatchWise, EpochWise, SingleEpochRunningBatchWise

    assert resolve_usage(EpochWise()) == Usage("epoch_wise")
    assert resolve_usage(BatchWise()) == Usage("batch_wise")
    assert resolve_usage(SingleEpochRunningBatchWise(), every=3) == Usage("running", every=3)
    with pytest.raises(ValueError, match="usage"):
        resolve_usage("sometimes")
    with pytest.raises(ValueError, match="every"):
        resolve_usage("running", every=0)


def test_output_transform_and_update_argument_forms():
    assert as_update_args((1, 2)) == ((1, 2), {})
    assert as_update_args({"y_pred": 1, "y": 2, "loss": 3}) == ((1, 2), {})
    assert as_update_args({"preds": 1, "target": 2}) == ((), {"preds": 1, "target": 2})
    assert as_update_args(5) == ((5,), {})

    metric = Collect()
    hook = MetricHook(metric, output_transform=lambda out: (out["logits"], out["label"]))
    loader = loader_for(dataset(5), 2, 1, 2)  # rank 1: positions 1, 3, 5(padding)
    with hook.epoch(loader):
        for x, y in loader:
            hook.iteration_completed({"logits": x, "label": y})
    assert len(hook.result) == 2
    with pytest.raises(TypeError, match="output_transform"):
        MetricHook(Collect(), output_transform=3)


def test_keyword_updates_are_sliced_too():
    class KwMetric(Collect):
        def update(self, *, preds, target):
            return super().update(preds, target)

    loader = loader_for(dataset(5), 2, 1, 2)
    hook = MetricHook(KwMetric())
    with hook.epoch(loader):
        for x, y in loader:
            hook.iteration_completed({"preds": x, "target": y})
    assert len(hook.result) == 2


def test_scalar_only_updates_raise_when_the_sampler_pads():
    class Mean:
        def reset(self):
            self.values = []

        def update(self, value):
            self.values.append(value)

        def compute(self):
            return sum(self.values)

    hook = MetricHook(Mean())
    hook.reset()
    with pytest.raises(ValueError, match="batch dimension"):
        with hook.epoch(loader_for(dataset(5), 2, 0, 2)):
            hook.update(torch.tensor(1.0))
    # no padding anywhere: scalars are fine
    with hook.epoch(loader_for(dataset(6), 2, 0, 2)):
        hook.update(torch.tensor(1.0))
    assert hook.result == torch.tensor(1.0)


class Targets(Metric):
    """A torchtally metric that keeps its targets and rejects non-int64 ones before mutating."""

    def __init__(self):
        super().__init__()
        self.add_state("targets", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, preds, target):
        if target.dtype != torch.int64:
            raise TypeError(f"target: expected int64, got {target.dtype}")
        self.append_state("targets", target)

    def compute(self):
        return self.targets.tolist()


@pytest.mark.parametrize("usage", ["epoch_wise", "batch_wise", "running"])
def test_a_rejected_batch_leaves_the_hook_as_it_was(usage):
    loader = loader_for(dataset(5), 2, 1, 1, shuffle=False)  # rank 1: samples 1, 3, then padding
    hook = MetricHook(Targets(), usage=usage, every=2)
    results = []

    def hook_state():
        return (
            hook.position,
            hook.iteration,
            hook.computed,
            hook.result,
            hook.metrics.targets.tolist(),
            hook.metrics._updated,
            hook.metrics._cache,
        )

    with hook.epoch(loader):
        for i, (x, y) in enumerate(loader):
            if i == 1:
                before = hook_state()
                with pytest.raises(TypeError, match="target: expected int64"):
                    hook.update(x, y.double())  # rejected; fixed and sent again below
                assert hook_state() == before
            hook.update(x, y)
            results.append(hook.result)
    results.append(hook.result)  # after the epoch
    want = {
        "epoch_wise": [None, None, None, [1, 3]],
        "batch_wise": [[1], [3], [], []],  # the last batch is padding only
        "running": [None, [1, 3], [1, 3], [1, 3]],
    }
    assert results == want[usage]


class PositiveTargets(Targets):
    def update(self, preds, target):
        if (target <= 0).any():
            raise ValueError("target: expected values > 0")
        super().update(preds, target)


def test_batch_wise_undoes_its_reset_for_a_collection_too():
    hook = MetricHook({"all": Targets(), "positive": PositiveTargets()}, usage="batch_wise")
    hook.update(torch.zeros(2, 3), torch.tensor([4, 5]))
    before = states_of(hook.metrics), hook.result
    with pytest.raises(ValueError, match="expected values > 0"):
        hook.update(torch.zeros(2, 3), torch.tensor([0, 1]))  # "all" takes it, "positive" does not
    after = states_of(hook.metrics), hook.result
    assert {k: v.tolist() for k, v in after[0].items()} == {k: v.tolist() for k, v in before[0].items()}
    assert after[1] == before[1] == {"all": [4, 5], "positive": [4, 5]}
    assert hook.metrics.compute() == before[1]  # still updated, cached result kept


def test_more_rows_than_the_shard_raises():
    loader = loader_for(dataset(5), 2, 1, 2)
    metric = Collect()
    hook = MetricHook(metric)
    with pytest.raises(ValueError, match="only 3"):
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x.repeat(2, 1), y.repeat(2))  # e.g. a transform that doubles rows
    assert "compute" not in metric.calls  # the failed epoch started no sync


def test_mismatched_rows_in_a_padded_batch_raise():
    loader = loader_for(dataset(5), 2, 1, 4)  # one batch: positions 1, 3, 5(padding)
    hook = MetricHook(Collect())
    with pytest.raises(ValueError, match="rows on dim 0"):
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y[:2])


def test_partial_epoch_warns_on_end():
    loader = loader_for(dataset(9), 2, 0, 2)
    hook = MetricHook(Collect())
    with pytest.warns(SamplerWarning, match="covered 2 of"):
        with hook.epoch(loader):
            for x, y in loader:
                hook.update(x, y)
                break


def test_syncing_usages_refuse_uneven_shards():
    ds = dataset(7)
    for r in range(3):
        loader = DataLoader(ds, batch_size=1, sampler=UnpaddedDistributedSampler(ds, num_replicas=3, rank=r))
        with pytest.raises(ValueError, match=r"\[3, 2, 2\]"):
            MetricHook(Collect(), usage="running").start_epoch(loader)
        MetricHook(Collect()).start_epoch(loader)  # epoch-wise syncs once: fine
    # the batch size of an explicit BatchSampler counts too
    loader = DataLoader(
        ds, batch_sampler=BatchSampler(UnpaddedDistributedSampler(ds, num_replicas=3, rank=2), 2, False)
    )
    with pytest.raises(ValueError, match=r"\[2, 1, 1\]"):
        MetricHook(Collect(), usage="batch_wise").start_epoch(loader)
    # same number of batches on every rank despite uneven shards: fine
    loader = DataLoader(ds, batch_size=3, sampler=UnpaddedDistributedSampler(ds, num_replicas=3, rank=0))
    MetricHook(Collect(), usage="batch_wise").start_epoch(loader)


def test_out_of_order_loader_keeps_padding_with_a_warning():
    ds = dataset(5)
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=2, rank=1), in_order=False)
    hook = MetricHook(Collect())
    with pytest.warns(SamplerWarning, match="in_order"):
        hook.start_epoch(loader)
    assert hook.layout is None


def test_exception_in_the_body_skips_compute():
    metric = Collect()
    hook = MetricHook(metric)
    with pytest.raises(RuntimeError, match="boom"):
        with hook.epoch():
            raise RuntimeError("boom")
    assert metric.calls == ["reset"]


def test_dict_of_metrics_is_one_collection():
    a, b = Collect(), Collect()
    hook = MetricHook({"a": a, "b": b})
    loader = loader_for(dataset(5), 2, 0, 2)
    with hook.epoch(loader):
        for x, y in loader:
            hook.update(x, y)
    assert set(hook.result) == {"a", "b"}
    assert hook.result["a"].tolist() == hook.result["b"].tolist() == list(loader.sampler)
    with pytest.raises(TypeError, match="reset/update/compute"):
        MetricHook({"a": a, "b": object()})
    with pytest.raises(TypeError, match="metrics"):
        MetricHook(object())


# ---- DataParallel placement ---------------------------------------------------------------


class DeviceRecorder(Collect):
    def __init__(self):
        super().__init__()
        self.devices = []
        self.moved_to = None

    def to(self, device):
        self.moved_to = torch.device(device)
        return self

    def update(self, preds, target):
        self.devices.append((preds.device, target.device))
        return self


def test_inputs_and_state_go_to_the_metric_device():
    metric = DeviceRecorder()
    hook = MetricHook(metric, device="meta")  # a second device that CPU-only torch has
    assert metric.moved_to == torch.device("meta")
    hook.update(torch.randn(4, 3), torch.arange(4))
    assert metric.devices == [(torch.device("meta"), torch.device("meta"))]


def test_data_parallel_on_cpu_only_torch_wraps_nothing():
    dp = nn.DataParallel(nn.Linear(3, 2))
    assert dp.device_ids == [] and metric_device(dp) == torch.device("cpu")
    metric = DeviceRecorder()
    MetricHook(metric, model=dp)
    assert metric.moved_to == torch.device("cpu")
    assert metric_device(nn.Linear(2, 2).to("meta")) == torch.device("meta")
    assert metric_device(nn.ReLU()) == torch.device("cpu")


def test_data_parallel_gather_device_rule():
    # DataParallel gathers on output_device, which defaults to device_ids[0].
    assert _gather_device([2, 0, 1], None, "cuda") == torch.device("cuda", 2)
    assert _gather_device([2, 0, 1], 1, "cuda") == torch.device("cuda", 1)
    assert _gather_device([0], torch.device("cuda", 3), "cuda") == torch.device("cuda", 3)

    # the attributes a multi-GPU DataParallel has (set by its __init__), without the GPUs
    dp = nn.DataParallel.__new__(nn.DataParallel)
    nn.Module.__init__(dp)
    dp.module = nn.Linear(2, 2)
    dp.device_ids, dp.output_device, dp.src_device_obj = [1, 0], 1, torch.device("cuda", 1)
    assert metric_device(dp) == torch.device("cuda", 1)
    dp.output_device = 0
    assert metric_device(dp) == torch.device("cuda", 0)


def test_data_parallel_model_may_not_hold_metrics():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 2))
            self.acc = Collect()

    with pytest.raises(ValueError, match="metric.*at acc"):
        check_no_metrics_inside(nn.DataParallel(Net()))
    with pytest.raises(ValueError, match="model"):
        MetricHook(Collect(), model=nn.DataParallel(Net()))

    class ModuleMetric(nn.Module):  # a metric that is an nn.Module, as torchmetrics' are
        reset = update = compute = lambda self, *a: None

    net = nn.Sequential(nn.Linear(2, 2), ModuleMetric())
    with pytest.raises(ValueError, match="at 1"):
        check_no_metrics_inside(nn.DataParallel(net))
    check_no_metrics_inside(net)  # not DataParallel: allowed
    check_no_metrics_inside(nn.DataParallel(nn.Sequential(nn.Linear(2, 2))))


def test_other_libraries_metrics_work_and_skip_all_padding_batches():
    from torchmetrics.classification import MulticlassAccuracy as TMAccuracy

    n, w, r = 5, 4, 3  # rank 3: positions 3 (real), 7 (padding); batch size 1
    ds = TensorDataset(torch.randn(n, 3), torch.randint(0, 3, (n,)))
    loader = DataLoader(ds, batch_size=1, sampler=DistributedSampler(ds, num_replicas=w, rank=r, shuffle=False))
    hook = MetricHook({"acc": TMAccuracy(num_classes=3, average="micro")})
    with hook.epoch(loader):
        for x, y in loader:
            hook.update(x, y)  # torchmetrics rejects an empty batch: it must not get one
    x, y = ds.tensors
    assert hook.result["acc"].item() == float(x[3].argmax() == y[3])
