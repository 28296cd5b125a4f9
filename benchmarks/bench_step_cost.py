"""Per-step cost benchmark: what a training loop pays per step for its metrics, torchtally
against torchmetrics, side by side in one process, one torch thread.

Rows (C = 10 classes, probabilities [B, 10] float32 and int64 targets, B = 256 and 65,536):

  update            one MulticlassAccuracy: ``metric.update(preds, target)``
  forward           one MulticlassAccuracy: ``value = metric(preds, target)`` (the batch's value,
                    and the batch accumulated: torchmetrics' per-step logging idiom)
  update(1) + compute
                    one sample updated, then ``compute()`` (a value read at every step)
  forward, 4 / 6 metrics on one state
                    a MetricCollection of accuracy (micro), F1, precision, recall (macro), plus
                    specificity and Jaccard for 6, all on one confusion matrix (torchmetrics:
                    its compute groups, its default)
  update(32) + compute, other families
                    32 samples updated, then ``compute()``: MeanSquaredError, R2Score,
                    PearsonCorrCoef, MulticlassMatthewsCorrCoef, binned MulticlassAUROC (T = 100)
                    and BinaryAUROC (T = 100), at every batch size (the row does not depend on it)
  compiled step     a step compiled with ``torch.compile(fullgraph=True)`` (inductor), a small
                    model's forward (a [B, 10] matmul and softmax), with and without the
                    4-metric collection's update inside: what the metric adds to a compiled step.
                    torchmetrics' update is not traced without graph breaks (fullgraph refuses
                    it), so it runs under plain torch.compile

Values are checked equal between the libraries first. Timings are the median of repeats of a
timed loop; the machine is shared with other jobs, so ratios (in one run) are the result.
Results go to the "Per-step cost" section of benchmarks/RESULTS.md.

Run: `make bench` (all benchmarks) or `.venv/bin/python benchmarks/bench_step_cost.py [--quick]`.
"""

import argparse
import sys
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import fmt_us, machine_line, markdown_table, replace_section, time_call  # noqa: E402

C = 10
BATCHES = (256, 65536)
LIBRARIES = ("torchtally", "torchmetrics")
# Targets at batch 256 (torchmetrics' time / torchtally's).
TARGETS = {"forward": 15.0, "forward, 4 metrics on one state": 10.0, "update(1) + compute": 10.0}


def module(lib: str):
    if lib == "torchtally":
        import torchtally

        return torchtally, torchtally
    import torchmetrics
    import torchmetrics.classification

    return torchmetrics.classification, torchmetrics


def collection(lib: str, size: int):
    classes, top = module(lib)
    metrics = {
        "acc": classes.MulticlassAccuracy(C, average="micro"),
        "f1": classes.MulticlassF1Score(C),
        "precision": classes.MulticlassPrecision(C),
        "recall": classes.MulticlassRecall(C),
        "specificity": classes.MulticlassSpecificity(C),
        "jaccard": classes.MulticlassJaccardIndex(C),
    }
    return top.MetricCollection(dict(list(metrics.items())[:size]))


def batch(b: int, seed: int = 0) -> Tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, C, generator=g).softmax(-1), torch.randint(0, C, (b,), generator=g)


def cases(lib: str, b: int) -> Dict[str, Callable[[], object]]:
    classes, _ = module(lib)
    preds, target = batch(b)
    one, two = classes.MulticlassAccuracy(C), classes.MulticlassAccuracy(C)
    single = classes.MulticlassAccuracy(C)
    p1, t1 = preds[:1].clone(), target[:1].clone()
    four, six = collection(lib, 4), collection(lib, 6)

    def update_compute():
        single.update(p1, t1)
        return single.compute()

    return {
        "update": lambda: one.update(preds, target),
        "forward": lambda: two(preds, target),
        "update(1) + compute": update_compute,
        "forward, 4 metrics on one state": lambda: four(preds, target),
        "forward, 6 metrics on one state": lambda: six(preds, target),
    }


def family_cases(lib: str) -> Dict[str, Callable[[], object]]:
    """update(32 samples) + compute of one metric of each other family."""
    if lib == "torchtally":
        import torchtally as classes
        import torchtally as regression
    else:
        import torchmetrics.classification as classes
        import torchmetrics.regression as regression
    g = torch.Generator().manual_seed(1)
    scores = torch.randn(32, C, generator=g).softmax(-1)
    labels = torch.randint(0, C, (32,), generator=g)
    x, y = torch.randn(32, generator=g), torch.randn(32, generator=g)
    made = {
        "MeanSquaredError": (regression.MeanSquaredError(), (x, y)),
        "R2Score": (regression.R2Score(), (x, y)),
        "PearsonCorrCoef": (regression.PearsonCorrCoef(), (x, y)),
        "MulticlassMatthewsCorrCoef": (classes.MulticlassMatthewsCorrCoef(C), (scores, labels)),
        "MulticlassAUROC T = 100": (classes.MulticlassAUROC(C, thresholds=100), (scores, labels)),
        "BinaryAUROC T = 100": (classes.BinaryAUROC(thresholds=100), (scores[:, 0], (labels < 5).long())),
    }

    def step(metric, args):
        return lambda: (metric.update(*args), metric.compute())

    return {f"update(32) + compute, {name}": step(m, args) for name, (m, args) in made.items()}


