"""gemmtiles.nn.Linear and replace_linear: checkpoints, outputs and gradients against
torch.nn.Linear, copy-free layouts, a transformer block that trains, torch.compile."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gemmtiles.nn import Linear, replace_linear
from gemmtiles.testing import Block, needs_cuda

# (device, tier): the CPU tiers everywhere, the flagship CUDA tier on a GPU.
DEVICE_TIERS = [
    pytest.param("cpu", "reorder", id="cpu-reorder"),
    pytest.param("cpu", "blocked", id="cpu-blocked"),
    pytest.param("cpu", "naive", id="cpu-naive"),
    pytest.param("cuda", "warptile", id="cuda-warptile", marks=needs_cuda),
    pytest.param("cuda", "naive", id="cuda-naive", marks=needs_cuda),
]


def test_state_dict_matches_torch():
    stock = nn.Linear(7, 5)
    ours = Linear(7, 5, tier="reorder")
    assert list(ours.state_dict()) == list(stock.state_dict())
    ours.load_state_dict(stock.state_dict())
    torch.testing.assert_close(ours.weight, stock.weight, rtol=0, atol=0)
    assert Linear(7, 5, bias=False).bias is None and isinstance(ours, nn.Linear)


def test_bad_variant_and_input():
    with pytest.raises(ValueError, match="unknown tier 'fast'"):
        Linear(3, 4, tier="fast")
    with pytest.raises(ValueError, match="unknown tier"):
        replace_linear(nn.Linear(3, 4), tier="fast")
    with pytest.raises(ValueError, match="expected input with last dimension 3, got shape \\[2, 4\\]"):
        Linear(3, 4, tier="naive")(torch.randn(2, 4))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_other_dtypes_run_torch_linear(dtype):
    # A model cast to another dtype after replace_linear still runs: torch's F.linear, bit for
    # bit, gradients included; an input whose dtype differs from the weight's gets torch's error.
    torch.manual_seed(0)
    model = replace_linear(nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))).to(dtype)
    assert all(type(m) is Linear for m in (model[0], model[2]))
    x = torch.randn(4, 6, dtype=dtype, requires_grad=True)
    y = model(x)
    ref = F.linear(F.relu(F.linear(x, model[0].weight, model[0].bias)), model[2].weight, model[2].bias)
    assert y.dtype == dtype and torch.equal(y, ref)
    y.sum().backward()
    assert x.grad is not None and model[0].weight.grad.dtype == dtype
    with pytest.raises(RuntimeError, match="dtype"):
        Linear(6, 5)(torch.randn(4, 6, dtype=dtype))
    with pytest.raises(RuntimeError, match="dtype"):
        Linear(6, 5, dtype=dtype)(torch.randn(4, 6))


@pytest.mark.parametrize("device", [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=needs_cuda)])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_autocast_runs_torch_linear_in_its_dtype(device, compiled, monkeypatch):
    # Inside torch.autocast to bfloat16 a gemmtiles Linear runs and returns what stock
    # nn.Linear does there (bfloat16, the same bits, float32 gradients of the parameters),
    # eager and under torch.compile, with no gemmtiles call; after the region, gemmtiles again.
    import gemmtiles.nn as gnn

    calls = []
    for name in ("linear_for", "op_for"):
        real = getattr(gnn, name)
        monkeypatch.setattr(gnn, name, lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    torch._dynamo.reset()
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 8)).to(device)
    ours = replace_linear(copy.deepcopy(stock))
    run = torch.compile(ours, backend="aot_eager") if compiled else ours
    x = torch.randn(5, 16, device=device)
    with torch.autocast(device, dtype=torch.bfloat16):
        y, ref = run(x), stock(x)
    assert y.dtype == torch.bfloat16 and torch.equal(y, ref) and not calls
    y.float().sum().backward()
    ref.float().sum().backward()
    for p, q in zip(ours.parameters(), stock.parameters()):
        assert p.grad.dtype == torch.float32 and torch.equal(p.grad, q.grad)
    assert run(x).dtype == torch.float32 and calls
    torch._dynamo.reset()


@pytest.mark.parametrize("device,tier", DEVICE_TIERS)
@pytest.mark.parametrize("shape", [(6, 24), (24,), (2, 5, 24), (2, 3, 4, 24), (0, 24)], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(device, tier, shape, bias):
    torch.manual_seed(0)
    stock = nn.Linear(24, 40, bias=bias, device=device)
    ours = replace_linear(copy.deepcopy(stock), tier=tier)
    assert isinstance(ours, Linear)
    x = torch.randn(shape, device=device)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    y1, y2 = stock(x1), ours(x2)
    torch.testing.assert_close(y2, y1, rtol=1e-5, atol=1e-5)
    g = torch.randn_like(y1)
    y1.backward(g)
    y2.backward(g)
    torch.testing.assert_close(x2.grad, x1.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours.weight.grad, stock.weight.grad, rtol=1e-4, atol=1e-4)
    if bias:
        torch.testing.assert_close(ours.bias.grad, stock.bias.grad, rtol=1e-5, atol=1e-5)


def test_replace_linear_in_place_and_filter():
    model = Block()
    fc1_weight = model.fc1.weight
    out = replace_linear(model, tier="naive", filter=lambda name, m: name.startswith("fc"))
    assert out is model
    assert type(model.fc1) is Linear and type(model.fc2) is Linear
    assert type(model.qkv) is nn.Linear and type(model.head) is nn.Linear
    assert model.fc1.weight is fc1_weight  # the same Parameter: optimizers keep working
    replace_linear(model)
    assert sum(type(m) is Linear for m in model.modules()) == 5


@pytest.mark.parametrize("shape", [(6, 24), (24,), (2, 3, 24)], ids=str)
def test_linear_eager_call_is_the_op(shape):
    # Eager forwards run through gemmtiles._C.linear (the transpose, reshape and view in C++):
    # bitwise the op on x @ W^T + bias, with the same gradients.
    from gemmtiles import _ops

    torch.manual_seed(0)
    lin = Linear(24, 40, tier="naive")
    x = torch.randn(shape, requires_grad=True)
    assert _ops.linear_for("naive", x) is not None
    y = lin(x)
    x_ref = x.detach().clone().requires_grad_()
    w_ref = lin.weight.detach().clone().requires_grad_()
    ref = torch.ops.gemmtiles.naive(x_ref.reshape(-1, 24), w_ref.t(), lin.bias, 1.0, 1.0).view(*shape[:-1], 40)
    assert torch.equal(y, ref)
    g = torch.randn_like(y)
    y.backward(g)
    ref.backward(g)
    assert torch.equal(x.grad, x_ref.grad) and torch.equal(lin.weight.grad, w_ref.grad)


def test_linear_eager_entry_rejects_bad_arguments():
    from gemmtiles import _ops

    x, w = torch.randn(2, 3), torch.randn(4, 3)
    with pytest.raises(TypeError, match="4 arguments"):
        _ops._C.linear(0, x, w)
    with pytest.raises(TypeError, match="x and weight must be tensors"):
        _ops._C.linear(0, x, "w", None)
    with pytest.raises(IndexError, match="no such op index"):
        _ops._C.linear(10**6, x, w, None)


@pytest.mark.parametrize("device,tier", [p for p in DEVICE_TIERS if p.id not in ("cpu-reorder", "cpu-blocked")])
def test_linear_forward_backward_copies_nothing(device, tier):
    """x @ W^T reads W^T in place, and both backward products read their transposes in
    place: no copy or clone op runs, and on the GPU no copy kernel. (reorder and blocked are
    left out: their unit-stride inner loop needs B row-major, so they copy W^T by design.)"""
    lin = Linear(64, 48, tier=tier, device=device)
    x = torch.randn(4, 16, 64, device=device, requires_grad=True)
    lin(x).sum().backward()  # warm-up: lazy initialisation out of the trace
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        y = lin(x)
        y.backward(torch.ones_like(y))
        if device == "cuda":
            torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    copies = [n for n in names if n in ("aten::copy_", "aten::clone", "aten::contiguous") or "copy" in n.lower()]
    assert not copies, copies
    assert sum(f"gemmtiles::{tier}" in n for n in names) >= 3  # forward, grad_x, grad_W


def _train(model, device, steps=50):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 12, 32, generator=g).to(device)
    target = torch.randn(8, 12, generator=g).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device,tier", [p for p in DEVICE_TIERS if p.id != "cuda-naive"])
def test_transformer_block_trains_like_stock(device, tier):
    torch.manual_seed(0)
    stock = Block().to(device)
    ours = replace_linear(copy.deepcopy(stock), tier=tier)
    x = torch.randn(3, 10, 32, device=device)
    torch.testing.assert_close(ours(x), stock(x), rtol=1e-5, atol=1e-5)
    ours(x).sum().backward()
    stock(x).sum().backward()
    for (name, p1), p2 in zip(stock.named_parameters(), ours.parameters()):
        torch.testing.assert_close(p2.grad, p1.grad, rtol=1e-4, atol=1e-4, msg=name)
    ref, got = _train(copy.deepcopy(stock), device), _train(ours, device)
    assert got[-1] < 0.5 * got[0], got  # it learns
    # fp32 noise only: the two curves agree to a relative 1e-3 at every step
    torch.testing.assert_close(torch.tensor(got), torch.tensor(ref), rtol=1e-3, atol=1e-6)
