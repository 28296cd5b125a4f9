"""Catalogue benchmark: the state kinds of the newer metrics against torchmetrics, side by side
in one process, one torch thread.

Each row makes the same metric in both libraries (same class name and arguments), checks that
their results agree on the same batches, then times
  update    ``metric.update(*batch)`` on a batch of B = 4,096 samples (C = 10 classes), and
  compute   ``metric.compute()`` after 8 such updates (the state a short epoch leaves), timed as
            an update of one sample then compute, less that update (any update drops the
            cached result, in both libraries).
Rows: calibration bins (MulticlassCalibrationError), a fixed-recall readout of the binned and of
the exact curve state (MulticlassPrecisionAtFixedRecall), the hinge loss, a ranking metric, the
moments and sums of the new regression metrics, Spearman's cat state, a wrapped collection
(MultitaskWrapper of a classification collection and a regression metric) and BootStrapper with
B = 100 copies. BootStrapper's values are random in both libraries (torchtally's resampling is a
hash of each sample's position, torchmetrics' a fresh draw): its row checks the result's keys
and shapes only.

Timings are the median of repeats of a timed loop; the machine is shared with other jobs, so
the ratios (measured in one run) are the result. Results go to the "Catalogue: new state kinds"
section of benchmarks/RESULTS.md.

Run: `make bench` (all benchmarks) or `.venv/bin/python benchmarks/bench_catalogue.py [--quick]`.
"""

import argparse
import importlib
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import fmt_us, machine_line, markdown_table, replace_section, time_call  # noqa: E402

C = 10
B = 4096
UPDATES = 8
SECTION = "Catalogue: new state kinds"
LIBRARIES = ("torchtally", "torchmetrics")


def face(lib: str, name: str) -> Any:
    return importlib.import_module(f"{lib}.{name}")


def data(seed: int) -> Dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(B, C, generator=g).softmax(-1)
    labels = torch.randint(0, C, (B,), generator=g)
    x = torch.randn(B, generator=g)
    return {
        "scores": scores,
        "labels": labels,
        "multilabel_scores": torch.rand(B, C, generator=g),
        "multilabel_target": torch.randint(0, 2, (B, C), generator=g),
        "x": x,
        "y": x + 0.5 * torch.randn(B, generator=g),
        "positive": torch.rand(B, generator=g) + 0.1,
        "positive_target": torch.rand(B, generator=g) + 0.1,
        "distribution": torch.rand(B, C, generator=g).softmax(-1),
        "distribution_target": torch.rand(B, C, generator=g).softmax(-1),
    }


def multitask(lib: str) -> Any:
    clf, reg, top = face(lib, "classification"), face(lib, "regression"), importlib.import_module(lib)
    wrappers = face(lib, "wrappers")
    collection = top.MetricCollection({"acc": clf.MulticlassAccuracy(C), "f1": clf.MulticlassF1Score(C)})
    return wrappers.MultitaskWrapper({"classes": collection, "value": reg.MeanSquaredError()})


def bootstrapper(lib: str) -> Any:
    clf, wrappers = face(lib, "classification"), face(lib, "wrappers")
    return wrappers.BootStrapper(clf.MulticlassAccuracy(C), num_bootstraps=100)


# name -> (maker(lib), batch(data) -> update args, check values)
Row = Tuple[Callable[[str], Any], Callable[[Dict[str, Any]], tuple], bool]
ROWS: Dict[str, Row] = {
    "MulticlassCalibrationError (15 bins)": (
        lambda lib: face(lib, "classification").MulticlassCalibrationError(C, n_bins=15),
        lambda d: (d["scores"], d["labels"]),
        True,
    ),
    "MulticlassPrecisionAtFixedRecall T = 100": (
        lambda lib: face(lib, "classification").MulticlassPrecisionAtFixedRecall(C, min_recall=0.5, thresholds=100),
        lambda d: (d["scores"], d["labels"]),
        True,
    ),
    "MulticlassPrecisionAtFixedRecall exact": (
        lambda lib: face(lib, "classification").MulticlassPrecisionAtFixedRecall(C, min_recall=0.5),
        lambda d: (d["scores"], d["labels"]),
        True,
    ),
    "MulticlassHingeLoss": (
        lambda lib: face(lib, "classification").MulticlassHingeLoss(C),
        lambda d: (d["scores"], d["labels"]),
        True,
    ),
    "MultilabelRankingLoss": (
        lambda lib: face(lib, "classification").MultilabelRankingLoss(C),
        lambda d: (d["multilabel_scores"], d["multilabel_target"]),
        True,
    ),
    "MeanSquaredLogError": (
        lambda lib: face(lib, "regression").MeanSquaredLogError(),
        lambda d: (d["positive"], d["positive_target"]),
        True,
    ),
    "RelativeSquaredError": (
        lambda lib: face(lib, "regression").RelativeSquaredError(),
        lambda d: (d["x"], d["y"]),
        True,
    ),
    "KLDivergence": (
        lambda lib: face(lib, "regression").KLDivergence(),
        lambda d: (d["distribution"], d["distribution_target"]),
        True,
    ),
    "ConcordanceCorrCoef": (
        lambda lib: face(lib, "regression").ConcordanceCorrCoef(),
        lambda d: (d["x"], d["y"]),
        True,
    ),
    "SpearmanCorrCoef": (lambda lib: face(lib, "regression").SpearmanCorrCoef(), lambda d: (d["x"], d["y"]), True),
    "MultitaskWrapper (2 classification metrics + MSE)": (
        multitask,
        lambda d: ({"classes": d["scores"], "value": d["x"]}, {"classes": d["labels"], "value": d["y"]}),
        True,
    ),
    "BootStrapper B = 100 (MulticlassAccuracy)": (bootstrapper, lambda d: (d["scores"], d["labels"]), False),
}


