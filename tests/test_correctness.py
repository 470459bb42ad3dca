"""Every tier against a float64 reference: shapes, layouts, alpha/beta/c, batches."""

from __future__ import annotations

import math

import pytest
import torch

from gemmtiles._tiers import BY_NAME
from gemmtiles.testing import CUDA, assert_gemm_close, check_tier, operand, run, tier_params

# 0, 1, primes, sizes just off the tile multiples, skinny and rectangular.
SHAPES = [
    (0, 5, 7), (5, 0, 7), (5, 7, 0), (0, 0, 0),
    (1, 1, 1), (1, 17, 31), (17, 1, 31), (31, 17, 1),
    (2, 3, 5), (13, 17, 19), (37, 41, 43),
    (127, 129, 131), (128, 128, 128), (129, 127, 8), (7, 257, 9),
]
# Larger edge cases, on the GPU only (the CPU naive loop would be slow on CI).
GPU_SHAPES = [
    (255, 257, 511), (256, 128, 64), (1, 4096, 257), (4097, 1, 129), (509, 1021, 4093),
    (1000, 1000, 1000), (4095, 129, 17),
]

LAYOUTS = ["NN", "NT", "TN", "TT"]


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda s: str(s))
def test_shapes(tier, device, m, n, k):
    a = operand(m, k, device)
    b = operand(k, n, device)
    c = operand(m, n, device)
    check_tier(tier, a, b)
    check_tier(tier, a, b, c, alpha=0.5, beta=2.0)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("tier,device", tier_params(devices=("cuda",)))
@pytest.mark.parametrize("m,n,k", GPU_SHAPES, ids=lambda s: str(s))
def test_shapes_large(tier, device, m, n, k):
    a = operand(m, k, device)
    b = operand(k, n, device)
    c = operand(1, n, device)[0]
    check_tier(tier, a, b, c, alpha=-1.25, beta=0.75)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("m,n,k", [(1031, 4099, 37), (2049, 4097, 9)], ids=str)
def test_warptile_large_configuration(layout, m, n, k):
    # Enough tiles for warptile's 128 x 256 configuration (small shapes take 128 x 128),
    # with partial tiles on every edge, in every layout, unaligned.
    a = operand(m, k, "cuda", "col" if layout[0] == "T" else "row", pad=1, offset=1)
    b = operand(k, n, "cuda", "col" if layout[1] == "T" else "row", pad=3)
    c = torch.randn(n, device="cuda")
    check_tier("warptile", a, b, c, 0.5, 2.0)
    a, b = operand(m, k, "cuda", "col" if layout[0] == "T" else "row"), operand(k, n, "cuda", "col" if layout[1] == "T" else "row")
    check_tier("warptile", a, b)


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("pad,offset", [(0, 0), (3, 1), (5, 2), (0, 3)], ids=["dense", "pad3-off1", "pad5-off2", "off3"])
@pytest.mark.parametrize("m,n,k", [(33, 65, 17), (130, 129, 67)], ids=str)
def test_layouts(tier, device, layout, pad, offset, m, n, k):
    a = operand(m, k, device, "col" if layout[0] == "T" else "row", pad, offset)
    b = operand(k, n, device, "col" if layout[1] == "T" else "row", pad, offset)
    check_tier(tier, a, b)


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("which", ["a", "b"])
def test_single_row_or_column_with_strides(tier, device, which):
    # One row whose elements are not adjacent, and one column likewise: a size-1 dimension
    # frees only its own stride (found by the fuzzer: a 1x2 column-major A).
    row = torch.randn(2, 7, device=device)[:1, ::2]  # (1, 4), strides (7, 2)
    col = torch.randn(9, 3, device=device)[::2, 1:2]  # (5, 1), strides (6, 1)
    if which == "a":
        a, b = row, operand(4, 3, device)
        check_tier(tier, a, b)
        a, b = col, operand(1, 6, device)
    else:
        a, b = operand(3, 1, device), row
        check_tier(tier, a, b)
        a, b = operand(2, 5, device), col
    check_tier(tier, a, b)


