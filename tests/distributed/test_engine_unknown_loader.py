"""Never silent: under torch.distributed, a loader whose sharding torchtally cannot see gets a
SamplerWarning saying that padding duplicates may be counted and how to fix it, from every
engine hook (the plain loop's MetricHook, ignite's attach; Lightning's callback goes through
the same ``start_loader``). A loader with a DistributedSampler, or ``drop_padding=False`` (the
caller says every sample goes to one rank), gets none. On 2 gloo processes.
"""

import warnings

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, Sampler

from torchtally import MeanMetric
from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

N = 7  # not divisible by 2: a DistributedSampler pads rank 1's shard


class ShardingLoader:
    """Like Avalanche's SingleDatasetDataLoader: yields this rank's padded shard in batches of
    2, but exposes no sampler, so nothing tells the hook where the padding is."""

    def __init__(self, rank, world_size):
        self.values = torch.arange(N, dtype=torch.float64)
        self.sampler_args = dict(num_replicas=world_size, rank=rank, shuffle=False)

    def __iter__(self):
        indices = list(DistributedSampler(range(N), **self.sampler_args))
        for i in range(0, len(indices), 2):
            yield self.values[indices[i : i + 2]]


class StridedSampler(Sampler):
    """A custom sampler class torchtally does not know."""

    def __init__(self, rank, world_size):
        self.indices = list(range(rank, N, world_size))

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return len(self.indices)


def _sampler_warnings(record):
    from torchtally.adapters.sampler import SamplerWarning

    return [str(w.message) for w in record if issubclass(w.category, SamplerWarning)]


def _run_plain(hook, loader, given=True):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with hook.epoch(loader if given else None):
            for batch in loader:
                hook.update(batch)
    return _sampler_warnings(record)


def _hooks_warn(rank, world_size):
    from ignite.engine import Engine

    from torchtally.adapters.hook import MetricHook
    from torchtally.adapters.ignite import attach

    messages = {}
    # an unknown loader class: warned, and the warning says what may go wrong and what to do
    hook = MetricHook(MeanMetric())
    messages["unknown loader"] = _run_plain(hook, ShardingLoader(rank, world_size))
    # the padding was indeed counted: the warning is not a false alarm
    messages["mean"] = float(hook.result)
    # a second epoch of the same hook does not repeat it
    messages["second epoch"] = _run_plain(hook, ShardingLoader(rank, world_size))
    # no loader at all: the first update warns
    messages["no loader"] = _run_plain(MetricHook(MeanMetric()), ShardingLoader(rank, world_size), given=False)
    # a DataLoader over a sampler class torchtally does not know
    data = torch.arange(N, dtype=torch.float64)
    custom = DataLoader(data, batch_size=2, sampler=StridedSampler(rank, world_size))
    messages["custom sampler"] = _run_plain(MetricHook(MeanMetric()), custom)
    custom_batches = DataLoader(data, batch_sampler=BatchSampler(StridedSampler(rank, world_size), 2, False))
    messages["custom batch sampler"] = _run_plain(MetricHook(MeanMetric()), custom_batches)
    # silent where the hook can be exact, or is told there is nothing to drop
    sharded = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, shuffle=False))
    messages["DistributedSampler"] = _run_plain(MetricHook(MeanMetric()), sharded)
    hook = MetricHook(MeanMetric())
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with hook.epoch(ShardingLoader(rank, world_size), sampler=DistributedSampler(data, shuffle=False)):
            for batch in ShardingLoader(rank, world_size):
                hook.update(batch)
    messages["sampler given"] = _sampler_warnings(record)
    messages["exact mean"] = float(hook.result)
    messages["drop_padding=False"] = _run_plain(MetricHook(MeanMetric(), drop_padding=False), custom)

    # ignite over an iterable that is no DataLoader
    engine = Engine(lambda engine, batch: batch)
    attach(MeanMetric(), engine, "mean")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        engine.run(ShardingLoader(rank, world_size), max_epochs=1, epoch_length=2)  # 4 positions per rank
    messages["ignite"] = _sampler_warnings(record)
    return messages


def test_every_hook_warns_on_a_loader_whose_sharding_it_cannot_see():
    results = run_distributed(_hooks_warn, 2, timeout=180)
    for rank, messages in enumerate(results):
        for case in ("unknown loader", "no loader", "custom sampler", "custom batch sampler", "ignite"):
            assert len(messages[case]) == 1, (rank, case, messages[case])
            text = messages[case][0]
            assert "padding duplicates" in text and "may count them" in text, text
            assert "sampler=" in text and "drop_padding=False" in text, text
        assert "ShardingLoader" in messages["unknown loader"][0]
        assert "StridedSampler" not in messages["custom sampler"][0]  # names the loader given
        assert "DataLoader" in messages["custom sampler"][0]
        assert "no loader or sampler was given" in messages["no loader"][0]
        for case in ("second epoch", "DistributedSampler", "sampler given", "drop_padding=False"):
            assert messages[case] == [], (rank, case, messages[case])
        # the warned run counted rank 1's padding duplicate (index 0): mean of 0..6 plus a 0
        assert messages["mean"] == pytest.approx(sum(range(N)) / (N + 1))
        assert messages["exact mean"] == pytest.approx(sum(range(N)) / N)


def test_single_process_stays_silent():
    from torchtally.adapters.hook import MetricHook

    assert _run_plain(MetricHook(MeanMetric()), ShardingLoader(0, 1)) == []
    assert _run_plain(MetricHook(MeanMetric()), ShardingLoader(0, 1), given=False) == []
