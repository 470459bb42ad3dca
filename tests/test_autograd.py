"""Gradients of every tier against torch autograd on the same inputs (float64 reference),
for every combination of which inputs require a gradient, eager and compiled."""

from __future__ import annotations

import itertools

import pytest
import torch

import gemmtiles
from torch import nn

from gemmtiles.nn import Linear, replace_linear
from gemmtiles._tiers import BY_NAME
from gemmtiles.testing import assert_gemm_close, needs_cuda, tier_params, tolerance


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
        return gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=alpha, beta=beta)

    _, g, (ga, gb, gc) = grads(ours, a, b, c)
    # d/da = alpha * g @ b^T and d/db = alpha * a^T @ g, summed over broadcast batch
    # dimensions: checked with the forward's accuracy rule, each as one product.
    assert ga.shape == a.shape and gb.shape == b.shape
    assert_gemm_close(ga, *_as_product(alpha * g, b.mT, a_shape), precision=BY_NAME[tier].precision)
    assert_gemm_close(gb, *_as_product(a.mT, alpha * g, b_shape), precision=BY_NAME[tier].precision)
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
    out = gemmtiles.sgemm(a, b, tier=tier)
    out.sum().backward()
    assert b.grad is None and a.grad is not None
    with torch.no_grad():
        assert not gemmtiles.sgemm(a, b, tier=tier).requires_grad
    with torch.inference_mode():
        out = gemmtiles.sgemm(a, b, tier=tier)
        assert not out.requires_grad


# (a, b, c) shapes: 2-D with a bias row and with a full c, batches broadcast both ways.
GRAD_SHAPES = {
    "bias-row": ((13, 7), (7, 11), (11,)),
    "full-c": ((13, 7), (7, 11), (13, 11)),
    "shared-b": ((3, 13, 7), (7, 11), (11,)),
    "shared-a": ((13, 7), (3, 7, 11), (3, 13, 11)),
    "batch1-a": ((1, 13, 7), (3, 7, 11), (3, 1, 11)),
}
REQUIRES = list(itertools.product([False, True], repeat=3))


def _leaves(shapes, requires, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g).to(device).requires_grad_(r) for s, r in zip(shapes, requires)]


def _check_grads(fn, tier, device, shapes, requires, alpha=0.5, beta=2.0):
    a, b, c = _leaves(shapes, requires, device)
    out = fn(a, b, c)
    want = torch.matmul(a.detach().double(), b.detach().double()) * alpha + beta * c.detach().double()
    torch.testing.assert_close(out.double(), want, **tolerance(tier, 1e-4, 1e-4))
    if not any(requires):
        assert not out.requires_grad and out.grad_fn is None
        return
    g = torch.randn_like(out)
    out.backward(g)
    for x, r in zip((a, b, c), requires):
        assert (x.grad is not None) == r
    if requires[0]:
        assert_gemm_close(a.grad, *_as_product(alpha * g, b.detach().mT, shapes[0]), precision=BY_NAME[tier].precision)
    if requires[1]:
        assert_gemm_close(b.grad, *_as_product(a.detach().mT, alpha * g, shapes[1]), precision=BY_NAME[tier].precision)
    if requires[2]:
        torch.testing.assert_close(c.grad, (beta * g).sum_to_size(shapes[2]))


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("shapes", GRAD_SHAPES.values(), ids=GRAD_SHAPES.keys())
@pytest.mark.parametrize("requires", REQUIRES, ids=lambda r: "grad-" + "".join("abc"[i] for i in range(3) if r[i]) or "none")
def test_every_requires_grad_combination(tier, device, shapes, requires):
    def ours(a, b, c):
        return gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=0.5, beta=2.0)

    _check_grads(ours, tier, device, shapes, requires)


COMPILED = [pytest.param("naive", "cpu", id="naive-cpu"),
            pytest.param("reorder", "cpu", id="reorder-cpu"),
            pytest.param("warptile", "cuda", id="warptile-cuda", marks=needs_cuda)]


@pytest.mark.parametrize("tier,device", COMPILED)
@pytest.mark.parametrize("shapes", [GRAD_SHAPES["bias-row"], GRAD_SHAPES["shared-b"]], ids=["bias-row", "shared-b"])
@pytest.mark.parametrize("requires", REQUIRES, ids=lambda r: "grad-" + "".join("abc"[i] for i in range(3) if r[i]) or "none")
def test_every_requires_grad_combination_compiled(tier, device, shapes, requires):
    torch._dynamo.reset()

    @torch.compile(fullgraph=True, backend="aot_eager")
    def ours(a, b, c):
        return gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=0.5, beta=2.0)

    _check_grads(ours, tier, device, shapes, requires)


