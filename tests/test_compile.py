"""torch.compile: a model built on gemmtiles ops compiles with fullgraph=True (the fake kernels
and autograd formulas trace) and matches eager in outputs and gradients; on the GPU also
under CUDA graphs (mode="reduce-overhead") and on a side stream."""

from __future__ import annotations

import copy

import pytest
import torch

import gemmtiles
from gemmtiles.nn import replace_linear
from gemmtiles.testing import Block, needs_cuda


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _compare(model, compiled, x):
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    y1, y2 = model(x1), compiled(x2)
    torch.testing.assert_close(y2, y1, rtol=1e-5, atol=1e-5)
    y1.sum().backward()
    y2.sum().backward()
    torch.testing.assert_close(x2.grad, x1.grad, rtol=1e-5, atol=1e-5)


CASES = [
    pytest.param("cpu", "naive", "aot_eager", id="cpu-naive-aot_eager"),
    pytest.param("cpu", "reorder", "inductor", id="cpu-reorder-inductor"),
    pytest.param("cuda", "warptile", "inductor", id="cuda-warptile-inductor", marks=needs_cuda),
]


@pytest.mark.parametrize("device,tier,backend", CASES)
def test_compiled_block_matches_eager(device, tier, backend):
    torch.manual_seed(0)
    model = replace_linear(Block().to(device), tier=tier)
    compiled = torch.compile(copy.deepcopy(model), fullgraph=True, backend=backend)
    x = torch.randn(2, 8, 32, device=device)
    _compare(model, compiled, x)
    for (name, p1), p2 in zip(model.named_parameters(), compiled.parameters()):
        torch.testing.assert_close(p2.grad, p1.grad, rtol=1e-4, atol=1e-4, msg=name)


def test_compiled_sgemm_call():
    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(a, b, c):
        return gemmtiles.sgemm(a, b, tier="naive", c=c, alpha=0.5, beta=2.0).relu()

    a, b, c = torch.randn(5, 3), torch.randn(3, 4), torch.randn(4)
    torch.testing.assert_close(f(a, b, c), (0.5 * a @ b + 2 * c).relu(), rtol=1e-5, atol=1e-5)


@needs_cuda
def test_reduce_overhead_cuda_graphs():
    torch.manual_seed(0)
    model = replace_linear(Block().cuda(), tier="warptile")
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    for _ in range(3):  # warm-up, record, replay
        x = torch.randn(2, 8, 32, device="cuda")
        with torch.no_grad():
            torch.testing.assert_close(compiled(x).clone(), model(x), rtol=1e-5, atol=1e-5)


@needs_cuda
def test_ops_launch_on_the_current_stream():
    a = torch.randn(512, 256, device="cuda")
    b = torch.randn(256, 384, device="cuda")
    want = a @ b
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        # A long kernel queued first on the side stream: an op launched on the default
        # stream instead would not wait for it and would read b before it is scaled.
        torch.cuda._sleep(10_000_000)
        b2 = b * 2
        out = gemmtiles.sgemm(a, b2, tier="warptile")
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2 * want, rtol=1e-4, atol=1e-3)
