"""One launch each of cuBLAS TF32, gemmtiles tf32 and tf32x3 (4096^3, nn.Linear's NT layout)
inside a profiler range, for Nsight Compute's tensor-pipe figures:

    ncu --profile-from-start off --metrics \\
        gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed \\
        python scripts/ncu_tensor.py
"""

import torch

import gemmtiles
from gemmtiles.bench import cublas_matmul


def main():
    n = 4096
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda").T

    calls = [lambda: cublas_matmul(a, b, tf32=True), lambda: gemmtiles.sgemm(a, b, tier="tf32"),
             lambda: gemmtiles.sgemm(a, b, tier="tf32x3")]
    for call in calls:  # warm-up: library loading, autotuning, allocator
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for call in calls:
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
