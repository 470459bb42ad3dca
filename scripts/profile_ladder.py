"""Runs each tier once (after one warm-up call) on one shape, for Nsight Compute:

    ncu --metrics <...> -k regex:'gemmtiles|gemm' python scripts/profile_ladder.py 4096 [tiers]

cuBLAS (torch.matmul, TF32 off) runs last for comparison. scripts/profile_ladder.sh holds the
metric list behind the figures in docs/ladder.md."""

from __future__ import annotations

import sys

import torch

import gemmtiles


def main() -> int:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    tiers = sys.argv[2].split(",") if len(sys.argv) > 2 else gemmtiles.tiers("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(size, size, device="cuda")
    b = torch.randn(size, size, device="cuda")
    for tier in tiers:
        gemmtiles.sgemm(a, b, tier=tier)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for tier in tiers:
        gemmtiles.sgemm(a, b, tier=tier)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
