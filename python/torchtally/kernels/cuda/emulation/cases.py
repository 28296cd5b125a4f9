"""The cases the emulation runs, each on the CUDA kernels and on the C core: the device's
known-answer cases (torchtally.kernels.cuda.known_answer) and seeded random ones: sizes around
warp and block boundaries, every score dtype and label dtype, strided and sliced inputs, masks
and ignore_index, and rejected batches (the state must end as it was and the message be the C
core's)."""

from typing import Callable, List, NamedTuple

import torch

from .. import known_answer


class Case(NamedTuple):
    name: str
    kernel: str  # the method of _C / _C_cuda
    make: Callable[[], list]  # the arguments, the state first
    exact: bool  # bit for bit; else to 1e-12 (moments: the merge order differs by design)


def cases(g: torch.Generator) -> List[Case]:
    """Every case; make() draws from the generator `g` (seeded before each call, so that two
    calls give the same arguments)."""

    def on_cpu(case: "known_answer.Case") -> Callable[[], list]:
        return lambda: case.make(torch.device("cpu"))

    found = [Case(c.name, c.kernel, on_cpu(c), c.exact) for c in known_answer.cases()]

    def ri(lo, hi, shape, dtype=torch.int64):
        return torch.randint(lo, hi, shape, generator=g).to(dtype)

    def scores(n, c, dtype):  # multiples of 1/32 with ties, exact in every score dtype
        return (ri(0, 32, (n, c)).to(torch.float64) / 32).to(dtype)

    def strided_rows(t):  # every other row of a twice-as-long tensor
        big = torch.zeros((t.shape[0] * 2, *t.shape[1:]), dtype=t.dtype)
        big[::2] = t
        return big[::2]

    label_dtypes = (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8)
    score_dtypes = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
    for i, (classes, n) in enumerate(((1, 40), (2, 255), (31, 257), (32, 1023), (33, 1025), (110, 700), (111, 300))):
        dtype = label_dtypes[i % len(label_dtypes)]
        for variant in ("plain", "mask+ignore", "strided", "bad"):

            def make_labels(classes=classes, n=n, dtype=dtype, variant=variant):
                p, t = ri(0, classes, (n,), dtype), ri(0, classes, (n,), dtype)
                mask = ignore = None
                if variant == "mask+ignore":
                    mask, ignore = ri(0, 2, (n,)).bool(), classes - 1
                if variant == "strided":
                    p, t = strided_rows(p), strided_rows(t)
                if variant == "bad":
                    t[(n * 7) // 11] = classes
                return [torch.zeros(classes, classes, dtype=torch.int64), p, t, mask, ignore]

            found.append(Case(f"labels C={classes} N={n} {dtype} {variant}", "confmat_labels", make_labels, True))
    for dtype in score_dtypes:
        for classes, n in ((3, 257), (16, 255), (17, 70), (32, 65), (33, 40), (64, 33), (111, 17), (130, 9)):
            for variant in ("plain", "mask+ignore", "strided", "column-major", "nan", "bad"):

                def make_scores(classes=classes, n=n, dtype=dtype, variant=variant):
                    s, t = scores(n, classes, dtype), ri(0, classes, (n,))
                    mask = ignore = None
                    if variant == "mask+ignore":
                        mask, ignore = ri(0, 2, (n,)).bool(), 0
                    if variant == "strided":
                        s = strided_rows(s)
                    if variant == "column-major":
                        s = s.t().contiguous().t()
                    if variant == "nan":
                        s[n // 3, classes // 2] = float("nan")
                    if variant == "bad":
                        t[n // 2] = -1
                    return [torch.zeros(classes, classes, dtype=torch.int64), s, t, mask, ignore]

                found.append(Case(f"scores C={classes} N={n} {dtype} {variant}", "confmat_scores", make_scores, True))
    for dtype in score_dtypes + (torch.int64,):
        for cols, n in ((None, 1025), (3, 300), (4100, 2)):
            for variant in ("threshold", "logits", "mask+ignore", "nan"):

                def make_threshold(cols=cols, n=n, dtype=dtype, variant=variant):
                    shape = (n,) if cols is None else (n, cols)
                    if dtype == torch.int64:
                        p = ri(0, 2, shape)
                    else:
                        p = scores(n, cols or 1, dtype).reshape(shape)
                        if variant == "logits":
                            p = (p.double() * 8 - 4).to(dtype)
                    t = ri(0, 2, shape)
                    mask = ignore = None
                    if variant == "mask+ignore":
                        mask, ignore = ri(0, 2, (n,)).bool(), 1
                    if variant == "nan" and dtype != torch.int64:
                        p.view(-1)[p.numel() // 2] = float("nan")
                    out = torch.zeros(*((cols, 2, 2) if cols else (2, 2)), dtype=torch.int64)
                    logit = 0.0 if variant == "logits" and dtype != torch.int64 else None
                    return [out, p, t, mask, ignore, 0.5, logit]

                found.append(
                    Case(f"threshold L={cols} N={n} {dtype} {variant}", "confmat_threshold", make_threshold, True)
                )
    for dtype in score_dtypes:
        shapes = ((1, 1, False), (11, 3, True), (200, 2, False), (2048, 1, False), (2049, 2, True))
        for count, cols, multiclass in shapes:
            for variant in ("uniform", "given", "mask+ignore", "nan", "decreasing"):

                def make_binned(count=count, cols=cols, multiclass=multiclass, dtype=dtype, variant=variant):
                    n = 300
                    thresholds = torch.linspace(0, 1, count, dtype=torch.float64)
                    if variant == "given":
                        thresholds = torch.sort(ri(0, 40, (count,)).double() / 32).values
                    if variant == "decreasing" and count > 1:
                        thresholds[count // 2] = -1.0
                    p = scores(n, cols, dtype)
                    if multiclass:
                        t = ri(0, cols, (n,))
                    else:
                        t = ri(0, 2, (n, cols))
                    if cols == 1 and not multiclass:
                        p, t = p[:, 0], t[:, 0]
                    mask = ignore = None
                    if variant == "mask+ignore":
                        mask, ignore = ri(0, 2, (n,)).bool(), 0
                    if variant == "nan":
                        p.view(-1)[7] = float("nan")
                    out = torch.zeros(cols, count + 1, 2, dtype=torch.int64)
                    return [out, p, t, mask, ignore, thresholds, int(variant == "uniform")]

                name = f"binned T={count} K={cols} multiclass={multiclass} {dtype} {variant}"
                found.append(Case(name, "binned_update", make_binned, True))
    for dtype in score_dtypes:
        for classes, n, k in ((1, 40, 1), (5, 257, 2), (33, 40, 5), (40, 12, 40), (5000, 9, 3)):
            for variant in ("plain", "mask+ignore", "strided", "nan", "bad"):

                def make_topk(classes=classes, n=n, k=k, dtype=dtype, variant=variant):
                    s, t = scores(n, classes, dtype), ri(0, classes, (n,))
                    mask = ignore = None
                    if variant == "mask+ignore":
                        mask, ignore = ri(0, 2, (n,)).bool(), 0
                    if variant == "strided":
                        s = strided_rows(s)
                    if variant == "nan":
                        s[n - 1, 0] = float("nan")
                    if variant == "bad":
                        t[n // 2] = classes
                    return [torch.zeros(classes, 3, dtype=torch.int64), s, t, mask, ignore, k]

                found.append(Case(f"topk C={classes} N={n} k={k} {dtype} {variant}", "topk_update", make_topk, True))
    # moments: integer-valued data, so sums and means are exact and every order agrees
    for dtype in score_dtypes:
        for n, d in ((1, 1), (255, 3), (1025, 1), (700, 33)):
            for variant in ("plain", "weights", "nan"):

                def make_moments(n=n, d=d, dtype=dtype, variant=variant):
                    x = ri(-8, 9, (n, d)).to(dtype)
                    w = ri(0, 3, (n,)).to(torch.float32) if variant == "weights" else None
                    if variant == "nan":
                        x[n // 2, d - 1] = float("nan")
                    return [torch.zeros(d, 6, dtype=torch.float64), x, w]

                found.append(Case(f"moments N={n} D={d} {dtype} {variant}", "moments_update", make_moments, False))

                def make_co(n=n, d=d, dtype=dtype, variant=variant):
                    x, y = ri(-8, 9, (n, d)).to(dtype), ri(-8, 9, (n, d)).to(dtype)
                    if variant == "nan":
                        y[n // 2, 0] = float("nan")
                    return [torch.zeros(d, 6, dtype=torch.float64), x, y]

                found.append(Case(f"comoments N={n} D={d} {dtype} {variant}", "comoments_update", make_co, False))
    for rows in (1, 257):
        for kernel in ("moments_merge", "comoments_merge"):

            def make_merge(rows=rows):
                state = torch.cat([ri(1, 9, (rows, 1)).double(), ri(-9, 9, (rows, 5)).double() / 4], 1)
                other = torch.cat([ri(0, 9, (rows, 1)).double(), ri(-9, 9, (rows, 5)).double() / 4], 1)
                return [state, other]

            found.append(Case(f"{kernel} rows={rows}", kernel, make_merge, False))
    found += _segmentation(ri)
    return found


def _segmentation(ri: Callable) -> List[Case]:
    """label_counts, mask_counts and class_argmax: pixels around warp and block boundaries, every
    label and score dtype, strided samples and pixels, and the first bad element of a batch
    (the kernels' status keys against the C core's walk)."""
    found = []
    label_dtypes = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
    sizes = ((1, 1, 1), (3, 31, 2), (2, 32, 5), (5, 255, 3), (2, 257, 21), (2, 300, 5000), (17, 70, 4), (3, 1025, 7))
    for i, (n, pixels, classes) in enumerate(sizes):
        dtype = label_dtypes[i % len(label_dtypes)]
        if dtype == torch.bool:
            classes = 2
        for variant in ("plain", "strided", "bad preds", "bad target", "nan", "first bad"):

            def make_labels(n=n, pixels=pixels, classes=classes, dtype=dtype, variant=variant):
                p, t = ri(0, classes, (n, pixels), dtype), ri(0, classes, (n, pixels), dtype)
                scored = 0
                if variant == "strided":  # every other sample and every third pixel of bigger maps
                    p = ri(0, classes, (2 * n, 3 * pixels), dtype)[::2, ::3]
                    t = ri(0, classes, (2 * n, 3 * pixels), dtype).t().contiguous().t()[::2, ::3]
                if variant == "bad preds" and dtype != torch.bool:
                    p[n - 1, pixels // 2] = classes if dtype != torch.int8 or classes < 127 else -3
                if variant == "bad target" and dtype != torch.bool:
                    t[n // 2, pixels - 1] = -1 if dtype != torch.uint8 else 255
                if variant == "nan" and dtype not in (torch.bool, torch.uint8):
                    p, t, scored = p.to(torch.int64), t.to(torch.int64), 3
                    t[0, pixels // 3] = -1
                if variant == "first bad" and dtype not in (torch.bool, torch.uint8):
                    t[0, 0] = -1  # target's first is earlier, but preds are looked at first
                    p[n - 1, pixels - 1] = classes
                    if n > 1:
                        p[n // 2, 0] = -1
                out = torch.full((n, classes, 3), -5, dtype=torch.int64)
                return [out, p, t, scored]

            name = f"label_counts N={n} P={pixels} C={classes} {dtype} {variant}"
            found.append(Case(name, "label_counts", make_labels, True))
    mask_sizes = ((1, 1, 1), (2, 3, 31), (3, 2, 257), (2, 5, 1024), (4, 3, 1030), (3, 4, 33))
    for i, (n, classes, pixels) in enumerate(mask_sizes):
        dtype = label_dtypes[i % len(label_dtypes)]
        for variant in ("plain", "strided", "bad preds", "bad target", "both bad"):

            def make_masks(n=n, classes=classes, pixels=pixels, dtype=dtype, variant=variant):
                p, t = ri(0, 2, (n, classes, pixels), dtype), ri(0, 2, (n, classes, pixels), dtype)
                if variant == "strided":  # classes last in memory, every other pixel
                    p = ri(0, 2, (n, 2 * pixels, classes), dtype).permute(0, 2, 1)[:, :, ::2]
                if variant in ("bad preds", "both bad") and dtype != torch.bool:
                    p[n - 1, classes - 1, pixels - 1] = 2
                if variant in ("bad target", "both bad") and dtype != torch.bool:
                    t[0, classes // 2, pixels // 2] = -1 if dtype != torch.uint8 else 3
                out = torch.full((n, classes, 3), -5, dtype=torch.int64)
                return [out, p, t]

            name = f"mask_counts N={n} C={classes} P={pixels} {dtype} {variant}"
            found.append(Case(name, "mask_counts", make_masks, True))
    score_dtypes = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
    for dtype in score_dtypes:
        for n, classes, pixels in ((1, 1, 1), (2, 3, 255), (3, 7, 257), (2, 21, 1025)):
            for variant in ("plain", "strided", "nan and -inf"):

                def make_argmax(n=n, classes=classes, pixels=pixels, dtype=dtype, variant=variant):
                    s = (ri(0, 8, (n, classes, pixels)).double() / 8).to(dtype)  # ties
                    if variant == "strided":
                        s = (ri(0, 8, (n, 2 * pixels, classes)).double() / 8).to(dtype).permute(0, 2, 1)[:, :, ::2]
                    if variant == "nan and -inf":
                        s[:, :, 0] = float("-inf")
                        s[n - 1, classes - 1, pixels - 1] = float("nan")
                    return [torch.full((n, pixels), -5, dtype=torch.int64), s]

                name = f"class_argmax N={n} C={classes} P={pixels} {dtype} {variant}"
                found.append(Case(name, "class_argmax", make_argmax, True))
    return found
