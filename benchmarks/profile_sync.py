"""Where the time of one small sync goes: a MulticlassAccuracy on W gloo ranks, update of 64
samples then compute() (one K = 1 sync). Timed per call, wall clock and this thread's CPU time
(on a shared machine the CPU time is the steadier of the two), after a barrier, interleaved:

  compute()           the whole synced compute of the metric
  sync_states         the sync alone (torchtally.sync.protocol.sync_states on the metric's plan)
  compute_on(None)    the metric's compute on its local state: the math, no sync
  bare all_gather     torch.distributed's all_gather of one 4 KiB header: the collective alone

With --profile, rank 0 runs compute() under cProfile (this thread's CPU time) and prints the
functions with the most own time.

Run: `.venv/bin/python benchmarks/profile_sync.py [--world-size 2] [--repeats 300] [--profile]
[--average micro]`. Not part of `make bench` (it writes nothing to RESULTS.md); a tool for
working on the sync's Python.
"""

import argparse
import cProfile
import io
import pstats
import statistics
import time
import warnings
from typing import Callable, Dict, List

import torch
import torch.distributed as dist

from torchtally.classification import MulticlassAccuracy
from torchtally.sync.plan import HEADER_SLOTS
from torchtally.sync.protocol import sync_states
from torchtally.testing import run_distributed

CLASSES = 5
BATCH = 64


def profile_rank(rank: int, world_size: int, repeats: int, profile: bool, average: str) -> Dict[str, object]:
    warnings.filterwarnings("ignore")
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(BATCH, CLASSES, generator=g)
    y = torch.randint(0, CLASSES, (BATCH,), generator=g)
    metric = MulticlassAccuracy(num_classes=CLASSES, average=average)
    plan = metric._sync_plan()
    header = torch.zeros(HEADER_SLOTS, dtype=torch.int64)
    gathered = torch.empty(world_size * HEADER_SLOTS, dtype=torch.int64)
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    parts: Dict[str, Callable[[], object]] = {
        "compute()": metric.compute,
        "sync_states": lambda: sync_states(plan, metric.state_values()),
        "compute_on(None)": lambda: metric.compute_on(None),
        "bare all_gather": lambda: gather(gathered, header),
    }
    for _ in range(20):  # warm-up: plan, lazy imports, roll-call service
        for fn in parts.values():
            metric.update(x, y)
            fn()
    wall: Dict[str, List[float]] = {k: [] for k in parts}
    cpu: Dict[str, List[float]] = {k: [] for k in parts}
    for _ in range(repeats):
        for name, fn in parts.items():
            metric.update(x, y)
            dist.barrier()
            start_cpu, start = time.thread_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.thread_time() - start_cpu)
    report = ""
    if profile:
        profiler = cProfile.Profile(time.thread_time)
        for _ in range(repeats):
            metric.update(x, y)
            dist.barrier()
            profiler.enable()
            metric.compute()
            profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        report = out.getvalue()
    return {k: (statistics.median(wall[k]) * 1e3, statistics.median(cpu[k]) * 1e3) for k in parts} | {"report": report}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--average", default="macro", help="MulticlassAccuracy's average (default: macro)")
    args = parser.parse_args()
    results = run_distributed(profile_rank, args.world_size, args.repeats, args.profile, args.average, timeout=600)
    print(f"median ms per call, wall / CPU, ranks 0..{args.world_size - 1}:")
    for name in ("compute()", "sync_states", "compute_on(None)", "bare all_gather"):
        print(f"  {name:18s} " + "   ".join(f"{r[name][0]:.3f} / {r[name][1]:.3f}" for r in results))
    if results[0]["report"]:
        print(results[0]["report"])


if __name__ == "__main__":
    main()
