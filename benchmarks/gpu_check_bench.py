"""GPU benchmark, run by benchmarks/gpu_check.sh on a machine with a GPU.

The classification collection of the update benchmark (bench_update.py) at C = 1000 on CUDA
tensors: Accuracy (micro), Precision, Recall, F1 (macro) and ConfusionMatrix. torchtally: one MetricCollection, the five
metrics share one [C, C] state, so an update is one confmat_scores kernel (argmax fused), its
gated undo and a one-thread error latch, with no host synchronisation (deferred checks; the
immediate mode, which waits, is timed too); torchmetrics: MetricCollection with compute groups (its default,
validate_args on) and the same with validate_args=False. Inputs: float32 scores [B, 1000] and
int64 targets, B up to 1e6 (a 4 GB score tensor).

Reported: per-update time (CUDA events, median of repeats), the bytes of input read per second,
next to two bandwidths measured in the same run on the same GPU: a device-to-device copy
(read + write) and a read-only reduction (torch.sum over the same 4 GB of scores); the ratio
torchmetrics / torchtally; the values of both libraries on the same batch. Also torchtally's
collection with a binned AUROC (T = 100), whose histogram kernel reads the scores a second time
(torchmetrics' binned multiclass AUROC at this size is not run: it would not fit the budget).

Also: host synchronisations per update of each kernel family, counted by torch itself
(`torch.cuda.set_sync_debug_mode("warn")`, one warning per synchronisation), for the kernels and
for the torch reference they replace; and the reference path's update time beside the kernels'.

Not in `make bench` (its file name does not start with bench_): it needs a GPU.

    python benchmarks/gpu_check_bench.py --out benchmarks/_out/gpu_bench.md
"""

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Tuple

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

C = 1000
BATCHES = (4096, 65_536, 1_000_000)
T_AUROC = 100
TARGET_BANDWIDTH = 0.70  # of the HBM bandwidth measured in the same run
TARGET_SPEEDUP = 5.0


def cuda_time(fn: Callable[[], object], calls: int, repeats: int = 5) -> float:
    """Median seconds per call, by CUDA events around `calls` back-to-back calls."""
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3 / calls)
    return statistics.median(samples)


def bandwidths(scores: torch.Tensor) -> Tuple[float, float]:
    """(copy GB/s counting read + write, read-only GB/s of torch.sum over `scores`)."""
    src = torch.empty(1 << 29, dtype=torch.float32, device="cuda").uniform_()  # 2 GiB
    dst = torch.empty_like(src)
    copy = 2 * src.numel() * 4 / cuda_time(lambda: dst.copy_(src), 10) / 1e9
    read = scores.numel() * 4 / cuda_time(lambda: scores.sum(), 10) / 1e9
    return copy, read


def host_syncs(fn: Callable[[], object]) -> int:
    """Host synchronisations torch reports while `fn` runs (after one warm-up call)."""
    import warnings

    fn()
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode(previous)
    return sum("synchroniz" in str(w.message) for w in caught)


def family_syncs(kernels) -> list:
    """[family, syncs per update with the kernels, with the torch reference] for each family."""
    n, c = 65_536, 10
    g = torch.Generator(device="cuda").manual_seed(1)
    scores = torch.rand(n, c, device="cuda", generator=g)
    target = torch.randint(0, c, (n,), device="cuda", generator=g)
    binary = (target > 4).long()
    thresholds = torch.linspace(0, 1, 100, dtype=torch.float64, device="cuda")
    calls = {
        "confusion matrix, labels": lambda: kernels.confmat_labels(
            torch.zeros(c, c, dtype=torch.int64, device="cuda"), target, target
        ),
        "confusion matrix, scores": lambda: kernels.confmat_scores(
            torch.zeros(c, c, dtype=torch.int64, device="cuda"), scores, target
        ),
        "threshold with logit_threshold": lambda: kernels.confmat_threshold(
            torch.zeros(2, 2, dtype=torch.int64, device="cuda"), scores[:, 0], binary, None, None, 0.5, 0.0
        ),
        "binned curve (T = 100)": lambda: kernels.binned_update(
            torch.zeros(1, 101, 2, dtype=torch.int64, device="cuda"), scores[:, 0], binary, None, None, thresholds, True
        ),
        "top-k (k = 3)": lambda: kernels.topk_update(
            torch.zeros(c, 3, dtype=torch.int64, device="cuda"), scores, target, None, None, 3
        ),
        "moments": lambda: kernels.moments_update(torch.zeros(c, 6, dtype=torch.float64, device="cuda"), scores),
    }
    rows = []
    for family, call in calls.items():
        with_kernels = host_syncs(call)
        previous = kernels.set_cuda_backend("reference")
        try:
            with_reference = host_syncs(call)
        finally:
            kernels.set_cuda_backend(previous)
        rows.append([family, str(with_kernels), str(with_reference)])
    return rows