@pytest.mark.parametrize("tier,device", tier_params())
def test_frozen_input_linear(tier, device):
    """The first layer of a model fed raw features: the weight needs a gradient, the input
    does not."""
    lin = Linear(16, 8, tier=tier, device=device)
    x = torch.randn(4, 16, device=device)
    lin(x).sum().backward()
    torch.testing.assert_close(lin.weight.grad, torch.ones(8, 4, device=device) @ x,
                               **tolerance(tier, 1e-5, 1e-5))
    torch.testing.assert_close(lin.bias.grad, torch.full((8,), 4.0, device=device))


@pytest.mark.parametrize("tier,device", COMPILED)
def test_frozen_input_linear_compiled(tier, device):
    torch._dynamo.reset()
    model = replace_linear(nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 2)).to(device), tier=tier)
    compiled = torch.compile(model, fullgraph=True)
    x = torch.randn(4, 16, device=device)
    compiled(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-5, atol=1e-5)


def _column_major(rows, cols, device, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(cols, rows, generator=g).to(device).t()


@pytest.mark.parametrize("tier,device", tier_params())
@pytest.mark.parametrize("a_3d", [False, True], ids=["a-2d", "a-3d"])
def test_gradients_keep_the_operands_layout(tier, device, a_3d):
    """A column-major operand (nn.Linear's W^T) gets a column-major gradient, as torch's mm
    backward gives: autograd then hands the weight its gradient without a transposing copy."""
    a = (torch.randn(2, 5, 7, device=device) if a_3d else _column_major(5, 7, device, 1)).requires_grad_()
    b = _column_major(7, 3, device, 2).requires_grad_()  # non-leaf views: their grads are ours
    assert b.mT.is_contiguous() and not b.is_contiguous()
    out = gemmtiles.sgemm(a, b, tier=tier, alpha=0.5)
    g = torch.randn_like(out)
    ga, gb = torch.autograd.grad(out, (a, b), g)
    assert gb.stride() == b.stride()
    assert ga.stride() == a.stride()
    precision = BY_NAME[tier].precision
    assert_gemm_close(ga, *_as_product(0.5 * g, b.detach().mT, tuple(a.shape)), precision=precision)
    assert_gemm_close(gb, *_as_product(a.detach().mT, 0.5 * g, tuple(b.shape)), precision=precision)


@pytest.mark.parametrize("tier,device", COMPILED)
def test_gradients_keep_the_operands_layout_compiled(tier, device):
    torch._dynamo.reset()

    @torch.compile(fullgraph=True, backend="aot_eager")
    def ours(a, b):
        return gemmtiles.sgemm(a, b, tier=tier, alpha=0.5)

    a = _column_major(5, 7, device, 1).requires_grad_()
    b = _column_major(7, 3, device, 2).requires_grad_()
    out = ours(a, b)
    g = torch.randn_like(out)
    ga, gb = torch.autograd.grad(out, (a, b), g)
    assert gb.stride() == b.stride() and ga.stride() == a.stride()
    torch.testing.assert_close(ga, 0.5 * g @ b.detach().mT, **tolerance(tier, 1e-5, 1e-5))
    torch.testing.assert_close(gb, a.detach().mT @ (0.5 * g), **tolerance(tier, 1e-5, 1e-5))


@pytest.mark.parametrize("tier,device", tier_params())
def test_linear_weight_gradient_needs_no_copy(tier, device):
    """The weight's gradient comes in the weight's own layout, so autograd's accumulation
    takes it as it is (one in another layout is copied into the weight's)."""
    lin = Linear(7, 3, tier=tier, device=device)
    x = torch.randn(2, 5, 7, device=device)
    contiguous = []
    lin.weight.register_hook(lambda grad: contiguous.append(grad.is_contiguous()))
    lin(x).sum().backward()
    assert contiguous == [True]


# The autograd node's own behaviour, as torch's nodes behave: second derivatives, saved
# tensors freed after backward and checked against in-place changes, compiled autograd.
NODE = [pytest.param("blocked", "cpu", id="blocked-cpu"),
        pytest.param("auto", "cuda", id="auto-cuda", marks=needs_cuda)]


@pytest.mark.parametrize("tier,device", NODE)
def test_second_derivative(tier, device):
    g = torch.Generator().manual_seed(3)
    a0, b0 = torch.randn(6, 5, generator=g), torch.randn(5, 4, generator=g)

    def second(mm):
        a = a0.to(device).requires_grad_()
        b = b0.to(device).requires_grad_()
        ga, = torch.autograd.grad(mm(a, b).square().sum(), a, create_graph=True)
        ga.square().sum().backward()
        return a.grad, b.grad

    ours = second(lambda a, b: gemmtiles.sgemm(a, b, tier=tier))
    want = second(torch.mm)
    for x, y in zip(ours, want):
        torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tier,device", NODE)
def test_saved_operands_freed_and_version_checked(tier, device):
    a = torch.randn(3, 4, device=device, requires_grad=True)
    b = torch.randn(4, 2, device=device, requires_grad=True)
    out = gemmtiles.sgemm(a, b, tier=tier)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.sum().backward()
    x = torch.randn(3, 4, device=device)
    w = torch.randn(4, 2, device=device, requires_grad=True)
    out = gemmtiles.sgemm(x, w, tier=tier)
    x.add_(1.0)  # x is saved for w's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("tier,device", NODE)
def test_gradient_of_some_inputs_only(tier, device):
    a = torch.randn(3, 4, device=device, requires_grad=True)
    b = torch.randn(4, 2, device=device, requires_grad=True)
    c = torch.randn(2, device=device, requires_grad=True)
    out = gemmtiles.sgemm(a, b, tier=tier, c=c, beta=1.0)
    gb, = torch.autograd.grad(out.sum(), b)
    torch.testing.assert_close(gb, a.detach().mT @ torch.ones(3, 2, device=device), rtol=1e-5, atol=1e-5)
    assert a.grad is None and c.grad is None


@pytest.mark.parametrize("b_requires_grad", [False, True])
def test_forward_mode_is_refused(b_requires_grad):
    """A dual tensor's tangent is never dropped silently, whether or not a gradient is
    recorded too."""
    import torch.autograd.forward_ad as fwAD

    a, b, t = torch.randn(3, 4), torch.randn(4, 2), torch.randn(3, 4)
    with fwAD.dual_level():
        dual = fwAD.make_dual(a, t)
        with pytest.raises(NotImplementedError, match="forward-mode"):
            gemmtiles.sgemm(dual, b.requires_grad_(b_requires_grad), tier="blocked")


@pytest.mark.skipif(not hasattr(torch.autograd.graph, "node_creation_hook"),
                    reason="this torch has no node creation hooks")
def test_node_creation_hook_sees_the_node():
    seen = []
    a = torch.randn(3, 4, requires_grad=True)
    with torch.autograd.graph.node_creation_hook(lambda node: seen.append(node.name())):
        gemmtiles.sgemm(a, torch.randn(4, 2), tier="blocked")
    assert seen.count("gemmtiles::blocked_backward") == 1  # besides a's AccumulateGrad


def test_compiled_autograd():
    """Backward under compiled autograd (the backward graph traced and compiled, the tiers'
    node called in it) gives eager's gradients, for a model and for a broadcast product with
    a frozen operand, twice each (the second from the compiled graph's cache)."""
    from torch._dynamo import compiled_autograd
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)
    model = nn.Sequential(Linear(8, 8, tier="blocked"), nn.ReLU(), Linear(8, 4, tier="blocked"))
    x = torch.randn(5, 8)
    model(x).sum().backward()
    want = [p.grad.clone() for p in model.parameters()]
    for _ in range(2):
        model.zero_grad(set_to_none=True)
        loss = model(x).sum()
        with compiled_autograd._enable(torch.compile(backend="aot_eager")):
            loss.backward()
        for p, w in zip(model.parameters(), want):
            torch.testing.assert_close(p.grad, w)
    a = torch.randn(3, 5, 7)
    b = torch.randn(7, 4, requires_grad=True)
    c = torch.randn(4, requires_grad=True)
    out = gemmtiles.sgemm(a, b, c=c, alpha=0.5, beta=2.0, tier="blocked")
    g = torch.randn_like(out)
    with compiled_autograd._enable(torch.compile(backend="aot_eager")):
        out.backward(g)
    torch.testing.assert_close(b.grad, 0.5 * a.reshape(-1, 7).T @ g.reshape(-1, 4), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(c.grad, 2.0 * g.sum((0, 1)))
    assert counters["compiled_autograd"]["captures"] >= 2
    torch._dynamo.reset()
