"""Image benchmark: StructuralSimilarityIndexMeasure.update against torchmetrics', one torch
thread (the C kernel is single-threaded), side by side in one run.

Data: one batch of [32, 3, 256, 256] float32 images in [0, 1] and a noisy copy as the target,
data_range=1.0, the default 11 x 11 Gaussian window (sigma 1.5). Measured: the median seconds of
one ``update`` for torchmetrics, for torchtally through the C kernel (csrc/kernels/ssim_moments.c)
and through the torch reference of the same moments (float64 convolutions), and the ratios.
Both libraries' results are checked to agree (1e-5 relative) before anything is timed.
``--results`` writes the "Image: SSIM" section of benchmarks/RESULTS.md.

Run: `.venv/bin/python benchmarks/bench_image_ssim.py [--quick] [--results]`.
"""

import argparse
import sys
from pathlib import Path

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, markdown_table, replace_section, time_call  # noqa: E402

SHAPE = (32, 3, 256, 256)
SECTION = "Image: SSIM"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one timed repeat instead of five")
    parser.add_argument("--results", action="store_true", help="write the section of RESULTS.md")
    args = parser.parse_args()
    torch.set_num_threads(1)
    import torchmetrics.image as tm

    from torchtally import kernels
    from torchtally.image import StructuralSimilarityIndexMeasure

    g = torch.Generator().manual_seed(0)
    preds = torch.rand(SHAPE, generator=g)
    target = (preds + 0.1 * torch.randn(SHAPE, generator=g)).clamp(0, 1)
    ours, theirs = StructuralSimilarityIndexMeasure(data_range=1.0), tm.StructuralSimilarityIndexMeasure(data_range=1.0)
    ours.update(preds, target)
    theirs.update(preds, target)
    torch.testing.assert_close(ours.compute().double(), theirs.compute().double(), rtol=1e-5, atol=1e-6)

    repeats = 1 if args.quick else 5
    seconds = {"torchmetrics": time_call(lambda: theirs.update(preds, target), min_seconds=0.0, repeats=repeats)}
    routes = ["c", "reference"] if kernels.has_c() else ["reference"]
    for route in routes:
        previous = kernels.set_backend(route)
        try:
            seconds[f"torchtally ({route})"] = time_call(
                lambda: ours.update(preds, target), min_seconds=0.0, repeats=repeats
            )
        finally:
            kernels.set_backend(previous)
    base = seconds["torchmetrics"]
    rows = [(name, f"{s * 1e3:.0f} ms", f"{base / s:.2f}x") for name, s in seconds.items()]
    table = markdown_table(("update of [32, 3, 256, 256] float32", "median", "speed-up"), rows)
    print(machine_line())
    print(table)
    if args.results:
        replace_section(SECTION, f"{machine_line()}\n\n{table}\n")


if __name__ == "__main__":
    main()
