"""Kernel benchmark: torchtally's C kernels against the torch-ops path, one CPU core.

For each kernel and N in {256, 4096, 65536, 1e6}: microseconds per update for torchtally (through
torchtally.kernels, what a metric's update pays) and for the equivalent torch ops
(argmax + bincount for confusion matrices, torchmetrics' own binned-curve update for the
histograms), their ratio, and the bytes of input the kernel reads per second next to the copy
bandwidth measured in the same run. Also the per-tensor cost of the two DLPack paths.

Run: `make bench` (all benchmarks) or `.venv/bin/python benchmarks/bench_kernels.py`.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import copy_bandwidth_gbs, fmt_us, machine_line, markdown_table, replace_section, time_call  # noqa: E402
from torchmetrics.functional.classification.precision_recall_curve import (  # noqa: E402
    _binary_precision_recall_curve_update,
    _multiclass_precision_recall_curve_update,
)

from torchtally import _C  # noqa: E402
from torchtally import kernels as K  # noqa: E402

SIZES = (256, 4096, 65536, 1_000_000)
C = 10  # classes / labels
T = 100  # thresholds


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def case_confmat_scores(n):
    scores, target = torch.randn(n, C), torch.randint(0, C, (n,))
    out = torch.zeros(C, C, dtype=torch.int64)

    def ours():
        K.confmat_scores(out, scores, target)

    def torch_ops():
        out.add_(torch.bincount(target * C + scores.argmax(1), minlength=C * C).view(C, C))

    return ours, torch_ops, nbytes(scores, target)


def case_confmat_labels(n):
    preds, target = torch.randint(0, C, (n,)), torch.randint(0, C, (n,))
    out = torch.zeros(C, C, dtype=torch.int64)

    def ours():
        K.confmat_labels(out, preds, target)

    def torch_ops():
        out.add_(torch.bincount(target * C + preds, minlength=C * C).view(C, C))

    return ours, torch_ops, nbytes(preds, target)


def case_binary_threshold(n):
    probs, target = torch.rand(n), torch.randint(0, 2, (n,))
    out = torch.zeros(2, 2, dtype=torch.int64)

    def ours():
        K.confmat_threshold(out, probs, target, threshold=0.5)

    def torch_ops():
        out.add_(torch.bincount(target * 2 + (probs > 0.5).long(), minlength=4).view(2, 2))

    return ours, torch_ops, nbytes(probs, target)


def case_multilabel_threshold(n):
    probs, target = torch.rand(n, C), torch.randint(0, 2, (n, C))
    out = torch.zeros(C, 2, 2, dtype=torch.int64)
    offsets = torch.arange(C) * 4

    def ours():
        K.confmat_threshold(out, probs, target, threshold=0.5)

    def torch_ops():
        cells = (target * 2 + (probs > 0.5).long() + offsets).flatten()
        out.add_(torch.bincount(cells, minlength=4 * C).view(C, 2, 2))

    return ours, torch_ops, nbytes(probs, target)


def case_binned_binary(n):
    probs, target = torch.rand(n), torch.randint(0, 2, (n,))
    thresholds64 = torch.linspace(0, 1, T, dtype=torch.float64)
    thresholds32 = thresholds64.float()
    out = torch.zeros(1, T + 1, 2, dtype=torch.int64)
    state = torch.zeros(T, 2, 2, dtype=torch.int64)

    def ours():
        K.binned_update(out, probs, target, thresholds=thresholds64, uniform=True)

    def torchmetrics_update():
        state.add_(_binary_precision_recall_curve_update(probs, target, thresholds32))

    return ours, torchmetrics_update, nbytes(probs, target)


def case_binned_multiclass(n):
    probs, target = torch.rand(n, C).softmax(1), torch.randint(0, C, (n,))
    thresholds64 = torch.linspace(0, 1, T, dtype=torch.float64)
    thresholds32 = thresholds64.float()
    out = torch.zeros(C, T + 1, 2, dtype=torch.int64)
    state = torch.zeros(T, C, 2, 2, dtype=torch.int64)

    def ours():
        K.binned_update(out, probs, target, thresholds=thresholds64, uniform=True)

    def torchmetrics_update():
        state.add_(_multiclass_precision_recall_curve_update(probs, target, C, thresholds32))

    return ours, torchmetrics_update, nbytes(probs, target)


def case_moments(n):
    x = torch.randn(n)
    state = torch.tensor([[0.0, 0.0, 0.0, 0.0, float("inf"), float("-inf")]], dtype=torch.float64)

    def ours():
        K.moments_update(state, x)

    def torch_ops():
        x64 = x.double()
        mean = x64.mean()
        torch.stack(
            [
                torch.tensor(float(n), dtype=torch.float64),
                x64.sum(),
                mean,
                ((x64 - mean) ** 2).sum(),
                x64.min(),
                x64.max(),
            ]
        )

    return ours, torch_ops, nbytes(x)


def case_topk(n):
    scores, target = torch.randn(n, C), torch.randint(0, C, (n,))
    out = torch.zeros(C, 3, dtype=torch.int64)

    def ours():
        K.topk_update(out, scores, target, k=5)

    def torch_ops():
        top = scores.topk(5, dim=1).indices
        hits = (top == target[:, None]).any(1)
        out[:, 0] += torch.bincount(top.flatten(), minlength=C)
        out[:, 1] += torch.bincount(target[hits], minlength=C)
        out[:, 2] += torch.bincount(target, minlength=C)

    return ours, torch_ops, nbytes(scores, target)


CASES = [
    ("confusion matrix, scores [N, 10] f32 (argmax fused)", "argmax + bincount", case_confmat_scores),
    ("confusion matrix, labels [N], C = 10", "bincount", case_confmat_labels),
    ("binary confusion matrix, probabilities [N]", "threshold + bincount", case_binary_threshold),
    ("multilabel confusion matrix, [N, 10]", "threshold + bincount", case_multilabel_threshold),
    ("binned histogram, binary, T = 100", "torchmetrics binned update", case_binned_binary),
    ("binned histogram, multiclass C = 10, T = 100", "torchmetrics binned update", case_binned_multiclass),
    ("moments [N] f32 -> float64 state", "float64 two-pass torch ops", case_moments),
    ("top-5 hits, [N, 10]", "topk + bincount", case_topk),
]


def dlpack_costs():
    """Per-tensor cost of each DLPack path: a 3-tensor kernel call on empty inputs, divided by 3,
    and a bare `__dlpack__` call for reference."""
    out = torch.zeros(C, C, dtype=torch.int64)
    preds, target = torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64)

    def call():
        _C.confmat_labels(out, preds, target, None, None)

    rows = []
    previous = _C._use_exchange_api(True)
    exchange = time_call(call) / 3
    _C._use_exchange_api(False)
    capsule = time_call(call) / 3
    _C._use_exchange_api(previous)
    bare = time_call(lambda: preds.__dlpack__(max_version=(1, 0)))
    rows.append(["`__dlpack_c_exchange_api__` (DLTensor borrowed in C)", fmt_us(exchange)])
    rows.append(["`__dlpack__(max_version=(1, 0))` capsule + deleter", fmt_us(capsule)])
    rows.append(["(a bare `t.__dlpack__(max_version=(1, 0))` from Python)", fmt_us(bare)])
    return markdown_table(["path", "us per tensor"], rows)


# Why a target can be missed, per kernel (printed only when the measurement misses it).
MISS_REASONS = {
    "top-5 hits, [N, 10]": "rows rank their 10 scores with 45 pairwise compares, four rows per SSE2 "
    "vector; a miss at small N means the fixed per-call cost (argument parsing, "
    "DLPack) dominates on a loaded machine",
    "moments [N] f32 -> float64 state": "the kernel reads the input twice (exact two-pass mean and "
    "M2 in float64) while torch's float64 ops are vectorised",
}


def target_lines(measured, copy):
    """One line per issue-2 target, computed from this run's numbers."""
    lines = []
    for title, _, _ in CASES:
        for n, floor in ((256, 5.0), (1_000_000, 2.0)):
            ratio = measured[(title, n)][0]
            if ratio < floor:
                lines.append(
                    f"- MISSED: {title} at N = {n:,}: {ratio:.1f}x against a target of "
                    f"{floor:.0f}x ({ratio / floor:.0%} of it): {MISS_REASONS.get(title, 'see the table')}."
                )
    met = sum(1 for title, _, _ in CASES for n in (256, 1_000_000)) - len(lines)
    lines.insert(
        0,
        f"- {met} of {2 * len(CASES)} kernel/size pairs meet the speed targets "
        "(>= 5x the torch-ops path at N = 256, >= 2x at N = 1e6).",
    )
    gbs = measured[(CASES[0][0], 1_000_000)][1]
    verdict = "met" if gbs >= copy / 2 else "MISSED"
    lines.append(
        f"- Bandwidth target ({verdict}): the multiclass confusion matrix from [1e6, 10] float32 "
        f"scores reads {gbs:.2f} GB/s against half the copy bandwidth, {copy / 2:.2f} GB/s "
        f"({gbs / (copy / 2):.0%} of the target)."
        + (
            ""
            if verdict == "met"
            else " The argmax is compute-bound on one core: with AVX2 (detected at run time) it "
            "gathers sixteen rows' column per pass, except on AMD CPUs, whose microcoded gathers "
            "are slower than SSE2 filling four lanes one by one (that path is used there)."
        )
    )
    return "\n".join(lines)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    copy = copy_bandwidth_gbs()
    rows, measured = [], {}
    for title, peer, make in CASES:
        for n in SIZES:
            ours, theirs, read_bytes = make(n)
            t_ours, t_theirs = time_call(ours), time_call(theirs)
            measured[(title, n)] = (t_theirs / t_ours, read_bytes / t_ours / 1e9)
            rows.append(
                [
                    title,
                    peer,
                    f"{n:,}",
                    fmt_us(t_ours),
                    fmt_us(t_theirs),
                    f"**{t_theirs / t_ours:.1f}x**",
                    f"{read_bytes / t_ours / 1e9:.2f}",
                ]
            )
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    table = markdown_table(
        ["kernel", "torch-ops path", "N", "torchtally us", "torch-ops us", "speed-up", "input GB/s"], rows
    )
    body = "\n\n".join(
        [
            f"Machine: {machine_line()}. One CPU core (`torch.set_num_threads(1)`).",
            f"Copy bandwidth measured in the same run (bytes read + written by `copy_`): **{copy:.1f} GB/s**. "
            "Other jobs may share the machine's 2 cores: times are medians, and the ratios (both "
            "sides measured back to back) are the figures to rely on.",
            "Targets, from this run:\n" + target_lines(measured, copy),
            table,
            "DLPack: per-tensor cost of handing a tensor to the C core.",
            dlpack_costs(),
        ]
    )
    print(body)
    replace_section("Kernels", body)


if __name__ == "__main__":
    main()
