"""Per-step sync benchmark: the metric value synced over ranks at every training
step, as each library's per-step usage does it, side by side in one run.

Work per step, on every rank: K accuracy metrics over C = 10 classes each get one batch of 64
samples, then the step's synced value of every metric. K = 1, 3, 16 at world size 2 and 4
(gloo over loopback). Usages:

  torchtally forward            MetricCollection of K MulticlassAccuracy(average="micro",
                                dist_sync_on_step=True); step = coll(preds, target)
  torchtally hook running       MetricHook(collection, usage="running"); step = hook.update(...)
  torchtally hook batch_wise    MetricHook(collection, usage="batch_wise")
  torchtally decorators + ignite RunningAverage
                                K ignite metrics whose only change is torchtally's
                                sync_all_reduce / reinit__is_reduced, each under ignite's
                                RunningAverage (step = src.update, average.update)
  torchmetrics forward          MetricCollection of K MulticlassAccuracy(average="micro",
                                dist_sync_on_step=True); step = coll(preds, target)
  ignite RunningAverage         K RunningAverage(Accuracy()) (step = src.update, average.update)
  ignite batch-wise             K Accuracy(): reset, update, compute
  torcheval                     K MulticlassAccuracy: update, toolkit.sync_and_compute_collection

Collections are built with compute_groups=False, so every library keeps K states (the K
metrics are alike; merging them would be a different workload). Each repeat runs every usage
once, after a barrier, in an order shuffled afresh for each repeat (the same seeded order on
every rank), so the machine's load hits all of them alike and no usage always runs right after
another: a fixed rotation ran ignite's batch-wise Accuracy right after ignite's RunningAverage
in seven repeats out of eight, on the caches its twin had just warmed, and torchtally's forward
after torcheval, on cold ones (a per-step metric runs after the model's step, whose work leaves
it no warm code either); at K = 1 that order alone moved the ratios by 10-20% (benchmarks/
RESULTS.md, "The order of the usages, and the spread at world size 4").
Reported is the median over repeats of the slowest rank's step.

Also measured, for the design notes (docs/architecture.md): the header exchange alone, by
all_to_all (what a gloo group uses where every rank has a core), by all_gather and by
torchtally.sync.exchange's ring (what a gloo group uses where a host has fewer cores than ranks,
as at W = 4 here), next to ignite's two one-element all_reduces; and for the small-plan bound,
one header exchange with the data in it (the one-collective path) against the two-step path
(header exchange, then an all_reduce of the data) and a single all_gather of header + data past
the header, at several data sizes, with the local reduction of the gathered copies included.

Run: `make bench` (all benchmarks) or `.venv/bin/python benchmarks/bench_per_step.py [--quick]`.
"""

import argparse
import os
import random
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.distributed as dist
from torch.utils.data import DistributedSampler

sys.path.insert(0, str(Path(__file__).parent))
from _common import (  # noqa: E402
    collectives_counted,
    describe_collectives,
    machine_line,
    markdown_table,
    replace_section,
    ring_note,
    slowest_rank_median,
    slowest_rank_times,
)

from torchtally.sync.exchange import ring  # noqa: E402
from torchtally.sync.plan import HEADER_SLOTS  # noqa: E402
from torchtally.testing import count_collectives, run_distributed  # noqa: E402

CLASSES = 10
BATCH = 64
K_VALUES = (1, 3, 16)
WORLD_SIZES = (2, 4)
TORCHTALLY = (
    "torchtally forward (dist_sync_on_step)",
    "torchtally hook running",
    "torchtally hook batch_wise",
    "torchtally decorators + ignite RunningAverage",
)
PEERS = (
    "torchmetrics forward (dist_sync_on_step)",
    "ignite RunningAverage(Accuracy)",
    "ignite Accuracy batch-wise",
    "torcheval sync_and_compute",
)
USAGES = TORCHTALLY + PEERS
# Data sizes (int64 words) of the small-plan bound's probe: inside the 4 KiB header, then past it.
PROBE_WORDS = (1, 25, 300, 480, 2048, 16384)
PROBE_ONE = "one collective (data in the header when it fits)"
PROBE_TWO = "header exchange + all_reduce"
# The header exchange (4 KiB per rank) by all_to_all, by all_gather and by torchtally's ring,
# and what ignite's decorators make for an accuracy (two one-element all_reduces), for the
# design note.
EXCHANGES = (
    "all_to_all of the header",
    "all_gather of the header",
    "ring of the header",
    "two one-element all_reduces",
)


