#!/usr/bin/env bash
# gpu_check.sh: the GPU check, for a machine with an NVIDIA GPU, nvcc and a CUDA
# build of torch. One run, under 8 minutes:
#   1. builds torchtally in place with its CUDA kernels (TORCHTALLY_CUDA=1; TORCHTALLY_CUDA_ARCH
#      is passed through, default sm_80 + sm_90),
#   2. runs the GPU tests (tests/cuda: the kernels against the C core, bad input, streams, the
#      nccl backend) and reports passed / failed / skipped with the skip reasons,
#   3. benchmarks the classification collection's update at batch 1e6 x 1000 against torchmetrics,
#      with the achieved bandwidth next to the copy and read bandwidth measured in the same run
#      (benchmarks/gpu_check_bench.py).
# Everything goes to benchmarks/_out/gpu_check.md (and the full log to gpu_check.log); with
# --write-results that report also replaces the "GPU" section of benchmarks/RESULTS.md.
#
#   benchmarks/gpu_check.sh [--write-results]        (PYTHON=... to pick the interpreter)
#
# No install is needed: the package is imported from python/ (PYTHONPATH), so a machine whose
# python3 already holds a CUDA torch (no network, no venv) runs it as is. Where the environment
# names an output folder in $OUT (the device tool), the report, the logs and RESULTS.md are
# copied there at the end so they come back.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
RETURN_DIR=${OUT:-}

PY=${PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
OUTDIR=benchmarks/_out
REPORT=$OUTDIR/gpu_check.md
LOG=$OUTDIR/gpu_check.log
WRITE=0
[ "${1:-}" = "--write-results" ] && WRITE=1
mkdir -p "$OUTDIR"
: > "$LOG"
START=$(date +%s)

say() { echo "$*" | tee -a "$LOG"; }
fail() {
    say "gpu_check: $*"
    printf '%s\n' "gpu_check stopped: $*" >> "$REPORT"
    [ -n "$RETURN_DIR" ] && [ -d "$RETURN_DIR" ] && cp "$REPORT" "$LOG" "$RETURN_DIR"/ 2>/dev/null
    exit 1
}

{
    echo "# GPU check"
    echo
    echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
    echo
} > "$REPORT"

# -- 0. what this machine has ------------------------------------------------------------------
say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG" || true
if ! command -v nvcc > /dev/null; then  # setup.py finds nvcc on PATH: add CUDA's usual home
    for home in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
        if [ -n "$home" ] && [ -x "$home/bin/nvcc" ]; then export PATH="$home/bin:$PATH"; break; fi
    done
fi
command -v nvcc > /dev/null || fail "nvcc is not on PATH, CUDA_HOME, CUDA_PATH or /usr/local/cuda/bin"
NVCC_VERSION=$(nvcc --version | tail -1)
TORCH_LINE=$(timeout 120 "$PY" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())" 2>&1) \
    || fail "python/torch not usable: $TORCH_LINE"
say "torch: $TORCH_LINE; $NVCC_VERSION"
case "$TORCH_LINE" in
    *True) ;;
    *) fail "torch sees no CUDA device (torch, CUDA, available: $TORCH_LINE)" ;;
esac
echo "Toolchain: $NVCC_VERSION; torch, its CUDA, available: $TORCH_LINE." >> "$REPORT"

# -- 1. build ------------------------------------------------------------------------------------
say "== build (TORCHTALLY_CUDA=1, arch ${TORCHTALLY_CUDA_ARCH:-default 80;90})"
if ! TORCHTALLY_CUDA=1 timeout 200 "$PY" setup.py -q build_ext --inplace >> "$LOG" 2>&1; then
    echo >> "$REPORT"; echo "Build: **failed** (see $LOG)." >> "$REPORT"
    fail "the CUDA build failed; see $LOG"
fi
BUILD_INFO=$(timeout 60 "$PY" -c "from torchtally import _C_cuda; print(_C_cuda.build_info())" 2>&1) \
    || fail "torchtally._C_cuda does not import: $BUILD_INFO"
say "built: $BUILD_INFO"
printf '\nBuild: ok in %ss, torchtally._C_cuda %s.\n' "$(( $(date +%s) - START ))" "$BUILD_INFO" >> "$REPORT"

# -- 2. GPU tests ------------------------------------------------------------------------------------
say "== tests/cuda"
timeout 240 "$PY" -m pytest -q -rs -p no:cacheprovider tests/cuda > "$OUTDIR/gpu_tests.txt" 2>&1
TEST_RC=$?
cat "$OUTDIR/gpu_tests.txt" >> "$LOG"
SUMMARY=$(grep -E "passed|failed|error" "$OUTDIR/gpu_tests.txt" | tail -1)
[ $TEST_RC -eq 124 ] && SUMMARY="timed out after 240 s: $SUMMARY"
say "tests: $SUMMARY"
{
    echo
    echo "### GPU tests"
    echo
    echo "\`pytest tests/cuda\` (exit status $TEST_RC): $SUMMARY"
    echo
    echo '```'
    grep -E "^(SKIPPED|FAILED|ERROR)" "$OUTDIR/gpu_tests.txt" | head -40
    echo '```'
} >> "$REPORT"

# -- 3. benchmark ----------------------------------------------------------------------------------
say "== benchmark"
if timeout 200 "$PY" benchmarks/gpu_check_bench.py --out "$OUTDIR/gpu_bench.md" >> "$LOG" 2>&1; then
    { echo; echo "### Benchmark"; echo; cat "$OUTDIR/gpu_bench.md"; } >> "$REPORT"
else
    { echo; echo "### Benchmark"; echo; echo "**failed or timed out** (see $LOG):"; echo '```'; tail -15 "$LOG"; echo '```'; } >> "$REPORT"
fi

ELAPSED=$(( $(date +%s) - START ))
printf '\nWhole check: %s s.\n' "$ELAPSED" >> "$REPORT"
say "== done in ${ELAPSED}s: $REPORT"

if [ $WRITE -eq 1 ]; then
    "$PY" - "$REPORT" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "benchmarks")
from _common import replace_section
body = Path(sys.argv[1]).read_text().split("\n", 2)[2]  # without the report's own title
replace_section("GPU", body)
print("RESULTS.md: section 'GPU' replaced")
PY
fi
if [ -n "$RETURN_DIR" ] && [ -d "$RETURN_DIR" ]; then
    cp "$REPORT" "$LOG" "$OUTDIR/gpu_tests.txt" benchmarks/RESULTS.md "$RETURN_DIR"/ 2>/dev/null
    [ -f "$OUTDIR/gpu_bench.md" ] && cp "$OUTDIR/gpu_bench.md" "$RETURN_DIR"/
fi
[ $TEST_RC -eq 0 ]
