"""The known-answer check a device passes before torchtally's kernels serve it.

The kernels are compiled on the user's machine for the user's GPU, an architecture the project
may never have run them on. So before the first real update on a device, every kernel family,
and each variant the launches choose between (shared-memory or global histograms, a thread or
a warp per row, each score dtype), runs once on small fixed batches, and its state is compared
with the torch reference's on the same device: counts bit for bit, moments to 1e-12 relative
(their sums are exact; the order of the float64 merges differs). A rejected batch (a label out
of range, a NaN) must raise the reference's ValueError and leave the state as it was. Any
difference means that device takes the reference, with a warning that names the kernel.

`run(kernels, reference, device)` returns the differences found (empty: the device passes);
it needs nothing CUDA-specific, so the tests run it on the CPU against torchtally._C.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import torch

from ..segmentation_status import call_like_c_core

SCORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@dataclass
class Case:
    """One call of a kernel: `name` for the report, `make(device)` the arguments (the state first),
    `rejected` when the batch must be refused."""

    name: str
    kernel: str
    make: Callable[[torch.device], list]
    rejected: bool = False
    exact: bool = True


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _labels(n: int, classes: int, seed: int) -> torch.Tensor:
    return torch.randint(0, classes, (n,), generator=_gen(seed))


def _scores(n: int, classes: int, seed: int, dtype=torch.float32) -> torch.Tensor:
    # multiples of 1/16 in [0, 1): exact in every score dtype, with ties
    return (torch.randint(0, 16, (n, classes), generator=_gen(seed)).to(torch.float64) / 16).to(dtype)


def _on(device, *tensors):
    return [t.to(device) if isinstance(t, torch.Tensor) else t for t in tensors]


def _confmat_cases() -> List[Case]:
    cases = []
    for classes, n in ((4, 3000), (130, 4000)):  # per-block histogram in shared memory / global atomics

        def make(device, classes=classes, n=n):
            mask = torch.arange(n) % 7 != 3
            return _on(
                device,
                torch.zeros(classes, classes, dtype=torch.int64),
                _labels(n, classes, 1),
                _labels(n, classes, 2),
                mask,
                classes - 1,
            )

        cases.append(Case(f"confmat_labels C={classes}", "confmat_labels", make))
    for dtype in SCORE_DTYPES:
        # a thread per row; a warp per row reading 16-byte vectors, one at a time; the same with
        # unaligned rows (scalar reads); global atomics; four vectors in flight per lane (rows of
        # more than 96 vectors)
        wide = 1100 if dtype in (torch.float16, torch.bfloat16) else 600 if dtype == torch.float32 else 300
        for classes, rows in ((5, 900), (40, 900), (37, 500), (120, 300), (wide, 64)):

            def make_scores(device, classes=classes, rows=rows, dtype=dtype):
                return _on(
                    device,
                    torch.zeros(classes, classes, dtype=torch.int64),
                    _scores(rows, classes, 3, dtype),
                    _labels(rows, classes, 4),
                    None,
                    None,
                )

            cases.append(Case(f"confmat_scores C={classes} {str(dtype)[6:]}", "confmat_scores", make_scores))
        for classes in (24, 130):  # column-major: a thread per row, counts in shared memory / global

            def column_major(device, classes=classes, dtype=dtype):
                scores = _scores(300, classes, 5, dtype).t().contiguous().t()
                zeros = torch.zeros(classes, classes, dtype=torch.int64)
                return _on(device, zeros, scores, _labels(300, classes, 6), None, None)

            name = f"confmat_scores column-major C={classes} {str(dtype)[6:]}"
            cases.append(Case(name, "confmat_scores", column_major))

    def binary(device):
        return _on(
            device,
            torch.zeros(2, 2, dtype=torch.int64),
            _scores(2000, 1, 7)[:, 0],
            _labels(2000, 2, 8),
            None,
            None,
            0.5,
            None,
        )

    cases.append(Case("confmat_threshold binary", "confmat_threshold", binary))

    def logits(device):  # outside [0, 1]: the pick kernel chooses logit_threshold on the device
        preds = _scores(1500, 3, 9) * 8 - 4
        return _on(
            device,
            torch.zeros(3, 2, 2, dtype=torch.int64),
            preds,
            _labels(4500, 2, 10).view(1500, 3),
            None,
            None,
            0.5,
            0.25,
        )

    cases.append(Case("confmat_threshold logits", "confmat_threshold", logits))

    def many_labels(device):  # [L, 2, 2] counts beyond shared memory
        preds, target = _scores(4, 3100, 11), _labels(4 * 3100, 2, 12).view(4, 3100)
        return _on(device, torch.zeros(3100, 2, 2, dtype=torch.int64), preds, target, None, None, 0.5, None)

    cases.append(Case("confmat_threshold L=3100", "confmat_threshold", many_labels))

    def bad_label(device):
        target = _labels(500, 4, 11)
        target[317] = 4
        return _on(device, torch.zeros(4, 4, dtype=torch.int64), _labels(500, 4, 12), target, None, None)

    cases.append(Case("confmat_labels, a label out of range", "confmat_labels", bad_label, rejected=True))

    def nan_scores(device):
        scores = _scores(300, 6, 13)
        scores[120, 2] = float("nan")
        return _on(device, torch.zeros(6, 6, dtype=torch.int64), scores, _labels(300, 6, 14), None, None)

    cases.append(Case("confmat_scores, a NaN", "confmat_scores", nan_scores, rejected=True))
    return cases


def _curve_cases() -> List[Case]:
    cases = []
    # thresholds and histogram in shared memory; thresholds in shared memory, the histogram
    # global; the histogram in shared memory, the thresholds global; both global
    for count, columns, uniform in ((11, 3, True), (2000, 10, True), (3000, 1, False), (3000, 3, False)):

        def make(device, count=count, columns=columns, uniform=uniform):
            thresholds = torch.linspace(0, 1, count, dtype=torch.float64)
            preds = _scores(1200, columns, 15)
            return _on(
                device,
                torch.zeros(columns, count + 1, 2, dtype=torch.int64),
                preds if columns > 1 else preds[:, 0],
                _labels(1200, columns, 16) if columns > 1 else _labels(1200, 2, 16),
                None,
                None,
                thresholds,
                uniform,
            )

        cases.append(Case(f"binned_update T={count} K={columns}", "binned_update", make))
    for dtype in SCORE_DTYPES:

        def make_topk(device, dtype=dtype):
            return _on(
                device,
                torch.zeros(10, 3, dtype=torch.int64),
                _scores(800, 10, 17, dtype),
                _labels(800, 10, 18),
                None,
                None,
                3,
            )

        cases.append(Case(f"topk_update {str(dtype)[6:]}", "topk_update", make_topk))

        def wide_topk(device, dtype=dtype):  # [C, 3] counts beyond shared memory
            scores, target = _scores(16, 5000, 19, dtype), _labels(16, 5000, 20)
            return _on(device, torch.zeros(5000, 3, dtype=torch.int64), scores, target, None, None, 2)

        cases.append(Case(f"topk_update C=5000 {str(dtype)[6:]}", "topk_update", wide_topk))

    def decreasing(device):
        thresholds = torch.tensor([0.0, 0.5, 0.25, 1.0], dtype=torch.float64)
        return _on(
            device,
            torch.zeros(1, 5, 2, dtype=torch.int64),
            _scores(50, 1, 21)[:, 0],
            _labels(50, 2, 22),
            None,
            None,
            thresholds,
            False,
        )

    cases.append(Case("binned_update, decreasing thresholds", "binned_update", decreasing, rejected=True))
    return cases


def _moment_cases() -> List[Case]:
    def values(n, d, seed):
        return torch.randint(-64, 64, (n, d), generator=_gen(seed)).to(torch.float64) / 8

    def moments(device):
        weights = torch.randint(0, 4, (3000,), generator=_gen(23)).to(torch.float32)
        return _on(device, torch.zeros(3, 6, dtype=torch.float64), values(3000, 3, 24), weights)

    def comoments(device):
        return _on(device, torch.zeros(2, 6, dtype=torch.float64), values(2500, 2, 25), values(2500, 2, 26))

    def merge(device):
        state = torch.tensor([[4.0, 10.0, 2.5, 3.0, 1.0, 4.0]], dtype=torch.float64)
        other = torch.tensor([[2.0, 2.0, 1.0, 0.5, 0.5, 1.5]], dtype=torch.float64)
        return _on(device, state, other)

    def nan_x(device):
        x = values(400, 2, 27)
        x[201, 1] = float("nan")
        return _on(device, torch.zeros(2, 6, dtype=torch.float64), x, None)

    return [
        Case("moments_update", "moments_update", moments, exact=False),
        Case("comoments_update", "comoments_update", comoments, exact=False),
        Case("moments_merge", "moments_merge", merge, exact=False),
        Case("comoments_merge", "comoments_merge", merge, exact=False),
        Case("moments_update, a NaN", "moments_update", nan_x, rejected=True, exact=False),
    ]


def _segmentation_cases() -> List[Case]:
    def maps(n, pixels, classes, seed):
        return torch.randint(0, classes, (n, pixels), generator=_gen(seed))

    def counts_of(n, classes):
        return torch.full((n, classes, 3), -1, dtype=torch.int64)  # the kernels overwrite it

    def labels(classes):  # a per-block histogram in shared memory (5) or global atomics (5000)
        return lambda device: _on(
            device, counts_of(3, classes), maps(3, 3000, classes, 31), maps(3, 3000, classes, 32).int(), 0
        )

    def labels_bad(device):
        target = maps(2, 1000, 4, 33)
        target[1, 700] = 4
        return _on(device, counts_of(2, 4), maps(2, 1000, 4, 34), target, 0)

    def masks(device):
        preds = torch.randint(0, 2, (2, 3, 2000), generator=_gen(35)).to(torch.uint8)
        return _on(device, counts_of(2, 3), preds, torch.randint(0, 2, (2, 3, 2000), generator=_gen(36)).bool())

    def masks_bad(device):
        preds = torch.randint(0, 2, (2, 3, 500), generator=_gen(37))
        preds[1, 2, 499] = 2
        return _on(device, counts_of(2, 3), preds, preds.clone())

    cases = [
        Case("label_counts, shared histogram", "label_counts", labels(5)),
        Case("label_counts, global atomics", "label_counts", labels(5000)),
        Case("label_counts, a label out of range", "label_counts", labels_bad, rejected=True),
        Case("mask_counts", "mask_counts", masks),
        Case("mask_counts, a value outside {0, 1}", "mask_counts", masks_bad, rejected=True),
    ]
    for dtype in SCORE_DTYPES:

        def argmax(device, dtype=dtype):
            scores = (torch.randint(0, 8, (2, 4, 700), generator=_gen(38)).to(torch.float64) / 8).to(dtype)
            scores[0, 1, 5] = float("nan")
            return _on(device, torch.full((2, 700), -2, dtype=torch.int64), scores)

        cases.append(Case(f"class_argmax {dtype}", "class_argmax", argmax))
    return cases


def cases() -> List[Case]:
    return _confmat_cases() + _curve_cases() + _moment_cases() + _segmentation_cases()


def _settle(kernels, state: torch.Tensor) -> None:
    """Raise a rejection the kernels deferred (the CUDA module's check, waiting); the CPU core
    raises at the call."""
    check = getattr(kernels, "check", None)
    if check is not None and state.is_cuda:
        check(state.device.index, state.data_ptr(), state.numel() * state.element_size(), True)


def _outcome(kernels, case: Case, device) -> tuple:
    args = case.make(device)
    state = args[0]
    try:
        call_like_c_core(kernels, case.kernel, args)
        _settle(kernels, state)
    except ValueError as exc:
        return state, exc
    return state, None


def _same(a: torch.Tensor, b: torch.Tensor, exact: bool) -> bool:
    a, b = a.cpu(), b.cpu()
    if exact:
        return torch.equal(a, b)
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)


def run(kernels, reference, device, only: Optional[Sequence[str]] = None) -> List[str]:
    """The differences between `kernels` and `reference` over every case (names in `only`, when
    given), on `device`; [] when they agree everywhere."""
    differences = []
    for case in cases():
        if only is not None and case.name not in only:
            continue
        try:
            mine, my_error = _outcome(kernels, case, device)
        except Exception as exc:  # a CUDA failure: the device must not be served either
            differences.append(f"{case.name}: {type(exc).__name__}: {exc}")
            continue
        theirs, their_error = _outcome(reference, case, device)
        if case.rejected and (my_error is None or their_error is None):
            differences.append(
                f"{case.name}: the batch was {'accepted' if my_error is None else 'rejected'} "
                f"(the reference {'accepted' if their_error is None else 'rejected'} it)"
            )
        elif not case.rejected and my_error is not None:
            differences.append(f"{case.name}: rejected a good batch: {my_error}")
        elif not _same(mine, theirs, case.exact):
            differences.append(f"{case.name}: the state differs from the torch reference's")
    return differences
