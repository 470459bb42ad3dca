"""Shared helpers: tier parametrisation from the tier table, operands in every layout, and
the accuracy rule of DESIGN.md (error against a float64 reference, compared with fp32
torch.matmul's own error on the same inputs)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, settings

import gemmtiles
from gemmtiles._tiers import TIERS

# Fuzzing profiles (tests/test_fuzz.py); --hypothesis-profile=gpu picks the larger one.
_fuzz = dict(deadline=None, derandomize=True, print_blob=True,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=200, **_fuzz)
settings.register_profile("gpu", max_examples=500, **_fuzz)
settings.load_profile("ci")

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")


def tier_params(devices=("cpu", "cuda")):
    """pytest params (tier, device) for every tier on every device it runs on."""
    params = []
    for t in TIERS:
        for d in t.devices:
            if d not in devices:
                continue
            marks = [needs_cuda] if d == "cuda" else []
            params.append(pytest.param(t.name, d, id=f"{t.name}-{d}", marks=marks))
    return params


def operand(rows, cols, device, layout="row", pad=0, offset=0, batch=None, generator=None):
    """A float32 (rows, cols) operand, or (batch, rows, cols), stored as asked:
    layout "row" (unit column stride) or "col" (unit row stride); `pad` extra elements per
    leading dimension (a slice of a wider matrix); `offset` elements before the first one
    (offsets 1-3 misalign the pointer for float4)."""
    lead, inner = (rows, cols) if layout == "row" else (cols, rows)
    ld = inner + pad
    per = lead * ld
    nb = 1 if batch is None else batch
    storage = torch.randn(offset + nb * per, generator=generator).to(device)
    full = storage[offset:].view(nb, lead, ld)[:, :, :inner]
    t = full if layout == "row" else full.transpose(1, 2)
    return t[0] if batch is None else t


def reference(a, b, c=None, alpha=1.0, beta=0.0):
    out = alpha * torch.matmul(a.double().cpu(), b.double().cpu())
    if c is not None and beta != 0:
        out = out + beta * c.double().cpu()
    return out


def assert_gemm_close(out, a, b, c=None, alpha=1.0, beta=0.0):
    """out must be within 4x fp32 torch.matmul's worst error against the float64 reference,
    plus an elementwise bound that grows with sqrt(K): 2 * sqrt(K) * eps * (|alpha| |a||b| +
    |beta| |c|). A lost or doubled term, a wrong index or an unwritten element is far outside
    it; summation order is not."""
    ref = reference(a, b, c, alpha, beta)
    assert out.dtype == torch.float32
    assert tuple(out.shape) == tuple(ref.shape), (out.shape, ref.shape)
    k = a.shape[-1]
    eps = torch.finfo(torch.float32).eps
    mag = abs(alpha) * torch.matmul(a.double().abs().cpu(), b.double().abs().cpu())
    if c is not None and beta != 0:
        mag = mag + abs(beta) * c.double().abs().cpu()
    torch_out = alpha * torch.matmul(a.cpu(), b.cpu())
    if c is not None and beta != 0:
        torch_out = torch_out + beta * c.cpu()
    torch_err = (torch_out.double() - ref).abs().max().item() if ref.numel() else 0.0
    tol = 4 * torch_err + 2 * max(k, 1) ** 0.5 * eps * mag + 1e-30
    err = (out.double().cpu() - ref).abs()
    assert torch.isfinite(out).all(), "non-finite values in the output"
    bad = err > tol
    if bad.any():
        idx = bad.nonzero()[0].tolist()
        raise AssertionError(
            f"{int(bad.sum())} of {out.numel()} elements off; first at {idx}: "
            f"got {out.cpu()[tuple(idx)].item()}, want {ref[tuple(idx)].item()}, tol {tol[tuple(idx)].item():.3g}"
        )


def run(tier, a, b, c=None, alpha=1.0, beta=0.0):
    out = gemmtiles.sgemm(a, b, variant=tier, c=c, alpha=alpha, beta=beta)
    if out.is_cuda:
        torch.cuda.synchronize()
    return out
