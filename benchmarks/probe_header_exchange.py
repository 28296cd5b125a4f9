"""What a header exchange costs each process, beyond its latency (docs/architecture.md, "The header
exchange"): for each way of exchanging the 4 KiB sync header, and for ignite's one-element
all_reduce (and a 16-element one), W gloo processes run a barrier and then the exchange, many times; per step and per
rank: wall time, user and system CPU time and voluntary and involuntary context switches
(getrusage, all of the process's threads, gloo's included). A barrier alone is the baseline.

Where a host runs more ranks than it has cores, these say why an exchange is slow: every
context switch is a wake-up that may queue behind another process for a core.

Run: `.venv/bin/python benchmarks/probe_header_exchange.py [--world-size 4] [--repeats 500]`.
Prints a table; writes nothing.
"""

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

from torchtally.sync.exchange import ring  # noqa: E402
from torchtally.sync.plan import HEADER_SLOTS  # noqa: E402
from torchtally.testing import run_distributed  # noqa: E402

WAYS = (
    "barrier alone",
    "all_to_all of the header",
    "ring of the header",
    "one-element all_reduce",
    "16-element all_reduce",
)


def ways(rank: int, world_size: int) -> Dict[str, Callable[[], Any]]:
    sent = torch.zeros(world_size * HEADER_SLOTS, dtype=torch.int64)  # the header, once per rank
    table = torch.zeros(world_size * HEADER_SLOTS, dtype=torch.int64)
    one, sixteen = torch.zeros(1, dtype=torch.int64), torch.zeros(16, dtype=torch.int64)
    ranks = list(range(world_size))
    return {
        WAYS[0]: lambda: None,
        WAYS[1]: lambda: dist.all_to_all_single(table, sent),
        WAYS[2]: lambda: ring(table, HEADER_SLOTS, rank, ranks, None, time.monotonic() + 60),
        WAYS[3]: lambda: dist.all_reduce(one),
        WAYS[4]: lambda: dist.all_reduce(sixteen),  # where every rank sends in every round of gloo's ring
    }


def probe_rank(rank: int, world_size: int, repeats: int) -> Dict[str, List[float]]:
    out = {}
    for name, exchange in ways(rank, world_size).items():
        exchange()
        dist.barrier()
        start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(repeats):
            dist.barrier()
            exchange()
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - start
        out[name] = [
            wall * 1e3 / repeats,
            (after.ru_utime - before.ru_utime) * 1e3 / repeats,
            (after.ru_stime - before.ru_stime) * 1e3 / repeats,
            (after.ru_nvcsw - before.ru_nvcsw) / repeats,
            (after.ru_nivcsw - before.ru_nivcsw) / repeats,
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=500)
    args = parser.parse_args()
    per_rank = run_distributed(probe_rank, args.world_size, args.repeats, timeout=900)
    rows = []
    for name in WAYS:
        figures = list(zip(*(r[name] for r in per_rank)))  # each figure, over ranks
        rows.append([name] + [f"{min(f):.2f}-{max(f):.2f}" if i else f"{max(f):.2f}" for i, f in enumerate(figures)])
    print(
        f"World size {args.world_size}, {args.repeats} repeats of a barrier and then the exchange; per step "
        "(the range over ranks):\n"
    )
    print(
        markdown_table(
            ["exchange", "wall ms", "user CPU ms", "system CPU ms", "voluntary switches", "involuntary switches"], rows
        )
    )


if __name__ == "__main__":
    main()
