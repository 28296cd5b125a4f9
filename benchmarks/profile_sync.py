"""Where the time of one small sync goes: a MulticlassAccuracy on W gloo ranks, update of 64
samples then compute() (one K = 1 sync), timed per call; with --profile, rank 0 runs the same
loop under cProfile and prints the functions with the most own time.

Run: `.venv/bin/python benchmarks/profile_sync.py [--world-size 2] [--repeats 300] [--profile]`.
Not part of `make bench` (it writes nothing to RESULTS.md); a tool for working on sync.py.
"""
import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Dict

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).parent))

from torchtally.classification import MulticlassAccuracy  # noqa: E402
from torchtally.sync_plan import HEADER_SLOTS  # noqa: E402
from torchtally.testing import run_distributed  # noqa: E402

CLASSES = 5
BATCH = 64


def profile_rank(rank: int, world_size: int, repeats: int, profile: bool) -> Dict[str, object]:
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(BATCH, CLASSES, generator=g)
    y = torch.randint(0, CLASSES, (BATCH,), generator=g)
    metric = MulticlassAccuracy(num_classes=CLASSES)
    for _ in range(20):  # warm-up: plan, lazy imports, roll-call service
        metric.update(x, y)
        metric.compute()
    header = torch.zeros(HEADER_SLOTS, dtype=torch.int64)
    gathered = torch.empty(world_size * HEADER_SLOTS, dtype=torch.int64)
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    times, bare = [], []
    for _ in range(repeats):  # interleaved: the machine's load hits both alike
        metric.update(x, y)
        dist.barrier()
        start = time.perf_counter()
        metric.compute()
        times.append(time.perf_counter() - start)
        dist.barrier()
        start = time.perf_counter()
        gather(gathered, header)
        bare.append(time.perf_counter() - start)
    report = ""
    if profile:
        profiler = cProfile.Profile()
        for _ in range(repeats):
            metric.update(x, y)
            if rank == 0:
                profiler.enable()
            metric.compute()
            if rank == 0:
                profiler.disable()
        if rank == 0:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
            report = out.getvalue()
    return {"median_ms": statistics.median(times) * 1e3, "bare_ms": statistics.median(bare) * 1e3, "report": report}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    results = run_distributed(profile_rank, args.world_size, args.repeats, args.profile, timeout=600)
    for rank, r in enumerate(results):
        print(f"rank {rank}: compute (one K = 1 sync) median {r['median_ms']:.3f} ms; "
              f"the bare header all_gather alone {r['bare_ms']:.3f} ms")
    if results[0]["report"]:
        print(results[0]["report"])


if __name__ == "__main__":
    main()
