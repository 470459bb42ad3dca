"""Where a small product's time goes: for each shape of a random sample that cuBLAS finishes
in under --max-us microseconds, a tier's (auto's by default) and cuBLAS's event time (as the
bench measures it), the kernels each ran with their GPU durations (torch's profiler), and the
host's dispatch time per call (back-to-back calls, no synchronisation). Under --precision
high cuBLAS runs TF32 and auto may run the tensor cores.

    python scripts/profile_small.py --shapes random:200:1 --max-us 25
    python scripts/profile_small.py --shapes random:200:101 --tier tf32 --precision high --max-us 60
"""
from __future__ import annotations

import argparse
import time

import torch

import gemmtiles
from gemmtiles import bench


def kernels(fn):
    """(name, microseconds) of each CUDA kernel or memset one call of fn ran."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return [(e.name, e.device_time) for e in evs]


def host_us(fn, calls=200):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def short(name: str) -> str:
    for key in ("skinny", "split", "cutlass", "Gemm", "gemv", "gemm", "reduce", "memset", "Memset", "transpose",
                "pipelined", "copy", "sgemm"):
        if key in name:
            return key + ":" + name[:60].replace(" ", "")
    return name[:40].replace(" ", "")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="random:200:1")
    p.add_argument("--max-us", type=float, default=25.0)
    p.add_argument("--tier", default="auto")
    p.add_argument("--precision", default="highest", choices=("highest", "high", "medium"))
    args = p.parse_args()
    dev = torch.device("cuda")
    torch.set_float32_matmul_precision(args.precision)
    g = torch.Generator().manual_seed(0)
    for shape in bench.shape_set(args.shapes, "cuda"):
        a, b = bench.operands(shape, g, dev)
        cub = lambda: torch.matmul(a, b)  # noqa: E731
        ours = lambda: gemmtiles.sgemm(a, b, tier=args.tier)  # noqa: E731
        cub_ms, _ = bench._timer(dev, cub, 3, 10, 0.05)
        if cub_ms * 1e3 > args.max_us:
            continue
        ours_ms, _ = bench._timer(dev, ours, 3, 10, 0.05)
        kc, ko = kernels(cub), kernels(ours)
        print(f"{shape.label:<28} cublas {cub_ms * 1e3:6.1f} us (kernels {sum(t for _, t in kc):6.1f}, host "
              f"{host_us(cub):5.1f})  {args.tier} {ours_ms * 1e3:6.1f} us (kernels {sum(t for _, t in ko):6.1f}, host "
              f"{host_us(ours):5.1f})  ratio {cub_ms / ours_ms:4.2f}")
        print("    cublas: " + "  ".join(f"{short(n)} {t:.1f}" for n, t in kc))
        print(f"    {args.tier + ':':<8}" + "  ".join(f"{short(n)} {t:.1f}" for n, t in ko))


if __name__ == "__main__":
    main()
