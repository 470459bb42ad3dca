"""Times every candidate auto weighs (gemmtiles._C.exact_candidates), each forced through the auto
op, on the random sample: the data `python -m gemmtiles.exact_fit` fits the cost model to.

    python scripts/measure_candidates.py --shapes random:200:1 --out candidates.csv
"""
from __future__ import annotations

import argparse
import sys

import torch

from gemmtiles import bench, exact_fit


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="random:200:1")
    p.add_argument("--out", required=True)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--start", type=int, default=0, help="the first shape's index (after a crash)")
    p.add_argument("--max-rows", type=int, default=0,
                   help="only the shapes of at most this many rows of A (a batch's rows counted once "
                        "per product for bmm, together otherwise); 0: all")
    p.add_argument("--min-rows", type=int, default=0,
                   help="only the shapes of at least this many rows of A (counted as --max-rows counts them)")
    p.add_argument("--layouts", default="", help="only these layouts, comma-separated (NN,NT,TN); default all")
    p.add_argument("--kernels", default="",
                   help="only the candidates whose kernel starts with one of these, comma-separated "
                        "(skinny,cutlass,...); default all")
    p.add_argument("--exact-kernels", default="",
                   help="only the candidates of these kernels, named whole, comma-separated "
                        "(cutlass: CUTLASS's kernel on the operands as they lie); default all")
    p.add_argument("--splits", default="", help="only the candidates of these splits, comma-separated; default all")
    p.add_argument("--tiles", default="",
                   help="only the CUTLASS candidates of these tiles, rows x columns x warps, comma-separated "
                        "(32x32x2); default all")
    args = p.parse_args()
    shapes = bench.shape_set(args.shapes, "cuda")
    rows = lambda s: s.m if s.bmm else s.m * s.batch  # noqa: E731
    if args.max_rows:
        shapes = [s for s in shapes if rows(s) <= args.max_rows]
    if args.min_rows:
        shapes = [s for s in shapes if rows(s) >= args.min_rows]
    if args.layouts:
        shapes = [s for s in shapes if s.layout in args.layouts.split(",")]
    exact_fit.measure(shapes, args.out, torch.device("cuda"), args.repeats, args.start, progress=sys.stderr,
                      kernels=args.kernels.split(",") if args.kernels else None,
                      exact_kernels=args.exact_kernels.split(",") if args.exact_kernels else None,
                      splits=[int(s) for s in args.splits.split(",")] if args.splits else None,
                      tiles=[tuple(int(x) for x in t.split("x")) for t in args.tiles.split(",")] if args.tiles else None)


if __name__ == "__main__":
    main()
