"""tf32 with K in slices summed apart (tf32_slices in csrc/auto/plan.h), forced to each count
of slices through gemmtiles._C.force_tf32_slices, against what tf32 plans and cuBLAS TF32, on
products of a random sample. One CSV row per (shape, setting): "cublas-tf32", "planned"
(route: what tf32_route gives), "slicesN" (about N slices, on the narrow tile of least time).

    python scripts/tf32_slices.py --seed 101 --count 90 --max-rows 512 --out slices.csv
"""
from __future__ import annotations

import csv

import torch
from tf32_splits import sample  # this directory's

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags

COUNTS = (2, 3, 4, 6, 8, 12, 16, 24, 32)


def main() -> None:
    args, shapes, dev, sms, g = sample(__doc__, "tf32_slices.py")
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