def tally_accuracy_class() -> type:
    """An ignite metric (ignite's Accuracy, counted the same way) synced by torchtally's decorators."""
    import ignite.metrics

    import torchtally

    class TallyAccuracy(ignite.metrics.Metric):
        @torchtally.reinit__is_reduced
        def reset(self) -> None:
            self._num_correct = torch.tensor(0)
            self._num_examples = 0

        @torchtally.reinit__is_reduced
        def update(self, output: Tuple[torch.Tensor, torch.Tensor]) -> None:
            logits, target = output
            self._num_correct += (logits.argmax(dim=1) == target).sum()
            self._num_examples += target.numel()

        @torchtally.sync_all_reduce("_num_correct", "_num_examples")
        def compute(self) -> float:
            return self._num_correct.item() / self._num_examples

    return TallyAccuracy


def make_step(usage: str, k: int, x: torch.Tensor, y: torch.Tensor) -> Callable[[], Any]:
    """One training step's metric work for ``usage``: update with (x, y), the synced value."""
    if usage.startswith("torchtally") and "decorators" not in usage:
        import torchtally
        from torchtally.classification import MulticlassAccuracy

        on_step = "forward" in usage
        coll = torchtally.MetricCollection(
            {f"acc{i}": MulticlassAccuracy(CLASSES, average="micro", dist_sync_on_step=on_step) for i in range(k)},
            compute_groups=False,
        )
        if on_step:
            return lambda: coll(x, y)
        hook = torchtally.MetricHook(coll, usage="running" if "running" in usage else "batch_wise")
        # as under a DataLoader with a DistributedSampler: shards long enough for every step
        hook.start_epoch(sampler=DistributedSampler(range(1 << 30), shuffle=False))
        return lambda: hook.update(x, y)
    if usage.startswith("torchmetrics"):
        import torchmetrics
        from torchmetrics.classification import MulticlassAccuracy

        coll = torchmetrics.MetricCollection(
            {f"acc{i}": MulticlassAccuracy(CLASSES, average="micro", dist_sync_on_step=True) for i in range(k)},
            compute_groups=False,
        )
        return lambda: coll(x, y)
    if usage.startswith("torcheval"):
        from torcheval.metrics import MulticlassAccuracy
        from torcheval.metrics.toolkit import sync_and_compute_collection

        metrics = {f"acc{i}": MulticlassAccuracy(num_classes=CLASSES) for i in range(k)}

        def torcheval_step() -> Any:
            for m in metrics.values():
                m.update(x, y)
            return sync_and_compute_collection(metrics)

        return torcheval_step
    from ignite.metrics import Accuracy, RunningAverage

    if usage == "ignite Accuracy batch-wise":
        plain = [Accuracy() for _ in range(k)]

        def batch_wise() -> Any:
            out = []
            for m in plain:
                m.reset()
                m.update((x, y))
                out.append(m.compute())
            return out

        return batch_wise
    source = tally_accuracy_class() if "decorators" in usage else Accuracy
    averages = [RunningAverage(src=source()) for _ in range(k)]

    def running_average() -> Any:
        for a in averages:
            a.src.update((x, y))  # what ignite's engine does for the source at each iteration
            a.update(None)  # the source's synced compute, folded into the average
        return [a.compute() for a in averages]

    return running_average


