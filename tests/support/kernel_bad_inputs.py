"""The bad-input cases of every C-core kernel, shared by the C core's tests
(tests/csrc/test_bad_input.py: both paths, torchtally._C and the torch reference) and the CUDA
module's (tests/kernels/test_cuda_host.py on stand-in tensors, tests/cuda/test_cuda_kernels.py
on a GPU).

``good_args(kernel)`` gives valid arguments (out / state non-empty); each ``Case`` edits them
in place into one fault and says which exception the kernel must raise and which argument the
message must start with. Bad values sit at the last sample, after more than one chunk of good
ones, so a kernel that wrote as it went and did not undo would leave a trace in ``out``.
"""

from typing import Callable, NamedTuple, Tuple

import torch

from support.kernel_inputs import N, empty_moments, generator, labels, start_counts
from torchtally.kernels import reference as _reference

C, L, K, T, D = 5, 3, 4, 11, 3
NAN = float("nan")


def good_args(kernel: str) -> list:
    """Valid arguments of `kernel`; out / state start non-empty."""
    g = generator(60)
    if kernel == "confmat_labels":
        return [start_counts((C, C), g), labels((N,), C, torch.int64, g), labels((N,), C, torch.int64, g), None, None]
    if kernel == "confmat_scores":
        return [start_counts((C, C), g), torch.randn(N, C, generator=g), labels((N,), C, torch.int64, g), None, None]
    if kernel == "confmat_threshold":
        return [
            start_counts((L, 2, 2), g),
            torch.rand(N, L, generator=g),
            labels((N, L), 2, torch.int64, g),
            None,
            None,
            0.5,
        ]
    if kernel == "binned_update":
        return [
            start_counts((K, T + 1, 2), g),
            torch.rand(N, K, generator=g),
            labels((N,), K, torch.int64, g),
            None,
            None,
            torch.linspace(0, 1, T, dtype=torch.float64),
            True,
        ]
    if kernel == "topk_update":
        return [start_counts((C, 3), g), torch.randn(N, C, generator=g), labels((N,), C, torch.int64, g), None, None, 2]
    state = empty_moments(D) if kernel.startswith("moments") else torch.zeros(D, 6, dtype=torch.float64)
    x, y = torch.randn(N, D, generator=g), torch.randn(N, D, generator=g)
    update = kernel.replace("_merge", "_update")
    second = torch.rand(N, generator=g) if update == "moments_update" else y
    getattr(_reference, update)(state, x, second)  # a state with content
    if kernel.endswith("_merge"):
        other = state.clone()
        getattr(_reference, update)(other, x[:100] + 5, second[:100])
        return [state, other]
    return [state, x, second]


class Case(NamedTuple):
    kernel: str
    what: str
    change: Callable[[list], None]  # edits the good arguments in place
    error: type
    names: Tuple[str, ...]  # the message must start with one of these (mismatches may name either side)
    shows: str = ""  # and contain this


def put(i, value):
    def change(args):
        args[i] = value(args) if callable(value) else value

    return change


def last(i, value, dtype=None):
    """Set the last element of argument i (a copy, optionally converted to dtype) to value."""

    def change(args):
        t = args[i].clone() if dtype is None else args[i].to(dtype)
        t.view(-1)[-1] = value
        args[i] = t

    return change


def both(*changes):
    def change(args):
        for c in changes:
            c(args)

    return change


def transposed(t):
    """A non-contiguous tensor with the values, shape and dtype of t."""
    if t.dim() == 2:
        return t.t().contiguous().t()
    wide = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
    wide[..., ::2] = t
    return wide[..., ::2]


