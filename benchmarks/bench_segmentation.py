"""Segmentation benchmark: MeanIoU and DiceScore update time against torchmetrics, side by side in
one process, one torch thread, on a Pascal-VOC-sized batch: N = 16 images of 512 x 512 pixels,
C = 21 classes, given as

  index    class maps [16, 512, 512] int64 (``input_format="index"``: torchmetrics one-hot
           encodes them into int64 [16, 21, 512, 512] tensors, 704 MB each), and
  one-hot  bool masks [16, 21, 512, 512] (88 MB each).

Each row checks that both libraries give the same result on the batch, then times
``metric.update(preds, target)`` (median of repeats). torchtally counts per-sample, per-class
intersections and pixel sums with its kernels (index maps: a confusion matrix per image; one-hot
masks: the mask-counts kernel, one pass over both masks); torchmetrics with tensor ops.

A second table times an epoch of small batches, where per-call overhead counts: 50 updates of
[4, 5, 128, 128] (4 images, 5 classes) and a compute, as index maps, one-hot bool masks and float
scores (one-hot, argmax per pixel), median of 3 epochs.

A last row times HausdorffDistance on N = 4 one-hot bool masks [4, 3, 128, 128] of blocky
shapes (8 x 8 random class maps, upsampled): torchtally's surface-distance kernel (separable
exact distance transforms, every pair in one call) against torchmetrics' distance transform
(timed on one call: it takes seconds).
Results go to the "Segmentation update" section of benchmarks/RESULTS.md.

Run: `.venv/bin/python benchmarks/bench_segmentation.py [--quick]` (--quick: 2 images).
"""

import argparse
import importlib
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import fmt_us, machine_line, markdown_table, replace_section, time_call  # noqa: E402

C = 21
SIDE = 512
HAUSDORFF = (4, 3, 128)  # images, classes, side (torchmetrics: about a minute a call at 256)
SECTION = "Segmentation update"
EPOCH = (50, 4, 5, 128)  # updates, images, classes, side


def batch(n: int, fmt: str) -> tuple:
    g = torch.Generator().manual_seed(0)
    preds = torch.randint(0, C, (n, SIDE, SIDE), generator=g)
    target = torch.randint(0, C, (n, SIDE, SIDE), generator=g)
    if fmt == "index":
        return preds, target
    classes = torch.arange(C).view(1, C, 1, 1)
    return preds.unsqueeze(1) == classes, target.unsqueeze(1) == classes


def make(lib: str, name: str, fmt: str, classes: int = C) -> object:
    cls = getattr(importlib.import_module(f"{lib}.segmentation"), name)
    return cls(num_classes=classes, input_format="one-hot" if fmt == "scores" else fmt)


def epoch_batches(steps: int, n: int, c: int, side: int, fmt: str) -> list:
    g = torch.Generator().manual_seed(2)
    out = []
    for _ in range(steps):
        preds = torch.randint(0, c, (n, side, side), generator=g)
        target = torch.randint(0, c, (n, side, side), generator=g)
        hot = target.unsqueeze(1) == torch.arange(c).view(1, c, 1, 1)
        if fmt == "index":
            out.append((preds, target))
        elif fmt == "one-hot":
            out.append((preds.unsqueeze(1) == torch.arange(c).view(1, c, 1, 1), hot))
        else:
            out.append((torch.rand(n, c, side, side, generator=g), hot))
    return out


def epoch_rows() -> list:
    steps, n, c, side = EPOCH
    rows = []
    for fmt in ("index", "one-hot", "scores"):
        batches = epoch_batches(steps, n, c, side, fmt)
        for name in ("MeanIoU", "DiceScore"):
            times, values = [], []
            for lib in ("torchtally", "torchmetrics"):
                metric = make(lib, name, fmt, c)

                def epoch() -> object:
                    metric.reset()
                    for b in batches:
                        metric.update(*b)
                    return metric.compute()

                values.append(epoch())
                times.append(time_call(epoch, min_seconds=0.2, repeats=3))
            assert torch.allclose(values[0], values[1], atol=1e-5, equal_nan=True), (name, fmt, values)
            rows.append((name, fmt, f"{times[0] * 1e3:.1f}", f"{times[1] * 1e3:.1f}", f"{times[1] / times[0]:.2f}x"))
            print(rows[-1], flush=True)
    return rows


def hausdorff_row(n: int) -> tuple:
    _, c, side = HAUSDORFF
    g = torch.Generator().manual_seed(1)

    def blocky() -> torch.Tensor:
        low = torch.randint(0, c, (n, 1, 8, 8), generator=g).float()
        labels = torch.nn.functional.interpolate(low, size=(side, side), mode="nearest").squeeze(1).long()
        return labels.unsqueeze(1) == torch.arange(c).view(1, c, 1, 1)

    args = (blocky(), blocky())
    ours, theirs = (
        importlib.import_module(f"{lib}.segmentation").HausdorffDistance(num_classes=c)
        for lib in ("torchtally", "torchmetrics")
    )
    t_ours = time_call(lambda: ours.update(*args), min_seconds=0.5, repeats=3)
    start = time.perf_counter()
    theirs.update(*args)
    t_theirs = time.perf_counter() - start
    ours.reset()
    ours.update(*args)
    a, b = ours.compute(), theirs.compute()
    assert torch.allclose(a, b, rtol=1e-5, equal_nan=True), ("HausdorffDistance", a, b)
    shape = f"one-hot [{n}, {c}, {side}, {side}]"
    return ("HausdorffDistance", shape, fmt_us(t_ours), fmt_us(t_theirs), f"{t_theirs / t_ours:.1f}x")


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
    rows.append(hausdorff_row(1 if n == 2 else HAUSDORFF[0]))
    print(rows[-1], flush=True)
    table = markdown_table(("metric", "input", "torchtally update (us)", "torchmetrics update (us)", "speed-up"), rows)
    epoch_table = markdown_table(
        ("metric", "input", "torchtally epoch (ms)", "torchmetrics epoch (ms)", "speed-up"), epoch_rows()
    )
    steps, n_small, c_small, side = EPOCH
    body = "\n".join(
        [
            f"Update of one batch of {n} images, {SIDE} x {SIDE} pixels, {C} classes, one torch thread "
            "(benchmarks/bench_segmentation.py).",
            "",
            machine_line(),
            "",
            "The machine is shared with other jobs: compare the ratios of one run, not times across runs.",
            "",
            table,
            "",
            f"One epoch: {steps} updates of [{n_small}, {c_small}, {side}, {side}] ({n_small} images, "
            f"{c_small} classes) and a compute, median of 3.",
            "",
            epoch_table,
        ]
    )
    replace_section(SECTION, body)


if __name__ == "__main__":
    main()
