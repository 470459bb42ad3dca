#!/usr/bin/env bash
# Runs every CUDA tier under compute-sanitizer: memcheck, racecheck and synccheck, on the
# small odd shapes of sanitize_cases.py. The caching allocator is off so that an access past
# the end of a tensor lands outside any allocation and is reported.
# Usage: scripts/sanitize.sh [tier ...]       (run on a machine with a CUDA GPU)
set -u
cd "$(dirname "$0")/.."
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
log=$(mktemp)
status=0
for tool in memcheck racecheck synccheck; do
  echo "== compute-sanitizer --tool $tool"
  compute-sanitizer --tool "$tool" --error-exitcode 1 python scripts/sanitize_cases.py "$@" >"$log" 2>&1
  rc=$?
  cat "$log"
  echo "== $tool exit status: $rc"
  [ "$rc" -eq 0 ] || status=1
done
rm -f "$log"
exit $status
