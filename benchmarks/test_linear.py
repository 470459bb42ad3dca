"""nn.Linear forward + backward on transformer shapes: gemmtiles against torch."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from gemmtiles.nn import replace_linear
from gemmtiles.testing import CUDA, DEVICE, synchronized

# (tokens, in_features, out_features)
SHAPES = [(2048, 4096, 4096), (2048, 4096, 11008), (2048, 11008, 4096)] if CUDA else [(64, 256, 512)]
VARIANT = "warptile" if CUDA else "reorder"


@pytest.mark.parametrize("impl", ["torch", "gemmtiles"])
@pytest.mark.parametrize("tokens,fin,fout", SHAPES, ids=lambda s: str(s))
def test_linear_fwd_bwd(benchmark, impl, tokens, fin, fout):
    lin = nn.Linear(fin, fout, device=DEVICE)
    if impl == "gemmtiles":
        lin = replace_linear(copy.deepcopy(lin), tier=VARIANT)
    x = torch.randn(tokens, fin, device=DEVICE, requires_grad=True)
    g = torch.randn(tokens, fout, device=DEVICE)

    def step():
        y = lin(x)
        y.backward(g)
        return y

    benchmark.group = f"linear {tokens}x{fin}->{fout} fwd+bwd"
    benchmark.pedantic(synchronized(step), rounds=10 if CUDA else 3, warmup_rounds=2)
    benchmark.extra_info["tflops_at_mean"] = 3 * 2 * tokens * fin * fout / benchmark.stats.stats.mean / 1e12
