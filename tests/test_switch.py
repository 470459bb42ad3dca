"""gemmtiles.enable(): unchanged torch code runs its fp32 matrix products on gemmtiles, with
the same outputs and gradients, and nothing else changes; per thread; under torch.compile."""

from __future__ import annotations

import threading

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import gemmtiles
from gemmtiles.testing import needs_cuda

TORCH_GEMMS = {"aten.mm.default", "aten.addmm.default", "aten.bmm.default", "aten.baddbmm.default"}

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=needs_cuda)]


class Log(TorchDispatchMode):
    """Names of the ops that reach the dispatcher's Python key, and the shapes of the operands
    (a, b) of each gemmtiles op among them."""

    def __init__(self):
        super().__init__()
        self.names = []
        self.gemm_shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        if self.names[-1].startswith("gemmtiles."):
            self.gemm_shapes.append((tuple(args[0].shape), tuple(args[1].shape)))
        return func(*args, **(kwargs or {}))


class PlainModel(nn.Module):
    """Every product enable() covers, written with plain torch."""

    def __init__(self, d=24):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.w = nn.Parameter(torch.randn(d, d) / d**0.5)
        self.bias = nn.Parameter(torch.randn(d))

    def forward(self, x):  # x: (B, T, d)
        h = self.lin(x)                                              # F.linear, 3-D input
        att = torch.softmax(h @ h.transpose(1, 2) / 5, dim=-1)       # @, 3-D x 3-D
        h = torch.bmm(att, h) + torch.matmul(h, self.w)              # bmm, matmul 3-D x 2-D
        h = torch.baddbmm(h, att, h, beta=0.5, alpha=2.0)            # baddbmm
        flat = h.reshape(-1, h.shape[-1])
        flat = torch.addmm(self.bias, flat, self.w, beta=1.0, alpha=0.5) + torch.mm(flat, self.w)
        y = F.linear(flat, self.w, None) + flat.matmul(self.w.T)     # F.linear, Tensor.matmul
        return y.reshape(x.shape)


