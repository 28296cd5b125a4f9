"""Catalogue sweep: every class that both torchtally and torchmetrics export, side by side in one
process, one torch thread, at a small, a usual and a large batch (benchmarks/_sweep_specs.py).

Per class and batch size, each library runs the same epoch: a fresh metric, E updates on the same
batches (E = 50; 10 at the large size) and one compute, timed call by call; then F forwards into a
fresh metric. The two libraries' epochs are interleaved (a, b, b, a, ...) so that both run under
the same load, and each figure is the median over the rounds (the epoch: the fastest round, as one
pause of the scheduler, ~16 ms on a shared machine, outweighs 50 updates of 10 us):
  update   the median update call
  forward  the median forward call
  compute  compute after the epoch
  epoch    the E updates plus compute
  state    bytes of the metric's tensor states after the epoch (list states summed)
Ratios are torchmetrics / torchtally (above 1: torchtally faster). A library's epoch and its
forwards each run under a time budget (``--budget``, 30 s): a call still running then is stopped
(SIGALRM), the library's remaining rounds of that class are skipped, and what it had spent is a
lower bound on its time, so the ratio is a bound: ">12x" (torchmetrics stopped) or "<0.5x"
(torchtally stopped). At the large size a few torchmetrics classes (Kendall's tau, the
*AtFixed* curves) walk every pair or point in Python for many minutes. "values" says whether the two
results agreed to 1e-3 (relative) after the epoch; a row where they differ is a documented
difference (exact against binned, float64 against float32) or a finding.

Results go to the "Catalogue sweep" section of benchmarks/RESULTS.md: per batch size the median
and the slowest ratios, every class below 1.0x, and the table of the usual size.

Run: `make bench` or `.venv/bin/python benchmarks/bench_catalogue_sweep.py [--quick]
[--family F ...] [--size S ...] [--only NAME ...] [--no-write] [--json OUT] [--combine IN ...]`.
A run over part of the catalogue can save its rows (`--json`); `--combine` writes the section
from several such files (e.g. the families run one after another) without timing anything; a
class in several files takes its row from the last (a rerun of a few classes with more rounds).
"""

import argparse
import contextlib
import json
import math
import signal
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine_line, markdown_table, replace_section  # noqa: E402
from _sweep_specs import SIZES, Spec, all_specs  # noqa: E402

SECTION = "Catalogue sweep"
LIBRARIES = ("torchtally", "torchmetrics")
MEASURES = ("update", "forward", "compute", "epoch")


def state_bytes(metric: Any) -> int:
    """Bytes of every tensor state of ``metric`` and of the metrics inside it."""
    total = 0
    for module in metric.modules():
        state = getattr(type(module), "metric_state", None)
        if not isinstance(state, property):
            continue
        for value in module.metric_state.values():
            items = value if isinstance(value, list) else [value]
            total += sum(t.numel() * t.element_size() for t in items if isinstance(t, torch.Tensor))
    return total


def _timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


class OverBudget(BaseException):
    """A library's epoch (or its forwards) ran past the budget. A BaseException, so that a broad
    ``except Exception`` inside the library under test does not swallow it."""


