"""Bad input: a clear error of the right type, naming the problem, from sgemm (Python checks),
from the ops themselves (C++ TORCH_CHECK), and from the fake kernels (meta tensors)."""

from __future__ import annotations

import re

import pytest
import torch

import gemmtiles
from gemmtiles.testing import needs_cuda


def sgemm_call(a, b, **kw):
    return gemmtiles.sgemm(a, b, tier="naive", **kw)


def op_call(a, b, c=None, alpha=1.0, beta=0.0):
    return torch.ops.gemmtiles.naive(a, b, c, alpha, beta)


def meta(t):
    return t.to("meta") if isinstance(t, torch.Tensor) else t


def meta_call(a, b, c=None, alpha=1.0, beta=0.0):
    return torch.ops.gemmtiles.naive(meta(a), meta(b), meta(c), alpha, beta)


CASES = [
    # (id, a, b, kwargs, exception, message fragment)
    ("a-float16", torch.randn(3, 4).half(), torch.randn(4, 5), {}, TypeError, "expected a to be float32, got float16"),
    ("b-float64", torch.randn(3, 4), torch.randn(4, 5).double(), {}, TypeError, "float32"),
    ("b-int", torch.randn(3, 4), torch.ones(4, 5, dtype=torch.int32), {}, TypeError, "float32"),
    ("a-1d", torch.randn(4), torch.randn(4, 5), {}, ValueError, "2-D or 3-D"),
    ("b-4d", torch.randn(3, 4), torch.randn(1, 2, 4, 5), {}, ValueError, "2-D or 3-D"),
    ("a-0d", torch.randn(()), torch.randn(4, 5), {}, ValueError, "2-D or 3-D"),
    ("inner", torch.randn(3, 4), torch.randn(5, 6), {}, ValueError, "shapes cannot be multiplied (3x4 and 5x6)"),
    ("batch", torch.randn(2, 3, 4), torch.randn(3, 4, 5), {}, ValueError, "cannot be broadcast"),
    ("c-shape", torch.randn(3, 4), torch.randn(4, 5), {"c": torch.randn(4, 5), "beta": 1.0}, ValueError, "c of shape"),
    ("c-rank", torch.randn(3, 4), torch.randn(4, 5), {"c": torch.randn(2, 3, 5), "beta": 1.0}, ValueError, "c of shape"),
    ("c-dtype", torch.randn(3, 4), torch.randn(4, 5), {"c": torch.randn(5).half(), "beta": 1.0}, TypeError, "float32"),
]


