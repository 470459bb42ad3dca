"""Gradients of every tier against torch autograd on the same inputs (float64 reference)."""

from __future__ import annotations

import pytest
import torch

import gemmtiles
from conftest import assert_gemm_close, tier_params


def grads(fn, *inputs):
    inputs = [x.detach().clone().requires_grad_() if x is not None else None for x in inputs]
    out = fn(*inputs)
    g = torch.randn_like(out)
    out.backward(g)
    return out, g, [x.grad if x is not None else None for x in inputs]


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize(
    "a_shape,b_shape,c_shape,alpha,beta",
    [
        ((13, 7), (7, 11), None, 1.0, 0.0),
        ((13, 7), (7, 11), (11,), 0.5, 2.0),
        ((13, 7), (7, 11), (13, 11), -1.0, 0.25),
        ((3, 13, 7), (7, 11), (13, 1), 1.5, 1.0),  # shared b: grad_b sums the batch
        ((13, 7), (3, 7, 11), None, 1.0, 0.0),  # shared a
        ((1, 13, 7), (3, 7, 11), (3, 1, 11), 2.0, -1.0),
    ],
    ids=["plain", "bias-row", "full-c", "batch-shared-b", "batch-shared-a", "batch-broadcast1"],
)
def test_gradients(tier, device, a_shape, b_shape, c_shape, alpha, beta):
    a = torch.randn(a_shape, device=device)
    b = torch.randn(b_shape, device=device)
    c = None if c_shape is None else torch.randn(c_shape, device=device)

    def ours(a, b, c):
        return gemmtiles.sgemm(a, b, variant=tier, c=c, alpha=alpha, beta=beta)

    _, g, (ga, gb, gc) = grads(ours, a, b, c)
    # d/da = alpha * g @ b^T and d/db = alpha * a^T @ g, summed over broadcast batch
    # dimensions: checked with the forward's accuracy rule, each as one product.
    assert ga.shape == a.shape and gb.shape == b.shape
    assert_gemm_close(ga, *_as_product(alpha * g, b.mT, a_shape))
    assert_gemm_close(gb, *_as_product(a.mT, alpha * g, b_shape))
    if c is not None:
        torch.testing.assert_close(gc.cpu(), (beta * g).sum_to_size(c_shape).cpu())


def _as_product(x, y, shape):
    """Operands (x', y') with x' @ y' == (x @ y) summed over the batch down to `shape`: a sum
    of B products is one product over the concatenated inner dimension."""
    if x.dim() == 3 and (len(shape) == 2 or shape[0] == 1):
        x2 = x.transpose(0, 1).reshape(x.shape[1], -1)
        y2 = y.expand(x.shape[0], *y.shape[-2:]).reshape(-1, y.shape[-1])
        return (x2, y2) if len(shape) == 2 else (x2.unsqueeze(0), y2.unsqueeze(0))
    return x, y


@pytest.mark.parametrize("tier,device", tier_params())
def test_no_grad_for_frozen_inputs(tier, device):
    a = torch.randn(5, 4, device=device, requires_grad=True)
    b = torch.randn(4, 3, device=device)  # frozen
    out = gemmtiles.sgemm(a, b, variant=tier)
    out.sum().backward()
    assert b.grad is None and a.grad is not None
    with torch.no_grad():
        assert not gemmtiles.sgemm(a, b, variant=tier).requires_grad
    with torch.inference_mode():
        out = gemmtiles.sgemm(a, b, variant=tier)
        assert not out.requires_grad
