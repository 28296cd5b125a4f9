"""Shared helpers for the benchmarks: timing, copy bandwidth, markdown tables, RESULTS.md.

Timings are medians over repeats of a timed loop; every benchmark prints its table and
replaces its own section of benchmarks/RESULTS.md, so one `make bench` refreshes all figures.
"""

import platform
import re
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

import torch

RESULTS = Path(__file__).with_name("RESULTS.md")


def time_call(fn: Callable[[], object], min_seconds: float = 0.2, repeats: int = 5) -> float:
    """Median seconds per call of fn, each repeat running long enough to be measurable."""
    fn()  # warm-up: first-call allocations, lazy imports
    calls, elapsed = 1, 0.0
    while True:  # find a loop length that takes about min_seconds / repeats
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds / repeats or calls >= 1 << 20:
            break
        calls *= 4
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def copy_bandwidth_gbs(n_bytes: int = 256 << 20) -> float:
    """Bytes read plus bytes written per second by torch's copy_ of a large float32 buffer."""
    src = torch.empty(n_bytes // 4, dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    seconds = time_call(lambda: dst.copy_(src), min_seconds=0.5, repeats=5)
    return 2 * n_bytes / seconds / 1e9


def machine_line() -> str:
    return (
        f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} torch thread(s), Python {platform.python_version()}"
    )


def slowest_rank_times(per_rank: List[List[float]]) -> List[float]:
    """The slowest rank's time of each repeat (``per_rank``: each rank's times, repeat by
    repeat): a distributed step takes as long as its slowest rank."""
    return [max(rep) for rep in zip(*per_rank)]


def slowest_rank_median(per_rank: List[List[float]]) -> float:
    """Median over repeats of the slowest rank's time."""
    return statistics.median(slowest_rank_times(per_rank))


def markdown_table(header: Sequence[str], rows: List[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def replace_section(title: str, body: str, path: Path = RESULTS) -> None:
    """Writes `## title` + body into RESULTS.md, replacing that section if it exists."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n")


def collectives_counted(per_rank: List[Dict[str, int]]) -> Tuple[int, int]:
    """(collectives, header rings) of one sync or step, from every rank's collectives by name
    (torchtally.testing.count_collectives' ``by_name``, rank order). A header ring's
    point-to-point messages (torchtally.sync.exchange: where a host has fewer cores than ranks)
    count as the one exchange they make up; rank 0 receives once per ring."""
    rings = per_rank[0].get("irecv", 0)
    others = max(sum(n for name, n in counts.items() if name not in ("isend", "irecv")) for counts in per_rank)
    return others + rings, rings


def describe_collectives(per_rank: List[Dict[str, int]]) -> str:
    """collectives_counted for a table cell: "2", or "2 (1 header ring)"."""
    total, rings = collectives_counted(per_rank)
    return f"{total} ({rings} header ring{'s' if rings > 1 else ''})" if rings else str(total)


def ring_note(worlds: Sequence[int]) -> str:
    """A sentence for a results section: at which world sizes torchtally's groups took the
    header ring (collectives_counted found rings); empty when they never did."""
    if not worlds:
        return ""
    return (
        f"At W = {', '.join(map(str, sorted(worlds)))} torchtally's groups passed their sync headers along a "
        "ring of 2(W - 1) point-to-point messages rather than by all_to_all, as a group does where a machine "
        'has fewer CPUs than ranks (docs/architecture.md, "The header exchange"); the collectives column '
        "counts each such ring as one exchange."
    )


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def epoch_note(epoch_ratios: Dict[str, float]) -> str:
    """The sentence a section ends with: which metrics' epoch (update + compute) torchmetrics
    ran faster than torchtally in this run (ratios torchmetrics / torchtally below 1), or that
    none did. Written from the figures of the run itself, so it cannot go stale."""
    slower = {name: r for name, r in epoch_ratios.items() if r < 1.0}
    if not slower:
        return "Update + compute over the epoch: torchtally at least as fast as torchmetrics for every metric here."
    listed = ", ".join(f"{name} ({r:.2f}x)" for name, r in slower.items())
    return (
        "Update + compute over the epoch, where torchmetrics was faster in this run (torchmetrics / torchtally "
        f"below 1: the target of at least 1.0x is missed): {listed}."
    )


def median_epochs(
    runs_once: Dict[str, Callable[[], Tuple[float, float, Any, Any]]], repeats: int = 5
) -> Dict[str, Tuple[float, float, Any, Any]]:
    """Per library, (update s, compute s, state bytes, value) of an epoch: the libraries' runs
    interleaved (a, b, a, b, ...; a fresh metric each), each time the median of ``repeats``. On a
    shared machine the load drifts over seconds: back-to-back blocks of one library, then the
    other, were seen to swing a ratio from 0.7x to 2x; interleaving puts both under the same
    load. The last run's bytes and value."""
    results: Dict[str, List[Tuple[float, float, Any, Any]]] = {name: [] for name in runs_once}
    for _ in range(repeats):
        for name, run_once in runs_once.items():
            results[name].append(run_once())
    return {
        name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), rs[-1][2], rs[-1][3])
        for name, rs in results.items()
    }
