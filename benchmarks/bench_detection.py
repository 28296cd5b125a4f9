"""Detection benchmark: MeanAveragePrecision against torchmetrics' (its pycocotools and
faster_coco_eval backends), side by side in one run.

Data: 5,000 synthetic images, 80 classes, 0-20 ground truths (2% crowd, small to large) and
0-100 detections each (jittered copies of the ground truths, scored higher, and random boxes;
scores rounded to 1e-3, so there are ties). Both libraries get the same batches of 16 images. Measured:
  update   every batch, once, in one process;
  compute  ``compute()`` once on that state (the COCO evaluation for torchmetrics);
  state    the bytes the metric's state tensors hold after the updates (torchmetrics: its lists
           of boxes, scores, labels, crowd flags and areas; torchtally: its rows), and the peak
           memory compute takes above that (the process's peak resident set, reset before);
  sync     at world size 2 and 4 (gloo, one torch thread per process), the images split across
           the ranks: torchtally's ``compute()`` (the sync and the evaluation) and the collectives
           it makes, against torchmetrics' ``sync()`` alone (its collectives grow with the images,
           so it is measured on SYNC_IMAGES images only).
The results are checked to agree (every value of the result dict within 1e-6 of torchmetrics with
pycocotools) before anything is timed. Results go to the "Detection: mean average precision"
section of benchmarks/RESULTS.md.

torchmetrics' MeanAveragePrecision needs torchvision, which lives in the second environment
(.venv-avalanche); run from the main one, this script re-runs itself there.

Run: `make bench` or `.venv-avalanche/bin/python benchmarks/bench_detection.py [--quick]`.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, markdown_table, replace_section  # noqa: E402

N_IMAGES = 5000
CLASSES = 80
BATCH = 16
SYNC_IMAGES = 200
WORLD_SIZES = (2, 4)
SECTION = "Detection: mean average precision"
Image = Tuple[Dict[str, torch.Tensor], Dict[str, torch.Tensor]]


def synthetic_images(n_images: int, seed: int = 0) -> List[Image]:
    """(prediction, target) dicts of ``n_images`` images of 640 x 480 pixels."""
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(n_images):
        n_gt = int(rng.integers(0, 21))
        side = np.exp(rng.uniform(np.log(8), np.log(300), size=(n_gt, 2)))  # small to large
        centre = rng.uniform((0, 0), (640, 480), size=(n_gt, 2))
        gt = np.concatenate([centre - side / 2, centre + side / 2], axis=1)
        gt_labels = rng.integers(0, CLASSES, size=n_gt)
        found = rng.random(n_gt) < 0.7  # found objects, slightly off, 90% with the right label
        sides = np.tile(gt[found, 2:] - gt[found, :2], 2)
        copies = gt[found] + rng.normal(0, 0.05, size=sides.shape) * sides
        copy_labels = np.where(rng.random(len(copies)) < 0.9, gt_labels[found], rng.integers(0, CLASSES))
        n_random = int(rng.integers(0, 101 - len(copies)))
        side = np.exp(rng.uniform(np.log(8), np.log(300), size=(n_random, 2)))
        centre = rng.uniform((0, 0), (640, 480), size=(n_random, 2))
        boxes = np.concatenate([copies, np.concatenate([centre - side / 2, centre + side / 2], axis=1)])
        boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2] + 1)
        labels = np.concatenate([copy_labels, rng.integers(0, CLASSES, size=n_random)])
        scores = np.round(np.concatenate([rng.uniform(0.3, 1, len(copies)), rng.uniform(0, 0.7, n_random)]), 3)
        pred = {
            "boxes": torch.tensor(boxes, dtype=torch.float32),
            "scores": torch.tensor(scores, dtype=torch.float32),
            "labels": torch.tensor(labels, dtype=torch.int64),
        }
        target = {
            "boxes": torch.tensor(gt, dtype=torch.float32),
            "labels": torch.tensor(gt_labels, dtype=torch.int64),
            "iscrowd": torch.tensor(rng.random(n_gt) < 0.02, dtype=torch.int64),
        }
        images.append((pred, target))
    return images


def make(library: str, backend: str = "pycocotools") -> Any:
    module = importlib.import_module(f"{library}.detection")
    return module.MeanAveragePrecision(backend=backend)


def update_all(metric: Any, images: List[Image]) -> float:
    start = time.perf_counter()
    for i in range(0, len(images), BATCH):
        chunk = images[i : i + BATCH]
        metric.update([p for p, _ in chunk], [t for _, t in chunk])
    return time.perf_counter() - start


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            total += t.numel() * t.element_size()
    return total


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def timed_compute(metric: Any) -> Tuple[float, int, Dict[str, torch.Tensor]]:
    """Seconds of one compute, the peak memory it took above what the process held before
    (Linux: the peak resident set is reset first), and its result."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM, the peak resident set size, to the current one
    before = _status_bytes("VmRSS")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = metric.compute()
    seconds = time.perf_counter() - start
    return seconds, _status_bytes("VmHWM") - before, result


def worst_difference(ours: Dict[str, torch.Tensor], theirs: Dict[str, torch.Tensor]) -> float:
    assert set(ours) == set(theirs), sorted(set(ours) ^ set(theirs))
    return max(float((ours[k].double() - theirs[k].double()).abs().max()) for k in theirs if theirs[k].numel())