@pytest.mark.parametrize("tier,device", tier_params())
def test_no_unit_stride(tier, device):
    # Every other row and column: no unit stride anywhere.
    a = torch.randn(2 * 37, 2 * 29, device=device)[::2, ::2]
    b = torch.randn(2 * 29, 3 * 23, device=device)[::2, ::3]
    check_tier(tier, a, b)


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("c_shape", ["full", "row", "col", "scalar", "transposed"])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, 2.0), (-1.5, -0.25), (0.0, 1.0), (2.0, 0.0)])
def test_alpha_beta_c(tier, device, c_shape, alpha, beta):
    m, n, k = 45, 67, 33
    a, b = operand(m, k, device), operand(k, n, device)
    c = {
        "full": lambda: operand(m, n, device),
        "row": lambda: torch.randn(n, device=device),
        "col": lambda: torch.randn(m, 1, device=device),
        "scalar": lambda: torch.randn((), device=device),
        "transposed": lambda: operand(m, n, device, "col", pad=2),
    }[c_shape]()
    check_tier(tier, a, b, c, alpha, beta)


@pytest.mark.parametrize("tier,device", tier_params())
def test_beta_zero_ignores_nan_c(tier, device):
    a, b = operand(20, 30, device), operand(30, 40, device)
    c = torch.full((20, 40), math.nan, device=device)
    out = run(tier, a, b, c, alpha=1.0, beta=0.0)
    assert_gemm_close(out, a, b, precision=BY_NAME[tier].precision)


@pytest.mark.parametrize("tier,device", tier_params())
def test_k_zero(tier, device):
    a, b = torch.empty(4, 0, device=device), torch.empty(0, 6, device=device)
    assert torch.equal(run(tier, a, b).cpu(), torch.zeros(4, 6))
    c = torch.randn(6, device=device)
    out = run(tier, a, b, c, alpha=3.0, beta=0.5)
    torch.testing.assert_close(out.cpu(), (0.5 * c).expand(4, 6).cpu())


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("a_shape,b_shape", [((3, 4), (0, 4, 5)), ((1, 3, 4), (0, 4, 5)), ((0, 3, 4), (1, 4, 5)),
                                             ((0, 3, 4), (4, 5))])
def test_empty_batch(tier, device, a_shape, b_shape):
    # A batch of 1 (or a 2-D operand) broadcast against an empty batch gives an empty batch,
    # as in torch, whatever the other operand holds.
    a, b = torch.randn(a_shape, device=device), torch.randn(b_shape, device=device)
    out = run(tier, a, b, torch.randn(5, device=device), alpha=2.0, beta=1.0)
    assert out.shape == torch.matmul(a, b).shape == (0, 3, 5)


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("mode", ["both", "a_only", "b_only", "broadcast1"])
def test_batched(tier, device, mode):
    bsz, m, n, k = 3, 37, 29, 41
    a = operand(m, k, device, batch=None if mode == "b_only" else (1 if mode == "broadcast1" else bsz))
    b = operand(k, n, device, batch=None if mode == "a_only" else bsz)
    c = torch.randn(n, device=device)
    out = run(tier, a, b, c, alpha=0.5, beta=1.5)
    assert out.shape == (bsz, m, n)
    assert_gemm_close(out, a, b, c, 0.5, 1.5, precision=BY_NAME[tier].precision)


@pytest.mark.parametrize("tier,device", tier_params())
def test_batched_layouts(tier, device):
    # Transposed slices of a batch, and a batch dimension that is not outermost in memory.
    a = operand(23, 31, device, "col", pad=1, batch=4)
    b = torch.randn(19, 4, 31, device=device).permute(1, 2, 0)  # (4, 31, 19), batch stride 31
    check_tier(tier, a, b)


@pytest.mark.parametrize("k", [7, 200])  # 200: deep enough for tf32x3's unpromoted slices
@pytest.mark.parametrize("tier,device", tier_params())
def test_nan_inf_propagate(tier, device, k):
    a, b = operand(9, k, device), operand(k, 5, device)
    a[2, 3] = math.nan
    b[k - 6, 4] = math.inf
    out = run(tier, a, b).cpu()
    want = torch.matmul(a.cpu(), b.cpu())
    assert torch.equal(out.isnan(), want.isnan())
    assert torch.equal(out.isinf(), want.isinf())
    # Elements away from row 2 and column 4 see finite data only.
    rows = [r for r in range(9) if r != 2]
    cols = [c for c in range(5) if c != 4]
    assert_gemm_close(out[rows][:, cols], a[rows].cpu(), b[:, cols].cpu(), precision=BY_NAME[tier].precision)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("tier,device", tier_params(devices=("cuda",)))
def test_side_stream(tier, device):
    a, b = operand(300, 200, device), operand(200, 100, device)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out = run(tier, a, b)
    torch.cuda.synchronize()
    assert_gemm_close(out, a, b, precision=BY_NAME[tier].precision)