def torchtally_collection(with_auroc: bool = False):
    import torchtally as M
    from torchtally import MetricCollection

    metrics = {
        "accuracy": M.MulticlassAccuracy(C, average="micro"),
        "precision": M.MulticlassPrecision(C, average="macro"),
        "recall": M.MulticlassRecall(C, average="macro"),
        "f1": M.MulticlassF1Score(C, average="macro"),
        "confmat": M.MulticlassConfusionMatrix(C),
    }
    if with_auroc:
        metrics["auroc"] = M.MulticlassAUROC(C, thresholds=T_AUROC)
    return MetricCollection(metrics).to("cuda")


def torchmetrics_collection(validate_args: bool):
    import torchmetrics.classification as TM
    from torchmetrics import MetricCollection

    kw = {"num_classes": C, "validate_args": validate_args}
    return MetricCollection(
        {
            "accuracy": TM.MulticlassAccuracy(average="micro", **kw),
            "precision": TM.MulticlassPrecision(average="macro", **kw),
            "recall": TM.MulticlassRecall(average="macro", **kw),
            "f1": TM.MulticlassF1Score(average="macro", **kw),
            "confmat": TM.MulticlassConfusionMatrix(**kw),
        }
    ).to("cuda")


def values_agree(ours: Dict[str, torch.Tensor], theirs: Dict[str, torch.Tensor]) -> str:
    worst = 0.0
    for key in ("accuracy", "precision", "recall", "f1"):
        worst = max(worst, abs(float(ours[key]) - float(theirs[key])))
    same_confmat = torch.equal(ours["confmat"].cpu().long(), theirs["confmat"].cpu().long())
    matrices = "equal" if same_confmat else "DIFFERENT"
    return f"largest difference of accuracy/precision/recall/F1 {worst:.1e}, confusion matrices {matrices}"


