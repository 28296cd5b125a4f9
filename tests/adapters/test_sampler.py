"""The padding formula of torchtally.adapters.sampler against the samplers torch, Lightning and ignite
actually build, over many dataset sizes and world sizes, shuffle on and off."""

import math
import warnings

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler, TensorDataset

from torchtally.adapters.sampler import (
    SamplerWarning,
    ShardLayout,
    UnpaddedDistributedSampler,
    find_distributed_sampler,
    num_valid_samples,
    shard_layout,
    warn_lost_samples,
)

SIZES = list(range(0, 18)) + [31, 64, 97]
WORLDS = [1, 2, 3, 4, 5, 8]


def shards(make, n, w):
    return [list(make(list(range(n)), w, r)) for r in range(w)]


def check_formula(sampler_shards, samplers, n, w, padded=True):
    """Positions the formula calls real are each index exactly once; the rest are repeats."""
    real, dup = [], []
    for r, (local, sampler) in enumerate(zip(sampler_shards, samplers)):
        layout = shard_layout(sampler)
        assert len(local) == layout.num_samples
        for j, index in enumerate(local):
            g = layout.padded_position(j)
            assert g == r + j * w
            assert layout.is_padding(j) == (g >= n)
            (dup if g >= n else real).append(index)
        # only the last local position can be a duplicate
        assert all(not layout.is_padding(j) for j in range(layout.num_samples - 1))
    assert sorted(real) == list(range(n))
    assert set(dup) <= set(real)
    if padded:
        assert len(dup) == math.ceil(n / w) * w - n


@pytest.mark.parametrize("shuffle", [False, True])
def test_formula_matches_torch_distributed_sampler(shuffle):
    for n in SIZES:
        for w in WORLDS:
            for seed, epoch in [(0, 0), (7, 3)]:
                samplers = []
                for r in range(w):
                    s = DistributedSampler(list(range(n)), num_replicas=w, rank=r, shuffle=shuffle, seed=seed)
                    s.set_epoch(epoch)
                    samplers.append(s)
                local = [list(s) for s in samplers]
                check_formula(local, samplers, n, w)
                if shuffle and n > 2:  # the shuffled padded list is a permutation plus its head
                    g = torch.Generator().manual_seed(seed + epoch)
                    perm = torch.randperm(n, generator=g).tolist()
                    padded = (perm * (w + 1))[: samplers[0].total_size]
                    assert local == [padded[r::w] for r in range(w)]


def test_which_ranks_hold_a_duplicate():
    # Rank r's last position in the padded list is r + (num_samples - 1) * W, a duplicate iff it
    # is >= N: so ranks r >= N - (num_samples - 1) * W hold exactly one duplicate, the others none.
    for n in range(1, 40):
        for w in range(1, 9):
            num_samples = math.ceil(n / w)
            for r in range(w):
                layout = ShardLayout(n, w, r, num_samples, num_samples * w)
                assert layout.num_padding == (1 if r >= n - (num_samples - 1) * w else 0)


def test_num_valid_samples_every_window():
    for n in range(0, 25):
        for w in range(1, 7):
            num_samples = math.ceil(n / w)
            for r in range(w):
                real = [r + j * w < n for j in range(num_samples)]
                layout = ShardLayout(n, w, r, num_samples, num_samples * w)
                for start in range(num_samples + 1):
                    for count in range(num_samples - start + 2):
                        expected = sum(real[start : start + count])
                        assert num_valid_samples(n, w, r, start, count) == expected
                        assert layout.valid_in(start, count) == expected


def test_num_valid_samples_rejects_bad_arguments():
    with pytest.raises(ValueError, match="rank"):
        num_valid_samples(10, 2, 2, 0, 1)
    with pytest.raises(ValueError, match="num_replicas"):
        num_valid_samples(10, 0, 0, 0, 1)
    with pytest.raises(ValueError, match="start"):
        num_valid_samples(10, 2, 0, -1, 1)
    with pytest.raises(ValueError, match="rank"):
        ShardLayout(10, 2, 3, 5, 10)


def test_lightning_samplers_follow_the_layout():
    from lightning.fabric.utilities.distributed import DistributedSamplerWrapper
    from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSampler

    for n in SIZES[1:]:
        for w in WORLDS:
            inner = [RandomSampler(range(n), generator=torch.Generator().manual_seed(1)) for _ in range(w)]
            wrapped = [DistributedSamplerWrapper(inner[r], num_replicas=w, rank=r, shuffle=False) for r in range(w)]
            check_formula([list(s) for s in wrapped], wrapped, n, w)
            if n < w:  # Lightning asserts every rank gets a sample
                continue
            unrep = [UnrepeatedDistributedSampler(list(range(n)), num_replicas=w, rank=r) for r in range(w)]
            check_formula([list(s) for s in unrep], unrep, n, w, padded=False)
            assert all(shard_layout(s).num_padding == 0 for s in unrep)


