"""torchtally.adapters.accelerate in one process: the layout against what Accelerate's
BatchSamplerShard really yields, loaders prepared for simulated ranks (``prepare_data_loader``
with ``num_processes`` / ``process_index``) whose merged states must equal one process, the
refused shardings, and the checkpoint the hooks give save_state / fabric.save (MetricHook's
resumable form, through torch.save and a weights_only torch.load)."""

import io
import itertools
import warnings

import pytest
import torch
from accelerate.data_loader import BatchSamplerShard, prepare_data_loader, skip_first_batches
from support.launcher_eval import (
    BATCH,
    as_plain,
    assert_equal_results,
    evaluate,
    evaluate_without_adapter,
    make_collection,
    make_dataset,
    single_process,
)
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, SequentialSampler

from torchtally import MulticlassAccuracy
from torchtally.adapters.accelerate import AccelerateMetricHook, AccelerateShardLayout, accelerate_layout
from torchtally.adapters.fabric import FabricMetricHook
from torchtally.adapters.sampler import SamplerWarning
from torchtally.base.resume import RESUME_KEY

MODES = [
    (n, world, batch, split, even, drop)
    for n, world, batch, split, even, drop in itertools.product(
        (0, 1, 2, 5, 7, 11, 12, 13, 19, 24, 25), (1, 2, 3, 4), (1, 2, 4, 6), (False, True), (False, True), (False, True)
    )
    if not (split and batch % world)
]


@pytest.mark.parametrize("n, world, batch, split, even, drop", MODES)
def test_layout_matches_batch_sampler_shard(n, world, batch, split, even, drop):
    """Every rank's rows: the layout's count, which are repeats, and how many batches it runs;
    the rows it keeps cover the dataset exactly once (less what drop_last never yields)."""
    kept = []
    for rank in range(world):
        shard = BatchSamplerShard(
            BatchSampler(SequentialSampler(range(n)), batch, drop), world, rank, split_batches=split, even_batches=even
        )
        batches = list(shard)
        rows = [i for b in batches for i in b]
        layout = AccelerateShardLayout.build(
            n, world, rank, batch // world if split else batch, padded=even, drop_last=drop
        )
        assert layout.num_samples == len(rows)
        assert layout.batches_per_rank()[rank] == len(batches)
        for j, index in enumerate(rows):
            position = layout.padded_position(j)
            assert layout.is_padding(j) == (position >= n)
            if position < n:  # a sequential sampler: a real row's index is its position
                assert index == position
        kept += rows[: layout.num_valid]
    assert sorted(kept) == list(range(len(kept)))
    if not drop:
        assert len(kept) == n


def _prepared(loader, world, rank, **kwargs):
    return prepare_data_loader(loader, num_processes=world, process_index=rank, **kwargs)


@pytest.mark.parametrize("world", [2, 3, 4])
@pytest.mark.parametrize("even", [True, False])
@pytest.mark.parametrize("split", [False, True])
def test_simulated_ranks_merge_to_one_process(world, even, split):
    n = 19
    batch = BATCH * world if split else BATCH
    per_rank, plain = [], []
    for rank in range(world):
        loader = _prepared(
            DataLoader(make_dataset(n), batch_size=batch), world, rank, even_batches=even, split_batches=split
        )
        hook = AccelerateMetricHook(make_collection())
        evaluate(hook, loader)
        per_rank.append(hook.metrics)
        plain.append(make_collection())
        evaluate_without_adapter(plain[-1], loader)
    merged = make_collection().merge_state(per_rank)
    assert_equal_results(as_plain(merged.compute()), single_process(n), f"world {world}")
    counted = int(make_collection().merge_state(plain).compute()["confmat"].sum())
    assert counted == n if not even else counted > n  # the repeats a plain loop counts


def test_unsharded_loader_falls_back_to_metric_hook():
    loader = DataLoader(make_dataset(7), batch_size=3)
    assert accelerate_layout(loader) is None
    assert accelerate_layout(_prepared(loader, 1, 0)) is None
    hook = AccelerateMetricHook(make_collection())
    assert_equal_results(evaluate(hook, loader), single_process(7), "plain loader")


