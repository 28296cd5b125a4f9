"""avalanche_loaders on real Avalanche loaders, on 2 and 3 gloo processes: the rows it keeps are,
over all ranks, every sample of every dataset exactly once (the padding duplicates dropped)
for Avalanche's single-, task-balanced, group-balanced and replay loaders, shuffled or not;
loaders it cannot be exact on warn or raise; and a plain MetricHook over an Avalanche loader
warns (SamplerWarning) rather than count the padding silently.
"""

import importlib
import warnings
from collections import Counter

import pytest
import torch

# Avalanche builds a logger when avalanche.training is first imported, and refuses to on a
# non-main rank of an initialised process group: import it before run_distributed's ranks join
# theirs (they import this module first).
importlib.import_module("avalanche.training")
importlib.import_module("torchtally.adapters.avalanche")

pytestmark = pytest.mark.distributed


def _datasets(sizes, task_labels=None):
    """AvalancheDatasets (one experience each) whose x is the sample's global id."""
    from avalanche.benchmarks.scenarios.deprecated.generic_benchmark_creation import (
        create_generic_benchmark_from_tensor_lists,
    )

    tensors, start = [], 0
    for n in sizes:
        ids = torch.arange(start, start + n)
        tensors.append((ids, ids % 3))
        start += n
    benchmark = create_generic_benchmark_from_tensor_lists(
        train_tensors=tensors, test_tensors=tensors, task_labels=task_labels or [0] * len(sizes)
    )
    return [experience.dataset for experience in benchmark.train_stream]


def _kept_ids(loader):
    """(ids of the kept rows, ids of the dropped rows) over one pass on this rank."""
    from torchtally.adapters.avalanche.loaders import row_filter

    rows = row_filter(loader)
    kept, dropped = [], []
    for batch in loader:
        ids = batch[0]
        keep = rows.next_batch(len(ids))
        mask = torch.ones(len(ids), dtype=torch.bool)
        if keep is not None:
            mask[:] = False
            mask[keep] = True
        kept += ids[mask].tolist()
        dropped += ids[~mask].tolist()
    return kept, dropped


def _sampler_warnings(record):
    from torchtally.adapters.sampler import SamplerWarning

    return [str(w.message) for w in record if issubclass(w.category, SamplerWarning)]