def check_values() -> None:
    """The libraries' forward values and accumulated results agree (float32 rounding)."""
    ours, theirs = collection("torchtally", 6), collection("torchmetrics", 6)
    for seed in range(3):
        p, t = batch(256, seed)
        a, b = ours(p, t), theirs(p, t)
        for key in b:
            torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6, msg=f"forward {key}")
    a, b = ours.compute(), theirs.compute()
    for key in b:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6, msg=f"compute {key}")


def compiled_steps(b: int, quick: bool) -> Dict[str, float]:
    """Seconds per compiled step: the model alone, with torchtally's collection update inside
    (fullgraph), with torchmetrics' (plain torch.compile: its update graph-breaks)."""
    weight = torch.randn(C, C)
    x, target = batch(b)
    out: Dict[str, float] = {}
    ours, theirs = collection("torchtally", 4), collection("torchmetrics", 4)

    def model(x):
        return (x @ weight).softmax(-1)

    def with_ours(x, target):
        p = model(x)
        ours.update(p, target)
        return p

    def with_theirs(x, target):
        p = model(x)
        theirs.update(p, target)
        return p

    steps = {
        "model only": (torch.compile(model, fullgraph=True), (x,)),
        "model + torchtally collection update (fullgraph)": (torch.compile(with_ours, fullgraph=True), (x, target)),
        "model + torchmetrics collection update": (torch.compile(with_theirs), (x, target)),
    }
    for name, (fn, args) in steps.items():
        for _ in range(3):
            fn(*args)  # compile, warm up
        out[name] = time_call(lambda fn=fn, args=args: fn(*args), min_seconds=0.1 if quick else 0.3, repeats=5)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timings; do not write RESULTS.md")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    check_values()
    seconds: Dict[Tuple[str, str, int], float] = {}
    for b in BATCHES:
        for lib in LIBRARIES:
            for name, fn in {**cases(lib, b), **(family_cases(lib) if b == BATCHES[0] else {})}.items():
                for _ in range(20):
                    fn()
                seconds[(lib, name, b)] = time_call(fn, min_seconds=0.05 if args.quick else 0.3, repeats=7)
                print(f"  B = {b:>6,}  {lib:<12} {name:<34} {fmt_us(seconds[(lib, name, b)]):>10} us", flush=True)
    rows: List[List[object]] = []
    verdicts: List[List[object]] = []
    for b in BATCHES:
        names = list(cases("torchtally", 8)) + (list(family_cases("torchtally")) if b == BATCHES[0] else [])
        for name in names:
            ours, theirs = seconds[("torchtally", name, b)], seconds[("torchmetrics", name, b)]
            rows.append([f"{b:,}", name, fmt_us(ours), fmt_us(theirs), f"{theirs / ours:.1f}x"])
            if b == 256 and name in TARGETS:
                met = theirs / ours >= TARGETS[name]
                verdicts.append([name, f"{theirs / ours:.1f}x", f">= {TARGETS[name]:.0f}x", "yes" if met else "**no**"])
    compiled = {b: compiled_steps(b, args.quick) for b in BATCHES}
    compiled_rows = [[f"{b:,}", name, fmt_us(t)] for b in BATCHES for name, t in compiled[b].items()]
    table = markdown_table(["batch", "per step", "torchtally us", "torchmetrics us", "torchmetrics / torchtally"], rows)
    verdict = markdown_table(["at batch 256", "ratio", "target", "met"], verdicts)
    compiled_table = markdown_table(["batch", "compiled step", "us per step"], compiled_rows)
    print(table, verdict, compiled_table, sep="\n\n")
    if args.quick:
        return
    body = (
        f"Machine: {machine_line()}; one torch thread, one process. What a training step pays for its metrics "
        "(see the docstring of `benchmarks/bench_step_cost.py` for each row); values checked equal first. "
        "Median of repeats of a timed loop.\n\n" + verdict + "\n\n" + table + "\n\n"
        "### A compiled step\n\n"
        "A small model's forward compiled with `torch.compile` (inductor, CPU), alone and with a 4-metric "
        "collection's update inside: torchtally's kernels are custom ops, so its update is part of the "
        "`fullgraph=True` graph; torchmetrics' update breaks the graph, so it runs under plain `torch.compile`.\n\n"
        + compiled_table
        + "\n\nGenerated by `benchmarks/bench_step_cost.py`."
    )
    replace_section("Per-step cost", body)


if __name__ == "__main__":
    main()
