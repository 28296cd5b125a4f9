"""A wrapper's forward returns its wrapped metric's batch value, and a wrapped metric made with
``dist_sync_on_step=True`` syncs that value over the ranks (torchmetrics' wrappers call its
forward): ``Running(SumMetric(dist_sync_on_step=True))`` gave the local 1.0 on each of two ranks
where torchmetrics gives the synced 2.0."""

import pytest
import torch

from torchtally.aggregation import SumMetric
from torchtally.testing import run_distributed
from torchtally.wrappers import MinMaxMetric, Running

pytestmark = pytest.mark.distributed


def forward_values(rank: int, world_size: int):
    running = Running(SumMetric(dist_sync_on_step=True), window=2)
    plain = Running(SumMetric(), window=2)
    minmax = MinMaxMetric(SumMetric(dist_sync_on_step=True))
    out = {"running": [], "plain": [], "minmax": []}
    for step in range(3):
        value = torch.tensor(float(rank + 1 + step))
        out["running"].append(float(running(value)))
        out["plain"].append(float(plain(value)))
        out["minmax"].append(float(minmax(value)["raw"]))
    out["running_compute"] = float(running.compute())
    return out


def test_wrapped_dist_sync_on_step_syncs_the_forward_value():
    runs = run_distributed(forward_values, 2, timeout=120)
    synced = [sum(rank + 1 + step for rank in range(2)) for step in range(3)]  # 3, 5, 7
    for rank, out in enumerate(runs):
        assert out["running"] == synced, out
        assert out["minmax"] == synced, out
        assert out["plain"] == [rank + 1 + step for step in range(3)], out  # no option: the local value
        assert out["running_compute"] == synced[1] + synced[2]  # the window (2 steps), synced at compute