def run(args) -> str:
    from torchtally import kernels

    if not torch.cuda.is_available():
        raise SystemExit("gpu_check_bench: no CUDA device")
    status = kernels.cuda_device_status(torch.cuda.current_device())
    if not status.serves:
        raise SystemExit(f"gpu_check_bench: the CUDA kernels do not serve this GPU: {status}")
    started = time.monotonic()
    name = torch.cuda.get_device_name()
    g = torch.Generator(device="cuda").manual_seed(0)
    n_max = max(BATCHES)
    scores = torch.randn(n_max, C, device="cuda", generator=g)
    target = torch.randint(0, C, (n_max,), device="cuda", generator=g)
    copy_gbs, read_gbs = bandwidths(scores)
    hbm = max(copy_gbs, read_gbs)

    ours, tm, tm_fast = torchtally_collection(), torchmetrics_collection(True), torchmetrics_collection(False)
    batch = (scores[:65_536], target[:65_536])
    for collection in (ours, tm, tm_fast):
        collection.update(*batch)
    agreement = values_agree(ours.compute(), tm.compute())

    rows, main = [], {}
    for b in BATCHES:
        s, t = scores[:b], target[:b]
        calls = 20 if b < n_max else 5
        t_ours = cuda_time(lambda: ours.update(s, t), calls)
        t_tm = cuda_time(lambda: tm.update(s, t), max(2, calls // 4))
        t_fast = cuda_time(lambda: tm_fast.update(s, t), max(2, calls // 4))
        gbs = (s.numel() * 4 + t.numel() * 8) / t_ours / 1e9
        rows.append(
            [
                f"{b:,}",
                f"{t_ours * 1e3:,.3f}",
                f"{gbs:,.0f}",
                f"{gbs / hbm:.0%}",
                f"{t_tm * 1e3:,.3f}",
                f"**{t_tm / t_ours:.1f}x**",
                f"{t_fast * 1e3:,.3f}",
                f"**{t_fast / t_ours:.1f}x**",
            ]
        )
        main = {"gbs": gbs, "speedup": t_tm / t_ours, "speedup_fast": t_fast / t_ours, "ms": t_ours * 1e3}

    # the kernel alone (no Python metric layer) at the largest batch
    out = torch.zeros(C, C, dtype=torch.int64, device="cuda")
    t_kernel = cuda_time(lambda: kernels.confmat_scores(out, scores, target), 5)
    kernel_gbs = (scores.numel() * 4 + target.numel() * 8) / t_kernel / 1e9

    # host time of an update: deferred checks return before the GPU is done; immediate ones wait
    host_ms = {}
    for mode in ("deferred", "immediate"):
        previous = kernels.set_cuda_checks(mode)
        try:
            t_mode = cuda_time(lambda: ours.update(scores, target), 5)
            torch.cuda.synchronize()
            began = time.perf_counter()
            for _ in range(5):
                ours.update(scores, target)
            host_ms[mode] = ((time.perf_counter() - began) / 5 * 1e3, t_mode * 1e3)
            torch.cuda.synchronize()
        finally:
            kernels.set_cuda_checks(previous)

    previous = kernels.set_cuda_backend("reference")
    try:
        reference = torchtally_collection()
        t_reference = cuda_time(lambda: reference.update(scores, target), 2, repeats=3)
    finally:
        kernels.set_cuda_backend(previous)
    syncs = family_syncs(kernels)

    with_auroc = torchtally_collection(with_auroc=True)
    t_auroc = cuda_time(lambda: with_auroc.update(scores, target), 2, repeats=3)
    auroc_gbs = 2 * scores.numel() * 4 / t_auroc / 1e9  # the scores are read twice

    met_bw = main["gbs"] >= TARGET_BANDWIDTH * hbm
    met_speed = main["speedup"] >= TARGET_SPEEDUP
    lines = [
        f"Device: {name}; torch {torch.__version__} (CUDA {torch.version.cuda}); torchtally: {status}. "
        f"Run {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{time.monotonic() - started:.0f} s. Bandwidth in the same run: copy **{copy_gbs:,.0f} GB/s** (read + "
        f"write), read-only reduction over the 4 GB of scores **{read_gbs:,.0f} GB/s**; the larger is the "
        f"HBM reference below.",
        "",
        "### Targets (batch 1,000,000 x 1000)",
        "",
        f"- Update at >= {TARGET_BANDWIDTH:.0%} of HBM bandwidth: **{'met' if met_bw else 'missed'}**, "
        f"{main['gbs']:,.0f} GB/s = {main['gbs'] / hbm:.0%} of {hbm:,.0f} GB/s "
        f"(the kernel alone: {kernel_gbs:,.0f} GB/s = {kernel_gbs / hbm:.0%}).",
        f"- Update >= {TARGET_SPEEDUP:g}x faster than torchmetrics: **{'met' if met_speed else 'missed'}**, "
        f"{main['speedup']:.1f}x (validate_args=False: {main['speedup_fast']:.1f}x).",
        "",
        "### Update of the classification collection, C = 1000",
        "",
        "Accuracy (micro), Precision / Recall / F1 (macro), ConfusionMatrix; float32 scores [B, 1000], int64 "
        "targets, on the GPU. torchtally: one shared [C, C] state, one counting kernel per update plus its "
        "gated undo (returns at once on good input) and a one-thread error latch; no host synchronisation "
        "(deferred checks, csrc/cuda/call.c). torchmetrics: MetricCollection with compute groups. Values "
        f"on the same batch: {agreement}.",
        "",
        markdown_table(
            [
                "batch",
                "torchtally ms",
                "torchtally GB/s",
                "of HBM",
                "torchmetrics ms",
                "torchmetrics / torchtally",
                "torchmetrics (validate_args=False) ms",
                "ratio",
            ],
            rows,
        ),
        "",
        f"Error checks at 1,000,000 x 1000: deferred (default) {host_ms['deferred'][1]:,.3f} ms per update on "
        f"the GPU, the call returning to Python after {host_ms['deferred'][0]:,.3f} ms; immediate "
        f"{host_ms['immediate'][1]:,.3f} ms on the GPU, returning after {host_ms['immediate'][0]:,.3f} ms "
        "(it waits for its kernels).",
        "",
        f"With a binned AUROC (T = {T_AUROC}) added to torchtally's collection (its histogram kernel reads "
        f"the scores again): {t_auroc * 1e3:,.2f} ms per update at 1,000,000 x 1000, "
        f"{auroc_gbs:,.0f} GB/s counting both reads.",
        "",
        f"The torch reference path (what a CUDA tensor took before the kernels served it) on the same "
        f"collection at 1,000,000 x 1000: {t_reference * 1e3:,.2f} ms per update, "
        f"{t_reference / main['ms'] * 1e3:.1f}x the kernels' time.",
        "",
        "### Host synchronisations per update (target: 0 with the kernels)",
        "",
        markdown_table(["kernel family", "torchtally's kernels", "torch reference"], syncs),
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="markdown file for the results")
    args = parser.parse_args()
    body = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(body + "\n")
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
