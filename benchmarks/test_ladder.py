"""The ladder against cuBLAS, grouped by shape."""

from __future__ import annotations

import pytest
import torch

import gemmtiles
from gemmtiles.testing import CUDA, DEVICE, synchronized

SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (4095, 4097, 4093), (2048, 11008, 4096)] if CUDA else [(256, 256, 256)]
# The slow teaching tiers only on the smallest GPU shape, to keep a run short.
SLOW = {"naive", "coalesced", "smem", "unroll"}
TIERS = ["reference"] + gemmtiles.tiers(DEVICE)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda s: str(s))
def test_gemm(benchmark, tier, m, n, k):
    if CUDA and tier in SLOW and m * n * k > 1024**3:
        pytest.skip("slow teaching tier: measured at 1024^3 only")
    a = torch.randn(m, k, device=DEVICE)
    b = torch.randn(k, n, device=DEVICE)
    fn = (lambda: torch.matmul(a, b)) if tier == "reference" else (lambda: gemmtiles.sgemm(a, b, tier=tier))
    benchmark.group = f"{m}x{n}x{k}"
    out = benchmark.pedantic(synchronized(fn), rounds=10 if CUDA else 3, warmup_rounds=2)
    benchmark.extra_info["tflops_at_mean"] = 2 * m * n * k / benchmark.stats.stats.mean / 1e12
    assert out.shape == (m, n)
