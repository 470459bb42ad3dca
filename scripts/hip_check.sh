#!/usr/bin/env bash
# Compiles every ladder tier's CUDA kernels as HIP for AMD CDNA GPUs (default: gfx908 = MI100,
# gfx90a = MI200, gfx942 = MI300), from scripts/hip_ladder.hip and the same .cuh sources, and
# prints one line per kernel: tier, arch, VGPRs, AGPRs, SGPRs, LDS bytes, scratch bytes per
# lane, spills and occupancy (hipcc's kernel-resource-usage remarks). Nothing runs: no AMD GPU
# is needed. Exit status 0 only if every tier that the tier table builds for HIP compiled for
# every arch this hipcc knows; an arch it does not know is reported and skipped, except gfx908.
# Needs: apt-get install hipcc libamdhip64-dev rocm-device-libs.   Usage: scripts/hip_check.sh [arch ...]
set -u
cd "$(dirname "$0")/.."
if ! command -v hipcc >/dev/null; then
  echo "hip_check: hipcc not found (apt-get install hipcc libamdhip64-dev rocm-device-libs)" >&2
  exit 2
fi
export HIP_PLATFORM=amd
archs=${*:-gfx908 gfx90a gfx942}
tiers=$(python3 -c "
import runpy
table = runpy.run_path('gemmtiles/_tiers.py')['TIERS']
print(' '.join(t.name for t in table if 'cuda' in t.devices and t.hip))")
echo "hipcc: $(hipcc --version 2>/dev/null | grep -m1 'HIP version'); tiers built for HIP: $tiers"
status=0
log=$(mktemp)
for arch in $archs; do
  if ! hipcc -x hip --offload-arch="$arch" -O3 -std=c++17 -c scripts/hip_ladder.hip -o /dev/null \
      -Rpass-analysis=kernel-resource-usage >"$log" 2>&1; then
    if grep -q "invalid target ID\|unsupported CUDA gpu architecture\|unknown target CPU" "$log" && [ "$arch" != gfx908 ]; then
      echo "$arch: not known to this hipcc; skipped"
      continue
    fi
    cat "$log"
    echo "$arch: compile FAILED"
    status=1
    continue
  fi
  python3 scripts/hip_resources.py "$arch" $tiers <"$log" || status=1
done
rm -f "$log"
exit $status
