"""tf32 with K in slices summed apart (tf32_slices in csrc/auto/plan.h), forced to each count
of slices through gemmtiles._C.force_tf32_slices, against what tf32 plans and cuBLAS TF32, on
products of a random sample. One CSV row per (shape, setting): "cublas-tf32", "planned"
(route: what tf32_route gives), "slicesN" (about N slices, on the narrow tile of least time).

    python scripts/tf32_slices.py --seed 101 --count 90 --max-rows 512 --out slices.csv
"""
from __future__ import annotations

import argparse
import csv

import torch

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags

COUNTS = (2, 3, 4, 6, 8, 12, 16, 24, 32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=101, help="the random sample's seed (tune on one, report on another)")
    ap.add_argument("--count", type=int, default=90, help="products to time")
    ap.add_argument("--max-rows", type=int, default=512, help="products of at most this many rows (M x batch)")
    ap.add_argument("--out", required=True, help="the CSV to write")
    args = ap.parse_args()
    if not torch.cuda.is_available() or not _C.sm90a_kernels():
        raise SystemExit("tf32_slices.py: needs a CUDA GPU and a build with the sm_90a kernels")

    torch.set_float32_matmul_precision("high")
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    shapes = [s for s in bench.random_shapes(30 * args.count, seed=args.seed)
              if s.m * s.batch <= args.max_rows and not s.bmm][:args.count]
    g = torch.Generator().manual_seed(0)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "m", "n", "k", "layout", "route", "slices", "setting", "us"])
        for s in shapes:
            if s.batch != 1:  # the slices run one product; a batch sharing B is folded by auto alone
                continue
            a, b = bench.operands(s, g, dev)
            _, b_kmajor, _, b_vec = _flags(s.layout, s.m, s.n, s.k)
            route = _C.tf32_route(s.m, s.n, s.k, 1, b_kmajor, b_vec, sms)
            slices = route[6] if route[0] == "slices" else 0

            def row(setting, ms):
                w.writerow([s.label, s.m, s.n, s.k, s.layout, route[0], slices, setting, ms * 1e3])

            row("cublas-tf32", bench._timer(dev, lambda: torch.matmul(a, b), 2, 15, 0.3)[0])
            row("planned", bench._timer(dev, lambda: gemmtiles.sgemm(a, b, tier="tf32"), 2, 15, 0.3)[0])
            for count in COUNTS:
                if -(-s.k // 32) < 2:
                    break
                _C.force_tf32_slices(count)
                try:
                    row(f"slices{count}", bench._timer(dev, lambda: gemmtiles.sgemm(a, b, tier="tf32"), 2, 15, 0.3)[0])
                finally:
                    _C.force_tf32_slices()
            f.flush()
            print(s.label, route[0], slices, flush=True)


if __name__ == "__main__":
    main()
