"""auto on products of few columns (1-16), drawn at random: cuBLAS fp32, the plan of least rank
among the candidates that are not swapped (the tiles' plan, forced), every swapped candidate
(out^T = B^T A^T on the skinny and GEMV kernels, forced), and auto as it plans. Each forced
candidate prints as kernel:rows x columns w(load width) s(splits), T where swapped, then its
estimate / its time (microseconds; R: refused), the estimate as auto prices it on this GPU
(exact_fit.gpu_model). The bench's timer, fp32 precision "ieee". Last, per layout and
number of columns: auto's and the tiles' plan's speed over cuBLAS (geomean, 10th percentile,
minimum).

    python scripts/time_swapped_plans.py [--seed 101] [--count 60] [--budget 0.1]

M is drawn log-uniform in [64, 65536], K in [64, 16384] (at most 2^28 elements of A), N from
1-8, 10, 12 and 16 (one twice as often); layouts NN, NT and TN. Fit kSwapMargin and kSwapUs
(csrc/auto/plan.h) on one seed, report on another.
"""

from __future__ import annotations

import argparse
import math
import random

import torch

import gemmtiles
from gemmtiles import bench, exact_fit
from gemmtiles._ops import _C

NS = (1, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16)


def shapes(seed: int, count: int):
    rng = random.Random(seed)

    def log_uniform(lo, hi):
        return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))

    for _ in range(count):
        m, n, k = log_uniform(64, 65536), rng.choice(NS), log_uniform(64, 16384)
        layout = rng.choice(["NN", "NT", "TN"])
        yield m, n, (k if m * k <= 2 ** 28 else max(64, 2 ** 28 // m)), layout


def summary(label: str, speeds: list[tuple[float, float]]) -> str:
    """One line of (auto, tiles' plan) speeds over cuBLAS: geomean, 10th percentile, minimum
    (bench.ratio_stats, as the bench summarises its random samples)."""
    def stats(xs):
        st = bench.ratio_stats(xs)
        return f"{st['geomean']:.3f} (p10 {st['p10']:.3f} min {st['min']:.3f})"

    auto, tiles = [s[0] for s in speeds], [s[1] for s in speeds if s[1] > 0]
    return f"# {label:8s} n={len(speeds):3d} auto {stats(auto)}  tiles {stats(tiles) if tiles else '-'}"


def name(plan) -> str:
    return f"{plan.kernel}:{plan.mt}x{plan.nw}w{plan.w}s{plan.splits}{'T' if plan.swapped else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=101)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--budget", type=float, default=0.1, help="seconds of timing per candidate")
    args = parser.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    params = exact_fit.gpu_model()
    g = torch.Generator().manual_seed(0)

    def time_us(fn):
        return bench._timer(dev, fn, 2, 15, args.budget)[0] * 1e3

    print(f"# python scripts/time_swapped_plans.py --seed {args.seed} --count {args.count} --budget {args.budget} "
          f"({torch.cuda.get_device_name(dev)}, torch {torch.__version__})")
    speeds = {}
    for m, n, k, layout in shapes(args.seed, args.count):
        a = torch.randn(m, k, generator=g) if layout[0] == "N" else torch.randn(k, m, generator=g).t()
        b = torch.randn(n, k, generator=g).t() if layout[1] == "T" else torch.randn(k, n, generator=g)
        a, b = a.to(dev), b.to(dev)
        a_k, b_k, a_vec, b_vec = exact_fit._layout_flags(a, b)
        cands = exact_fit.candidates(m, n, k, 1, a_k, b_k, b_vec, sms, a_vec, params)
        tiles = exact_fit.planned([c for c in cands if not c[0].swapped])

        def fn():
            return gemmtiles.sgemm(a, b)

        with gemmtiles.fp32_precision("ieee"):
            cublas, auto = time_us(lambda: torch.matmul(a, b)), time_us(fn)
            plan = exact_fit.planned(cands)[0]
            timed, tiles_us = [], 0.0
            for p, estimate in [tiles] + [c for c in cands if c[0].swapped]:
                _C.force_auto_plan(*p)
                try:
                    us = time_us(fn)
                    refused = _C.forced_plan_refused()
                finally:
                    _C.force_auto_plan()
                timed.append(f"{name(p)}={estimate:.2f}/{'R' if refused else f'{us:.2f}'}")
                if p is tiles[0] and not refused:
                    tiles_us = us
        print(f"{m}x{n}x{k} {layout} cublas={cublas:.2f} auto={auto:.2f} plan={name(plan)} " + " ".join(timed),
              flush=True)
        speed = (cublas / auto, cublas / tiles_us if tiles_us else 0.0)
        for group in ("all", layout, "N=1" if n == 1 else "N 2-8" if n <= 8 else "N 10-16"):
            speeds.setdefault(group, []).append(speed)
    # Speed over cuBLAS fp32 (its time / the side's): auto as planned, and the tiles' plan (what
    # auto ran before the swapped plans).
    for group in ("all", "NN", "NT", "TN", "N=1", "N 2-8", "N 10-16"):
        if group in speeds:
            print(summary(group, speeds[group]))


if __name__ == "__main__":
    main()