def sync_rank(rank: int, world_size: int, n_images: int, sync_images: int) -> Dict[str, Any]:
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    out: Dict[str, Any] = {}
    for library, count in (("torchtally", n_images), ("torchmetrics", sync_images)):
        images = synthetic_images(count)[rank::world_size]
        metric = make(library)
        update_all(metric, images)
        torch.distributed.barrier()
        with count_collectives() as counter:
            start = time.perf_counter()
            if library == "torchtally":
                metric.compute()  # the sync and the evaluation
            else:
                metric.sync()  # torchmetrics' gather of its lists only
            seconds = time.perf_counter() - start
        out[library] = (seconds, counter.total)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 images, no sync; do not write RESULTS.md")
    args = parser.parse_args()
    if importlib.util.find_spec("torchvision") is None:
        second = HERE.parent / ".venv-avalanche" / "bin" / "python"
        if not second.exists():
            print("bench_detection: needs torchvision (make avalanche-venv)", file=sys.stderr)
            return 1
        return subprocess.call([str(second), __file__, *sys.argv[1:]])
    from torchtally.testing import run_distributed

    torch.set_num_threads(1)
    n_images = 500 if args.quick else N_IMAGES
    images = synthetic_images(n_images)
    n_dets = sum(len(p["scores"]) for p, _ in images)
    n_gts = sum(len(t["labels"]) for _, t in images)

    runs = {}
    for library, backend in (
        ("torchtally", "pycocotools"),
        ("torchmetrics", "pycocotools"),
        ("torchmetrics", "faster_coco_eval"),
    ):
        metric = make(library, backend)
        update_s = update_all(metric, images)
        compute_s, peak, result = timed_compute(metric)
        runs[(library, backend)] = (update_s, compute_s, state_bytes(metric), peak, result)
        print(f"{library} ({backend}): update {update_s:.2f} s, compute {compute_s:.2f} s", flush=True)

    ours = runs[("torchtally", "pycocotools")]
    reference = runs[("torchmetrics", "pycocotools")][4]
    difference = worst_difference(ours[4], reference)
    if difference > 1e-6:
        print(f"bench_detection: results differ from pycocotools' by {difference}", file=sys.stderr)
        return 1

    rows = []
    for (library, backend), (update_s, compute_s, size, peak, _) in runs.items():
        name = "torchtally" if library == "torchtally" else f"torchmetrics + {backend}"
        rows.append(
            [
                name,
                f"{update_s:,.2f}",
                f"{compute_s:,.3f}",
                f"**{compute_s / ours[1]:,.1f}x**" if library != "torchtally" else "1.0x",
                f"{size / 1e6:,.2f}",
                f"{size / ours[2]:,.1f}x" if library != "torchtally" else "1.0x",
                f"{peak / 1e6:,.1f}",
                f"{peak / max(ours[3], 1):,.1f}x" if library != "torchtally" else "1.0x",
            ]
        )
    table = markdown_table(
        [
            "library",
            "update s (all images)",
            "compute s",
            "compute vs torchtally",
            "state MB",
            "state vs torchtally",
            "compute peak MB",
            "peak vs torchtally",
        ],
        rows,
    )
    print(table)
    if args.quick:
        return 0

    sync_rows = []
    for ws in WORLD_SIZES:
        per_rank = run_distributed(sync_rank, ws, n_images, SYNC_IMAGES, timeout=3600)
        for library, count, what in (
            ("torchtally", n_images, "sync + compute"),
            ("torchmetrics", SYNC_IMAGES, "sync only"),
        ):
            seconds = max(r[library][0] for r in per_rank)
            collectives = "/".join(str(c) for c in sorted({r[library][1] for r in per_rank}))
            sync_rows.append([ws, library, f"{count:,}", what, f"{seconds * 1e3:,.1f}", collectives])
    sync_table = markdown_table(
        ["world size", "library", "images", "timed", "slowest rank ms", "collectives per rank"], sync_rows
    )
    print(sync_table)
    pyco, fast = runs[("torchmetrics", "pycocotools")], runs[("torchmetrics", "faster_coco_eval")]
    ours_collectives = max(int(c) for row in sync_rows if row[1] == "torchtally" for c in str(row[5]).split("/"))
    targets = (
        f"Targets: compute >= 20x torchmetrics with pycocotools: **{pyco[1] / ours[1]:,.1f}x**; faster than with "
        f"faster_coco_eval: **{fast[1] / ours[1]:,.1f}x**; state <= 1/10 of torchmetrics': "
        f"{'met' if pyco[2] >= 10 * ours[2] else 'missed'}, {pyco[2] / ours[2]:,.1f}x smaller by its tensors' bytes "
        "(a 16-byte row per detection, 8 per ground truth and 8 per image, against torchmetrics' boxes, scores and "
        f"labels: 28 bytes per detection, 40 per ground truth), {pyco[3] / max(ours[3], 1):,.1f}x by the peak memory "
        f"of compute; sync in <= 3 collectives: {ours_collectives} at every world size."
    )
    body = (
        f"Machine: {machine_line()}, {os.cpu_count()} CPU core(s), shared with other jobs.\n\n"
        f"{n_images:,} images, {CLASSES} classes, {n_dets:,} detections, {n_gts:,} ground truths, batches of "
        f"{BATCH}. Every value of torchtally's result within {difference:.1e} of torchmetrics with pycocotools "
        f"(checked before timing). State: torchtally {ours[2] / n_dets:.1f} bytes per detection, its rows of "
        "detections, ground truths and images together.\n\n"
        + targets
        + "\n\n"
        + table
        + "\n\nSync: the images split across W gloo processes (one thread each); at W = 4 two processes share "
        "a core.\n\n" + sync_table + "\n\nGenerated by `benchmarks/bench_detection.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