@pytest.mark.parametrize("call", [sgemm_call, op_call, meta_call], ids=["sgemm", "op", "fake"])
@pytest.mark.parametrize("name,a,b,kw,exc,msg", CASES, ids=[c[0] for c in CASES])
def test_bad_input(call, name, a, b, kw, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call(a, b, **kw)


def test_not_a_tensor():
    with pytest.raises(TypeError, match="argument 'a' must be a Tensor, not list"):
        gemmtiles.sgemm([[1.0]], torch.randn(1, 1))
    with pytest.raises(TypeError, match="argument 'c' must be a Tensor"):
        gemmtiles.sgemm(torch.randn(1, 1), torch.randn(1, 1), c=3.0, beta=1.0)


def test_alpha_beta_must_be_numbers():
    with pytest.raises(TypeError, match="'alpha' must be a real number"):
        gemmtiles.sgemm(torch.randn(2, 2), torch.randn(2, 2), alpha="2")
    with pytest.raises(TypeError, match="'beta' must be a real number"):
        gemmtiles.sgemm(torch.randn(2, 2), torch.randn(2, 2), beta=torch.tensor(1.0))


def test_unknown_variant_lists_known():
    with pytest.raises(ValueError, match="unknown tier 'fastest'.*naive, reorder, blocked, coalesced"):
        gemmtiles.sgemm(torch.randn(2, 2), torch.randn(2, 2), tier="fastest")


@pytest.mark.parametrize("tier", [0, 3, 1.5, ["blocked"], b"blocked"])
def test_tier_of_another_type_is_a_type_error(tier):
    # Not a str: a TypeError naming the argument, as torch gives; a falsy one (0) does not
    # fall back to the default tier.
    with pytest.raises(TypeError, match="argument 'tier' must be a str, not"):
        gemmtiles.sgemm(torch.randn(2, 2), torch.randn(2, 2), tier=tier)
    with pytest.raises(TypeError, match="argument 'tier' must be a str, not"):
        gemmtiles.nn.Linear(2, 2, tier=tier)


def test_argument_errors_come_before_a_bad_tier():
    # As with an unknown tier name: the operands' error first.
    with pytest.raises(TypeError, match="expected b to be float32"):
        gemmtiles.sgemm(torch.randn(2, 2), torch.randn(2, 2).double(), tier=0)


def test_empty_tier_is_unknown():
    with pytest.raises(ValueError, match="unknown tier ''"):
        gemmtiles.sgemm(torch.randn(2, 2), torch.randn(2, 2), tier="")


@pytest.mark.parametrize("tier", [t for t in gemmtiles.tiers() if t not in gemmtiles.tiers("cpu")])
def test_cuda_tier_on_cpu(tier):
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    with pytest.raises(RuntimeError, match=f"tier '{tier}' needs a CUDA tensor, got cpu"):
        gemmtiles.sgemm(a, b, tier=tier)
    with pytest.raises(RuntimeError, match=f"tier '{tier}' needs a CUDA tensor, got cpu"):
        getattr(torch.ops.gemmtiles, tier)(a, b)


@needs_cuda
def test_cpu_tier_on_cuda():
    a, b = torch.randn(2, 3, device="cuda"), torch.randn(3, 4, device="cuda")
    with pytest.raises(RuntimeError, match="tier 'reorder' needs a CPU tensor, got cuda"):
        gemmtiles.sgemm(a, b, tier="reorder")


@needs_cuda
@pytest.mark.parametrize("tier", ["naive", "warptile"])
def test_mixed_devices(tier):
    a, b = torch.randn(2, 3, device="cuda"), torch.randn(3, 4)
    for x, y in ((a, b), (b.T.contiguous().T, a.T)):
        with pytest.raises(RuntimeError, match="expected all tensors on one device"):
            gemmtiles.sgemm(x, y, tier=tier)
        with pytest.raises(RuntimeError, match="expected all tensors on one device"):
            getattr(torch.ops.gemmtiles, tier)(x, y)
    with pytest.raises(RuntimeError, match="expected all tensors on one device"):
        gemmtiles.sgemm(a, b.cuda(), tier=tier, c=torch.randn(4), beta=1.0)


def test_error_leaves_c_untouched():
    c = torch.randn(3, 5)
    before = c.clone()
    with pytest.raises(ValueError):
        gemmtiles.sgemm(torch.randn(3, 4), torch.randn(6, 5), c=c, beta=1.0, tier="naive")
    assert torch.equal(c, before)
    out = gemmtiles.sgemm(torch.randn(3, 4), torch.randn(4, 5), c=c, beta=1.0, tier="naive")
    assert torch.equal(c, before) and out.data_ptr() != c.data_ptr()


def test_default_variant_per_device():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    torch.testing.assert_close(gemmtiles.sgemm(a, b), torch.ops.gemmtiles.reorder(a, b), rtol=0, atol=0)


def test_variant_is_the_deprecated_name_of_tier():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    with pytest.warns(FutureWarning, match="variant= is deprecated.*tier="):
        out = gemmtiles.sgemm(a, b, variant="naive")
    assert torch.equal(out, gemmtiles.sgemm(a, b, tier="naive"))
    with pytest.raises(TypeError, match="both tier= and variant="):
        gemmtiles.sgemm(a, b, tier="naive", variant="naive")
    with pytest.warns(FutureWarning):
        layer = gemmtiles.nn.Linear(4, 5, variant="naive")
    assert layer.tier == "naive" and layer.variant == "naive" and "tier='naive'" in repr(layer)
    with pytest.warns(FutureWarning):
        gemmtiles.nn.replace_linear(torch.nn.Linear(4, 5), variant="naive")
    with pytest.warns(FutureWarning):
        assert gemmtiles.enable(variant="naive").tier == "naive"
    assert gemmtiles.variants() == gemmtiles.tiers()


def test_linear_pickled_with_its_old_attribute_loads():
    import pickle

    layer = gemmtiles.nn.Linear(4, 5, tier="naive")
    state = layer.__dict__.copy()
    state["variant"] = state.pop("tier")  # as a Linear saved before the rename
    old = gemmtiles.nn.Linear.__new__(gemmtiles.nn.Linear)
    old.__setstate__(state)
    restored = pickle.loads(pickle.dumps(old))
    assert restored.tier == "naive"
    x = torch.randn(2, 4)
    assert torch.equal(restored(x), layer(x))
