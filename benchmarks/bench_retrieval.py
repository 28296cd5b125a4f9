"""Retrieval benchmark: RetrievalNormalizedDCG(top_k=10) and RetrievalMAP against torchmetrics,
side by side in one run.

Data: Q queries of 100 documents each (float32 scores, about 10% relevant; NDCG's relevance
graded 0-3), fed in batches of 1,000 whole queries. Measured, one torch thread:
  update   every batch, once;
  compute  ``compute()`` once on that state (the grouping and per-query scoring);
  state    the bytes the state tensors hold after the updates;
  sync     at world size 2 and 4 (gloo, one torch thread per process), the batches dealt out to
           the ranks so that every query's documents are split across ranks: torchtally's
           ``compute()`` (the sync and the scoring) and the collectives it makes, against
           torchmetrics' ``sync()`` alone.
Both libraries' results are checked to agree (1e-5) before anything is timed; scores are
distinct, so no tie rule is in play. Results go to the "Retrieval" section of
benchmarks/RESULTS.md.

Run: `make bench` or `.venv/bin/python benchmarks/bench_retrieval.py [--quick]`.
"""

import argparse
import importlib
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, markdown_table, replace_section  # noqa: E402

QUERIES = 100_000
DOCS = 100
BATCH_QUERIES = 1_000
WORLD_SIZES = (2, 4)
SECTION = "Retrieval"
METRICS = (("RetrievalNormalizedDCG", {"top_k": 10}), ("RetrievalMAP", {}))
Batch = Tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def batches(n_queries: int, graded: bool) -> List[Batch]:
    """(preds, target, indexes) batches of BATCH_QUERIES whole queries, documents shuffled
    within the batch."""
    g = torch.Generator().manual_seed(0)
    out = []
    for first in range(0, n_queries, BATCH_QUERIES):
        n = min(BATCH_QUERIES, n_queries - first) * DOCS
        indexes = torch.arange(first, first + n // DOCS).repeat_interleave(DOCS)
        order = torch.randperm(n, generator=g)
        preds = torch.rand(n, generator=g)
        relevant = torch.rand(n, generator=g) < 0.1
        target = relevant * torch.randint(1, 4, (n,), generator=g) if graded else relevant.long()
        out.append((preds, target, indexes[order]))
    return out


def make(library: str, name: str, options: Dict[str, Any]) -> Any:
    return getattr(importlib.import_module(f"{library}.retrieval"), name)(**options)


def update_all(metric: Any, data: List[Batch]) -> float:
    start = time.perf_counter()
    for preds, target, indexes in data:
        metric.update(preds, target, indexes=indexes)
    return time.perf_counter() - start


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            total += t.numel() * t.element_size()
    return total


def sync_rank(rank: int, world_size: int, name: str, options: Dict[str, Any], n_queries: int) -> Dict[str, Any]:
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    data = batches(n_queries, graded=name == "RetrievalNormalizedDCG")
    out: Dict[str, Any] = {}
    for library in ("torchtally", "torchmetrics"):
        metric = make(library, name, options)
        for preds, target, indexes in data:  # every rank gets its share of every query
            part = slice(rank, None, world_size)
            metric.update(preds[part], target[part], indexes=indexes[part])
        torch.distributed.barrier()
        with count_collectives() as counter:
            start = time.perf_counter()
            if library == "torchtally":
                value = metric.compute()  # the sync and the scoring
            else:
                metric.sync()  # torchmetrics' gather of its lists only
                value = None
            seconds = time.perf_counter() - start
        out[library] = (seconds, counter.total, None if value is None else float(value))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 queries, no sync; do not write RESULTS.md")
    args = parser.parse_args()
    from torchtally.testing import run_distributed

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    n_queries = 2_000 if args.quick else QUERIES
    rows, sync_rows, ratios, collectives = [], [], {}, []
    for name, options in METRICS:
        data = batches(n_queries, graded=name == "RetrievalNormalizedDCG")
        runs = {}
        for library in ("torchtally", "torchmetrics"):
            metric = make(library, name, options)
            update_s = update_all(metric, data)
            start = time.perf_counter()
            value = float(metric.compute())
            compute_s = time.perf_counter() - start
            runs[library] = (update_s, compute_s, state_bytes(metric), value)
            print(f"{name} {library}: update {update_s:.3f} s, compute {compute_s:.3f} s, {value:.6f}", flush=True)
        ours, theirs = runs["torchtally"], runs["torchmetrics"]
        if abs(ours[3] - theirs[3]) > 1e-5:
            print(f"bench_retrieval: {name} differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
            return 1
        ratios[name] = theirs[1] / ours[1]
        for library, (update_s, compute_s, size, _) in runs.items():
            mine = library == "torchtally"
            rows.append(
                [
                    f"{name}({', '.join(f'{k}={v}' for k, v in options.items())})",
                    library,
                    f"{update_s:,.3f}",
                    f"{compute_s:,.3f}",
                    "1.0x" if mine else f"**{compute_s / ours[1]:,.1f}x**",
                    f"{size / 1e6:,.1f}",
                    f"{size / (n_queries * DOCS):,.1f}",
                ]
            )
        if args.quick:
            continue
        for ws in WORLD_SIZES:
            per_rank = run_distributed(sync_rank, ws, name, options, n_queries, timeout=3600)
            values = {r["torchtally"][2] for r in per_rank}
            if values != {ours[3]}:
                print(f"bench_retrieval: {name} at W = {ws}: {values} vs one process {ours[3]}", file=sys.stderr)
                return 1
            for library, what in (("torchtally", "sync + compute"), ("torchmetrics", "sync only")):
                seconds = max(r[library][0] for r in per_rank)
                counts = sorted({r[library][1] for r in per_rank})
                if library == "torchtally":
                    collectives.extend(counts)
                sync_rows.append([name, ws, library, what, f"{seconds * 1e3:,.1f}", "/".join(map(str, counts))])
    table = markdown_table(
        ["metric", "library", "update s (all batches)", "compute s", "compute vs torchtally", "state MB", "bytes/doc"],
        rows,
    )
    print(table)
    if args.quick:
        return 0
    sync_table = markdown_table(
        ["metric", "world size", "library", "timed", "slowest rank ms", "collectives per rank"], sync_rows
    )
    print(sync_table)
    targets = (
        "Targets: compute >= 10x torchmetrics: "
        + ", ".join(f"{name} **{ratio:,.1f}x**" for name, ratio in ratios.items())
        + f"; sync in <= 3 collectives: at most {max(collectives)} at every world size. At every world size "
        "each rank's torchtally result equals one process over all the data (checked)."
    )
    body = (
        f"Machine: {machine_line()}.\n\n"
        f"{n_queries:,} queries x {DOCS} documents ({n_queries * DOCS:,} documents), batches of "
        f"{BATCH_QUERIES:,} whole queries, documents shuffled within a batch.\n\n"
        + targets
        + "\n\n"
        + table
        + "\n\nSync: each batch dealt out round-robin over W gloo processes, so every query's documents are on "
        "every rank.\n\n" + sync_table + "\n\nGenerated by `benchmarks/bench_retrieval.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