def bench_rank(
    rank: int, world_size: int, plan: Dict[int, int], probe_reps: int, rotate: bool = False
) -> Dict[str, Any]:
    warnings.filterwarnings("ignore")
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(BATCH, CLASSES, generator=g)
    y = torch.randint(0, CLASSES, (BATCH,), generator=g)
    out: Dict[str, Any] = {"steps": {}, "collectives": {}, "probe": probe(world_size, probe_reps)}
    for k, repeats in plan.items():
        steps = {u: make_step(u, k, x, y) for u in USAGES}
        for usage, step in steps.items():
            for _ in range(3):  # warm-up: plans, lazy imports, ignite's detection of the group
                step()
            with count_collectives() as counter:
                step()
            out["collectives"][(usage, k)] = dict(counter.by_name)
        times: Dict[str, List[float]] = {u: [] for u in USAGES}
        order = list(USAGES)
        shuffler = random.Random(k)  # every rank draws the same orders: their collectives match
        for r in range(repeats):
            if rotate:  # the order this benchmark used before: a fixed cycle, started one further each time
                order = list(USAGES[r % len(USAGES) :] + USAGES[: r % len(USAGES)])
            else:
                shuffler.shuffle(order)
            for usage in order:
                dist.barrier()
                start = time.perf_counter()
                steps[usage]()
                times[usage].append(time.perf_counter() - start)
        for usage in USAGES:
            out["steps"][(usage, k)] = times[usage]
    return out


def spread(world_size: int, per_usage: Dict[str, List[List[float]]]) -> List[List[Any]]:
    """Rows of the K = 1 spread table: each usage's slowest-rank steps (``per_usage[u]``: each
    rank's times, repeat by repeat) as quartiles and mean, ms, and its mean against the lowest
    peer mean."""
    slowest = {u: [t * 1e3 for t in slowest_rank_times(times)] for u, times in per_usage.items()}
    means = {u: statistics.mean(t) for u, t in slowest.items()}
    lowest_peer = min(means[p] for p in PEERS)
    rows = []
    for u, t in slowest.items():
        q25, q50, q75 = statistics.quantiles(t, n=4)
        rows.append(
            [
                world_size,
                u,
                f"{q25:.2f}",
                f"{q50:.2f}",
                f"{q75:.2f}",
                f"{means[u]:.2f}",
                f"{means[u] / lowest_peer:.2f}x",
            ]
        )
    return rows


# -- the small-plan bound: one gather against gather + all_reduce ---------------------------