def _run(model, x):
    model.zero_grad()
    x = x.clone().requires_grad_()
    out = model(x)
    out.square().sum().backward()
    return out.detach(), x.grad, [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("device", DEVICES)
def test_same_outputs_and_grads_inside_and_outside(device):
    torch.manual_seed(0)
    model = PlainModel().to(device)
    x = torch.randn(2, 5, 24, device=device)
    out, gx, gp = _run(model, x)
    log = Log()
    with gemmtiles.enable(), log:
        out2, gx2, gp2 = _run(model, x)
    # Different summation orders only: within 1e-5 of each tensor's norm (a wrong or
    # missing product is off by the order of the norm itself).
    for got, want in zip([out2, gx2, *gp2], [out, gx, *gp]):
        assert got.shape == want.shape
        assert (got - want).norm() <= 1e-5 * want.norm(), ((got - want).norm(), want.norm())
    names = set(log.names)
    assert not names & TORCH_GEMMS, names & TORCH_GEMMS
    tier = gemmtiles._tiers.default_tier(device)
    assert f"gemmtiles.{tier}.default" in names


@pytest.mark.parametrize("device", DEVICES)
def test_variant_named_and_fall_through(device):
    a, b = torch.randn(6, 5, device=device), torch.randn(5, 4, device=device)
    log = Log()
    with gemmtiles.enable("naive"), log:
        torch.mm(a, b)
        torch.mm(a.double(), b.double())         # other dtype: torch
        torch.mm(a, b, out=torch.empty(6, 4, device=device))  # out=: torch
        torch.matmul(a[0], a[0])                 # two vectors (a dot product): torch
    assert log.names.count("gemmtiles.naive.default") == 1  # the first call only
    assert log.names.count("aten.mm.default") >= 1 and log.names.count("aten.mm.out") == 1
    with pytest.raises(ValueError, match="unknown tier 'fast'"):
        gemmtiles.enable("fast")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a_shape,b_shape", [
    ((2, 3, 5, 4), (2, 3, 4, 6)),        # attention's q @ k^T on (B, H, T, d)
    ((2, 3, 5, 4), (3, 4, 6)),           # b broadcast along the first dimension: copied
    ((2, 1, 5, 4), (1, 3, 4, 6)),        # each broadcast along one
    ((5, 4), (2, 3, 4, 6)),              # a 2-D a shared by the whole batch
    ((1, 1, 5, 4), (2, 3, 4, 6)),        # and a 4-D one broadcast along all of it
    ((2, 1, 2, 5, 4), (3, 1, 4, 6)),     # five dimensions
    ((2, 0, 5, 4), (2, 1, 4, 6)),        # an empty batch
    ((2, 3, 5, 0), (2, 3, 0, 6)),        # K = 0
    ((4,), (4, 6)),                      # a vector before a matrix: a row
    ((4,), (2, 3, 4, 6)),                # and before a batch
    ((5, 4), (4,)),                      # a vector after a matrix: a column
    ((2, 3, 5, 4), (4,)),                # and after a batch
    ((4,), (0, 4, 6)),                   # a vector before an empty batch
])
def test_matmul_of_any_rank_runs_gemmtiles(device, a_shape, b_shape):
    """torch.matmul's operands of more than three dimensions run as one gemmtiles batch, their
    leading dimensions broadcast as torch broadcasts them, and a vector against a matrix as a
    row: torch's values, shape and gradients, no torch GEMM."""
    torch.manual_seed(0)
    a = torch.randn(a_shape, device=device, requires_grad=True)
    b = torch.randn(b_shape, device=device, requires_grad=True)
    want = torch.matmul(a, b)
    ga, gb = torch.autograd.grad(want.square().sum(), (a, b))
    log = Log()
    with gemmtiles.enable(), log:
        got = a @ b
        ga2, gb2 = torch.autograd.grad(got.square().sum(), (a, b))
    assert got.shape == want.shape
    for x, y in ((got, want), (ga2, ga), (gb2, gb)):
        assert (x - y).norm() <= 1e-5 * (1 + y.norm()), ((x - y).norm(), y.norm())
    names = set(log.names)
    assert not names & TORCH_GEMMS, names & TORCH_GEMMS
    tier = gemmtiles._tiers.default_tier(device)
    assert f"gemmtiles.{tier}.default" in names, names


@pytest.mark.parametrize("device", DEVICES)
def test_matrix_times_vector_runs_as_a_row(device):
    """A matrix times a vector runs as the vector's row against the matrix transposed (one
    row against a K-major operand), not as a column of one output."""
    a, v = torch.randn(6, 4, device=device), torch.randn(4, device=device)
    log = Log()
    with gemmtiles.enable(), log:
        got = a @ v
    assert log.gemm_shapes == [((1, 4), (4, 6))], log.gemm_shapes
    assert got.shape == (6,) and (got - a @ v).norm() <= 1e-5 * (a @ v).norm()


@pytest.mark.parametrize("device", DEVICES)
def test_linear_of_a_vector_runs_gemmtiles(device):
    """nn.Linear on a 1-D input (one token's vector) runs as one row, bias included."""
    torch.manual_seed(0)
    layer = nn.Linear(7, 5).to(device)
    x = torch.randn(7, device=device, requires_grad=True)
    want = layer(x)
    gx, gw, gb = torch.autograd.grad(want.square().sum(), (x, layer.weight, layer.bias))
    log = Log()
    with gemmtiles.enable(), log:
        got = layer(x)
        grads = torch.autograd.grad(got.square().sum(), (x, layer.weight, layer.bias))
    assert got.shape == want.shape == (5,)
    for g, w in ((got, want), *zip(grads, (gx, gw, gb))):
        assert (g - w).norm() <= 1e-5 * (1 + w.norm()), ((g - w).norm(), w.norm())
    names = set(log.names)
    assert not names & TORCH_GEMMS and "aten.mv.default" not in names, names
    assert f"gemmtiles.{gemmtiles._tiers.default_tier(device)}.default" in names, names