def agree(ours: Any, theirs: Any, what: str) -> None:
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs), f"{what}: keys {sorted(ours)} vs {sorted(theirs)}"
        for key in theirs:
            agree(ours[key], theirs[key], f"{what}[{key}]")
    elif isinstance(theirs, (tuple, list)):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            agree(a, b, f"{what}[{i}]")
    else:
        torch.testing.assert_close(
            torch.as_tensor(ours).double(), torch.as_tensor(theirs).double(), rtol=1e-4, atol=1e-5, msg=what
        )


def same_shape(ours: Any, theirs: Any, what: str) -> None:
    assert set(ours) == set(theirs), f"{what}: keys {sorted(ours)} vs {sorted(theirs)}"
    for key in theirs:
        assert ours[key].shape == theirs[key].shape, f"{what}[{key}]: shapes {ours[key].shape} vs {theirs[key].shape}"


def check(name: str, row: Row) -> None:
    maker, args_of, values = row
    made = {lib: maker(lib) for lib in LIBRARIES}
    for seed in range(3):
        for m in made.values():
            m.update(*args_of(data(seed)))
    ours, theirs = made["torchtally"].compute(), made["torchmetrics"].compute()
    (agree if values else same_shape)(ours, theirs, name)


def first_sample(args: tuple) -> tuple:
    """The update arguments cut to their first sample (dicts of tensors: each value cut)."""

    def cut(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: cut(v) for k, v in x.items()}
        return x[:1].clone() if isinstance(x, torch.Tensor) else x

    return tuple(cut(a) for a in args)


def timings(name: str, row: Row, quick: bool) -> Dict[str, Tuple[float, float]]:
    """Per library: the update of one batch, and compute alone (an update of one sample then
    compute, less that update: compute's cached result is dropped by any update)."""
    maker, args_of, _ = row
    args = args_of(data(0))
    one = first_sample(args)
    seconds = 0.05 if quick else 0.3
    out = {}
    for lib in LIBRARIES:
        updated, filled = maker(lib), maker(lib)
        for _ in range(UPDATES):
            filled.update(*args)
        update = time_call(lambda: updated.update(*args), min_seconds=seconds, repeats=5)
        tiny = time_call(lambda: filled.update(*one), min_seconds=seconds, repeats=5)
        both = time_call(lambda: (filled.update(*one), filled.compute()), min_seconds=seconds, repeats=5)
        compute = max(both - tiny, 0.0)
        out[lib] = (update, compute)
        print(f"  {lib:<12} {name:<50} update {fmt_us(update):>10} us  compute {fmt_us(compute):>10} us", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timings; do not write RESULTS.md")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    rows: List[List[object]] = []
    for name, row in ROWS.items():
        check(name, row)
        t = timings(name, row, args.quick)
        (ou, oc), (tu, tc) = t["torchtally"], t["torchmetrics"]
        rows.append(
            [name, fmt_us(ou), fmt_us(tu), f"{tu / ou:.1f}x", fmt_us(oc), fmt_us(tc), f"{tc / oc:.1f}x" if oc else "-"]
        )
    table = markdown_table(
        ["metric", "update us", "torchmetrics", "ratio", "compute us", "torchmetrics", "ratio"], rows
    )
    print(table)
    if args.quick:
        return
    body = "\n\n".join(
        [
            machine_line(),
            f"One torch thread, one process. Update: one batch of {B:,} samples (C = {C}); compute: after "
            f"{UPDATES} such updates (an update of one sample then compute, less that update's time). Results checked "
            "equal "
            "first (BootStrapper: keys and shapes). Ratio: torchmetrics' time / torchtally's.",
            table,
            "Generated by `benchmarks/bench_catalogue.py`.",
        ]
    )
    replace_section(SECTION, body)


if __name__ == "__main__":
    main()