def probe(world_size: int, repeats: int) -> Dict[Tuple[str, int], List[float]]:
    """Seconds per repeat of the ways to sync ``words`` int64 sums (after a barrier each), and of
    the header exchanges alone (``words`` = 0 in the keys of EXCHANGES)."""
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    fields = 8
    out: Dict[Tuple[str, int], List[float]] = {}
    ways: Dict[Tuple[str, int], Callable[[], Any]] = {}
    sent = torch.zeros(world_size * HEADER_SLOTS, dtype=torch.int64)  # the header, once per rank
    header = sent[:HEADER_SLOTS]
    table = torch.empty(world_size * HEADER_SLOTS, dtype=torch.int64)

    def exchange() -> None:  # the header exchange of a gloo group (torchtally.sync.protocol)
        sent.view(world_size, -1)[1:].copy_(header)
        dist.all_to_all_single(table, sent)

    for words in PROBE_WORDS:
        data = torch.ones(words, dtype=torch.int64)
        message = torch.zeros(fields + words, dtype=torch.int64)
        gathered = torch.empty(world_size * (fields + words), dtype=torch.int64)

        def one_exchange(words=words, data=data, message=message, gathered=gathered):
            if fields + words <= HEADER_SLOTS:  # the data rides in the fixed-size header
                header[fields : fields + words].copy_(data)
                exchange()
                return table.view(world_size, -1)[:, fields : fields + words].sum(0)
            message[fields:].copy_(data)
            gather(gathered, message)
            return gathered.view(world_size, -1)[:, fields:].sum(0)

        def two_step(data=data):
            exchange()
            reduced = data.clone()
            dist.all_reduce(reduced)
            return reduced

        ways[(PROBE_ONE, words)] = one_exchange
        ways[(PROBE_TWO, words)] = two_step
    ones = [torch.zeros(1, dtype=torch.int64), torch.zeros(1, dtype=torch.float64)]
    ways[(EXCHANGES[0], 0)] = exchange
    ways[(EXCHANGES[1], 0)] = lambda: gather(table, header)
    rank = dist.get_rank()
    own_row = table[rank * HEADER_SLOTS : (rank + 1) * HEADER_SLOTS]

    def by_ring() -> None:  # torchtally.sync.exchange's ring, as a sync makes it
        own_row.copy_(header)
        ring(table, HEADER_SLOTS, rank, list(range(world_size)), None, time.monotonic() + 60)

    ways[(EXCHANGES[2], 0)] = by_ring
    ways[(EXCHANGES[3], 0)] = lambda: [dist.all_reduce(t) for t in ones]
    for key, fn in ways.items():
        fn()
        out[key] = []
    keys = list(ways)
    for r in range(repeats):
        for key in keys[r % len(keys) :] + keys[: r % len(keys)]:
            dist.barrier()
            start = time.perf_counter()
            ways[key]()
            out[key].append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repeats; do not write RESULTS.md")
    parser.add_argument(
        "--world-sizes",
        type=int,
        nargs="+",
        default=list(WORLD_SIZES),
        help="a subset of world sizes to run (then RESULTS.md is not written)",
    )
    parser.add_argument(
        "--k", type=int, nargs="+", default=list(K_VALUES), help="a subset of K to run (then RESULTS.md is not written)"
    )
    parser.add_argument(
        "--rotate",
        action="store_true",
        help="the former fixed rotation of usages instead of shuffled orders, for comparison "
        "(then RESULTS.md is not written)",
    )
    args = parser.parse_args()
    scale = 0.25 if args.quick else 1.0
    if args.world_sizes != list(WORLD_SIZES) or args.k != list(K_VALUES) or args.rotate:
        args.quick = True  # full repeats, but a partial table never replaces the full one
    # Steps at K = 1 are short and the noisiest (a millisecond; at W = 4, where two ranks share a
    # core, spread over 1.5-7 ms by the scheduler), so they get the most repeats: the median of
    # 250 such steps moved by 10% between runs. At K = 16, 20 repeats moved the decorators'
    # ratio from 0.87x to 1.12x between two runs.
    plans = {2: {1: 800, 3: 150, 16: 60}, 4: {1: 1000, 3: 80, 16: 24}}
    probe_reps = max(5, int(40 * scale))

    step_rows, verdict_rows, spread_rows, probe_rows, exchange_rows = [], [], [], [], []
    ring_worlds = set()  # world sizes where torchtally's groups took the header ring
    for ws in args.world_sizes:
        plan = {k: max(5, int(n * scale)) for k, n in plans[ws].items() if k in args.k}
        per_rank = run_distributed(bench_rank, ws, plan, probe_reps, args.rotate, timeout=900)
        for k in plan:
            ms = {u: slowest_rank_median([r["steps"][(u, k)] for r in per_rank]) * 1e3 for u in USAGES}
            fastest_peer = min(PEERS, key=lambda u: ms[u])
            for u in USAGES:
                counts = [r["collectives"][(u, k)] for r in per_rank]
                if collectives_counted(counts)[1]:
                    ring_worlds.add(ws)
                step_rows.append(
                    [ws, k, u, describe_collectives(counts), f"{ms[u]:,.2f}", f"{ms[u] / ms[fastest_peer]:.2f}x"]
                )
            for u in TORCHTALLY:
                ratio = ms[u] / ms[fastest_peer]
                ahead = ratio <= 1.0 if k == 1 else all(ms[u] < ms[p] for p in PEERS)
                verdict_rows.append([ws, k, u, f"{ratio:.2f}x vs {fastest_peer}", "yes" if ahead else "**no**"])
            if k == 1:
                spread_rows += spread(ws, {u: [r["steps"][(u, k)] for r in per_rank] for u in USAGES})
        for words in PROBE_WORDS:
            one = slowest_rank_median([r["probe"][(PROBE_ONE, words)] for r in per_rank]) * 1e3
            two = slowest_rank_median([r["probe"][(PROBE_TWO, words)] for r in per_rank]) * 1e3
            fits = "header exchange (data in it)" if 8 + words <= HEADER_SLOTS else "all_gather of header + data"
            probe_rows.append([ws, words, words * 8, fits, f"{one:.3f}", f"{two:.3f}", f"{two / one:.2f}x"])
        ms = {e: slowest_rank_median([r["probe"][(e, 0)] for r in per_rank]) * 1e3 for e in EXCHANGES}
        exchange_rows.append([ws] + [f"{ms[e]:.3f}" for e in EXCHANGES])

    steps = markdown_table(
        ["world size", "K", "usage", "collectives per step", "step ms", "vs fastest peer"], step_rows
    )
    verdict = markdown_table(
        ["world size", "K", "torchtally usage", "step time vs the fastest peer", "target met"], verdict_rows
    )
    probe_table = markdown_table(
        [
            "world size",
            "data words",
            "bytes",
            "the one collective",
            "one collective ms",
            "header exchange + all_reduce ms",
            "two-step / one",
        ],
        probe_rows,
    )
    exchange_table = markdown_table(["world size"] + [f"{e} ms" for e in EXCHANGES], exchange_rows)
    spread_table = markdown_table(
        ["world size", "usage", "q25 ms", "median ms", "q75 ms", "mean ms", "mean vs the lowest peer mean"], spread_rows
    )
    print(steps, verdict, spread_table, exchange_table, probe_table, sep="\n\n")
    if args.quick:
        return
    body = (
        f"Machine: {machine_line()}, {os.cpu_count()} CPU core(s) shared with other jobs; world size W runs W "
        "processes of one torch thread each (gloo over loopback), so at W = 4 two processes share each core.\n\n"
        + (ring_note(ring_worlds) + "\n\n" if ring_worlds else "")
        + f"Per step, on every rank: K accuracy metrics over {CLASSES} classes get a batch of {BATCH} samples, then "
        "each usage's synced value of every metric (see the docstring of `benchmarks/bench_per_step.py` for each "
        "usage). Time = median over repeats of the slowest rank's step (a barrier before each, usages in an "
        'order shuffled afresh for each repeat, the same on every rank). "vs fastest peer" divides by the '
        "fastest of torchmetrics, ignite and torcheval at the same W and K.\n\n"
        "Target: at K = 1 each torchtally usage is no slower than the fastest peer; at K >= 3 it is "
        "ahead of every peer.\n\n" + verdict + "\n\n" + steps + "\n\n"
        "### The spread of a K = 1 step\n\n"
        "The slowest rank's step over all repeats at K = 1: quartiles and mean (the mean is what a "
        "training run pays per step over an epoch). At W = 4 the two processes on each core make the "
        "spread wide and the median unsteady between runs; compare the quartiles and means too.\n\n"
        + spread_table
        + "\n\n"
        "### The header exchange: all_to_all, all_gather, ring\n\n"
        "The 4 KiB header alone (each rank's words to every rank), by gloo's all_to_all (one round: every "
        "rank sends its copy straight to every other), by its ring all_gather (W - 1 rounds) and by "
        "torchtally's ring of point-to-point messages (2(W - 1) messages, one rank awake at a time; what "
        "a gloo group takes where a host has fewer cores than ranks, as at W = 4 here: "
        "docs/architecture.md), next to the two one-element all_reduces ignite makes for an accuracy. "
        "Median of the slowest rank, a barrier before each.\n\n" + exchange_table + "\n\n"
        "### The small-plan bound: one collective against two\n\n"
        "Syncing `data words` int64 sums: the one-collective path (the data inside the 4 KiB header exchange "
        "while it fits, else one all_gather of header fields + data; then the W copies summed locally) "
        "against the two-step path (the header exchange, then an all_reduce of the data). The header goes "
        "by all_to_all here at every W, whichever way a group would choose: the question is one exchange "
        "against two. Median of the slowest rank, a barrier before each.\n\n"
        + probe_table
        + "\n\nGenerated by `benchmarks/bench_per_step.py`."
    )
    replace_section("Per-step sync", body)


if __name__ == "__main__":
    main()
