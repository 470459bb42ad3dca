"""Reads hipcc's kernel-resource-usage remarks (stdin) and prints one line per kernel; fails
unless every tier named on the command line has at least one kernel. Used by hip_check.sh."""

import re
import subprocess
import sys

arch, tiers = sys.argv[1], sys.argv[2:]
kernels = []
for line in sys.stdin:
    m = re.search(r"remark: +(Function Name|[A-Za-z ]+?(?: \[[^\]]+\])?): (\S+) \[-Rpass", line)
    if not m:
        continue
    key, value = m.group(1), m.group(2)
    if key == "Function Name":
        kernels.append({"name": value})
    elif kernels:
        kernels[-1][key] = value

names = subprocess.run(["c++filt"], input="\n".join(k["name"] for k in kernels), capture_output=True,
                       text=True).stdout.splitlines()
seen = set()
print(f"{'tier':<14} {'arch':<7} {'VGPRs':>5} {'AGPRs':>5} {'SGPRs':>5} {'LDS B':>6} {'scratch':>7} "
      f"{'spills':>6} {'waves/SIMD':>10}  kernel")
for k, full in zip(kernels, names):
    tier = re.search(r"gemmtiles::(\w+)_kernel", full).group(1)
    seen.add(tier)
    spills = int(k.get("SGPRs Spill", 0)) + int(k.get("VGPRs Spill", 0))
    config = re.sub(r"gemmtiles::", "", full.split("(")[0].split("_kernel", 1)[1])
    print(f"{tier:<14} {arch:<7} {k.get('VGPRs', '?'):>5} {k.get('AGPRs', '?'):>5} {k.get('SGPRs', '?'):>5} "
          f"{k.get('LDS Size [bytes/block]', '?'):>6} {k.get('ScratchSize [bytes/lane]', '?'):>7} {spills:>6} "
          f"{k.get('Occupancy [waves/SIMD]', '?'):>10}  {config}")
missing = [t for t in tiers if t not in seen]
if missing:
    print(f"{arch}: no kernel compiled for {', '.join(missing)}", file=sys.stderr)
    sys.exit(1)
