"""The CUDA kernels' first-use costs that need no GPU: NVRTC's compile of every kernel for one
architecture (an empty cache), reading the image back from the disk cache (a warm one), and the
known-answer check's cases run through the CPU core (how much work the check is; its GPU time
is the GPU check's). Refreshes the section "CUDA kernels: compile and first use" of
benchmarks/RESULTS.md.

    python benchmarks/bench_cuda_compile.py
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine_line, markdown_table, replace_section  # noqa: E402

from torchtally import _C, _C_cuda  # noqa: E402
from torchtally.kernels import reference  # noqa: E402
from torchtally.kernels.cuda import cache, known_answer, nvrtc  # noqa: E402

ARCHES = ("sm_80", "sm_90", "sm_120")
REPEATS = 3


def median_seconds(fn, repeats: int = REPEATS) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    compiler = nvrtc.find()
    source = _C_cuda.kernel_source()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        store = cache.Cache(folder)
        for arch in ARCHES:
            compile_s = median_seconds(lambda: compiler.compile(source, arch))
            image = compiler.compile(source, arch).image
            key = cache.entry_key(source, arch, compiler.version, 13000)
            store.write(key, "cubin", image)
            read_s = median_seconds(lambda: store.get_or_make(key, "cubin", lambda: b""), repeats=20)
            rows.append([arch, f"{compile_s:.2f} s", f"{len(image) / 1e3:,.0f} kB", f"{read_s * 1e3:.2f} ms"])
    check_s = median_seconds(lambda: known_answer.run(_C, reference, "cpu"))
    body = "\n".join(
        [
            machine_line(),
            "",
            f"NVRTC {compiler.version[0]}.{compiler.version[1]} ({Path(compiler.path).name}), every one of the "
            f"{len(_C_cuda.kernel_names())} kernels in one program, median of {REPEATS} compiles on one core of this "
            "machine; then the same image read back from the disk cache (checksum included), as a second process "
            "or the other ranks of a torchrun job do.",
            "",
            markdown_table(["architecture", "compile (empty cache)", "image", "read from the cache (warm)"], rows),
            "",
            f"The known-answer check: {len(known_answer.cases())} cases (every kernel family, each variant the "
            f"launches choose between, {sum(c.rejected for c in known_answer.cases())} rejected batches), each run "
            "through the kernels and through the torch reference. "
            f"Through the CPU core here: {check_s * 1e3:.0f} ms. On a GPU, its time (with the load) is in "
            "cuda_status() "
            "and in the GPU check's first-use lines.",
        ]
    )
    replace_section("CUDA kernels: compile and first use", body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
