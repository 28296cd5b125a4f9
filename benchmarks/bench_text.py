"""Text benchmark: WordErrorRate, CharErrorRate, BLEUScore, CHRFScore and Perplexity against
torchmetrics, side by side in one run, one torch thread.

Data: 10,000 synthetic sentence pairs: references of 5-30 words drawn from a 5,000-word vocabulary
(3-10 letters, a few of them accented), hypotheses the references with about 15% of words
substituted, deleted or inserted; BLEU and chrF take two references per segment (the second a
further edited copy). Fed in batches of 100 sentences. Perplexity: one update of [32, 1024, 32000]
float32 logits (4.2 GB) with int64 targets. Measured:
  update   every batch, once (Perplexity: the one update, median of 3);
  compute  ``compute()`` once;
  state    the bytes the state tensors hold after the updates;
  sync     at world size 2 (gloo), the collectives one ``compute()`` makes, every metric of the
           table on its share of the sentences.
Both libraries' results are checked to agree (1e-6 relative; Perplexity 1e-4) before anything is
timed. Results go to the "Text" section of benchmarks/RESULTS.md.

Run: `make bench` or `.venv/bin/python benchmarks/bench_text.py [--quick]`.
"""

import argparse
import importlib
import random
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _common import machine_line, markdown_table, replace_section  # noqa: E402

SENTENCES = 10_000
BATCH = 100
VOCABULARY = 5_000
LOGITS = (32, 1024, 32000)
SECTION = "Text"
# (class, options, whether the target is a list of references per segment)
METRICS = (("WordErrorRate", {}, False), ("CharErrorRate", {}, False), ("BLEUScore", {}, True), ("CHRFScore", {}, True))


def vocabulary(rng: random.Random) -> List[str]:
    letters = "abcdefghijklmnopqrstuvwxyzéüñ"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(VOCABULARY)]


def edited(words: List[str], vocab: List[str], rng: random.Random, rate: float = 0.15) -> List[str]:
    out = []
    for word in words:
        roll = rng.random()
        if roll < rate / 3:
            out.append(rng.choice(vocab))  # substitution
        elif roll < 2 * rate / 3:
            continue  # deletion
        elif roll < rate:
            out += [word, rng.choice(vocab)]  # insertion
        else:
            out.append(word)
    return out


def sentences(n: int) -> Tuple[List[str], List[str], List[List[str]]]:
    """Hypotheses, their references, and two references per hypothesis."""
    rng = random.Random(0)
    vocab = vocabulary(rng)
    hyps, refs, multi = [], [], []
    for _ in range(n):
        ref = [rng.choice(vocab) for _ in range(rng.randint(5, 30))]
        hyps.append(" ".join(edited(ref, vocab, rng)))
        refs.append(" ".join(ref))
        multi.append([refs[-1], " ".join(edited(ref, vocab, rng))])
    return hyps, refs, multi


def make(library: str, name: str, options: Dict[str, Any]) -> Any:
    return getattr(importlib.import_module(f"{library}.text"), name)(**options)


def state_bytes(metric: Any) -> int:
    total = 0
    for value in metric.metric_state.values():
        for t in value if isinstance(value, list) else [value]:
            if isinstance(t, torch.Tensor):
                total += t.numel() * t.element_size()
    return total


def run_sentences(library: str, name: str, options: Dict[str, Any], multi: bool, data: Tuple) -> Tuple:
    hyps, refs, multi_refs = data
    target = multi_refs if multi else refs
    metric = make(library, name, options)
    start = time.perf_counter()
    for i in range(0, len(hyps), BATCH):
        metric.update(hyps[i : i + BATCH], target[i : i + BATCH])
    update_s = time.perf_counter() - start
    start = time.perf_counter()
    value = float(metric.compute())
    return update_s, time.perf_counter() - start, state_bytes(metric), value


def perplexity_rows(quick: bool) -> List[Tuple]:
    shape = (2, 128, 32000) if quick else LOGITS
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(shape, generator=g)
    target = torch.randint(0, shape[2], shape[:2], generator=g)
    runs = {}
    for library in ("torchtally", "torchmetrics"):
        metric = make(library, "Perplexity", {})
        times = []
        for _ in range(3):
            metric.reset()
            start = time.perf_counter()
            metric.update(logits, target)
            times.append(time.perf_counter() - start)
        runs[library] = (statistics.median(times), float(metric.compute()), state_bytes(metric))
    ours, theirs = runs["torchtally"], runs["torchmetrics"]
    assert abs(ours[1] - theirs[1]) <= 1e-4 * abs(theirs[1]), ("Perplexity", ours[1], theirs[1])
    label = f"Perplexity [{', '.join(map(str, shape))}]"
    return [
        (label, lib, f"{u:,.3f}", "1.0x" if lib == "torchtally" else f"**{u / ours[0]:,.1f}x**", "-", b)
        for lib, (u, _, b) in runs.items()
    ]


def sync_rank(rank: int, world_size: int, n: int) -> Dict[str, int]:
    from torchtally.testing import count_collectives

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    hyps, refs, multi_refs = sentences(n)
    out = {}
    for name, options, multi in METRICS:
        metric = make("torchtally", name, options)
        target = multi_refs if multi else refs
        metric.update(hyps[rank::world_size], target[rank::world_size])
        with count_collectives() as counter:
            metric.compute()
        out[name] = counter.total
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 sentences, small logits; do not write RESULTS.md")
    args = parser.parse_args()
    from torchtally.testing import run_distributed

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    n = 500 if args.quick else SENTENCES
    data = sentences(n)
    rows, update_ratios = [], {}
    for name, options, multi in METRICS:
        runs = {lib: run_sentences(lib, name, options, multi, data) for lib in ("torchtally", "torchmetrics")}
        ours, theirs = runs["torchtally"], runs["torchmetrics"]
        print(name, runs, flush=True)
        if abs(ours[3] - theirs[3]) > 1e-6 * max(1.0, abs(theirs[3])):
            print(f"bench_text: {name} differs: {ours[3]} vs {theirs[3]}", file=sys.stderr)
            return 1
        update_ratios[name] = theirs[0] / ours[0]
        for library, (update_s, compute_s, size, _) in runs.items():
            mine = library == "torchtally"
            rows.append(
                (
                    name,
                    library,
                    f"{update_s:,.3f}",
                    "1.0x" if mine else f"**{update_s / ours[0]:,.1f}x**",
                    f"{compute_s * 1e3:,.2f}",
                    size,
                )
            )
    rows += perplexity_rows(args.quick)
    table = markdown_table(
        ["metric", "library", "update s (all batches)", "update vs torchtally", "compute ms", "state bytes"], rows
    )
    print(table)
    if args.quick:
        return 0
    per_rank = run_distributed(sync_rank, 2, 2_000, timeout=600)
    sync = {name: max(r[name] for r in per_rank) for name, _, _ in METRICS}
    targets = (
        "Targets: update >= 10x torchmetrics on WER and BLEU: "
        + ", ".join(f"{name} **{ratio:,.1f}x**" for name, ratio in update_ratios.items())
        + "; sync in <= 3 collectives (world size 2, one compute()): "
        + ", ".join(f"{name} {count}" for name, count in sync.items())
        + "."
    )
    body = (
        f"Machine: {machine_line()}.\n\n"
        f"{n:,} sentence pairs in batches of {BATCH} (BLEU and chrF: two references each); Perplexity on one "
        f"batch of logits.\n\n" + targets + "\n\n" + table + "\n\nGenerated by `benchmarks/bench_text.py`."
    )
    replace_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
