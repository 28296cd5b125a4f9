"""Clustering benchmark: torchtally against torchmetrics, side by side in one process, one torch
thread, on the same batches:

  labels     preds and target with 10 clusters each (related), N = 60,000 in batches of 6,000
             (below the size where torchmetrics' int64 pair products overflow, so the values
             compare); AdjustedMutualInfoScore on N = 2,000 with 5 clusters (torchmetrics'
             expected mutual information is a Python loop over every cluster pair and overlap);
  embeddings data [N, 16] float32 with 8 cluster labels, N = 20,000 in batches of 2,000.

Per metric (each time the median of five epochs, the libraries' interleaved, a fresh metric each): the time of every
update, of compute, the state bytes held after the updates (torchtally: the sparse contingency
table, per-cluster moments or the embeddings; torchmetrics: its lists of inputs), each as a
ratio to torchtally's; and the collectives of one
synced ``compute()`` at world size 2 (gloo) for every torchtally metric in one MetricCollection.
Each row checks both libraries give the same value. ClusterAccuracy has no torchmetrics row
(it needs torch_linear_assignment, not installed here).
Results go to the "Clustering" section of benchmarks/RESULTS.md, which ends with the metrics
whose epoch (update + compute) torchmetrics ran faster, if any.

Run: `.venv/bin/python benchmarks/bench_clustering.py [--quick]` (--quick: a tenth of the data,
RESULTS.md left alone).
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

sys.path.insert(0, str(Path(__file__).parent))
from _common import epoch_note, machine_line, markdown_table, median_epochs, replace_section  # noqa: E402

SECTION = "Clustering"
LIBRARIES = ("torchtally", "torchmetrics")
LABELS = ["MutualInfoScore", "NormalizedMutualInfoScore", "RandScore", "AdjustedRandScore", "FowlkesMallowsIndex"]
LABELS += ["HomogeneityScore", "CompletenessScore", "VMeasureScore"]
EMBEDDINGS = ["CalinskiHarabaszScore", "DaviesBouldinScore", "DunnIndex"]


def labels(n: int, k: int, seed: int = 0) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, k, (n,), generator=g)
    noise = torch.randint(0, k, (n,), generator=g)
    return torch.where(torch.rand(n, generator=g) < 0.7, target, noise), target


def embeddings(n: int, d: int = 16, k: int = 8) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    lab = torch.randint(0, k, (n,), generator=g)
    centres = torch.randn(k, d, generator=g) * 3
    return centres[lab] + torch.randn(n, d, generator=g), lab


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            if isinstance(t, torch.Tensor):
                total += t.numel() * t.element_size()
    return total


def run_once(library: str, name: str, batches: List[Tuple[torch.Tensor, ...]]) -> Tuple[float, float, int, float]:
    metric = getattr(importlib.import_module(f"{library}.clustering"), name)()
    start = time.perf_counter()
    for batch in batches:
        metric.update(*batch)
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    value = float(metric.compute())
    return update_s, time.perf_counter() - start, state_bytes(metric), value


def split(data: Tuple[torch.Tensor, ...], size: int) -> List[Tuple[torch.Tensor, ...]]:
    n = data[0].shape[0]
    return [tuple(t[lo : lo + size] for t in data) for lo in range(0, n, size)]


def sync_rank(rank: int, world_size: int, n: int) -> Dict[str, int]:
    import torchtally.clustering as ttc
    from torchtally import MetricCollection
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")

    p, t = labels(n, 10)
    x, lab = embeddings(n // 10)
    label_metrics = MetricCollection({name: getattr(ttc, name)() for name in LABELS + ["AdjustedMutualInfoScore"]})
    label_metrics.add_metrics({"ClusterAccuracy": ttc.ClusterAccuracy(10)})
    embedding_metrics = MetricCollection({name: getattr(ttc, name)() for name in EMBEDDINGS})
    label_metrics.update(p[rank::world_size], t[rank::world_size])
    embedding_metrics.update(x[rank::world_size], lab[rank::world_size])
    out = {}
    for what, coll in (("labels", label_metrics), ("embeddings", embedding_metrics)):
        with count_collectives() as counter:
            coll.compute()
        out[what] = counter.total
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    scale = 10 if quick else 1
    cases: List[Tuple[str, List[Tuple[torch.Tensor, ...]]]] = []
    label_batches = split(labels(60_000 // scale, 10), 6_000 // scale)
    cases += [(name, label_batches) for name in LABELS]
    cases.append(("AdjustedMutualInfoScore", split(labels(2_000 // scale, 5), 500 // scale)))
    embedding_batches = split(embeddings(20_000 // scale), 2_000 // scale)
    cases += [(name, embedding_batches) for name in EMBEDDINGS]
    rows, epoch = [], {}
    for name, batches in cases:
        runs = median_epochs({lib: functools.partial(run_once, lib, name, batches) for lib in LIBRARIES})
        ours, theirs = runs["torchtally"], runs["torchmetrics"]
        print(name, ours, theirs, flush=True)
        if abs(ours[3] - theirs[3]) > 1e-4 * max(1.0, abs(theirs[3])):
            print(f"bench_clustering: {name} differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
            return 1
        n = sum(b[0].shape[0] for b in batches)
        epoch[name] = (theirs[0] + theirs[1]) / (ours[0] + ours[1])
        rows.append(
            (
                name,
                f"{n:,}",
                f"{ours[0] * 1e3:,.1f}",
                f"{theirs[0] / ours[0]:,.2f}x",
                f"{ours[1] * 1e3:,.2f}",
                f"**{theirs[1] / ours[1]:,.1f}x**",
                f"{(theirs[0] + theirs[1]) / (ours[0] + ours[1]):,.2f}x",
                f"{ours[2]:,}",
                f"{theirs[2]:,}",
            )
        )
    from torchtally.clustering import ClusterAccuracy

    metric = ClusterAccuracy(10)
    start = time.perf_counter()
    for batch in label_batches:
        metric.update(*batch)
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    metric.compute()
    rows.append(
        (
            "ClusterAccuracy",
            f"{60_000 // scale:,}",
            f"{update_s * 1e3:,.1f}",
            "n/a",
            f"{(time.perf_counter() - start) * 1e3:,.2f}",
            "n/a",
            "n/a",
            f"{state_bytes(metric):,}",
            "n/a",
        )
    )
    header = (
        "metric",
        "samples",
        "torchtally update ms (all batches)",
        "torchmetrics / torchtally",
        "torchtally compute ms",
        "torchmetrics / torchtally",
        "update + compute: torchmetrics / torchtally",
        "torchtally state bytes",
        "torchmetrics state bytes",
    )
    table = markdown_table(header, rows)
    print(table)
    if quick:
        return 0
    from torchtally.testing import run_distributed

    per_rank = run_distributed(sync_rank, 2, 60_000, timeout=600)
    sync = {what: max(r[what] for r in per_rank) for what in ("labels", "embeddings")}
    body = (
        f"Machine: {machine_line()}.\n\n"
        "Label metrics: 10 related clusters each side, batches of 6,000 (AdjustedMutualInfoScore: 2,000 samples, "
        "5 clusters, batches of 500); embedding metrics: [N, 16] float32, 8 clusters, batches of 2,000; one torch "
        "thread. Sync at world size 2 (gloo), one `compute()` of a MetricCollection: every label metric "
        "(one shared contingency table, in the all_gather) and ClusterAccuracy (its confusion matrix, in the "
        f"all_reduce): **{sync['labels']} collectives**; CalinskiHarabasz, "
        f"DaviesBouldin and Dunn: **{sync['embeddings']} collectives** (torchmetrics: a barrier and 2 all_gathers "
        "per list state, 2 list states per metric).\n\n"
        + table
        + "\n\n"
        + epoch_note(epoch)
        + "\n\nGenerated by `benchmarks/bench_clustering.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
