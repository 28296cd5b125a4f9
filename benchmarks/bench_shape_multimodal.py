"""Shape and multimodal benchmark: ProcrustesDisparity, LipVertexError, CLIPScore and
CLIPImageQualityAssessment against torchmetrics, side by side in one run, one torch thread.

Data: ProcrustesDisparity, 50 batches of 64 pairs of point clouds [64, 100, 3] (float32);
LipVertexError, 50 batches of 60 frames of a 5,023-vertex mesh (FLAME's size) with a 254-vertex
mouth map; CLIPScore and CLIP-IQA, 20 batches of 8 images [3, 32, 36] (with 8 captions), through
the tests' tiny random CLIP (support.tiny_clip: one layer per tower, 30 x 30 inputs), given to
torchmetrics as the same model in its callable form. Measured:
  update   every batch, once;
  compute  ``compute()`` once (torchmetrics' LipVertexError does its work there: its update only
           keeps the meshes);
  state    the bytes the state tensors hold after the updates (torchmetrics' list states
           counted element by element);
  sync     at world size 2 (gloo), the collectives one torchtally ``compute()`` makes, each
           rank on its share of the batches.
Both libraries' results are checked to agree (1e-4 relative) before the table is written.
Results go to the "Shape and multimodal" section of benchmarks/RESULTS.md.

Run: `make bench` or `.venv/bin/python benchmarks/bench_shape_multimodal.py [--quick]`.
Every time is the median of five epochs, the libraries' interleaved (a fresh metric each); the
section ends with the metrics whose epoch (update + compute) torchmetrics ran faster, if any.
"""

import argparse
import functools
import importlib
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # support.tiny_clip: the tests' tiny local CLIP
from _common import epoch_note, machine_line, markdown_table, median_epochs, replace_section  # noqa: E402

SECTION = "Shape and multimodal"
MOUTH = list(range(3000, 3254))


def procrustes_batches(n: int) -> List[Tuple]:
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(64, 100, 3, generator=g), torch.randn(64, 100, 3, generator=g)) for _ in range(n)]


def lve_batches(n: int) -> List[Tuple]:
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(60, 5023, 3, generator=g), torch.randn(60, 5023, 3, generator=g)) for _ in range(n)]


def clip_batches(n: int) -> List[Tuple]:
    from support.tiny_clip import CAPTIONS, images

    return [(images(i, 8), CAPTIONS) for i in range(n)]


def iqa_batches(n: int) -> List[Tuple]:
    from support.tiny_clip import images

    return [(images(100 + i, 8),) for i in range(n)]


def makers(model_dir: str) -> Dict[str, Tuple[Callable[[str], Any], Callable[[int], List[Tuple]]]]:
    from support.tiny_clip import tm_pair

    def model_arg(library: str) -> Any:
        return model_dir if library == "torchtally" else tm_pair(model_dir)

    def cls(library: str, family: str, name: str) -> Any:
        return getattr(importlib.import_module(f"{library}.{family}"), name)

    return {
        "ProcrustesDisparity": (lambda lib: cls(lib, "shape", "ProcrustesDisparity")(), procrustes_batches),
        "LipVertexError": (lambda lib: cls(lib, "multimodal", "LipVertexError")(mouth_map=MOUTH), lve_batches),
        "CLIPScore": (lambda lib: cls(lib, "multimodal", "CLIPScore")(model_arg(lib)), clip_batches),
        "CLIPImageQualityAssessment": (
            lambda lib: cls(lib, "multimodal", "CLIPImageQualityAssessment")(
                model_arg(lib), data_range=255.0, prompts=("quality", "brightness")
            ),
            iqa_batches,
        ),
    }


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            if isinstance(t, torch.Tensor):
                total += t.numel() * t.element_size()
    return total


def flat(value: Any) -> torch.Tensor:
    if isinstance(value, dict):
        return torch.cat([flat(v).reshape(-1) for v in value.values()])
    return value.detach().double().reshape(-1)


def run_once(make: Callable[[], Any], batches: List[Tuple]) -> Tuple[float, float, int, torch.Tensor]:
    metric = make()
    start = time.perf_counter()
    for batch in batches:
        metric.update(*batch)
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    value = flat(metric.compute())
    return update_s, time.perf_counter() - start, state_bytes(metric), value


def sync_rank(rank: int, world_size: int, model_dir: str, n: int) -> Dict[str, int]:
    from torchtally.testing import count_collectives

    warnings.filterwarnings("ignore")
    out = {}
    for name, (make, data) in makers(model_dir).items():
        metric = make("torchtally")
        for batch in data(n)[rank::world_size]:
            metric.update(*batch)
        with count_collectives() as counter:
            metric.compute()
        out[name] = counter.total
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 batches each; do not write RESULTS.md")
    args = parser.parse_args()
    from support.tiny_clip import save_tiny_clip

    from torchtally.testing import run_distributed

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    n = 4 if args.quick else 50
    model_dir = save_tiny_clip(tempfile.mkdtemp(prefix="tiny_clip_"))
    rows, ratios, epoch = [], {}, {}
    for name, (make, data) in makers(model_dir).items():
        batches = data(n if not name.startswith("CLIP") else min(n, 20))
        runs = median_epochs(
            {
                lib: functools.partial(run_once, functools.partial(make, lib), batches)
                for lib in ("torchtally", "torchmetrics")
            }
        )
        ours, theirs = runs["torchtally"], runs["torchmetrics"]
        if not torch.allclose(ours[3], theirs[3], rtol=1e-4, atol=1e-5):
            print(f"bench_shape_multimodal: {name} differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
            return 1
        ratios[name] = theirs[0] / ours[0]
        epoch[name] = (theirs[0] + theirs[1]) / (ours[0] + ours[1])
        for library, (update_s, compute_s, size, _) in runs.items():
            mine = library == "torchtally"
            rows.append(
                (
                    name,
                    library,
                    f"{update_s:,.3f}",
                    "1.0x" if mine else f"**{update_s / ours[0]:,.2f}x**",
                    f"{compute_s * 1e3:,.2f}",
                    "1.0x" if mine else f"**{(update_s + compute_s) / (ours[0] + ours[1]):,.2f}x**",
                    f"{size:,}",
                )
            )
        print(name, {k: v[:3] for k, v in runs.items()}, flush=True)
    table = markdown_table(
        [
            "metric",
            "library",
            "update s (all batches)",
            "update vs torchtally",
            "compute ms",
            "update + compute vs torchtally",
            "state bytes",
        ],
        rows,
    )
    print(table)
    if args.quick:
        return 0
    per_rank = run_distributed(sync_rank, 2, model_dir, 8, timeout=600)
    sync = {name: max(r[name] for r in per_rank) for name in ratios}
    body = (
        f"Machine: {machine_line()}.\n\n"
        "ProcrustesDisparity: 50 batches [64, 100, 3]; LipVertexError: 50 batches of 60 frames of 5,023 vertices "
        "(254 mouth vertices); CLIPScore (image-text) and CLIP-IQA (2 prompts): 20 batches of 8 images through a "
        "tiny random CLIP (the model dominates both libraries' update time).\n\n"
        "Sync at world size 2, collectives of one torchtally compute(): "
        + ", ".join(f"{name} {count}" for name, count in sync.items())
        + ".\n\n"
        + table
        + "\n\n"
        + epoch_note(epoch)
        + "\n\nGenerated by `benchmarks/bench_shape_multimodal.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
