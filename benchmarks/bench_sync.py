"""Sync benchmark: latency and collectives of one metric sync across gloo processes.

K accuracy-like metrics (K = 1, 4, 16, 32), each with its own class count (5 + i, so no library
can merge them into one state), synced at world size 2 and 4 on gloo over loopback, every
library in the same run:

  torchtally              MetricCollection of K metrics keeping an int64 confusion matrix
                          (a bench-local Metric: the catalogue's classes live elsewhere);
                          compute() = one packed sync
  torchtally, separate    the same K metrics, each compute() syncing on its own
  torchmetrics            MetricCollection of K MulticlassAccuracy(average="micro")
  torcheval               K MulticlassAccuracy, toolkit.sync_and_compute_collection
  ignite                  K ignite.metrics.Accuracy, compute() each (ignite's sync_all_reduce)
  ignite + torchtally     K custom ignite metrics whose only change is importing
                          sync_all_reduce / reinit__is_reduced from torchtally

Latency of one sync: before each repeat every metric gets a one-sample update (so no library
can answer from a cache) and the ranks meet at a barrier, both untimed; then the sync and
compute of all K metrics is timed on every rank. Reported: the median over repeats of the
slowest rank's time, and the collectives one sync makes (counted by wrapping torch.distributed;
a header ring's point-to-point messages count as the one exchange they make up).

Run: `make bench` (all benchmarks) or `.venv/bin/python benchmarks/bench_sync.py [--quick]`.
"""

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).parent))
from _common import (  # noqa: E402
    collectives_counted,
    describe_collectives,
    markdown_table,
    replace_section,
    ring_note,
    slowest_rank_median,
)

import torchtally  # noqa: E402
from torchtally import Metric, MetricCollection  # noqa: E402
from torchtally.testing import count_collectives, run_distributed  # noqa: E402

K_VALUES = (1, 4, 16, 32)
WORLD_SIZES = (2, 4)
BATCH = 256
LIBRARIES = (
    "torchtally",
    "torchtally, separate metrics",
    "torchmetrics",
    "torcheval",
    "ignite",
    "ignite + torchtally decorators",
)


class ConfusionAccuracy(Metric):
    """Multiclass accuracy from an int64 confusion matrix, the state torchtally's classifiers keep."""

    def __init__(self, num_classes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("confmat", torch.zeros(num_classes, num_classes, dtype=torch.int64), reduce="sum")

    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        c = self.confmat.shape[0]
        idx = target * c + logits.argmax(dim=1)
        self.confmat = self.confmat + torch.bincount(idx, minlength=c * c).reshape(c, c)

    def compute(self) -> torch.Tensor:
        return self.confmat.trace() / self.confmat.sum()


def make_ignite_accuracy(sync_all_reduce: Callable, reinit__is_reduced: Callable) -> type:
    import ignite.metrics

    class AccuracyLike(ignite.metrics.Metric):
        @reinit__is_reduced
        def reset(self) -> None:
            self._num_correct = torch.tensor(0)
            self._num_examples = 0

        @reinit__is_reduced
        def update(self, output: Tuple[torch.Tensor, torch.Tensor]) -> None:
            logits, target = output
            self._num_correct += (logits.argmax(dim=1) == target).sum()
            self._num_examples += target.numel()

        @sync_all_reduce("_num_correct", "_num_examples")
        def compute(self) -> float:
            return self._num_correct.item() / self._num_examples

    return AccuracyLike


def batch_for(rank: int, i: int, num_classes: int, n: int = BATCH) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1000 * rank + i)
    return torch.randn(n, num_classes, generator=g), torch.randint(0, num_classes, (n,), generator=g)


def setup(library: str, k: int, rank: int) -> Tuple[Callable[[], None], Callable[[], Any]]:
    """(touch, sync): touch() gives every metric one new sample; sync() syncs and computes all."""
    classes = [5 + i for i in range(k)]
    data = [batch_for(rank, i, c) for i, c in enumerate(classes)]
    tiny = [(x[:1], y[:1]) for x, y in data]

    if library in ("torchtally", "torchtally, separate metrics"):
        metrics = {f"acc{i}": ConfusionAccuracy(c) for i, c in enumerate(classes)}
        for (x, y), m in zip(data, metrics.values()):
            m.update(x, y)
        if library == "torchtally":
            coll = MetricCollection(metrics)

            def touch() -> None:
                for (x, y), m in zip(tiny, metrics.values()):
                    m.update(x, y)

            return touch, coll.compute
        return (lambda: [m.update(x, y) for (x, y), m in zip(tiny, metrics.values())]), (
            lambda: [m.compute() for m in metrics.values()]
        )

    if library == "torchmetrics":
        import torchmetrics
        from torchmetrics.classification import MulticlassAccuracy

        tm = {f"acc{i}": MulticlassAccuracy(num_classes=c, average="micro") for i, c in enumerate(classes)}
        coll = torchmetrics.MetricCollection(tm)
        for (x, y), m in zip(data, tm.values()):
            m.update(x, y)
        return (lambda: [m.update(x, y) for (x, y), m in zip(tiny, tm.values())]), coll.compute

    if library == "torcheval":
        from torcheval.metrics import MulticlassAccuracy
        from torcheval.metrics.toolkit import sync_and_compute_collection

        te = {f"acc{i}": MulticlassAccuracy(num_classes=c) for i, c in enumerate(classes)}
        for (x, y), m in zip(data, te.values()):
            m.update(x, y)
        return (lambda: [m.update(x, y) for (x, y), m in zip(tiny, te.values())]), (
            lambda: sync_and_compute_collection(te)
        )

    if library == "ignite":
        from ignite.metrics import Accuracy

        ig = [Accuracy() for _ in classes]
    else:  # "ignite + torchtally decorators"
        ig = [make_ignite_accuracy(torchtally.sync_all_reduce, torchtally.reinit__is_reduced)() for _ in classes]
    for (x, y), m in zip(data, ig):
        m.update((x, y))
    return (lambda: [m.update((x, y)) for (x, y), m in zip(tiny, ig)]), (lambda: [m.compute() for m in ig])


