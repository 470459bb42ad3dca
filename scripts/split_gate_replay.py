"""Which of a random sample's products run a CUTLASS split-K plan whose slices run apart
(auto/cutlass_simt.cuh's run_slices: where CUTLASS's stream-K kernel would add them in a wave of
reduction blocks), and the sample's speed against cuBLAS fp32 replayed from two runs of it: one
of a build whose split plans all add their slices inside the stream-K kernel, one of a build
that runs every split plan's slices apart. Each product takes the second run's time where its
plan runs apart, the first's elsewhere, against the first run's cuBLAS; plans from the shipped
model on `--sms` SMs, no table (GEMMTILES_AUTO_TABLES=0): as the runs planned them but for the
few products this model plans at 24 or 32 slices, which the runs' builds did not weigh, and
which replay the time of the runs' own plans. CPU only.

    python scripts/split_gate_replay.py [BEFORE AFTER] [--sms 132]

BEFORE and AFTER: shape-by-shape runs (lines "i label layout ... bmm=B auto T us cublas C us
..."), by default the H200's of 2026-12-02 under docs/measurements.
"""
from __future__ import annotations

import argparse
import math

from gemmtiles import _C, exact_fit

D = "docs/measurements/2026-12-02/"
CUTLASS = {"cutlass": (False, False), "cutlass_a_copied": (True, False), "cutlass_b_copied": (False, True),
           "cutlass_ab_copied": (True, True)}


def load(path):
    """{(label, layout, bmm): (auto us, cuBLAS us)} of a shape-by-shape run."""
    out = {}
    for line in open(path):
        t = line.split()
        if len(t) > 8 and t[0].isdigit() and "auto" in t and "cublas" in t:
            i = t.index("auto")
            bmm = next(x for x in t if x.startswith("bmm="))[4:] == "1"
            out[(t[1], t[2], bmm)] = (float(t[i + 1]), float(t[i + 4]))
    return out


def runs_apart(label, layout, bmm, sms):
    """The product's plan, and whether its slices run apart (_C.cutlass_slices_apart: CUTLASS's
    rule for a wave of reduction blocks, on one product's tiles)."""
    dims = [int(x) for x in label.split("x")]
    batch, m, n, k = dims if len(dims) == 4 else [1] + dims
    mm, bb = (m, batch) if bmm else (m * batch, 1)
    a_k, b_k, a_vec, b_vec = exact_fit._flags("NN" if layout == "bmm" else layout, mm, n, k, bb)
    plan = _C.auto_plan(mm, n, k, bb, b_k, b_vec, sms, a_kmajor=a_k, a_vec=a_vec, cutlass=True)
    if plan.kernel not in CUTLASS:
        return plan, False
    copied_a, copied_b = CUTLASS[plan.kernel]
    return plan, _C.cutlass_slices_apart(plan.mt, plan.nw, plan.w, mm, n, k, plan.splits, sms, a_k and not copied_a,
                                         b_k and not copied_b)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="*", default=[D + "random-seed2-n200-h200-highest-head.txt",
                                               D + "random-seed2-n200-h200-highest-slices-apart-every-split.txt"])
    p.add_argument("--sms", type=int, default=132)
    args = p.parse_args()
    before, after = (load(x) for x in args.runs)
    keys = [key for key in before if key in after]
    planned = {key: runs_apart(*key, args.sms) for key in keys}
    apart = {key: planned[key][1] for key in keys}
    split = {key: planned[key][0].kernel in CUTLASS and planned[key][0].splits > 1 for key in keys}
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    print(f"{len(keys)} products; CUTLASS split plans {sum(split.values())}, slices apart {sum(apart.values())}")
    print("replay                 geomean   p10    min   M 1-16  17-256  257+")
    for name, takes in [("stream-K kernel", lambda key: False), ("every split apart", lambda key: split[key]),
                        ("apart where a wave", lambda key: apart[key])]:
        ratios, bands = [], {0: [], 1: [], 2: []}
        for key in keys:
            us = after[key][0] if takes(key) else before[key][0]
            r = before[key][1] / us
            ratios.append(r)
            m = [int(x) for x in key[0].split("x")][-3]
            bands[0 if m <= 16 else 1 if m <= 256 else 2].append(r)
        ratios.sort()
        print(f"{name:22s} {geo(ratios):7.3f} {ratios[len(ratios) // 10]:6.3f} {ratios[0]:6.3f}  "
              + "  ".join(f"{geo(v):6.3f}" for v in bands.values()))
    print("products whose slices run apart: before -> after (us), cuBLAS")
    for key in sorted(k for k in keys if apart[k]):
        print(f"  {key[0]} {key[1]}{' bmm' if key[2] else ''}: {before[key][0]:.1f} -> {after[key][0]:.1f}, "
              f"{before[key][1]:.1f}")


if __name__ == "__main__":
    main()