@contextlib.contextmanager
def budget(seconds: Optional[float]) -> Iterator[None]:
    """Raise OverBudget in the body once ``seconds`` of wall time have passed (None: no limit)."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def one_epoch(
    spec: Spec, lib: str, batches: Sequence[Tuple[Any, ...]], epoch: int, limit: Optional[float] = None
) -> Dict[str, Any]:
    """A fresh metric through ``epoch`` updates and a compute; then forwards into a fresh one.
    A phase stopped by the budget leaves its measures as lower bounds, listed in ``over``."""
    metric = spec.make(lib)
    updates: List[float] = []
    over: List[str] = []
    value, compute, begun = None, math.nan, time.perf_counter()
    try:
        with budget(limit):
            for i in range(epoch):
                updates.append(_timed(metric.update, *batches[i % len(batches)]))
            start = time.perf_counter()
            try:
                value = metric.compute()
            finally:
                compute = time.perf_counter() - start
    except OverBudget:
        over += ["update", "compute", "epoch"] if len(updates) < epoch else ["compute", "epoch"]
    epoch_time = time.perf_counter() - begun
    size = state_bytes(metric)
    fresh = spec.make(lib)
    forwards: List[float] = []
    begun = time.perf_counter()
    try:
        with budget(limit):
            for i in range(min(epoch, 20) if spec.forward else 0):
                forwards.append(_timed(fresh, *batches[i % len(batches)]))
    except OverBudget:
        over.append("forward")
        forwards = forwards or [time.perf_counter() - begun]
    return {
        "update": statistics.median(updates) if updates else epoch_time,
        "forward": statistics.median(forwards) if forwards else float("nan"),
        "compute": compute,
        "epoch": epoch_time,
        "state": size,
        "value": value,
        "over": over,
    }


def _flat(value: Any) -> Optional[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return value.detach().double().reshape(-1)
    if isinstance(value, (int, float)):
        return torch.tensor([float(value)], dtype=torch.float64)
    if isinstance(value, dict):
        parts = [_flat(value[k]) for k in sorted(value)]
        return None if any(p is None for p in parts) else torch.cat(parts)  # type: ignore[arg-type]
    if isinstance(value, (list, tuple)):
        parts = [_flat(v) for v in value]
        return None if not parts or any(p is None for p in parts) else torch.cat(parts)  # type: ignore[arg-type]
    return None


def agree(a: Any, b: Any) -> str:
    x, y = _flat(a), _flat(b)
    if x is None or y is None:
        return "?"
    if x.shape != y.shape:
        return "shape"
    return "=" if torch.allclose(x, y, rtol=1e-3, atol=1e-6, equal_nan=True) else "differs"


def measure(spec: Spec, size: str, rounds: int, limit: Optional[float] = None) -> Dict[str, Any]:
    """The interleaved epochs of both libraries: medians per measure, or the reason it could not
    run. A library stopped by the budget runs no further round of this class."""
    batches = [spec.batch(size, seed) for seed in range(4)]
    epoch = spec.epoch or (10 if size == "large" else 50)
    runs: Dict[str, List[Dict[str, Any]]] = {lib: [] for lib in LIBRARIES}
    for lib in LIBRARIES:  # a warm-up epoch each: lazy imports, first-call allocations
        try:
            one_epoch(spec, lib, batches[:2], 2, limit)
        except Exception as exc:  # noqa: BLE001  # the row says why it did not run
            return {"error": f"{lib}: {type(exc).__name__}: {str(exc).splitlines()[0][:90] if str(exc) else ''}"}
    for r in range(rounds):
        for lib in LIBRARIES if r % 2 == 0 else LIBRARIES[::-1]:
            if not (runs[lib] and runs[lib][-1]["over"]):
                runs[lib].append(one_epoch(spec, lib, batches, epoch, limit))
    out: Dict[str, Any] = {}
    for lib in LIBRARIES:
        out[lib] = {m: statistics.median(run[m] for run in runs[lib]) for m in MEASURES}
        out[lib]["epoch"] = min(run["epoch"] for run in runs[lib])  # the round least hit by other jobs
        out[lib]["state"] = runs[lib][-1]["state"]
        out[lib]["over"] = sorted({m for run in runs[lib] for m in run["over"]})
    out["values"] = agree(runs["torchtally"][-1]["value"], runs["torchmetrics"][-1]["value"])
    out["ratio"] = {m: out["torchmetrics"][m] / max(out["torchtally"][m], 1e-9) for m in MEASURES}  # NaN: not run
    return out


def bound(r: Dict[str, Any], m: str) -> str:
    """ "" for a measured ratio; ">" where torchmetrics was stopped (a lower bound), "<" where
    torchtally was (an upper bound), "?" where both were."""
    tm, tt = m in r["torchmetrics"].get("over", ()), m in r["torchtally"].get("over", ())
    return "?" if tm and tt else ">" if tm else "<" if tt else ""


def ratio_text(r: Dict[str, Any], m: str) -> str:
    return f"{bound(r, m)}{r['ratio'][m]:.2f}x"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}" if seconds >= 1e-4 else f"{seconds * 1e6:.1f}"


def _bytes(n: int) -> str:
    return f"{n:,}"


def table(results: Dict[str, Dict[str, Any]], specs: List[Spec]) -> str:
    rows = []
    for spec in specs:
        r = results.get(spec.name)
        if r is None:
            continue
        if "error" in r:
            rows.append([spec.family, spec.name] + ["-"] * 8 + [r["error"]])
            continue
        tt, tm = r["torchtally"], r["torchmetrics"]
        rows.append(
            [spec.family, spec.name, _us(tt["update"]), _us(tm["update"])]
            + [ratio_text(r, m) for m in MEASURES]
            + [_bytes(tt["state"]), _bytes(tm["state"]), r["values"]]
        )
    header = ["family", "class", "update us (tt)", "update us (tm)", "update", "forward", "compute", "epoch"]
    return markdown_table(header + ["state B (tt)", "state B (tm)", "values"], rows)


def summary(size: str, results: Dict[str, Dict[str, Any]]) -> str:
    ran = {n: r for n, r in results.items() if "error" not in r}
    if not ran:
        return f"**{size}**: nothing ran."
    lines = [f"**{size}** ({len(ran)} classes ran, {len(results) - len(ran)} could not):"]
    for m in ("epoch", "forward", "update"):
        ratios = sorted((r["ratio"][m], n) for n, r in ran.items() if r["ratio"][m] == r["ratio"][m])
        # a lower bound below 1.0 is inconclusive, and listed as such: only a measured ratio clears a class
        below = [f"{n} {ratio_text(ran[n], m)}" for x, n in ratios if x < 1.0 or bound(ran[n], m) in ("<", "?")]
        lines.append(
            f"- {m}: median {statistics.median(x for x, _ in ratios):.2f}x, slowest {ratios[0][1]} "
            f"{ratio_text(ran[ratios[0][1]], m)}; below 1.0x: {len(below)}"
            + (f" ({', '.join(below)})" if below else "")
        )
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, the usual size only")
    parser.add_argument("--family", nargs="*", default=None)
    parser.add_argument("--size", nargs="*", default=None, choices=SIZES)
    parser.add_argument("--only", nargs="*", default=None, help="class names")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; RESULTS.md untouched")
    parser.add_argument("--json", default=None, help="also save the rows measured to this file")
    parser.add_argument("--combine", nargs="*", default=None, help="write the section from --json files")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per library's epoch and forwards (0: none)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    specs, not_swept = all_specs()
    if args.family:
        specs = [s for s in specs if s.family in args.family]
    if args.only:
        specs = [s for s in specs if s.name in args.only]
    sizes = args.size or (["usual"] if args.quick else list(SIZES))
    rounds = 1 if args.quick else args.rounds
    rounds_text = str(rounds)
    results: Dict[str, Dict[str, Dict[str, Any]]] = {}
    if args.combine:
        counts = set()
        for path in args.combine:
            saved = json.loads(Path(path).read_text())
            counts.add(saved["rounds"])
            for size, rows in saved["results"].items():
                results.setdefault(size, {}).update(rows)
        sizes = [size for size in SIZES if size in results]
        rounds_text = "-".join(str(n) for n in sorted({min(counts), max(counts)}))
    for size in sizes if not args.combine else []:
        results[size] = {}
        for spec in specs:
            r = measure(spec, size, rounds, args.budget)
            results[size][spec.name] = r
            shown = r.get("error") or "  ".join(f"{m} {ratio_text(r, m)}" for m in MEASURES) + f"  {r['values']}"
            print(f"{size:6} {spec.family:14} {spec.name:48} {shown}", flush=True)
            if args.json:  # after every class: a run stopped part way keeps what it measured
                Path(args.json).write_text(json.dumps({"rounds": rounds, "results": results}, default=str))
    body = [
        f"Generated by `benchmarks/bench_catalogue_sweep.py` ({machine_line()}; {rounds_text} interleaved round(s) "
        "per run, medians, the epoch the fastest round; ratios torchmetrics / torchtally, above 1: torchtally faster).",
        "",
    ]
    body += [summary(size, results[size]) + "\n" for size in sizes]
    if not_swept:
        body.append("Not swept: " + "; ".join(f"{n} ({why})" for n, why in sorted(not_swept.items())) + ".\n")
    shown_size = "usual" if "usual" in results else sizes[0]
    body += [f"Every class at the {shown_size} size:", "", table(results[shown_size], specs)]
    text = "\n".join(body)
    print(text)
    whole = args.combine or not (args.only or args.family)
    if not args.no_write and whole:
        replace_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
