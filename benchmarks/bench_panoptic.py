"""Panoptic quality benchmark: one update of PanopticQuality on B images of H x W points, in
torchtally (the C kernel, and its torch reference, the path of other devices) and torchmetrics,
side by side in one process, one torch thread; the results are checked to agree first.

Maps: a stuff background (two halves) with thing boxes, int64 (category, instance) pairs; the
prediction is the target with its boxes shifted and a few relabelled ("smooth"), and the same
with 5% of the points given a random category ("noisy": short runs of equal points, the kernel's
worst case). torchmetrics' update is timed once (seconds a call); torchtally's is the median of
repeats. Results go to the "Panoptic quality" section of benchmarks/RESULTS.md.

Run: `make bench` (all benchmarks) or `.venv/bin/python benchmarks/bench_panoptic.py [--quick]`.
"""

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine_line, markdown_table, replace_section, time_call  # noqa: E402

THINGS, STUFFS = (1, 2, 3, 4), (10, 11)
SECTION = "Panoptic quality"


def maps(batch: int, size: int, noisy: bool, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    target = torch.zeros(batch, size, size, 2, dtype=torch.int64)
    preds = torch.zeros_like(target)
    for b in range(batch):
        target[b, :, :, 0] = STUFFS[0]
        target[b, size // 2 :, :, 0] = STUFFS[1]
        preds[b] = target[b]
        for i in range(40):
            y, x, h, w = (int(v) for v in torch.randint(0, size - size // 8, (4,), generator=g))
            h, w = 1 + h % (size // 8), 1 + w % (size // 8)
            cat = THINGS[i % len(THINGS)]
            target[b, y : y + h, x : x + w] = torch.tensor([cat, i])
            dy, dx = (int(v) for v in torch.randint(-3, 4, (2,), generator=g))
            pcat = THINGS[(i + 1) % len(THINGS)] if i % 7 == 0 else cat
            preds[b, max(0, y + dy) : y + dy + h, max(0, x + dx) : x + dx + w] = torch.tensor([pcat, i])
    if noisy:
        flip = torch.rand(preds.shape[:-1], generator=g) < 0.05
        every = torch.tensor(THINGS + STUFFS)
        preds[..., 0] = torch.where(flip, every[torch.randint(0, len(every), flip.shape, generator=g)], preds[..., 0])
    return preds, target


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 images of 256 x 256, no RESULTS.md")
    args = parser.parse_args()
    torch.set_num_threads(1)
    import torchmetrics.detection as tm

    import torchtally.detection as tt
    from torchtally import kernels

    batch, size = (2, 256) if args.quick else (8, 512)
    rows = []
    for name in ("smooth", "noisy"):
        preds, target = maps(batch, size, name == "noisy")
        ours, theirs = tt.PanopticQuality(THINGS, STUFFS), tm.PanopticQuality(THINGS, STUFFS)
        start = time.perf_counter()
        theirs.update(preds, target)
        tm_s = time.perf_counter() - start
        ours.update(preds, target)
        torch.testing.assert_close(ours.compute(), theirs.compute(), rtol=1e-6, atol=1e-6)
        c_s = time_call(lambda: ours.update(preds, target), min_seconds=0.5, repeats=3)
        previous = kernels.set_backend("reference")
        try:
            ref_s = time_call(lambda: ours.update(preds, target), min_seconds=0.5, repeats=3)
        finally:
            kernels.set_backend(previous)
        rows.append((name, f"{c_s * 1e3:,.1f}", f"{ref_s * 1e3:,.1f}", f"{tm_s * 1e3:,.0f}", f"{tm_s / c_s:,.0f}x"))
    header = ("maps", "torchtally C (ms)", "torchtally torch reference (ms)", "torchmetrics (ms)", "C vs torchmetrics")
    table = markdown_table(header, rows)
    print(table)
    if not args.quick:
        body = (
            f"One `PanopticQuality.update` on {batch} images of {size} x {size} points (int64 maps; "
            f"benchmarks/bench_panoptic.py), one torch thread; {machine_line()}.\n\n{table}\n\n"
            "The torch reference is what CUDA and other devices run. The machine is shared with other "
            "jobs: the ratios are the result."
        )
        replace_section(SECTION, body)


if __name__ == "__main__":
    main()