@pytest.mark.parametrize("device", DEVICES)
def test_shapes_torch_cannot_multiply_raise_torchs_error(device):
    """Inside the switch, shapes torch cannot multiply or broadcast raise torch's own error (its
    type and message), as without it; no gemmtiles op runs."""
    def r(*shape):
        return torch.randn(shape, device=device)

    calls = [
        lambda: torch.matmul(r(3, 4), r(5, 6)),
        lambda: torch.mm(r(3, 4), r(5, 6)),
        lambda: torch.bmm(r(2, 3, 4), r(3, 4, 6)),
        lambda: torch.bmm(r(1, 3, 4), r(2, 4, 6)),     # bmm does not broadcast its batch
        lambda: torch.baddbmm(r(6), r(1, 3, 4), r(2, 4, 6)),
        lambda: r(2, 3, 4) @ r(3, 4, 6),
        lambda: r(2, 2, 3, 4) @ r(3, 1, 4, 6),
        lambda: r(5) @ r(4, 6),
        lambda: torch.addmm(r(2, 3, 6), r(3, 4), r(4, 6)),
        lambda: torch.baddbmm(r(2, 3, 5), r(2, 3, 4), r(2, 4, 6)),
        lambda: F.linear(r(2, 3, 7), r(5, 6)),
    ]
    for call in calls:
        with pytest.raises(RuntimeError) as want:
            call()
        log = Log()
        with gemmtiles.enable(), log, pytest.raises(RuntimeError) as got:
            call()
        assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
        assert not any(name.startswith("gemmtiles.") for name in log.names), log.names


@pytest.mark.parametrize("device", DEVICES)
def test_linear_with_a_bias_of_rows(device):
    """F.linear on a 3-D input with a bias of more than one dimension, which torch broadcasts
    to the output: torch's values inside the switch."""
    x, w = torch.randn(2, 3, 7, device=device), torch.randn(5, 7, device=device)
    for bias in (torch.randn(3, 5, device=device), torch.randn(2, 3, 5, device=device)):
        want = F.linear(x, w, bias)
        with gemmtiles.enable():
            got = F.linear(x, w, bias)
        assert got.shape == want.shape and (got - want).norm() <= 1e-5 * want.norm()


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_inside_the_switch_runs_torch(device):
    # Inside torch.autocast to bfloat16 the products run as stock torch runs them there: in
    # bfloat16, the same bits, no gemmtiles op; the same model after the region runs gemmtiles.
    torch.manual_seed(0)
    model = PlainModel().to(device)
    x = torch.randn(2, 5, 24, device=device)
    with torch.autocast(device, dtype=torch.bfloat16):
        ref, ref_gx, ref_gp = _run(model, x)
    log = Log()
    with gemmtiles.enable(), log, torch.autocast(device, dtype=torch.bfloat16):
        out, gx, gp = _run(model, x)
    assert out.dtype == torch.bfloat16
    for got, want in zip([out, gx, *gp], [ref, ref_gx, *ref_gp]):
        assert got.dtype == want.dtype and torch.equal(got, want)
    assert not any(name.startswith("gemmtiles.") for name in log.names), set(log.names)
    log = Log()
    with gemmtiles.enable(), log:
        assert _run(model, x)[0].dtype == torch.float32
    assert any(name.startswith("gemmtiles.") for name in log.names)


def test_switch_is_per_thread():
    a, b = torch.randn(6, 5), torch.randn(5, 4)
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def inside():
        with gemmtiles.enable():
            entered.set()
            done.wait(10)

    def outside():
        entered.wait(10)
        log = Log()
        with log:
            torch.mm(a, b)
        seen["outside"] = log.names
        done.set()

    threads = [threading.Thread(target=inside), threading.Thread(target=outside)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen["outside"] == ["aten.mm.default"]


def test_compiled_function_follows_the_switch():
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(str(gm.graph))
        return gm.forward

    @torch.compile(backend=backend, fullgraph=True)
    def f(a, b):
        return torch.relu(a @ b)

    a, b = torch.randn(6, 5), torch.randn(5, 4)
    with gemmtiles.enable():
        inside = f(a, b)
    outside = f(a, b)
    torch.testing.assert_close(inside, outside, rtol=1e-5, atol=1e-5)
    assert len(graphs) == 2  # recompiled when the mode stack changed
    assert "gemmtiles" in graphs[0] and "gemmtiles" not in graphs[1]
    torch._dynamo.reset()
