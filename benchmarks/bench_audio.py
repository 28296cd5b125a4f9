"""Audio signal metrics benchmark: torchtally against torchmetrics, side by side in one run, one
torch thread, on speech-sized float32 batches (16 kHz):

  update   the time of every ``update`` over BATCHES batches of 8 utterances of 1 s (PIT and
           SA-SDR: 8 mixtures of 2 or 3 speakers; C-SI-SNR: 8 spectrograms [257, 63, 2]),
           as a ratio torchmetrics / torchtally (torchtally computes every value in float64,
           through the signal_sums C kernel on CPU; torchmetrics in float32 except SDR);
  compute  one ``compute()`` (no process group);
  state    the bytes the state tensors hold (16 for every torchtally class: a float64 sum and
           an int64 count);
  sync     at world size 2 (gloo), the collectives one ``compute()`` makes.

Each row first checks that both libraries give the same mean (to 1e-4 relative).
Results go to the "Audio signal metrics" section of benchmarks/RESULTS.md.

Run: `.venv/bin/python benchmarks/bench_audio.py [--quick]` (--quick: 2 batches, no RESULTS.md).
"""

import argparse
import importlib
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import describe_collectives, machine_line, markdown_table, replace_section  # noqa: E402

SECTION = "Audio signal metrics"
RATE = 16_000
UTTERANCES = 8
BATCHES = 10

# name, class, options (callables named by their functional form, resolved per library), input kind
METRICS: List[Tuple[str, str, Dict[str, Any], str]] = [
    ("SNR", "SignalNoiseRatio", {}, "speech"),
    ("SI-SNR", "ScaleInvariantSignalNoiseRatio", {}, "speech"),
    ("SI-SDR", "ScaleInvariantSignalDistortionRatio", {}, "speech"),
    ("C-SI-SNR", "ComplexScaleInvariantSignalNoiseRatio", {}, "spectrogram"),
    ("SA-SDR (3 spk)", "SourceAggregatedSignalDistortionRatio", {}, "mixture3"),
    ("SDR (filter 512)", "SignalDistortionRatio", {}, "speech"),
    (
        "PIT SI-SDR (2 spk)",
        "PermutationInvariantTraining",
        {"fn": "scale_invariant_signal_distortion_ratio"},
        "mixture2",
    ),
    (
        "PIT SA-SDR permutation-wise (3 spk)",
        "PermutationInvariantTraining",
        {"fn": "source_aggregated_signal_distortion_ratio", "mode": "permutation-wise"},
        "mixture3",
    ),
]


def inputs(kind: str, seed: int) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    shape = {
        "speech": (UTTERANCES, RATE),
        "spectrogram": (UTTERANCES, 257, 63, 2),
        "mixture2": (UTTERANCES, 2, RATE),
        "mixture3": (UTTERANCES, 3, RATE),
    }[kind]
    target = torch.randn(shape, generator=g)
    return 0.8 * target + 0.3 * torch.randn(shape, generator=g), target


def make(library: str, cls: str, options: Dict[str, Any]) -> Any:
    options = dict(options)
    args = []
    if "fn" in options:
        args.append(getattr(importlib.import_module(f"{library}.functional.audio"), options.pop("fn")))
    return getattr(importlib.import_module(f"{library}.audio"), cls)(*args, **options)


def state_bytes(metric: Any) -> int:
    return sum(t.numel() * t.element_size() for t in metric.metric_state.values() if isinstance(t, torch.Tensor))


def run(library: str, cls: str, options: Dict[str, Any], data: List[Tuple[torch.Tensor, torch.Tensor]]) -> Tuple:
    make(library, cls, options).update(*data[0])  # warm-up: first-call costs (lazy imports, caches) not timed
    metric = make(library, cls, options)
    start = time.perf_counter()
    for preds, target in data:
        metric.update(preds, target)
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    value = float(metric.compute())
    return update_s, time.perf_counter() - start, state_bytes(metric), value


def sync_rank(rank: int, world_size: int) -> Dict[str, Dict[str, int]]:
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    out = {}
    for name, cls, options, kind in METRICS:
        metric = make("torchtally", cls, options)
        preds, target = inputs(kind, rank)
        metric.update(preds[: 1 + rank], target[: 1 + rank])  # uneven shards
        with count_collectives() as counter:
            metric.compute()
        out[name] = dict(counter.by_name)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 batches; do not write RESULTS.md")
    args = parser.parse_args()
    from torchtally.testing import run_distributed

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    batches = 2 if args.quick else BATCHES
    per_rank = run_distributed(sync_rank, 2, timeout=600)
    rows = []
    for name, cls, options, kind in METRICS:
        data = [inputs(kind, i) for i in range(batches)]
        runs = {lib: run(lib, cls, options, data) for lib in ("torchtally", "torchmetrics")}
        ours, theirs = runs["torchtally"], runs["torchmetrics"]
        if abs(ours[3] - theirs[3]) > 1e-4 * max(1.0, abs(theirs[3])):
            print(f"bench_audio: {name} differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
            return 1
        sync = describe_collectives([r[name] for r in per_rank])
        rows.append(
            (
                name,
                f"{ours[0] * 1e3 / batches:,.2f}",
                f"{theirs[0] * 1e3 / batches:,.2f}",
                f"{theirs[0] / ours[0]:,.2f}x",
                f"{ours[1] * 1e6:,.0f}",
                f"{theirs[1] * 1e6:,.0f}",
                ours[2],
                theirs[2],
                sync,
            )
        )
        print(rows[-1], flush=True)
    table = markdown_table(
        [
            "metric",
            "torchtally update ms",
            "torchmetrics update ms",
            "update speed-up",
            "torchtally compute us",
            "torchmetrics compute us",
            "torchtally state bytes",
            "torchmetrics state bytes",
            "torchtally sync collectives (W=2)",
        ],
        rows,
    )
    print(table)
    if args.quick:
        return 0
    body = (
        f"Machine: {machine_line()}.\n\n"
        f"{batches} batches of {UTTERANCES} utterances of 1 s at {RATE} Hz (float32), one torch thread; update ms "
        "per batch. torchtally computes every value in float64 (torchmetrics: float32, except SDR, float64 in "
        "both): the C kernel signal_sums sums each utterance's float64 energies straight from the float32 samples "
        "(up to three passes, no float64 copy), and the metrics are formulas of those sums. SDR's cost is the FFTs "
        "and the Toeplitz solve, the same torch calls in both libraries (its ratio is noise around 1). PIT "
        "speaker-wise calls the functional SI-SDR per speaker pair (4 kernel calls for 2 speakers); PIT "
        "permutation-wise calls SA-SDR on the stacked permutations, as torchmetrics.\n\n"
        + table
        + "\n\nGenerated by `benchmarks/bench_audio.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
