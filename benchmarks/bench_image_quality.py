"""Image benchmark: the update of PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure and
MultiScaleStructuralSimilarityIndexMeasure against torchmetrics', one torch thread (the C kernel
is single-threaded), side by side in one run.

Data: float32 images in [0, 1] and a noisy copy as the target, data_range=1.0; PSNR and SSIM on
one batch of [32, 3, 256, 256], MS-SSIM on one batch of [8, 3, 512, 512]; the default 11 x 11
Gaussian window (sigma 1.5). Measured: the median seconds of one ``update`` for torchmetrics, for
torchtally through the C kernel of the windowed moments (csrc/kernels/ssim_moments.c) and through
its torch reference (float64 convolutions), and the ratios. Both libraries' results are checked
to agree (1e-5 relative) before anything is timed. Target: SSIM >= 3x torchmetrics per update.
Results go to the "Image: PSNR, SSIM, MS-SSIM" section of benchmarks/RESULTS.md (not with ``--quick``).

Run: `.venv/bin/python benchmarks/bench_image_quality.py [--quick]`.
"""

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, markdown_table, replace_section, time_call  # noqa: E402

SECTION = "Image: PSNR, SSIM, MS-SSIM"
SSIM_TARGET = 3.0


def images(shape: Tuple[int, ...]) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    preds = torch.rand(shape, generator=g)
    target = (preds + 0.1 * torch.randn(shape, generator=g)).clamp(0, 1)
    return preds, target


def compare(name: str, shape: Tuple[int, ...], repeats: int) -> Dict[str, Any]:
    """Median seconds per update of class ``name``: torchmetrics, then torchtally on each route."""
    import torchmetrics.image as tm

    import torchtally.image as tt
    from torchtally import kernels

    preds, target = images(shape)
    ours, theirs = getattr(tt, name)(data_range=1.0), getattr(tm, name)(data_range=1.0)
    ours.update(preds, target)
    theirs.update(preds, target)
    torch.testing.assert_close(ours.compute().double(), theirs.compute().double(), rtol=1e-5, atol=1e-6)
    seconds = {"torchmetrics": time_call(lambda: theirs.update(preds, target), min_seconds=0.0, repeats=repeats)}
    for route in ["c", "reference"] if kernels.has_c() else ["reference"]:
        previous = kernels.set_backend(route)
        try:
            seconds[f"torchtally ({route})"] = time_call(
                lambda: ours.update(preds, target), min_seconds=0.0, repeats=repeats
            )
        finally:
            kernels.set_backend(previous)
    return {"metric": name, "shape": list(shape), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one timed repeat; do not write RESULTS.md")
    args = parser.parse_args()
    torch.set_num_threads(1)
    repeats = 1 if args.quick else 5
    runs: List[Dict[str, Any]] = [
        compare(name, shape, repeats)
        for name, shape in (
            ("PeakSignalNoiseRatio", (32, 3, 256, 256)),
            ("StructuralSimilarityIndexMeasure", (32, 3, 256, 256)),
            ("MultiScaleStructuralSimilarityIndexMeasure", (8, 3, 512, 512)),
        )
    ]
    rows = []
    for run in runs:
        base = run["seconds"]["torchmetrics"]
        for library, s in run["seconds"].items():
            shape = "x".join(map(str, run["shape"]))
            rows.append((run["metric"], shape, library, f"{s * 1e3:.1f} ms", f"{base / s:.2f}x"))
    table = markdown_table(("metric", "float32 batch", "library", "median update", "vs torchmetrics"), rows)
    ssim = runs[1]["seconds"]
    ours = ssim.get("torchtally (c)", ssim["torchtally (reference)"])  # the route a user gets
    ratio = ssim["torchmetrics"] / ours
    verdict = "held" if ratio >= SSIM_TARGET else "missed"
    target = f"Target: SSIM update >= {SSIM_TARGET:g}x torchmetrics on CPU: **{ratio:.2f}x** ({verdict})."
    print(machine_line())
    print(table)
    print(target)
    if not args.quick:
        body = (
            "Update of one float32 batch, data_range=1.0, 11 x 11 Gaussian window, one torch thread "
            "(benchmarks/bench_image_quality.py); values checked to agree before timing.\n\n"
            f"{machine_line()}\n\n{table}\n\n{target}\n"
        )
        replace_section(SECTION, body)


if __name__ == "__main__":
    main()