LABEL_KERNELS = ("confmat_labels", "confmat_scores", "confmat_threshold", "binned_update", "topk_update")
SCORE_KERNELS = ("confmat_scores", "confmat_threshold", "binned_update", "topk_update")
STATE_KERNELS = ("moments_update", "moments_merge", "comoments_update", "comoments_merge")
TENSOR_ARGS = {
    "confmat_labels": ("out", "preds", "target", "mask"),
    "confmat_scores": ("out", "preds", "target", "mask"),
    "confmat_threshold": ("out", "preds", "target", "mask"),
    "binned_update": ("out", "preds", "target", "mask", None, "thresholds"),
    "topk_update": ("out", "preds", "target", "mask"),
    "moments_update": ("state", "x", "weights"),
    "moments_merge": ("state", "other"),
    "comoments_update": ("state", "x", "y"),
    "comoments_merge": ("state", "other"),
}
# the largest valid target label (binary targets for confmat_threshold)
TARGET_HIGH = {"confmat_labels": C, "confmat_scores": C, "confmat_threshold": 2, "binned_update": K, "topk_update": C}


def common_cases():
    for kernel, names in TENSOR_ARGS.items():
        for i, name in enumerate(names):
            if name is not None:
                yield Case(kernel, f"{name}-not-a-tensor", put(i, [0, 1]), TypeError, (name,))
    for kernel in LABEL_KERNELS:
        high = TARGET_HIGH[kernel]
        yield Case(kernel, "out-int32", put(0, lambda a: a[0].int()), TypeError, ("out",), "int32")
        yield Case(kernel, "out-float64", put(0, lambda a: a[0].double()), TypeError, ("out",), "float64")
        yield Case(kernel, "out-not-contiguous", put(0, lambda a: transposed(a[0])), ValueError, ("out",))
        yield Case(kernel, "out-flat", put(0, lambda a: a[0].reshape(-1)), ValueError, ("out",))
        yield Case(kernel, "target-float", put(2, lambda a: a[2].float()), TypeError, ("target",), "float32")
        yield Case(kernel, "target-uint16", put(2, lambda a: a[2].to(torch.uint16)), TypeError, ("target",))
        yield Case(kernel, "target-short", put(2, lambda a: a[2][:-1]), ValueError, ("target", "preds"))
        yield Case(kernel, "target-too-high", last(2, high), ValueError, ("target",), str(high))
        yield Case(kernel, "target-negative", last(2, -3, torch.int8), ValueError, ("target",), "-3")
        yield Case(
            kernel,
            "target-uint8-255-vs-ignore--1",
            both(last(2, 255, torch.uint8), put(4, -1)),
            ValueError,
            ("target",),
            "255",
        )
        yield Case(kernel, "mask-float", put(3, torch.ones(N)), TypeError, ("mask",))
        yield Case(kernel, "mask-short", put(3, torch.ones(N - 1, dtype=torch.bool)), ValueError, ("mask",))
        yield Case(kernel, "mask-2d", put(3, torch.ones(N, 1, dtype=torch.bool)), ValueError, ("mask",))
        yield Case(kernel, "ignore_index-float", put(4, 1.5), TypeError, ("ignore_index",))
        yield Case(kernel, "ignore_index-str", put(4, "0"), TypeError, ("ignore_index",))
        yield Case(kernel, "ignore_index-bool", put(4, True), TypeError, ("ignore_index",))
        yield Case(kernel, "ignore_index-overflow", put(4, 2**64), ValueError, ("ignore_index",))
        yield Case(kernel, "preds-on-meta-device", put(1, lambda a: a[1].to("meta")), ValueError, ("preds",), "meta")
        yield Case(kernel, "preds-3d", put(1, lambda a: a[1].reshape(N, -1)[..., None]), ValueError, ("preds",))
    for kernel in SCORE_KERNELS:
        yield Case(kernel, "preds-nan", last(1, NAN), ValueError, ("preds",), "NaN")
        yield Case(
            kernel,
            "preds-nan-in-masked-sample",
            both(last(1, NAN), put(3, lambda a: torch.arange(N) < N - 1)),
            ValueError,
            ("preds",),
            "NaN",
        )
        yield Case(
            kernel,
            "preds-nan-in-ignored-sample",
            both(last(1, NAN), last(2, 9), put(4, 9)),
            ValueError,
            ("preds",),
            "NaN",
        )
        wrong = torch.complex64 if kernel == "confmat_threshold" else torch.int64
        yield Case(kernel, f"preds-{str(wrong)[6:]}", put(1, lambda a, w=wrong: a[1].to(w)), TypeError, ("preds",))


