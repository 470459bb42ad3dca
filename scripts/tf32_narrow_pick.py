"""How tf32's route picks among the configurations that scripts/tf32_narrow_rows.cu timed: for
each NT product of its output, the configuration auto's model runs (``_C.tf32_route``: the
narrow kernel's tile, or tf32's own), the best one, and the route before the narrow kernel
took every row count (128 x 64 up to 128 rows, tf32's own tile past them); cuBLAS TF32's time
over each, as geometric means. No GPU needed (the planner is the extension's host code).

    python scripts/tf32_narrow_pick.py docs/measurements/2026-11-27/tf32-narrow-rows-random-nt-seed2-h100.txt
"""

from __future__ import annotations

import argparse
import math
import re

from gemmtiles._ops import _C

# "NT M x N x K  cublas-tf32 T", or "... cublas fp32 F  tf32 T" (the sweeps in docs/measurements/2026-11-27).
HEAD = re.compile(r"(NN|NT)\s+(\d+) x\s+(\d+) x\s+(\d+)\s+cublas(?:-tf32\s+([\d.]+)| fp32\s+[\d.]+\s+tf32\s+([\d.]+))")
ROW = re.compile(r"\s+(\S.*?)\s+([\d.]+) us")


def parse(path: str) -> dict:
    """{(M, N, K): {"cublas-tf32": us, configuration: us, ...}} of the NT products in a sweep."""
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            head = HEAD.match(line)
            if head:
                cur = (int(head[2]), int(head[3]), int(head[4])) if head[1] == "NT" else None
                if cur:
                    out[cur] = {"cublas-tf32": float(head[5] or head[6])}
                continue
            row = ROW.match(line)
            if row and cur:
                out[cur][row[1]] = float(row[2])
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sweeps", nargs="+", help="outputs of scripts/tf32_narrow_rows.cu")
    p.add_argument("--sms", type=int, default=132)
    args = p.parse_args()
    for path in args.sweeps:
        picked, best, before = [], [], []
        for (m, n, k), times in parse(path).items():
            configs = {name: t for name, t in times.items() if name != "cublas-tf32"}
            kernel, _, tile_n, _, _, own_n, _ = _C.tf32_route(m, n, k, 1, True, True, args.sms)
            own = f"tf32 128x{own_n} 2x1 tma"
            pick = f"narrow 128x{tile_n}" if kernel == "narrow" else own
            old = "narrow 128x64" if m <= 128 else own
            cub = times["cublas-tf32"]
            picked.append(cub / configs[pick])
            before.append(cub / configs[old])
            best.append(cub / min(configs.values()))
        print(f"{path}: {len(picked)} NT products; cuBLAS TF32's time over: the route's pick "
              f"{geomean(picked):.3f}, the route before {geomean(before):.3f}, the best configuration "
              f"{geomean(best):.3f} (geomean)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
