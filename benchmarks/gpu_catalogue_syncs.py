"""Which classes of the catalogue still synchronise with the host per update on the GPU.

For every metric class of the catalogue (tests/support/metric_catalogue.py: classification,
regression, aggregation, segmentation, retrieval, panoptic, the pixel-wise image metrics), one
update on CUDA tensors after a warm-up update, under torch's own sync detector
(``torch.cuda.set_sync_debug_mode("warn")``: one warning per host synchronisation, naming the
call). Reported: per class the number of synchronisations of that update and the first one's
call, or the error the update raised; the classes with 0 first. benchmarks/gpu_check.sh runs it
on a lent GPU, so the first device answers in one call which updates still wait for the host.

    python benchmarks/gpu_catalogue_syncs.py --out benchmarks/_out/gpu_syncs.md [--device cpu]

``--device cpu`` runs the same loop on the CPU without the detector (the CPU never
synchronises): what the tests run to keep this script working where no GPU is lent.
"""

import argparse
import sys
import warnings
from pathlib import Path
from typing import Callable, List, Tuple

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402
from support.metric_catalogue import METRICS  # noqa: E402


def syncs_of(update: Callable[[], object], detect: bool) -> Tuple[int, str]:
    """(host synchronisations while ``update`` runs, the first one's message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if detect:
            previous = torch.cuda.get_sync_debug_mode()
            torch.cuda.set_sync_debug_mode("warn")
        try:
            update()
        finally:
            if detect:
                torch.cuda.set_sync_debug_mode(previous)
    found = [str(w.message) for w in caught if "synchroniz" in str(w.message)]
    return len(found), (found[0].splitlines()[0][:120] if found else "")


def rows_for(device: torch.device) -> List[List[str]]:
    detect = device.type == "cuda"
    rows = []
    for entry in METRICS:
        g = torch.Generator().manual_seed(0)
        try:
            metric = entry.metric().to(device)
            batches = [tuple(a.to(device) for a in entry.batch(64, generator=g)) for _ in range(2)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                metric.update(*batches[0])  # warm-up: kernels loaded, states placed
            if detect:
                torch.cuda.synchronize()
            count, first = syncs_of(lambda: metric.update(*batches[1]), detect)
            rows.append([entry.name, str(count), first or "-"])
        except Exception as exc:  # reported, not fatal: the table is the finding
            rows.append([entry.name, "error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"])
    rows.sort(key=lambda r: (r[1] != "0", r[1] == "error", r[0]))
    return rows


def report(device: torch.device) -> str:
    rows = rows_for(device)
    free = sum(r[1] == "0" for r in rows)
    errors = sum(r[1] == "error" for r in rows)
    detector = "torch.cuda.set_sync_debug_mode('warn')" if device.type == "cuda" else "none (CPU)"
    return "\n".join(
        [
            f"Device: {device}; detector: {detector}. {len(rows)} classes: **{free} update without a host "
            f"synchronisation**, {len(rows) - free - errors} synchronise, {errors} raised.",
            "",
            markdown_table(["class", "host synchronisations per update", "first one (or the error)"], rows),
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="markdown file for the table")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    args = parser.parse_args()
    body = report(torch.device(args.device))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(body + "\n")
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
