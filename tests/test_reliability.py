"""Reliability beyond ordinary shapes: non-finite alpha/beta, products past 2^31 elements and
past the grid limits, and concurrent use from several host threads and streams."""

from __future__ import annotations

import math
import threading

import pytest
import torch

import gemmtiles
from gemmtiles._tiers import BY_NAME
from gemmtiles.testing import CUDA, assert_gemm_close, needs_cuda, operand, tier_params


@pytest.mark.parametrize("tier,device", tier_params())
def test_non_finite_alpha_beta_follow_addmm(tier, device):
    """alpha and beta may be any float; non-finite ones propagate as addmm defines them,
    alpha * (a @ b) + beta * c, except that beta == 0 never reads c. (The reference is that
    formula in float64, not torch.addmm on the CPU: MKL scales the products by alpha before
    adding them, so that alpha = inf gives NaN where the terms' signs differ, on some CPUs.)"""
    a, b, c = operand(6, 5, device), operand(5, 4, device), torch.randn(6, 4, device=device)
    for alpha, beta in [(math.inf, 0.0), (math.nan, 0.0), (1.0, math.nan), (-math.inf, 1.0), (1.0, math.inf)]:
        out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=alpha, beta=beta).cpu()
        want = alpha * (a.double().cpu() @ b.double().cpu())
        if beta != 0:
            want = want + beta * c.double().cpu()
        assert torch.equal(out.isnan(), want.isnan()), (alpha, beta)
        assert torch.equal(out.isinf(), want.isinf()), (alpha, beta)


@needs_cuda
@pytest.mark.parametrize("tier,device", tier_params(devices=("cuda",)))
def test_output_past_2_31_elements(tier, device):
    """C with 65536 x 40000 = 2.6e9 elements: offsets past 2^31 must not wrap."""
    m, n, k = 65536, 40000, 3
    a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
    bias = torch.randn(n, device=device)
    out = gemmtiles.sgemm(a, b, tier=tier, c=bias, beta=1.0)
    torch.cuda.synchronize()
    # Rows past element 2^31 and the last row and column, checked against float64.
    for rows in (slice(53687, 53700), slice(m - 5, m)):
        assert_gemm_close(out[rows], a[rows], b, bias, 1.0, 1.0, precision=BY_NAME[tier].precision)
    del out
    torch.cuda.empty_cache()


@needs_cuda
@pytest.mark.parametrize("tier,device", tier_params(devices=("cuda",)))
def test_operand_past_2_31_elements_and_grid_y(tier, device):
    """A with 2.2e9 elements (M = 2.2M rows, more M tiles than gridDim.y allows)."""
    m, n, k = 2_200_000, 8, 1000
    a = torch.randn(m, k, device=device)
    b = torch.randn(k, n, device=device)
    out = gemmtiles.sgemm(a, b, tier=tier)
    torch.cuda.synchronize()
    for rows in (slice(0, 4), slice(2_147_480, 2_147_490), slice(m - 4, m)):
        assert_gemm_close(out[rows], a[rows], b, precision=BY_NAME[tier].precision)
    del a, out
    torch.cuda.empty_cache()


@pytest.mark.parametrize("tier,device", tier_params())
def test_batch_past_grid_z(tier, device):
    """70000 batch entries: more than gridDim.z (65535) allows in one launch."""
    a, b = torch.randn(70000, 3, 5, device=device), torch.randn(70000, 5, 2, device=device)
    out = gemmtiles.sgemm(a, b, tier=tier)
    for idx in (slice(0, 3), slice(65534, 65537), slice(69997, 70000)):
        assert_gemm_close(out[idx], a[idx], b[idx], precision=BY_NAME[tier].precision)


@needs_cuda
@pytest.mark.parametrize("tier", ["naive", "double_buffer", "warptile"])
def test_threads_and_streams(tier):
    """Four host threads, each on its own stream, each many products: every result right."""
    inputs = [(operand(300 + i, 200, "cuda"), operand(200, 100 + i, "cuda")) for i in range(4)]
    results, errors = {}, []

    def work(i):
        try:
            s = torch.cuda.Stream()
            a, b = inputs[i]
            with torch.cuda.stream(s):
                s.wait_stream(torch.cuda.default_stream())
                outs = [gemmtiles.sgemm(a, b, tier=tier) for _ in range(20)]
            s.synchronize()
            results[i] = outs
        except Exception as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, (a, b) in enumerate(inputs):
        for out in results[i]:
            assert_gemm_close(out, a, b, precision=BY_NAME[tier].precision)


@pytest.mark.skipif(not CUDA or torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
@pytest.mark.parametrize("tier", ["naive", "warptile"])
def test_second_gpu(tier):
    a, b = operand(100, 70, "cuda:1"), operand(70, 50, "cuda:1")
    with torch.cuda.device(0):
        out = gemmtiles.sgemm(a, b, tier=tier)
    assert out.device == torch.device("cuda:1")
    assert_gemm_close(out, a, b, precision=BY_NAME[tier].precision)