def kernel_cases():
    yield from [
        Case("confmat_labels", "preds-too-high", last(1, C), ValueError, ("preds",), str(C)),
        Case("confmat_labels", "preds-negative", last(1, -3, torch.int16), ValueError, ("preds",), "-3"),
        Case("confmat_labels", "preds-float", put(1, lambda a: a[1].float()), TypeError, ("preds",)),
        Case("confmat_labels", "out-not-square", put(0, start_counts((C, C + 1), generator(0))), ValueError, ("out",)),
        Case("confmat_scores", "preds-wider-than-out", put(1, torch.randn(N, C + 1)), ValueError, ("preds", "out")),
        Case("confmat_scores", "preds-1d", put(1, torch.randn(N)), ValueError, ("preds",)),
        Case("confmat_scores", "preds-no-columns", put(1, torch.randn(N, 0)), ValueError, ("preds", "out", "target")),
        Case(
            "confmat_threshold",
            "preds-label-2",
            put(
                1,
                lambda a: labels((N, L), 2, torch.uint8, generator(1)).index_put_(
                    (torch.tensor([N - 1]), torch.tensor([L - 1])), torch.tensor(2, dtype=torch.uint8)
                ),
            ),
            ValueError,
            ("preds",),
            "2",
        ),
        Case(
            "confmat_threshold",
            "target-wider",
            put(2, labels((N, L + 1), 2, torch.int64, generator(2))),
            ValueError,
            ("target", "preds"),
        ),
        Case("confmat_threshold", "out-2x3", put(0, start_counts((L, 2, 3), generator(3))), ValueError, ("out",)),
        Case(
            "confmat_threshold",
            "out-more-columns",
            put(0, start_counts((L + 1, 2, 2), generator(3))),
            ValueError,
            ("out", "preds"),
        ),
        Case(
            "confmat_threshold",
            "preds-1d-out-3-columns",
            both(put(1, lambda a: a[1][:, 0]), put(2, lambda a: a[2][:, 0])),
            ValueError,
            ("out", "preds"),
        ),
        Case("confmat_threshold", "threshold-str", put(5, "0.5"), TypeError, ("threshold",)),
        Case("confmat_threshold", "threshold-none", put(5, None), TypeError, ("threshold",)),
        Case("confmat_threshold", "threshold-bool", put(5, True), TypeError, ("threshold",)),
        Case("confmat_threshold", "threshold-nan", put(5, NAN), ValueError, ("threshold",)),
        Case("binned_update", "thresholds-float32", put(5, lambda a: a[5].float()), TypeError, ("thresholds",)),
        Case("binned_update", "thresholds-2d", put(5, lambda a: a[5][None]), ValueError, ("thresholds",)),
        Case(
            "binned_update",
            "thresholds-strided",
            put(5, lambda a: torch.linspace(0, 1, 2 * T, dtype=torch.float64)[::2]),
            ValueError,
            ("thresholds",),
        ),
        Case("binned_update", "thresholds-decreasing", last(5, 0.5), ValueError, ("thresholds",)),
        Case("binned_update", "thresholds-nan", last(5, NAN), ValueError, ("thresholds",), "NaN"),
        Case(
            "binned_update",
            "out-wrong-T",
            put(0, start_counts((K, T, 2), generator(4))),
            ValueError,
            ("out", "thresholds"),
        ),
        Case(
            "binned_update",
            "preds-wider-than-out",
            put(1, torch.rand(N, K + 1)),
            ValueError,
            ("preds", "out", "target"),
        ),
        Case(
            "binned_update",
            "binary-target-2",
            both(
                put(0, start_counts((1, T + 1, 2), generator(5))),
                put(1, lambda a: a[1][:, 0]),
                put(2, lambda a: (a[2] > 1).long()),
                last(2, 2),
            ),
            ValueError,
            ("target",),
            "2",
        ),
        Case(
            "binned_update",
            "multilabel-target-2",
            put(
                2,
                labels((N, K), 2, torch.int64, generator(6)).index_put_(
                    (torch.tensor([N - 1]), torch.tensor([K - 1])), torch.tensor(2)
                ),
            ),
            ValueError,
            ("target",),
            "2",
        ),
        Case(
            "binned_update",
            "multilabel-target-wider",
            put(2, labels((N, K + 1), 2, torch.int64, generator(7))),
            ValueError,
            ("target", "preds"),
        ),
        Case("topk_update", "k-zero", put(5, 0), ValueError, ("k",)),
        Case("topk_update", "k-above-classes", put(5, C + 1), ValueError, ("k",)),
        Case("topk_update", "k-float", put(5, 1.5), TypeError, ("k",)),
        Case("topk_update", "k-none", put(5, None), TypeError, ("k",)),
        Case("topk_update", "k-bool", put(5, True), TypeError, ("k",)),
        Case("topk_update", "out-two-columns", put(0, start_counts((C, 2), generator(8))), ValueError, ("out",)),
        Case("topk_update", "preds-wider-than-out", put(1, torch.randn(N, C + 1)), ValueError, ("preds", "out")),
    ]
    for kernel in STATE_KERNELS:
        yield Case(kernel, "state-float32", put(0, lambda a: a[0].float()), TypeError, ("state",), "float32")
        yield Case(
            kernel, "state-5-columns", put(0, lambda a: a[0][:, :5].contiguous()), ValueError, ("state", "other")
        )
        yield Case(kernel, "state-not-contiguous", put(0, lambda a: transposed(a[0])), ValueError, ("state",))
        yield Case(
            kernel,
            "state-more-rows",
            put(0, lambda a: torch.cat([a[0], a[0][:1]])),
            ValueError,
            ("state", "x", "other"),
        )
    for kernel in ("moments_merge", "comoments_merge"):
        yield Case(kernel, "other-float32", put(1, lambda a: a[1].float()), TypeError, ("other",), "float32")
        yield Case(kernel, "other-5-columns", put(1, lambda a: a[1][:, :5].contiguous()), ValueError, ("other",))
        yield Case(
            kernel, "other-more-rows", put(1, lambda a: torch.cat([a[1], a[1][:1]])), ValueError, ("other", "state")
        )
    for kernel in ("moments_update", "comoments_update"):
        yield Case(kernel, "x-int", put(1, lambda a: a[1].long()), TypeError, ("x",), "int64")
        yield Case(kernel, "x-3d", put(1, lambda a: a[1][..., None]), ValueError, ("x",))
        yield Case(kernel, "x-wider-than-state", put(1, torch.randn(N, D + 1)), ValueError, ("x", "state", "y"))
        yield Case(kernel, "x-nan", last(1, NAN), ValueError, ("x",), "NaN")
    yield from [
        Case("moments_update", "weights-int", put(2, torch.ones(N, dtype=torch.int64)), TypeError, ("weights",)),
        Case("moments_update", "weights-longer", put(2, torch.ones(N + 1)), ValueError, ("weights",)),
        Case("moments_update", "weights-2d", put(2, torch.ones(N, 1)), ValueError, ("weights",)),
        Case("moments_update", "weights-negative", last(2, -0.5), ValueError, ("weights",), "-0.5"),
        Case("moments_update", "weights-nan", last(2, NAN), ValueError, ("weights",)),
        Case("moments_update", "weights-inf", last(2, float("inf")), ValueError, ("weights",)),
        Case("comoments_update", "y-int", put(2, lambda a: a[2].long()), TypeError, ("y",)),
        Case("comoments_update", "y-wider", put(2, torch.randn(N, D + 1)), ValueError, ("y", "x")),
        Case("comoments_update", "y-shorter", put(2, lambda a: a[2][:-1]), ValueError, ("y", "x")),
        Case("comoments_update", "y-nan", last(2, NAN), ValueError, ("y",), "NaN"),
    ]


CASES = list(common_cases()) + list(kernel_cases())