def test_ignite_proxy_sampler_follows_the_layout():
    from ignite.distributed.auto import DistributedProxySampler
    from torch.utils.data import SequentialSampler

    for n in SIZES[1:]:
        for w in WORLDS:
            proxies = [DistributedProxySampler(SequentialSampler(range(n)), num_replicas=w, rank=r) for r in range(w)]
            check_formula([list(s) for s in proxies], proxies, n, w)


def test_unpadded_sampler_covers_each_sample_once():
    for n in SIZES:
        for w in WORLDS:
            for shuffle in (False, True):
                samplers = [
                    UnpaddedDistributedSampler(list(range(n)), num_replicas=w, rank=r, shuffle=shuffle)
                    for r in range(w)
                ]
                local = [list(s) for s in samplers]
                assert sorted(i for shard in local for i in shard) == list(range(n))
                sizes = [len(shard) for shard in local]
                assert sizes == [len(s) for s in samplers]
                assert max(sizes) - min(sizes) <= 1
                check_formula(local, samplers, n, w, padded=False)
                # same order as DistributedSampler without the padding
                ref = [
                    list(DistributedSampler(list(range(n)), num_replicas=w, rank=r, shuffle=shuffle)) for r in range(w)
                ]
                assert [shard[: len(mine)] for shard, mine in zip(ref, local)] == local


def test_unpadded_sampler_set_epoch_reshuffles():
    s = UnpaddedDistributedSampler(list(range(50)), num_replicas=3, rank=1, shuffle=True, seed=5)
    first = list(s)
    s.set_epoch(1)
    second = list(s)
    assert first != second and sorted(first) != sorted(range(50))
    assert len(first) == len(second) == 17
    s.set_epoch(0)
    assert list(s) == first


def test_unpadded_sampler_without_process_group_is_one_shard():
    s = UnpaddedDistributedSampler(list(range(7)), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (1, 0, list(range(7)))
    with pytest.raises(TypeError, match="dataset"):
        UnpaddedDistributedSampler(iter(range(3)))


def test_layout_knows_every_ranks_batch_count():
    n, w = 11, 4
    for r in range(w):
        padded = shard_layout(DistributedSampler(list(range(n)), num_replicas=w, rank=r))
        assert padded.even and padded.batches_per_rank(2) == [2, 2, 2, 2]
        unpadded = shard_layout(UnpaddedDistributedSampler(list(range(n)), num_replicas=w, rank=r))
        assert not unpadded.even
        assert unpadded.batches_per_rank(1) == [3, 3, 3, 2]
        assert unpadded.batches_per_rank(3) == [1, 1, 1, 1]


def test_find_distributed_sampler():
    ds = TensorDataset(torch.arange(10))
    s = DistributedSampler(ds, num_replicas=2, rank=1)
    assert find_distributed_sampler(DataLoader(ds, sampler=s, batch_size=3)) is s
    assert find_distributed_sampler(DataLoader(ds, batch_sampler=BatchSampler(s, 3, False))) is s
    assert find_distributed_sampler(s) is s
    assert find_distributed_sampler(DataLoader(ds, batch_size=3)) is None
    assert find_distributed_sampler([1, 2, 3]) is None


def test_drop_last_warnings():
    ds = list(range(11))
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=4, rank=0, drop_last=True))
    with pytest.warns(SamplerWarning, match="never yields 3 of 11"):
        assert warn_lost_samples(loader) == 1  # positions 8, 9, 10 are cut; 8 was rank 0's
    # DataLoader(drop_last=True): rank 3 holds positions 3, 7, 11(padding) -> batch size 2 drops
    # position 11 only, a duplicate: nothing real is lost, no warning.
    loader = DataLoader(ds, batch_size=2, drop_last=True, sampler=DistributedSampler(ds, num_replicas=4, rank=3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_lost_samples(loader) == 0
    loader = DataLoader(ds, batch_size=2, drop_last=True, sampler=DistributedSampler(ds, num_replicas=4, rank=0))
    with pytest.warns(SamplerWarning, match="1 real sample"):
        assert warn_lost_samples(loader) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_lost_samples(DataLoader(ds, sampler=DistributedSampler(ds, num_replicas=4, rank=0))) == 0


def test_docstring_examples():
    import doctest

    import torchtally.adapters.dataparallel
    import torchtally.adapters.sampler

    for module in (torchtally.adapters.sampler, torchtally.adapters.dataparallel):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0, module.__name__
