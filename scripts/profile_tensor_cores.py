"""The tensor-core tiers against cuBLAS TF32, kernel by kernel (torch's profiler): for a few
shapes in NN (B N-major: tf32 reads it in place or packs it, whichever its model finds cheaper)
and NT (x @ W^T: read in place) layouts, the GPU time
of each kernel of one call, the median call of five, and the largest error against float64.

    python scripts/profile_tensor_cores.py        # tf32's H100 speed table (docs/measurements/2026-11-auto-history.md)
"""

from __future__ import annotations

import torch

import gemmtiles
from profile_small import kernels

SHAPES = [(32, 4096, 4096), (128, 4096, 4096), (512, 4096, 4096), (2048, 2048, 2048), (4096, 4096, 4096),
          (1024, 5504, 2048), (8192, 8192, 8192)]


def profile(fn) -> tuple[float, list]:
    """The median total of five calls' kernel times (µs), and that call's kernels."""
    calls = sorted((sum(t for _, t in ks), ks) for ks in (kernels(fn) for _ in range(5)))
    return calls[2]


def main() -> int:
    torch.backends.cuda.matmul.allow_tf32 = True  # the cuBLAS rows: cuBLAS TF32
    for m, n, k in SHAPES:
        for layout in ("NN", "NT"):
            a = torch.randn(m, k, device="cuda")
            b = torch.randn(k, n, device="cuda") if layout == "NN" else torch.randn(n, k, device="cuda").t()
            ref = a.double() @ b.double()
            for name, fn in (("tf32", lambda: gemmtiles.sgemm(a, b, tier="tf32")), ("cublas", lambda: a @ b)):
                err = ((fn().double() - ref).abs().max() / ref.abs().max()).item()
                total, ks = profile(fn)
                parts = " | ".join(f"{kname[:50]} {t:.1f}" for kname, t in ks)
                print(f"{m}x{n}x{k} {layout} {name:6} total {total:7.1f} us  err {err:.1e}  {parts}", flush=True)
    for m, n, k in [(4096, 4096, 4096), (1024, 5504, 2048)]:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        total, ks = profile(lambda: gemmtiles.sgemm(a, b, tier="tf32x3"))
        parts = " | ".join(f"{kname[:40]} {t:.1f}" for kname, t in ks)
        print(f"{m}x{n}x{k} NN tf32x3 total {total:7.1f} us  {parts}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
