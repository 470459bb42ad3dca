"""How tf32's wgmma kernels fare on each schedule: CUTLASS's stream-K heuristic (what tf32
runs) against every tile's K in s splits (1: data-parallel; the partial tiles summed one after
another in a fixed order), forced through gemmtiles._C.force_tf32_splits, on products of a
random sample, with cuBLAS TF32 in the same run. One CSV row per (shape, schedule): splits 0
is the heuristic, -1 cuBLAS TF32; route and tile_n are tf32_route's kernel and tile width.
The switch moves the stream-K kernels alone: a product that tf32 runs in K slices summed apart
(route "slices") runs those on every row, and a batch sharing B, whose route is asked of its
rows together, runs on the tier the route the slices stand in for.

    python scripts/tf32_splits.py --seed 101 --count 90 --max-rows 512 --out splits.csv
"""
from __future__ import annotations

import argparse
import csv

import torch

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags

SPLITS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def sample(doc: str, script: str):
    """The command line of a script timing tf32 on a random sample's products (this one,
    scripts/tf32_slices.py and scripts/tf32_routes.py): its arguments, the first --count
    products of --seed's sample of at most --max-rows rows (M x batch) and one B, or the
    products --shapes names (the bench's syntax), the GPU, its SMs and the operands' generator,
    under torch's "high"."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=101, help="the random sample's seed (tune on one, report on another)")
    ap.add_argument("--count", type=int, default=90, help="products to time")
    ap.add_argument("--max-rows", type=int, default=512, help="products of at most this many rows (M x batch)")
    ap.add_argument("--shapes", help="these products instead of the sample (the bench's --shapes, one B each)")
    ap.add_argument("--out", required=True, help="the CSV to write")
    args = ap.parse_args()
    if not torch.cuda.is_available() or not _C.sm90a_kernels():
        raise SystemExit(f"{script}: needs a CUDA GPU and a build with the sm_90a kernels")
    torch.set_float32_matmul_precision("high")
    if args.shapes:
        shapes = [s for s in bench.shape_set(args.shapes, "cuda") if not s.bmm]
    else:
        shapes = [s for s in bench.random_shapes(30 * args.count, seed=args.seed)
                  if s.m * s.batch <= args.max_rows and not s.bmm][:args.count]
    dev = torch.device("cuda")
    return args, shapes, dev, torch.cuda.get_device_properties(dev).multi_processor_count, \
        torch.Generator().manual_seed(0)


def tf32_us(dev, a, b, splits: int, budget_s: float = 0.3) -> float:
    """tf32's time on a @ b (microseconds, the bench's timer) with every tile's K forced into
    `splits` (0: CUTLASS's stream-K heuristic, what tf32 runs)."""
    _C.force_tf32_splits(splits)
    try:
        return bench._timer(dev, lambda: gemmtiles.sgemm(a, b, tier="tf32"), 2, 15, budget_s)[0] * 1e3
    finally:
        _C.force_tf32_splits()


def main() -> None:
    args, shapes, dev, sms, g = sample(__doc__, "tf32_splits.py")
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "m", "n", "k", "layout", "batch", "route", "tile_n", "splits", "us"])
        for s in shapes:
            a, b = bench.operands(s, g, dev)
            m = s.m * s.batch  # a batch sharing B runs as one product of its rows
            _, b_kmajor, _, b_vec = _flags(s.layout, m, s.n, s.k)
            route = _C.tf32_route(m, s.n, s.k, 1, b_kmajor, b_vec, sms)
            ms, _ = bench._timer(dev, lambda: torch.matmul(a, b), 2, 15, 0.3)
            w.writerow([s.label, m, s.n, s.k, s.layout, s.batch, "cublas-tf32", 0, -1, ms * 1e3])
            for splits in SPLITS:
                w.writerow([s.label, m, s.n, s.k, s.layout, s.batch, route[0], route[2], splits,
                            tf32_us(dev, a, b, splits)])
            f.flush()
            print(s.label, route[:3], flush=True)


if __name__ == "__main__":
    main()
