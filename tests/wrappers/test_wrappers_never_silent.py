"""The wrappers never give a silently wrong number: BootStrapper's forward resamples the
positions update would (its sample counter used to double on every forward: 3, 9, 21, ...,
and overflow int64 at the 64th). Ranks whose wrapped classes, task names or collection prefix
differ: tests/distributed/test_option_mismatch.py."""

import copy

import torch

from torchtally.aggregation import MeanMetric
from torchtally.wrappers import BootStrapper


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
