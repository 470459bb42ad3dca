"""How each of tf32's kernels fares on the products of a random sample, forced through
gemmtiles._C.force_tf32_route: the narrow kernel on its three widths, tf32's own on 128 x 128
and 128 x 256, the kernel that transposes an N-major B, and Ampere's kernel on several splits,
against tf32's own route (what its model picks, tf32_route) and cuBLAS TF32 in the same run,
under torch's "high"; the bench's timer, microseconds. One CSV row per (product, kernel):
forced "route" is the model's pick, "cublas-tf32" cuBLAS; a kernel that cannot run the
product (its launch then runs the route's) is left out. A batch sharing B (--shapes BxMxNxK) is
asked of its rows as one product, as the launch runs it where it folds: where it does not, the
route column may name a kernel (Ampere's, K slices) that runs one product only.

    python scripts/tf32_routes.py --seed 103 --count 40 --max-rows 512 --out routes.csv
"""
from __future__ import annotations

import csv

import torch
from tf32_splits import sample  # this directory's

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags

KERNELS = [("narrow", 32, 0), ("narrow", 64, 0), ("narrow", 128, 0), ("own", 128, 0), ("own", 256, 0),
           ("transposing", 0, 0), ("ampere", 0, 1), ("ampere", 0, 2), ("ampere", 0, 3), ("ampere", 0, 4)]


def main() -> None:
    args, shapes, dev, sms, g = sample(__doc__, "tf32_routes.py")

    def time(fn) -> float:
        return bench._timer(dev, fn, 2, 10, 0.15)[0] * 1e3

    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "m", "n", "k", "layout", "batch", "route", "route_tile_n", "route_splits", "forced",
                    "us"])
        for s in shapes:
            a, b = bench.operands(s, g, dev)
            m = s.m * s.batch  # a batch sharing B runs as one product of its rows
            _, b_kmajor, _, b_vec = _flags(s.layout, m, s.n, s.k)
            route = _C.tf32_route(m, s.n, s.k, 1, b_kmajor, b_vec, sms)
            head = [s.label, m, s.n, s.k, s.layout, s.batch, route[0], route[2], route[6]]
            w.writerow(head + ["cublas-tf32", time(lambda: torch.matmul(a, b))])
            w.writerow(head + ["route", time(lambda: gemmtiles.sgemm(a, b, tier="tf32"))])
            try:
                for kernel, tile_n, splits in KERNELS:
                    _C.force_tf32_route(kernel, tile_n, splits)
                    us = time(lambda: gemmtiles.sgemm(a, b, tier="tf32"))
                    if not _C.forced_tf32_route_refused():
                        w.writerow(head + [f"{kernel}:{tile_n or splits}", us])
            finally:
                _C.force_tf32_route()
            f.flush()
            print(s.label, route[:3], flush=True)


if __name__ == "__main__":
    main()