def test_refused_shardings_name_what_to_do():
    loader = DataLoader(make_dataset(10), batch_size=4)
    with pytest.raises(ValueError, match="dispatch_batches"):
        accelerate_layout(_prepared(loader, 2, 0, dispatch_batches=True))

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(make_dataset(10))

    with pytest.raises(ValueError, match="map-style"):
        accelerate_layout(_prepared(DataLoader(Stream(), batch_size=4), 2, 0))
    with pytest.raises(ValueError, match="skip_first_batches"):
        accelerate_layout(skip_first_batches(_prepared(loader, 2, 0), 1))

    class Pairs:  # a batch sampler without batch_size
        def __iter__(self):
            return iter([[0, 1], [2, 3], [4]])

        def __len__(self):
            return 3

    with pytest.raises(ValueError, match="even_batches=False"):
        accelerate_layout(_prepared(DataLoader(make_dataset(5), batch_sampler=Pairs()), 2, 0))
    hook = AccelerateMetricHook(make_collection())
    with pytest.raises(ValueError, match="dispatch_batches"):
        hook.start_epoch(_prepared(loader, 2, 0, dispatch_batches=True))


def test_drop_last_warns_about_lost_samples():
    loader = _prepared(DataLoader(make_dataset(10), batch_size=4, drop_last=True), 2, 0)
    with pytest.warns(SamplerWarning, match="never yields 2 of its 10"):
        layout = accelerate_layout(loader)
    assert layout is not None and (layout.num_samples, layout.num_valid, layout.num_lost) == (4, 4, 2)


def test_running_usage_refuses_uneven_batches():
    loader = _prepared(DataLoader(make_dataset(10), batch_size=4), 2, 1, even_batches=False)
    hook = AccelerateMetricHook(make_collection(), usage="running", every=1)
    with pytest.raises(ValueError, match=r"same number of batches.*\[2, 1\]"):
        hook.start_epoch(loader)


# ---- the checkpoint save_state / fabric.save write -------------------------------------------


def _saved_by_torch(state):
    """``state`` through torch.save and the weights_only torch.load that Fabric's load uses."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


@pytest.mark.parametrize("hook_class", [AccelerateMetricHook, FabricMetricHook])
def test_checkpoint_round_trip_through_torch_save(hook_class):
    hook = hook_class(make_collection())
    evaluate(hook, DataLoader(make_dataset(11), batch_size=4))
    assert len(hook.metrics.state_dict()) == 0  # not persistent: the metrics alone save nothing
    saved = _saved_by_torch(hook.state_dict())
    assert len(hook.metrics.state_dict()) == 0  # the flags are left as they were
    assert isinstance(saved[RESUME_KEY], bytes)  # the resumable form, plain data
    fresh = hook_class(make_collection())
    fresh.load_state_dict(saved)
    assert_equal_results(as_plain(fresh.metrics.compute()), single_process(11), "restored")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # saved after end_epoch: the next epoch starts from zero
        again = evaluate(fresh, DataLoader(make_dataset(11), batch_size=4))
    assert_equal_results(again, single_process(11), "the next epoch")


def test_checkpoint_of_other_metrics_is_refused_and_leaves_state():
    hook = AccelerateMetricHook(MulticlassAccuracy(num_classes=3, average="micro"))
    hook.update(torch.tensor([0, 1]), torch.tensor([0, 0]))
    saved = hook.state_dict()
    target = AccelerateMetricHook(MulticlassAccuracy(num_classes=4, average="micro"))
    target.update(torch.tensor([2]), torch.tensor([2]))
    with pytest.raises(ValueError, match="num_classes"):
        target.load_state_dict(saved)
    with pytest.raises(ValueError, match="resumable state dict"):
        target.load_state_dict({"metrics": {}})
    assert float(target.metrics.compute()) == 1.0


def test_checkpoint_needs_torchtally_metrics():
    class Counter:
        def reset(self):
            pass

        def update(self, *args):
            pass

        def compute(self):
            return 0

    with pytest.raises(TypeError, match="use torchtally metrics"):
        AccelerateMetricHook({"n": Counter()}).state_dict()


def test_supported_loader_gives_no_warning():
    loader = _prepared(DataLoader(make_dataset(10), batch_size=4), 2, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate(AccelerateMetricHook(make_collection()), loader)
    assert int(result["confmat"].sum()) == 4  # batch [4..7]; [12, 13, 14, 15] are repeats


def test_docstring_examples():
    import doctest

    import torchtally.adapters.accelerate as accelerate_adapter

    result = doctest.testmod(accelerate_adapter, extraglobs={"torch": torch})
    assert result.failed == 0 and result.attempted > 0
