"""Image benchmark: FrechetInceptionDistance against torchmetrics, side by side in one run.

Data: 50,000 synthetic float32 feature rows of D = 2048 (half real, half fake, the fake ones
shifted and scaled), fed through an identity extractor (``num_features`` = D) in batches of
500, so that the metric's own work is what is timed (no network). Measured:
  update   every batch, once (both libraries: float64 sums and outer products, [D, D] matmuls);
  compute  ``compute()`` once (mean, covariance and the eigenvalues of a [D, D] product);
  state    the bytes the state tensors hold after the updates;
  sync     at world sizes 2 and 4 (gloo), each rank on its share of the rows: the collectives
           one ``sync()`` makes and its time (the slowest rank's), both libraries; torchtally's
           value after the sync against one process.
Both libraries' results are checked to agree (1e-5 relative) before anything is reported.
Results go to the "Image: FID" section of benchmarks/RESULTS.md (not with ``--quick``).

Run: `.venv/bin/python benchmarks/bench_image_fid.py [--quick] [--rows N] [--dim D]`.
"""

import argparse
import importlib
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch
from torch import nn

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, markdown_table, replace_section, slowest_rank_median  # noqa: E402

ROWS = 50_000
DIM = 2048
BATCH = 500
SECTION = "Image: FID"
WORLD_SIZES = (2, 4)


class Identity(nn.Module):
    """The features themselves, as an extractor of ``num_features`` values."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.num_features = d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def features(rows: int, dim: int, seed: int = 0) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    real = torch.randn(rows // 2, dim, generator=g)
    fake = torch.randn(rows - rows // 2, dim, generator=g) * 1.1 + 0.05
    return real, fake


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            if isinstance(t, torch.Tensor):
                total += t.numel() * t.element_size()
    return total


def run(library: str, real: torch.Tensor, fake: torch.Tensor) -> Tuple[float, float, int, float]:
    # torchmetrics.image exports FID only with torch-fidelity installed; its module has it always
    module = "torchtally.image" if library == "torchtally" else "torchmetrics.image.fid"
    cls = importlib.import_module(module).FrechetInceptionDistance
    metric = cls(feature=Identity(real.shape[1]))
    start = time.perf_counter()
    for rows, is_real in ((real, True), (fake, False)):
        for i in range(0, rows.shape[0], BATCH):
            metric.update(rows[i : i + BATCH], real=is_real)
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    value = float(metric.compute())
    return update_s, time.perf_counter() - start, state_bytes(metric), value


def sync_rank(rank: int, world_size: int, rows: int, dim: int, repeats: int) -> Dict[str, Any]:
    """Each library's FID on this rank's share of the rows: the collectives one ``sync()`` makes
    (by name), the seconds of ``repeats`` syncs (each undone by ``unsync()``), and, for
    torchtally, the value ``compute()`` gives after its sync."""
    from torchtally.testing import count_collectives

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    real, fake = features(rows, dim)
    out: Dict[str, Any] = {}
    for library in ("torchtally", "torchmetrics"):
        module = "torchtally.image" if library == "torchtally" else "torchmetrics.image.fid"
        metric = importlib.import_module(module).FrechetInceptionDistance(feature=Identity(dim))
        metric.update(real[rank::world_size], real=True)
        metric.update(fake[rank::world_size], real=False)
        with count_collectives() as counter:
            metric.sync()
        metric.unsync()
        times = []
        for _ in range(repeats):
            torch.distributed.barrier()
            start = time.perf_counter()
            metric.sync()
            times.append(time.perf_counter() - start)
            metric.unsync()
        out[library] = {"by_name": dict(counter.by_name), "times": times}
        if library == "torchtally":
            out[library]["value"] = float(metric.compute())
    return out


def sync_rows(world_size: int, per_rank: List[Dict[str, Any]], one_process: float) -> List[Tuple[Any, ...]]:
    rows = []
    ours = slowest_rank_median([r["torchtally"]["times"] for r in per_rank])
    for library in ("torchtally", "torchmetrics"):
        seconds = slowest_rank_median([r[library]["times"] for r in per_rank])
        calls = per_rank[0][library]["by_name"]
        described = ", ".join(f"{n} x {name}" for name, n in sorted(calls.items()))
        rows.append((world_size, library, described, f"{seconds * 1e3:,.1f}", f"{seconds / ours:.1f}x"))
    spread = max(abs(r["torchtally"]["value"] - one_process) / abs(one_process) for r in per_rank)
    rows[0] = rows[0] + (f"{spread:.1e}",)
    rows[1] = rows[1] + ("",)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 rows of D = 512; do not write RESULTS.md")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--dim", type=int, default=None)
    args = parser.parse_args()
    from torchtally.testing import run_distributed

    warnings.filterwarnings("ignore")
    rows = args.rows or (5_000 if args.quick else ROWS)
    dim = args.dim or (512 if args.quick else DIM)
    real, fake = features(rows, dim)
    runs = {lib: run(lib, real, fake) for lib in ("torchtally", "torchmetrics")}
    ours, theirs = runs["torchtally"], runs["torchmetrics"]
    if abs(ours[3] - theirs[3]) > 1e-5 * abs(theirs[3]):
        print(f"bench_image_fid: FID differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
        return 1
    table = markdown_table(
        ["metric", "library", "update s (all batches)", "compute s", "state bytes", "FID"],
        [
            ("FrechetInceptionDistance", lib, f"{u:,.3f}", f"{c:,.3f}", f"{b:,}", f"{v:.6f}")
            for lib, (u, c, b, v) in runs.items()
        ],
    )
    sync_table_rows: List[Tuple[Any, ...]] = []
    one_all_reduce = True
    for world_size in WORLD_SIZES:
        per_rank = run_distributed(sync_rank, world_size, rows, dim, 1 if args.quick else 5, timeout=900)
        sync_table_rows += sync_rows(world_size, per_rank, ours[3])
        calls = per_rank[0]["torchtally"]["by_name"]
        # the header exchange (one small all_gather) plus the fixed state in one all_reduce
        one_all_reduce &= calls.get("all_reduce", 0) == 1 and sum(calls.values()) <= 2
    sync_table = markdown_table(
        [
            "world size",
            "library",
            "collectives per sync",
            "sync ms (slowest rank)",
            "vs torchtally",
            "FID vs 1 process",
        ],
        sync_table_rows,
    )
    verdict = "held" if one_all_reduce else "missed"
    body = (
        f"Machine: {machine_line()}.\n\n"
        f"{rows:,} feature rows of D = {dim} (half real, half fake) through an identity extractor, batches of "
        f"{BATCH}; both libraries' FID checked to agree (1e-5 relative).\n\n"
        + table
        + f"\n\nSync (gloo, one thread per rank, each rank holding 1/W of the rows; median of the slowest rank "
        f"over {1 if args.quick else 5} syncs; FID vs 1 process: the largest relative difference of a rank's "
        f"value from one process over all rows):\n\n"
        + sync_table
        + f"\n\nTarget: FID's sync in one all_reduce of its fixed state: **{verdict}**."
        + "\n\nGenerated by `benchmarks/bench_image_fid.py`."
    )
    print(body)
    if not args.quick and args.rows is None and args.dim is None:
        replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
