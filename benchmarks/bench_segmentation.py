"""Segmentation benchmark: MeanIoU and DiceScore update time against torchmetrics, side by side in
one process, one torch thread, on a Pascal-VOC-sized batch: N = 16 images of 512 x 512 pixels,
C = 21 classes, given as

  index    class maps [16, 512, 512] int64 (``input_format="index"``: torchmetrics one-hot
           encodes them into int64 [16, 21, 512, 512] tensors, 704 MB each), and
  one-hot  bool masks [16, 21, 512, 512] (88 MB each).

Each row checks that both libraries give the same result on the batch, then times
``metric.update(preds, target)`` (median of repeats). torchtally counts per-sample, per-class
intersections and pixel sums with its confusion-matrix kernels; torchmetrics with tensor ops.
Results go to the "Segmentation update" section of benchmarks/RESULTS.md.

Run: `.venv/bin/python benchmarks/bench_segmentation.py [--quick]` (--quick: 2 images).
"""

import argparse
import importlib
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import fmt_us, machine_line, markdown_table, replace_section, time_call  # noqa: E402

C = 21
SIDE = 512
SECTION = "Segmentation update"


def batch(n: int, fmt: str) -> tuple:
    g = torch.Generator().manual_seed(0)
    preds = torch.randint(0, C, (n, SIDE, SIDE), generator=g)
    target = torch.randint(0, C, (n, SIDE, SIDE), generator=g)
    if fmt == "index":
        return preds, target
    classes = torch.arange(C).view(1, C, 1, 1)
    return preds.unsqueeze(1) == classes, target.unsqueeze(1) == classes


def make(lib: str, name: str, fmt: str) -> object:
    cls = getattr(importlib.import_module(f"{lib}.segmentation"), name)
    return cls(num_classes=C, input_format=fmt)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    n = 2 if parser.parse_args().quick else 16
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    rows = []
    for fmt in ("index", "one-hot"):
        args = batch(n, fmt)
        for name in ("MeanIoU", "DiceScore"):
            ours, theirs = make("torchtally", name, fmt), make("torchmetrics", name, fmt)
            ours.update(*args)
            theirs.update(*args)
            a, b = ours.compute(), theirs.compute()
            assert torch.allclose(a, b, atol=1e-5, equal_nan=True), (name, fmt, a, b)
            t_ours = time_call(lambda: ours.update(*args), min_seconds=0.5, repeats=3)
            t_theirs = time_call(lambda: theirs.update(*args), min_seconds=0.5, repeats=3)
            rows.append((name, fmt, fmt_us(t_ours), fmt_us(t_theirs), f"{t_theirs / t_ours:.1f}x"))
            print(rows[-1], flush=True)
    table = markdown_table(("metric", "input", "torchtally update (us)", "torchmetrics update (us)", "speed-up"), rows)
    body = "\n".join(
        [
            f"Update of one batch of {n} images, {SIDE} x {SIDE} pixels, {C} classes, one torch thread "
            "(benchmarks/bench_segmentation.py).",
            "",
            machine_line(),
            "",
            table,
        ]
    )
    replace_section(SECTION, body)


if __name__ == "__main__":
    main()