def measure(touch: Callable[[], None], sync: Callable[[], Any], budget_s: float) -> Tuple[Dict[str, int], List[float]]:
    touch()
    sync()  # warm-up: plans, lazy imports, ignite's one-time detection of the process group
    touch()
    dist.barrier()
    start = time.perf_counter()
    with count_collectives() as counter:
        sync()
    first = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
    dist.all_reduce(first, op=dist.ReduceOp.MAX)  # every rank must run the same number of repeats
    repeats = max(5, min(30, int(budget_s / max(float(first), 1e-6))))
    times = []
    for _ in range(repeats):
        touch()
        dist.barrier()
        start = time.perf_counter()
        sync()
        times.append(time.perf_counter() - start)
    return dict(counter.by_name), times


def bench_rank(rank: int, world_size: int, k_values: Tuple[int, ...], budget_s: float) -> Dict[Tuple[str, int], Any]:
    warnings.filterwarnings("ignore")
    out = {}
    for k in k_values:
        for library in LIBRARIES:
            touch, sync = setup(library, k, rank)
            out[(library, k)] = measure(touch, sync, budget_s)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="K = 1, 4 only, short budgets; do not write RESULTS.md")
    args = parser.parse_args()
    k_values = (1, 4) if args.quick else K_VALUES
    budget_s = 0.3 if args.quick else 1.5

    rows, by_case = [], {}
    ring_worlds = set()  # world sizes where torchtally's groups took the header ring
    for ws in WORLD_SIZES:
        per_rank = run_distributed(bench_rank, ws, k_values, budget_s, timeout=1800)
        for k in k_values:
            tally_s = None
            for library in LIBRARIES:
                counts = [r[(library, k)][0] for r in per_rank]
                total, rings = collectives_counted(counts)
                if rings:
                    ring_worlds.add(ws)
                seconds = slowest_rank_median([r[(library, k)][1] for r in per_rank])
                tally_s = seconds if library == "torchtally" else tally_s
                by_case[(ws, k, library)] = (total, seconds)
                ratio = "1.0x" if library == "torchtally" else f"**{seconds / tally_s:.1f}x**"
                rows.append([ws, k, library, describe_collectives(counts), f"{seconds * 1e3:,.2f}", ratio])

    table = markdown_table(
        ["world size", "K metrics", "library", "collectives per sync", "sync + compute ms", "time vs torchtally"], rows
    )
    print(table)
    if args.quick:
        return
    cores = os.cpu_count()
    c16 = by_case.get((4, 16, "torchtally"))
    tm16 = by_case.get((4, 16, "torchmetrics"))
    target = ""
    if c16 and tm16:
        counts_tt = sorted({by_case[(4, k, "torchtally")][0] for k in k_values})
        target = (
            f"Target at K = 16, world size 4: torchtally makes {c16[0]} collectives per sync "
            f"(for every K measured: {counts_tt}; target <= 4) and is **{tm16[1] / c16[1]:.1f}x** faster than "
            f"torchmetrics (target >= 5x).\n\n"
        )
    machine = (
        f"{platform.processor() or platform.machine()}, torch {torch.__version__}, Python {platform.python_version()}"
    )
    body = (
        f"Machine: {machine}, {cores} CPU core(s), shared with other jobs. World size W runs W processes "
        f"(gloo over loopback, one torch thread each), so at W = 4 two processes share each core. "
        + (ring_note(ring_worlds) + " " if ring_worlds else "")
        + f"Batch of {BATCH} samples per metric before the timed syncs; K metrics with 5..4+K classes.\n\n"
        + target
        + "Time = median over repeats of the slowest rank's sync + compute of all K metrics "
        "(each metric touched by a one-sample update and a barrier before each repeat, untimed). "
        "Collectives counted by wrapping torch.distributed's functions during one sync.\n\n"
        + table
        + "\n\nGenerated by `benchmarks/bench_sync.py`."
    )
    replace_section("Sync", body)


if __name__ == "__main__":
    main()
