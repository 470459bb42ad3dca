"""tf32 on mid-size products of the hidden sizes of smaller models (M 256-4096 rows, N and K
512-3072, multiples of 4; x @ W^T and x @ W), on CUTLASS's stream-K heuristic (what tf32 runs)
and on every tile's K forced into s splits (gemmtiles._C.force_tf32_splits), against cuBLAS TF32
and the exact kernels, under torch's "high"; the bench's timer, microseconds. Five fixed
products, then 22 drawn with --seed.

    python scripts/tf32_mid_size.py --seed 11
"""

from __future__ import annotations

import argparse
import math
import random

import torch
from tf32_splits import tf32_us  # this directory's

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C

FIXED = [(512, 1024, 1024, "NT"), (512, 768, 768, "NT"), (512, 3072, 768, "NT"), (512, 768, 3072, "NT"),
         (2048, 1024, 1024, "NT")]
SPLITS = (0, 1, 2, 3, 4, 8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=11, help="the drawn products' seed")
    args = ap.parse_args()
    if not torch.cuda.is_available() or not _C.sm90a_kernels():
        raise SystemExit("tf32_mid_size.py: needs a CUDA GPU and a build with the sm_90a kernels")
    torch.set_float32_matmul_precision("high")
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    rng = random.Random(args.seed)

    def log_uniform(lo, hi):
        return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))

    shapes = FIXED + [(log_uniform(256, 4096), 4 * (log_uniform(512, 3072) // 4), 4 * (log_uniform(512, 3072) // 4),
                       rng.choice(["NT", "NN"])) for _ in range(22)]
    g = torch.Generator().manual_seed(0)
    print("shape route tile cublas heur " + " ".join(f"s{s}" for s in SPLITS[1:]) + " exact")
    for m, n, k, layout in shapes:
        a = torch.randn(m, k, generator=g).to(dev)
        b = torch.randn(n, k, generator=g).to(dev).t() if layout == "NT" else torch.randn(k, n, generator=g).to(dev)
        route = _C.tf32_route(m, n, k, 1, layout == "NT", True, sms)
        times = [bench._timer(dev, lambda: torch.matmul(a, b), 2, 15, 0.2)[0] * 1e3]
        times += [tf32_us(dev, a, b, splits, budget_s=0.2) for splits in SPLITS]
        with gemmtiles.fp32_precision("ieee"):
            times.append(bench._timer(dev, lambda: gemmtiles.sgemm(a, b), 2, 15, 0.2)[0] * 1e3)
        print(f"{m}x{n}x{k} {layout} {route[0]} {route[1]}x{route[2]} " + " ".join(f"{t:.1f}" for t in times),
              flush=True)


if __name__ == "__main__":
    main()
