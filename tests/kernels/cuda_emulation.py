"""The CUDA kernels' own source run on the host (csrc/cuda/emulation/README.md), through
torchtally._C_cuda's real host path, and compared with the C core (torchtally._C) bit for bit.

`build_image(source, folder)` compiles the device source (what NVRTC compiles,
_C_cuda.kernel_source(), or a changed copy of it) with the system C++ compiler into the
emulation image, a shared library; the fake driver (fake_libcuda.c) loads it through
cuModuleLoadData and runs every cuLaunchKernel on the host. `compare(image, driver, ...)` runs
the cases below in a fresh interpreter on that driver (stand-in CUDA tensors, fake_cuda.py,
whose memory is host memory) and returns, per kernel of kernel_table.h, how many cases
launched it and in how many of those the state or the verdict differed from the C core's.

Cases: the device's known-answer cases (torchtally.kernels.cuda.known_answer) and seeded
random ones: sizes around warp and block boundaries, every score dtype and label dtype,
strided and sliced inputs, masks and ignore_index, and rejected batches (the state must end
as it was and the message be the C core's).
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

HERE = Path(__file__).resolve().parent
CXX = os.environ.get("CXX", "g++")


def build_image(source: str, folder: Path, names) -> str:
    """The emulation image of `source` (the kernels' device source) with a table of `names`."""
    table = "".join(f"    TT_EMU_KERNEL({name})\n" for name in names)
    text = source + "\nconst tt_emu_kernel tt_emu_kernels[] = {\n" + table + "    {NULL, NULL}};\n"
    unit = folder / "emulation.cpp"
    unit.write_text(text)
    out = folder / "emulation.so"
    flags = ["-std=c++17", "-O1", "-fPIC", "-shared", "-DTT_EMULATION", "-Wall", "-Wno-unknown-pragmas"]
    subprocess.run([CXX, *flags, "-x", "c++", str(unit), "-o", str(out)], check=True, capture_output=True)
    return str(out)


def compare(image: str, driver: str, seed: int = 0, sms: int = 2, only: Optional[str] = None) -> Dict[str, list]:
    """{kernel: [cases, mismatches]} for every kernel some case launched; `only`: a case-name
    substring. Mismatch details go to the child's stderr, returned under "_details"."""
    env = {
        **os.environ,
        "TORCHTALLY_LIBCUDA": driver,
        "FAKE_CUDA_SEED": str(seed),
        "FAKE_CUDA_SMS": str(sms),
        "FAKE_CUDA_LOG": str(Path(image).with_suffix(f".{seed}.{sms}.log")),
    }
    argv = [sys.executable, str(Path(__file__)), image] + ([only] if only else [])
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the emulation run failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["_details"] = done.stderr.splitlines()
    return result


# ---- the child: runs on the fake driver ------------------------------------------------------


def _cases(torch, known_answer, g):
    """(name, kernel, make, exact) for every case; make() gives the arguments, the state first,
    from the generator `g` (seeded before each call, so that two calls give the same)."""
    cases = [(c.name, c.kernel, (lambda c=c: c.make(torch.device("cpu"))), c.exact) for c in known_answer.cases()]

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

            def make(classes=classes, n=n, dtype=dtype, variant=variant):
                p, t = ri(0, classes, (n,), dtype), ri(0, classes, (n,), dtype)
                mask = ignore = None
                if variant == "mask+ignore":
                    mask, ignore = ri(0, 2, (n,)).bool(), classes - 1
                if variant == "strided":
                    p, t = strided_rows(p), strided_rows(t)
                if variant == "bad":
                    t[(n * 7) // 11] = classes
                return [torch.zeros(classes, classes, dtype=torch.int64), p, t, mask, ignore]

            cases.append((f"labels C={classes} N={n} {dtype} {variant}", "confmat_labels", make, True))
    for dtype in score_dtypes:
        for classes, n in ((3, 257), (16, 255), (17, 70), (32, 65), (33, 40), (64, 33), (111, 17), (130, 9)):
            for variant in ("plain", "mask+ignore", "strided", "column-major", "nan", "bad"):

                def make(classes=classes, n=n, dtype=dtype, variant=variant):
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

                cases.append((f"scores C={classes} N={n} {dtype} {variant}", "confmat_scores", make, True))
    for dtype in score_dtypes + (torch.int64,):
        for cols, n in ((None, 1025), (3, 300), (4100, 2)):
            for variant in ("threshold", "logits", "mask+ignore", "nan"):

                def make(cols=cols, n=n, dtype=dtype, variant=variant):
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

                cases.append((f"threshold L={cols} N={n} {dtype} {variant}", "confmat_threshold", make, True))
    for dtype in score_dtypes:
        shapes = ((1, 1, False), (11, 3, True), (200, 2, False), (2048, 1, False), (2049, 2, True))
        for count, cols, multiclass in shapes:
            for variant in ("uniform", "given", "mask+ignore", "nan", "decreasing"):

                def make(count=count, cols=cols, multiclass=multiclass, dtype=dtype, variant=variant):
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
                cases.append((name, "binned_update", make, True))
    for dtype in score_dtypes:
        for classes, n, k in ((1, 40, 1), (5, 257, 2), (33, 40, 5), (40, 12, 40), (5000, 9, 3)):
            for variant in ("plain", "mask+ignore", "strided", "nan", "bad"):

                def make(classes=classes, n=n, k=k, dtype=dtype, variant=variant):
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

                cases.append((f"topk C={classes} N={n} k={k} {dtype} {variant}", "topk_update", make, True))
    # moments: integer-valued data, so sums and means are exact and every order agrees
    for dtype in score_dtypes:
        for n, d in ((1, 1), (255, 3), (1025, 1), (700, 33)):
            for variant in ("plain", "weights", "nan"):

                def make(n=n, d=d, dtype=dtype, variant=variant):
                    x = ri(-8, 9, (n, d)).to(dtype)
                    w = ri(0, 3, (n,)).to(torch.float32) if variant == "weights" else None
                    if variant == "nan":
                        x[n // 2, d - 1] = float("nan")
                    return [torch.zeros(d, 6, dtype=torch.float64), x, w]

                cases.append((f"moments N={n} D={d} {dtype} {variant}", "moments_update", make, False))

                def make_co(n=n, d=d, dtype=dtype, variant=variant):
                    x, y = ri(-8, 9, (n, d)).to(dtype), ri(-8, 9, (n, d)).to(dtype)
                    if variant == "nan":
                        y[n // 2, 0] = float("nan")
                    return [torch.zeros(d, 6, dtype=torch.float64), x, y]

                cases.append((f"comoments N={n} D={d} {dtype} {variant}", "comoments_update", make_co, False))
    for rows in (1, 257):
        for kernel in ("moments_merge", "comoments_merge"):

            def make(rows=rows):
                state = torch.cat([ri(1, 9, (rows, 1)).double(), ri(-9, 9, (rows, 5)).double() / 4], 1)
                other = torch.cat([ri(0, 9, (rows, 1)).double(), ri(-9, 9, (rows, 5)).double() / 4], 1)
                return [state, other]

            cases.append((f"{kernel} rows={rows}", kernel, make, False))
    return cases


def _launched(log: str):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        names = [line.split()[0] for line in f]
    os.remove(log)
    return names


def _run_child(image: str, only: Optional[str]) -> None:
    import types

    import torch

    torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=0)  # no CUDA torch here
    sys.path.insert(0, str(HERE))
    from fake_cuda import on_fake_cuda

    from torchtally import _C, _C_cuda
    from torchtally.kernels.cuda import known_answer

    _C_cuda.load_kernels(0, Path(image).read_bytes())
    log = os.environ["FAKE_CUDA_LOG"]
    _launched(log)
    tally: Dict[str, list] = {name: [0, 0] for name in _C_cuda.kernel_names()}

    def outcome(module, kernel: str, args) -> Tuple[object, Optional[str]]:
        state = args[0]
        try:
            getattr(module, kernel)(*(on_fake_cuda(args) if module is _C_cuda else args))
            if module is _C_cuda:
                _C_cuda.check(0, state.data_ptr(), state.numel() * state.element_size(), True)
        except ValueError as exc:
            return state, str(exc)
        return state, None

    g = torch.Generator()
    for i, (name, kernel, make, exact) in enumerate(_cases(torch, known_answer, g)):
        if only and only not in name:
            continue
        mine, my_error = outcome(_C_cuda, kernel, (g.manual_seed(i), make())[1])
        ran = set(_launched(log))
        theirs, their_error = outcome(_C, kernel, (g.manual_seed(i), make())[1])
        if exact:
            same = torch.equal(mine, theirs)
        else:
            same = torch.allclose(mine, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)
        # the CUDA message is the C core's, then where it was found
        verdict = (my_error is None) == (their_error is None) and (
            my_error is None or my_error.startswith(their_error)  # type: ignore[union-attr]
        )
        for k in ran:
            tally[k][0] += 1
            tally[k][1] += not (same and verdict)
        if not (same and verdict):
            detail = f"state same={same}; {my_error!r} vs {their_error!r}"
            print(f"MISMATCH {name}: kernels {sorted(ran)}; {detail}", file=sys.stderr)
    print(json.dumps(tally))


if __name__ == "__main__":
    _run_child(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
