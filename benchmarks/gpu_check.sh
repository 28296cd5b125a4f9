#!/usr/bin/env bash
# gpu_check.sh: the GPU check, for a machine with an NVIDIA GPU and a CUDA build of torch (no
# CUDA toolkit needed: nvcc is taken off PATH for the install). One run, under 9 minutes:
#   1. installs torchtally from this checkout with pip into a fresh folder, with no nvcc on PATH
#      and no CUDA_HOME (what a user's `pip install torchtally` does), then prints
#      torchtally.cuda_status() twice in fresh processes: the first compiles the kernels with
#      NVRTC for this GPU and runs the known-answer check (its time), the second reads the disk
#      cache (its time); both must say the kernels serve the device,
#   2. runs the GPU tests of that install (tests/cuda and tests/nccl: the kernels against the C
#      core, bad input, streams, graph capture, host synchronisations, the nccl backend) and
#      reports passed / failed / skipped with the skip reasons,
#   3. benchmarks the classification collection's update at batch 1e6 x 1000 against torchmetrics
#      and the torch reference, with the achieved bandwidth next to the copy and read bandwidth
#      measured in the same run, and the host synchronisations per update of every kernel family
#      (benchmarks/gpu_check_bench.py),
#   4. counts the host synchronisations of one update of every class of the catalogue on the GPU
#      (benchmarks/gpu_catalogue_syncs.py): which updates still wait for the host.
# Everything goes to benchmarks/_out/gpu_check.md (and the full log to gpu_check.log); with
# --write-results that report also replaces the "GPU" section of benchmarks/RESULTS.md.
#
#   benchmarks/gpu_check.sh [--write-results]        (PYTHON=... to pick the interpreter)
#
# No network is needed: pip installs from this checkout without build isolation (the machine's
# setuptools) and without dependencies (the machine's torch). Where the environment
# names an output folder in $OUT (the device tool), the report, the logs and RESULTS.md are
# copied there at the end so they come back.
set -uo pipefail
cd "$(dirname "$0")/.."
RETURN_DIR=${OUT:-}

PY=${PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
case "$PY" in  # absolute (some steps run from another folder); a venv's symlink kept as it is
    /*) ;;
    */*) PY="$PWD/$PY" ;;
    *) PY=$(command -v "$PY" || echo "$PY") ;;
esac
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
TORCH_LINE=$(timeout 120 "$PY" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())" 2>&1) \
    || fail "python/torch not usable: $TORCH_LINE"
say "torch: $TORCH_LINE"
case "$TORCH_LINE" in
    *True) ;;
    *) fail "torch sees no CUDA device (torch, CUDA, available: $TORCH_LINE)" ;;
esac
echo "torch, its CUDA, available: $TORCH_LINE." >> "$REPORT"

# -- 1. install without a toolkit, and the first use ---------------------------------------------
say "== pip install . (no nvcc on PATH, no CUDA_HOME)"
SITE="$PWD/$OUTDIR/site"
rm -rf "$SITE" build python/torchtally/*.so
# No CUDA folder on PATH, and an `nvcc` first on it that fails loudly: an install that called
# nvcc would stop here (wherever the machine's real nvcc lives).
SHADOW="$PWD/$OUTDIR/no-nvcc"
mkdir -p "$SHADOW"
printf '#!/bin/sh\necho "gpu_check: nvcc was called during the install" >&2\nexit 97\n' > "$SHADOW/nvcc"
chmod +x "$SHADOW/nvcc"
NO_CUDA_PATH="$SHADOW:$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i cuda | paste -sd: -)"
HOW='`pip install .`'
if ! env -u CUDA_HOME -u CUDA_PATH -u TORCHTALLY_CUDA_PREBUILT PATH="$NO_CUDA_PATH" timeout 240 "$PY" -m pip install -q --no-deps \
        --no-build-isolation --no-index --target "$SITE" . >> "$LOG" 2>&1; then
    # no pip or no setuptools wheel support here: the same C-only build, in place
    HOW='`pip install .` failed (see the log), so `setup.py build_ext --inplace`'
    SITE="$PWD/python"
    env -u CUDA_HOME -u CUDA_PATH -u TORCHTALLY_CUDA_PREBUILT PATH="$NO_CUDA_PATH" timeout 240 "$PY" setup.py -q \
        build_ext --inplace >> "$LOG" 2>&1 \
        || { echo >> "$REPORT"; echo "Install: **failed** (see $LOG)." >> "$REPORT"; fail "the build failed without nvcc; see $LOG"; }
fi
grep -q "nvcc was called during the install" "$LOG" && fail "the install called nvcc (see $LOG)"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export TORCHTALLY_CACHE_DIR="$PWD/$OUTDIR/kernel-cache"
rm -rf "$TORCHTALLY_CACHE_DIR"
printf '\nInstall: %s with no nvcc on PATH, ok in %ss.\n' "$HOW" "$(( $(date +%s) - START ))" >> "$REPORT"
for round in "first use (empty cache)" "second process (warm cache)"; do
    began=$(date +%s%N)
    STATUS=$(cd /tmp && timeout 200 "$PY" -c "import torch, torchtally; s = torchtally.cuda_status(devices=range(torch.cuda.device_count())); print(s); assert s.devices and all(d.serves for d in s.devices)" 2>&1)
    rc=$?
    took=$(( ($(date +%s%N) - began) / 1000000 ))
    say "cuda_status, $round (${took} ms, exit $rc):"; say "$STATUS"
    { echo; echo "cuda_status(), $round, ${took} ms for the whole process (exit $rc):"; echo; echo '```'; echo "$STATUS"; echo '```'; } >> "$REPORT"
    [ $rc -eq 0 ] || fail "the kernels do not serve this GPU ($round)"
done

# -- 2. GPU tests ------------------------------------------------------------------------------------
say "== tests/cuda tests/nccl"
timeout 240 "$PY" -m pytest -q -rs -p no:cacheprovider tests/cuda tests/nccl > "$OUTDIR/gpu_tests.txt" 2>&1
TEST_RC=$?
cat "$OUTDIR/gpu_tests.txt" >> "$LOG"
SUMMARY=$(grep -E "passed|failed|error" "$OUTDIR/gpu_tests.txt" | tail -1)
[ $TEST_RC -eq 124 ] && SUMMARY="timed out after 240 s: $SUMMARY"
say "tests: $SUMMARY"
{
    echo
    echo "### GPU tests"
    echo
    echo "\`pytest tests/cuda tests/nccl\` (exit status $TEST_RC): $SUMMARY"
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

# -- 4. which classes of the catalogue still synchronise per update -------------------------------
say "== host synchronisations per update, every class of the catalogue"
if timeout 150 "$PY" benchmarks/gpu_catalogue_syncs.py --out "$OUTDIR/gpu_syncs.md" >> "$LOG" 2>&1; then
    { echo; echo "### Host synchronisations per update, every class of the catalogue"; echo; cat "$OUTDIR/gpu_syncs.md"; } >> "$REPORT"
else
    { echo; echo "### Host synchronisations per class"; echo; echo "**failed or timed out** (see $LOG)"; } >> "$REPORT"
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
    [ -f "$OUTDIR/gpu_syncs.md" ] && cp "$OUTDIR/gpu_syncs.md" "$RETURN_DIR"/
fi
[ $TEST_RC -eq 0 ]
