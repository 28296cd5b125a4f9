"""Nominal benchmark: CramersV, TschuprowsT, PearsonsContingencyCoefficient, TheilsU and
FleissKappa against torchmetrics, side by side in one run, one torch thread.

Data: 1,000,000 pairs of category labels (C = 20; target a noisy copy of preds) in batches of
10,000; Fleiss' kappa on 1,000,000 samples of 10 raters over 5 categories ([N, 5] counts) in
batches of 10,000. Measured:
  update   every batch, once;
  compute  ``compute()`` once;
  state    the bytes the state tensors hold after the updates;
  sync     at world size 2 (gloo), the collectives one ``compute()`` makes (each metric alone,
           and the four contingency-table metrics in one MetricCollection, which share a table).
Both libraries' results are checked to agree (1e-5; Fleiss' kappa 2e-5: torchmetrics adds 1e-5 to
its denominator) before anything is timed. Results go to the "Nominal" section of
benchmarks/RESULTS.md.

Run: `.venv/bin/python benchmarks/bench_nominal.py [--quick]`.
Every time is the median of five epochs, the libraries' interleaved (a fresh metric each); the
section ends with the metrics whose epoch (update + compute) torchmetrics ran faster, if any.
"""

import argparse
import functools
import importlib
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import epoch_note, machine_line, markdown_table, median_epochs, replace_section  # noqa: E402

N = 1_000_000
BATCH = 10_000
C = 20
SECTION = "Nominal"
TABLE_METRICS = ("CramersV", "TschuprowsT", "PearsonsContingencyCoefficient", "TheilsU")


def labels(n: int) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    preds = torch.randint(0, C, (n,), generator=g)
    target = torch.where(torch.rand(n, generator=g) < 0.5, preds, torch.randint(0, C, (n,), generator=g))
    return preds, target


def ratings(n: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    choice = torch.randint(0, 5, (n, 10), generator=g)
    counts = torch.zeros(n, 5, dtype=torch.int64)
    return counts.scatter_add_(1, choice, torch.ones_like(choice))


def make(library: str, name: str) -> Any:
    cls = getattr(importlib.import_module(f"{library}.nominal"), name)
    return cls() if name == "FleissKappa" else cls(C)


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            if isinstance(t, torch.Tensor):
                total += t.numel() * t.element_size()
    return total


def run_once(library: str, name: str, batches: List[Tuple[torch.Tensor, ...]]) -> Tuple[float, float, int, float]:
    metric = make(library, name)
    start = time.perf_counter()
    for batch in batches:
        metric.update(*batch)
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    value = float(metric.compute())
    return update_s, time.perf_counter() - start, state_bytes(metric), value


def sync_rank(rank: int, world_size: int, n: int) -> Dict[str, int]:
    from torchtally import MetricCollection
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    preds, target = labels(n)
    counts = ratings(n)
    out = {}
    for name in (*TABLE_METRICS, "FleissKappa"):
        metric = make("torchtally", name)
        metric.update(counts[rank::world_size]) if name == "FleissKappa" else metric.update(
            preds[rank::world_size], target[rank::world_size]
        )
        with count_collectives() as counter:
            metric.compute()
        out[name] = counter.total
    collection = MetricCollection({name: make("torchtally", name) for name in TABLE_METRICS})
    collection.update(preds[rank::world_size], target[rank::world_size])
    with count_collectives() as counter:
        collection.compute()
    out["collection"] = counter.total
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="50,000 samples; do not write RESULTS.md")
    args = parser.parse_args()
    from torchtally.testing import run_distributed

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    n = 50_000 if args.quick else N
    preds, target = labels(n)
    counts = ratings(n)
    pairs = [(preds[i : i + BATCH], target[i : i + BATCH]) for i in range(0, n, BATCH)]
    rated = [(counts[i : i + BATCH],) for i in range(0, n, BATCH)]
    rows, ratios, epoch = [], {}, {}
    for name in (*TABLE_METRICS, "FleissKappa"):
        data = rated if name == "FleissKappa" else pairs
        runs = median_epochs(
            {lib: functools.partial(run_once, lib, name, data) for lib in ("torchtally", "torchmetrics")}
        )
        ours, theirs = runs["torchtally"], runs["torchmetrics"]
        print(name, runs, flush=True)
        if abs(ours[3] - theirs[3]) > (2e-5 if name == "FleissKappa" else 1e-5):
            print(f"bench_nominal: {name} differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
            return 1
        ratios[name] = theirs[0] / ours[0]
        epoch[name] = (theirs[0] + theirs[1]) / (ours[0] + ours[1])
        for library, (update_s, compute_s, size, _) in runs.items():
            mine = library == "torchtally"
            ratio = "1.0x" if mine else f"**{update_s / ours[0]:,.2f}x**"
            total = "1.0x" if mine else f"**{epoch[name]:,.2f}x**"
            rows.append((name, library, f"{update_s:,.3f}", ratio, f"{compute_s * 1e3:,.2f}", total, size))
    header = ["metric", "library", "update s (all batches)", "update vs torchtally", "compute ms"]
    table = markdown_table(header + ["update + compute vs torchtally", "state bytes"], rows)
    print(table)
    if args.quick:
        return 0
    per_rank = run_distributed(sync_rank, 2, 100_000, timeout=600)
    sync = {name: max(r[name] for r in per_rank) for name in per_rank[0]}
    print(sync)
    body = (
        f"Machine: {machine_line()}.\n\n"
        f"{n:,} label pairs (C = {C}) in batches of {BATCH:,}; Fleiss' kappa on {n:,} samples x 10 raters x "
        f"5 categories in batches of {BATCH:,}.\n\n"
        "Sync at world size 2, collectives of one `compute()`: "
        + ", ".join(f"{name} {count}" for name, count in sync.items())
        + " (`collection`: the four contingency-table metrics in one MetricCollection, one shared table).\n\n"
        + table
        + "\n\n"
        + epoch_note(epoch)
        + "\n\nGenerated by `benchmarks/bench_nominal.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
