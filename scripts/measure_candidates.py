"""Times auto's candidate kernels, each forced through the auto op (gemmtiles._C.force_auto_plan),
on the random sample: the data the exact-kernel cost model is fitted to.

    python scripts/measure_candidates.py --shapes random:200:1 --out candidates.csv
"""
from __future__ import annotations

import argparse
import csv
import sys

import torch

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C


def operands(shape, g, device):
    if shape.layout == "TN":
        a = torch.randn(*((shape.batch,) if shape.bmm else ()), shape.k, shape.m, generator=g).to(device).mT
    else:
        a = torch.randn((shape.m, shape.k) if shape.batch == 1 else (shape.batch, shape.m, shape.k), generator=g).to(device)
    bb = (shape.batch,) if shape.bmm else ()
    if shape.layout == "NT":
        b = torch.randn(*bb, shape.n, shape.k, generator=g).to(device).mT
    else:
        b = torch.randn(*bb, shape.k, shape.n, generator=g).to(device)
    return a, b


def candidates(shape):
    ak, bk = shape.layout[0] == "N", shape.layout[1] == "T"
    large = (256, 128) if (not ak and not bk) else (128, 256)
    tiles = [large, (128, 128), (64, 64), (32, 128)]
    out = []
    for t in tiles:
        scheds = (1,) if shape.batch > 1 and shape.bmm else (0, 1, 2, 4, 8, 16)
        for s in scheds:
            out.append(("cutlass", t[0], t[1], s))
    if shape.layout == "NT" and shape.batch == 1:  # B copied row-major first: NN's tiles
        for t in [(128, 256), (128, 128), (64, 64), (32, 128)]:
            for s in (1, 2, 4, 8, 16):
                out.append(("cutlass_b_copied", t[0], t[1], s))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="random:200:1")
    p.add_argument("--out", required=True)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--layouts", default="", help="only these layouts, e.g. NT")
    p.add_argument("--start", type=int, default=0, help="the first shape's index (after a crash)")
    args = p.parse_args()
    device = torch.device("cuda")
    torch.set_float32_matmul_precision("highest")
    shapes = bench.shape_set(args.shapes, "cuda")
    g = torch.Generator().manual_seed(0)
    if args.layouts:
        shapes = [s for s in shapes if s.layout in args.layouts.split(",")]
    fresh = args.start == 0
    with open(args.out, "w" if fresh else "a", newline="") as f:
        w = csv.writer(f)
        if fresh:
            w.writerow(["batch", "m", "n", "k", "layout", "bmm", "candidate", "mt", "nw", "splits", "us", "err"])
        for i, shape in enumerate(shapes):
            if i < args.start:
                continue
            a, b = operands(shape, g, device)
            ref = torch.matmul(a.double(), b.double())
            norm = ref.norm().item() or 1.0
            rows = []
            for name, fn in (("cublas", lambda: torch.matmul(a, b)), ("auto", lambda: gemmtiles.sgemm(a, b, tier="auto"))):
                out = fn()
                err = (out.double() - ref).norm().item() / norm
                ms, _ = bench._timer(device, fn, 2, args.repeats, 0.3)
                rows.append((name, 0, 0, 0, ms * 1e3, err))
            for name, mt, nw, s in candidates(shape):
                print(f"shape {i} {shape.label} {name} {mt}x{nw} s{s}", file=sys.stderr, flush=True)
                _C.force_auto_plan(name, mt, nw, 1, s, 0)
                try:
                    fn = lambda: gemmtiles.sgemm(a, b, tier="auto")
                    out = fn()
                    err = (out.double() - ref).norm().item() / norm
                    ms, _ = bench._timer(device, fn, 2, args.repeats, 0.3)
                    rows.append((name, mt, nw, s, ms * 1e3, err))
                except RuntimeError as e:
                    print(f"{shape.label} {name} {mt}x{nw} s{s}: {e}", file=sys.stderr)
                finally:
                    _C.force_auto_plan()
            for r in rows:
                w.writerow([shape.batch, shape.m, shape.n, shape.k, shape.layout, int(shape.bmm), *r])
            f.flush()
            best = min(r[4] for r in rows[2:]) if len(rows) > 2 else float("nan")
            print(f"[{i + 1}/{len(shapes)}] {shape.label}: cublas {rows[0][4]:.1f} auto {rows[1][4]:.1f} "
                  f"best cutlass {best:.1f}", file=sys.stderr, flush=True)
            del a, b, ref


if __name__ == "__main__":
    main()
