#!/usr/bin/env bash
# One pass on a GPU machine: build from source, tune harness, tests, benchmark, sanitizer.
# Logs go to $OUT (default ./gpu-logs). Usage: scripts/gpu_check.sh [steps...]
#   steps: build tune tests bench overhead sanitize (default: all, in that order)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16} PYTHONUNBUFFERED=1
steps=${*:-build tune tests bench overhead sanitize}
for step in $steps; do
  echo "=== $step ($(date +%T))"
  case $step in
    build)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
      GEMMTILES_PTXAS_VERBOSE=1 python -m pip install -v --no-build-isolation --no-deps -e . >"$OUT/build.log" 2>&1 \
        || { tail -40 "$OUT/build.log"; exit 1; }
      grep -E "Compiling entry|registers|spill" "$OUT/build.log" | sed -E 's/.*(_Z[^ ]*).*/\1/' | paste - - - \
        | sed -E 's/ptxas info *: //g' | awk '{print}' | c++filt | cut -c1-220 >"$OUT/ptxas.txt"
      ;;
    tune)
      nvcc -O3 -std=c++17 -arch=sm_90 scripts/tune_warptile.cu -lcublas -o /tmp/tune_warptile \
        && /tmp/tune_warptile | tee "$OUT/tune.txt" && /tmp/tune_warptile 8192 8192 8192 | tee -a "$OUT/tune.txt"
      ;;
    tests)
      python -m pytest tests -q -x -p no:cacheprovider ${PYTEST_ARGS:-} >"$OUT/tests.log" 2>&1
      grep -m1 -B2 -A12 "Fatal Python error" "$OUT/tests.log"; tail -25 "$OUT/tests.log"
      ;;
    bench)
      python -m gemmtiles.bench --shapes "${BENCH_SHAPES:-all}" --out "$OUT" 2>&1 | tee "$OUT/bench.txt"
      ;;
    overhead)
      python -m gemmtiles.bench --overhead 2>&1 | tee "$OUT/overhead.txt"
      ;;
    sanitize)
      scripts/sanitize.sh >"$OUT/sanitize.log" 2>&1
      echo "sanitizer exit status $?"
      grep -E "ERROR SUMMARY|exit status|cases ok|Error|error" "$OUT/sanitize.log" | sort | uniq -c | head -30
      ;;
  esac
done