def _checks(rank, world_size):
    from avalanche.benchmarks.utils import concat_datasets
    from avalanche.benchmarks.utils.data_loader import (
        GroupBalancedDataLoader,
        GroupBalancedInfiniteDataLoader,
        ReplayDataLoader,
        SingleDatasetDataLoader,
        TaskBalancedDataLoader,
    )
    from torch.utils.data import DataLoader, DistributedSampler

    from torchtally import MeanMetric
    from torchtally.adapters.hook import MetricHook

    out = {}
    single = _datasets([11])[0]
    for shuffle in (False, True):
        out[f"single shuffle={shuffle}"] = _kept_ids(SingleDatasetDataLoader(single, batch_size=3, shuffle=shuffle))
    groups = _datasets([7, 5, 10])
    out["group balanced"] = _kept_ids(GroupBalancedDataLoader(groups, batch_size=6, shuffle=True))
    tasks = concat_datasets(_datasets([7, 10], task_labels=[0, 1]))
    out["task balanced"] = _kept_ids(TaskBalancedDataLoader(tasks, batch_size=4, shuffle=False))
    data, memory = _datasets([13, 5])
    out["replay"] = _kept_ids(ReplayDataLoader(data, memory, batch_size=3, batch_size_mem=2, shuffle=True))
    # oversampled: the 5-sample task cycles while the 13-sample one runs once; in every pass of
    # the small one the padding is dropped, so no pass holds a sample twice over the ranks
    cycling = concat_datasets(_datasets([13, 5], task_labels=[0, 1]))
    out["oversampled"] = _kept_ids(
        TaskBalancedDataLoader(cycling, batch_size=2, oversample_small_groups=True, shuffle=False)
    )
    plain = _datasets([11])[0]
    out["DataLoader"] = _kept_ids(DataLoader(plain, batch_size=4, sampler=DistributedSampler(plain, shuffle=False)))

    from torchtally.adapters.avalanche.loaders import row_filter

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        row_filter(SingleDatasetDataLoader(single, batch_size=3, distributed_sampling=False))
        out["unsharded warning"] = _sampler_warnings(record)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        row_filter(SingleDatasetDataLoader(single, batch_size=3, drop_last=True))
        out["drop_last warning"] = _sampler_warnings(record)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        row_filter(iter([torch.zeros(2)]))
        out["unknown warning"] = _sampler_warnings(record)
    try:
        row_filter(GroupBalancedInfiniteDataLoader(groups, batch_size=2))
        out["never ending"] = None
    except ValueError as error:
        out["never ending"] = str(error)
    rows = row_filter(SingleDatasetDataLoader(single, batch_size=3))
    try:
        rows.next_batch(2)  # the outputs lost a row
        out["row mismatch"] = None
    except ValueError as error:
        out["row mismatch"] = str(error)

    # a plain MetricHook over an Avalanche loader: it cannot see the sharding, so it warns
    hook = MetricHook(MeanMetric())
    loader = SingleDatasetDataLoader(single, batch_size=3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with hook.epoch(loader):
            for x, *_ in loader:
                hook.update(x.double())
    out["MetricHook warning"] = _sampler_warnings(record)
    out["MetricHook mean"] = float(hook.result)
    return out


@pytest.fixture(scope="module", params=[2, 3])
def ranks(request):
    from torchtally.testing import run_distributed

    return run_distributed(_checks, request.param, timeout=300)


@pytest.mark.parametrize(
    "case,sizes",
    [
        ("single shuffle=False", [11]),
        ("single shuffle=True", [11]),
        ("group balanced", [7, 5, 10]),
        ("task balanced", [7, 10]),
        ("replay", [13, 5]),
        ("DataLoader", [11]),
    ],
)
def test_every_sample_is_kept_once_over_the_ranks(ranks, case, sizes):
    kept = Counter(i for r in ranks for i in r[case][0])
    assert kept == Counter(range(sum(sizes))), case
    dropped = [i for r in ranks for i in r[case][1]]
    world = len(ranks)
    # the padding that DistributedSampler adds: (W - N mod W) mod W per dataset
    assert len(dropped) == sum((world - n % world) % world for n in sizes), case


def test_an_oversampled_dataset_never_counts_a_sample_twice_in_one_pass(ranks):
    world = len(ranks)
    kept = Counter(i for r in ranks for i in r["oversampled"][0])
    assert all(kept[i] == 1 for i in range(13))  # the dataset that ends the epoch: once
    small = [kept[i] for i in range(13, 18)]
    # the 13-sample task gives ceil(13/W) positions per rank in batches of 1, so the 5-sample
    # task (ceil(5/W) positions per rank, 1 per batch) runs that many positions, cycling
    per_rank = -(-13 // world)
    passes, rest = divmod(per_rank, -(-5 // world))
    assert min(small) >= passes and max(small) <= passes + (1 if rest else 0)
    assert sum(small) < world * per_rank  # padding of the small task's passes was dropped


def test_loaders_it_cannot_be_exact_on_warn_or_raise(ranks):
    for r in ranks:
        assert len(r["unsharded warning"]) == 1 and "distributed_sampling=False" in r["unsharded warning"][0]
        assert len(r["unknown warning"]) == 1 and "cannot tell how" in r["unknown warning"][0]
        assert "drop_last=True" in " ".join(r["drop_last warning"])
        assert r["never ending"] is not None and "never-ending" in r["never ending"]
        assert r["row mismatch"] is not None and "3 samples" in r["row mismatch"] and "2 rows" in r["row mismatch"]


def test_a_plain_metric_hook_over_an_avalanche_loader_warns(ranks):
    world = len(ranks)
    for r in ranks:
        assert len(r["MetricHook warning"]) == 1, r["MetricHook warning"]
        assert "padding duplicates" in r["MetricHook warning"][0]
    # and the warning is no false alarm: the padded run's mean differs from the exact one
    exact = sum(range(11)) / 11
    padded = ranks[0]["MetricHook mean"]
    if 11 % world:
        assert padded != pytest.approx(exact)
