"""torch.func on gemmtiles' ops: torch.vmap runs a vmapped call as one call of the op on a
batch of products (each op's batching rule, gemmtiles._ops._vmap_rule), for any operand
vmapped or shared, matrices or batches of them per sample; grad, jacrev and per-sample
gradients compose with it."""

from __future__ import annotations

import itertools

import pytest
import torch

import gemmtiles
from gemmtiles._tiers import BY_NAME, default_tier
from gemmtiles.nn import Linear
from gemmtiles.testing import assert_gemm_close, needs_cuda, tier_params

SAMPLES = 5

# One sample's a, b and the c's it may carry: matrices, batches, and batches that broadcast.
SHAPES = [
    ((3, 5), (5, 6), [None, (6,), (3, 6), (3, 1), ()]),
    ((2, 3, 5), (5, 6), [None, (6,), (2, 3, 6), (1, 3, 1)]),
    ((3, 5), (2, 5, 6), [(3, 6), (2, 1, 6)]),
    ((2, 3, 5), (2, 5, 6), [None, (2, 3, 6)]),
    ((1, 3, 5), (2, 5, 6), [(2, 3, 6)]),
]


def _vmapped(shape, dim, device, generator):
    """A tensor of one sample's `shape` with SAMPLES of them along `dim` (None: one for all)."""
    if dim is None:
        return torch.randn(shape, generator=generator).to(device)
    full = list(shape)
    full.insert(dim, SAMPLES)
    return torch.randn(full, generator=generator).to(device)


def _cases():
    for a_shape, b_shape, c_shapes in SHAPES:
        for c_shape in c_shapes:
            for a_dim, b_dim, c_dim in itertools.product((None, 0, 1), repeat=3):
                if c_shape is None and c_dim is not None:
                    continue
                if (c_shape is not None and c_dim is not None and c_dim > len(c_shape)) or (
                        a_dim is None and b_dim is None and c_dim is None):
                    continue
                yield a_shape, b_shape, c_shape, a_dim, b_dim, c_dim


CASES = list(_cases())


def _each_sample(tier, a, b, c, dims, alpha, beta):
    """The op on each sample alone, stacked: what vmap must give."""
    def pick(x, d, i):
        return x if x is None or d is None else x.select(d, i)

    return [gemmtiles.sgemm(pick(a, dims[0], i), pick(b, dims[1], i), tier=tier, c=pick(c, dims[2], i),
                            alpha=alpha, beta=beta) for i in range(SAMPLES)]


def _check_cases(tier, device, cases):
    g = torch.Generator().manual_seed(3)
    for a_shape, b_shape, c_shape, *dims in cases:
        a = _vmapped(a_shape, dims[0], device, g)
        b = _vmapped(b_shape, dims[1], device, g)
        c = None if c_shape is None else _vmapped(c_shape, dims[2], device, g)
        out = torch.vmap(lambda x, y, z: gemmtiles.sgemm(x, y, tier=tier, c=z, alpha=0.5, beta=2.0),
                         in_dims=tuple(dims))(a, b, c)
        expected = _each_sample(tier, a, b, c, dims, 0.5, 2.0)
        assert out.shape == (SAMPLES, *expected[0].shape), (a_shape, b_shape, c_shape, dims)
        for i, e in enumerate(expected):
            def pick(x, d):
                return x if x is None or d is None else x.select(d, i)

            assert_gemm_close(out[i], pick(a, dims[0]), pick(b, dims[1]), pick(c, dims[2]), 0.5, 2.0,
                              precision=BY_NAME[tier].precision)


def test_vmap_every_operand_vmapped_or_shared():
    # Every combination of which of a, b and c are vmapped (and along which dimension), on
    # one CPU tier: each sample's result is the op's on that sample alone.
    _check_cases("blocked", "cpu", CASES)


@pytest.mark.parametrize("tier,device", tier_params())
def test_vmap_on_every_tier(tier, device):
    # A few of the cases on every tier: a vmapped A against a shared W with a bias row, both
    # vmapped, batches per sample, and c alone vmapped.
    picked = [((3, 5), (5, 6), (6,), 0, None, None), ((3, 5), (5, 6), (3, 6), 1, 0, 0),
              ((2, 3, 5), (2, 5, 6), (2, 3, 6), 0, None, 2), ((3, 5), (5, 6), (3, 1), None, None, 0)]
    _check_cases(tier, device, picked)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_vmap_runs_one_call_not_one_per_sample(device):
    # Without a batching rule torch runs the op once per sample (and warns); with it, the op
    # runs once on the batch (the profiler records the vmapped call and that one).
    tier = default_tier(device)
    w = torch.randn(4, 6, device=device)
    x = torch.randn(8, 3, 4, device=device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        torch.vmap(lambda xi: gemmtiles.sgemm(xi, w, tier=tier))(x)
    calls = sum(e.count for e in prof.key_averages() if e.key == f"gemmtiles::{tier}")
    assert calls == 2, calls


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_per_sample_gradients_match_torch_linear(device):
    # The usual recipe: vmap over grad of a functional call, one gradient per sample.
    torch.manual_seed(0)
    ours = Linear(4, 6).to(device)
    ref = torch.nn.Linear(4, 6).to(device)
    ref.load_state_dict(ours.state_dict())
    x, y = torch.randn(7, 4, device=device), torch.randn(7, 6, device=device)

    def per_sample(model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi):
            return ((torch.func.functional_call(model, p, (xi.unsqueeze(0),)) - yi) ** 2).sum()

        return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    got, want = per_sample(ours), per_sample(ref)
    for name in ("weight", "bias"):
        assert got[name].shape == (7, *getattr(ref, name).shape)
        torch.testing.assert_close(got[name], want[name], rtol=1e-5, atol=1e-5)


def test_vmap_under_torch_compile():
    w, c = torch.randn(4, 6), torch.randn(6)
    x = torch.randn(8, 3, 4)
    fn = torch.compile(torch.vmap(lambda xi: gemmtiles.sgemm(xi, w, c=c, beta=1.0, tier="blocked")))
    torch.testing.assert_close(fn(x), x @ w + c, rtol=1e-5, atol=1e-5)


def test_jacrev_and_nested_vmap():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    jac = torch.func.jacrev(lambda x: gemmtiles.sgemm(x, b, tier="blocked"))(a)
    torch.testing.assert_close(jac, torch.func.jacrev(lambda x: x @ b)(a))
    x, y = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 5, 6)
    out = torch.func.vmap(torch.func.vmap(lambda p, q: gemmtiles.sgemm(p, q, tier="blocked")))(x, y)
    torch.testing.assert_close(out, x @ y, rtol=1e-5, atol=1e-5)


def test_vmap_errors_name_one_samples_shapes():
    w = torch.randn(5, 6)
    with pytest.raises(ValueError, match=r"shapes cannot be multiplied \(2x4 and 5x6\)"):
        torch.vmap(lambda x: gemmtiles.sgemm(x, w, tier="blocked"))(torch.randn(3, 2, 4))
    with pytest.raises(ValueError, match=r"c of shape \[5\] cannot be broadcast to the output shape \[2, 6\]"):
        torch.vmap(lambda x, c: gemmtiles.sgemm(x, w[:4], c=c, beta=1.0, tier="blocked"))(
            torch.randn(3, 2, 4), torch.randn(3, 5))
