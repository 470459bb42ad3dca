"""x @ W^T of 2-16 rows against transformer weights (W: N x K, nn.Linear's layout): the GPU
microseconds of cuBLAS fp32 and TF32, of auto under torch's "highest" and "high", and of the tf32
tier (the median of 30 calls, each timed on the GPU alone as gemmtiles.bench times it), the GB/s
of B that cuBLAS TF32 and auto stream, and the kernels each call runs (torch's profiler).

    python scripts/few_rows_nt.py
"""
from __future__ import annotations

import torch

import gemmtiles
from gemmtiles import bench
from profile_small import kernels  # scripts/: (name, GPU microseconds) of each kernel a call runs

ROWS = (2, 4, 8, 12, 16)
WEIGHTS = ((5504, 2048), (2048, 5504), (32000, 2048), (4096, 4096), (11008, 4096))  # (N, K)


def gpu_us(fn, device, calls: int = 30) -> float:
    """The median GPU microseconds of `calls` calls of fn, as gemmtiles.bench times them."""
    return bench._timer(device, fn, 1, calls, budget_s=1e9)[0] * 1e3


def under(precision: str, fn):
    with bench._fp32_matmul_precision(precision):
        return fn()


def kernel_list(fn):
    return [(name[:60], round(us, 1)) for name, us in kernels(fn)]


def main():
    device = torch.device("cuda")
    g = torch.Generator().manual_seed(0)
    print("shape us: cublas cublas-tf32 auto-highest auto-high tf32-forced | GB/s of B: cublas-tf32 auto-highest")
    for m in ROWS:
        for n, k in WEIGHTS:
            a = torch.randn(m, k, generator=g).to(device)
            b = torch.randn(n, k, generator=g).to(device).t()
            fp32 = gpu_us(lambda: bench.cublas_matmul(a, b, False), device)
            tf32 = gpu_us(lambda: bench.cublas_matmul(a, b, True), device)
            auto = lambda: gemmtiles.sgemm(a, b)  # noqa: E731
            highest = under("highest", lambda: gpu_us(auto, device))
            high = under("high", lambda: gpu_us(auto, device))
            tier = under("highest", lambda: gpu_us(lambda: gemmtiles.sgemm(a, b, tier="tf32"), device))
            mb = 4 * n * k / 1e3
            print(f"{m}x{n}x{k} NT: {fp32:.1f} {tf32:.1f} {highest:.1f} {high:.1f} {tier:.1f} | "
                  f"{mb / tf32:.0f} {mb / highest:.0f}  ratio high/tf32 {tf32 / high:.2f} "
                  f"tf32forced/tf32 {tf32 / tier:.2f}", flush=True)
            print("   auto:", under("highest", lambda: kernel_list(auto)),
                  "\n   high:", under("high", lambda: kernel_list(auto)),
                  "\n   cublas-tf32:", kernel_list(lambda: bench.cublas_matmul(a, b, True)), flush=True)


if __name__ == "__main__":
    main()
