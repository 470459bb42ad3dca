"""Op registration: schemas match the tier table, fake kernels give the real shapes and
strides, and torch.library.opcheck passes for every op this machine can run."""

from __future__ import annotations

import pytest
import torch

import gemmtiles
from gemmtiles._ops import REGISTERED, sm90a_built
from gemmtiles._tiers import TIERS
from gemmtiles.testing import operand, tier_params


BUILT_CUDA = any(device == "cuda" for _, device, _, _ in REGISTERED)


def test_every_tier_is_an_op_and_every_op_a_tier():
    """The tier table and the C++ registration lines agree: the same names, devices, operand
    layouts and minimum compute capability (a build without CUDA has only the CPU lines)."""
    registered = {
        name.split("::", 1)[1]
        for name in torch._C._dispatch_get_all_op_names()
        if name.startswith("gemmtiles::")
    }
    built = {"cpu", "cuda"} if BUILT_CUDA else {"cpu"}
    table = {t.name for t in TIERS if set(t.devices) & built}
    assert registered == table
    lines = {(name, device): (operands, min_sm) for name, device, operands, min_sm in REGISTERED}
    assert len(lines) == len(REGISTERED), "a tier registered twice for one device"
    want = {
        (t.name, d): (t.operands, t.min_cc[0] * 10 + t.min_cc[1])
        for t in TIERS for d in t.devices if d in built
    }
    assert lines == want


@pytest.mark.parametrize("tier", [t.name for t in TIERS])
def test_schema(tier):
    schema = getattr(torch.ops.gemmtiles, tier).default._schema
    assert str(schema) == (
        f"gemmtiles::{tier}(Tensor a, Tensor b, Tensor? c=None, float alpha=1., float beta=0.) -> Tensor"
    )


def test_variants():
    assert gemmtiles.tiers("cpu") == ["naive", "reorder", "blocked"]
    assert set(gemmtiles.tiers("cpu")) <= set(gemmtiles.tiers())
    if torch.cuda.is_available():
        cuda = gemmtiles.tiers("cuda")
        assert cuda == [t for t in gemmtiles.tiers() if t in cuda]  # ladder order
        # The sm_90a tiers only where this build compiled them (an arch list with 9.0 and
        # CUTLASS's headers) and the GPU is a Hopper.
        sm90a = sm90a_built() and torch.cuda.get_device_capability() == (9, 0)
        assert set(cuda) == {t.name for t in TIERS if t.runs_on("cuda")
                             and torch.cuda.get_device_capability() >= t.min_cc
                             and (sm90a or not t.sm90a)}


@pytest.mark.parametrize("tier", [t.name for t in TIERS])
@pytest.mark.parametrize(
    "a_shape,b_shape,c_shape,out_shape",
    [
        ((3, 4), (4, 5), None, (3, 5)),
        ((3, 4), (4, 5), (5,), (3, 5)),
        ((2, 3, 4), (4, 5), (3, 1), (2, 3, 5)),
        ((3, 4), (6, 4, 5), None, (6, 3, 5)),
        ((1, 3, 4), (6, 4, 5), (6, 3, 5), (6, 3, 5)),
        ((0, 4), (4, 5), None, (0, 5)),
        ((3, 4), (0, 4, 5), None, (0, 3, 5)),  # a batch of 1 broadcast to an empty one
        ((1, 3, 4), (0, 4, 5), (5,), (0, 3, 5)),
        ((0, 3, 4), (1, 4, 5), None, (0, 3, 5)),
    ],
)
def test_fake_shapes(tier, a_shape, b_shape, c_shape, out_shape):
    a = torch.empty(a_shape, device="meta")
    b = torch.empty(b_shape, device="meta")
    c = None if c_shape is None else torch.empty(c_shape, device="meta")
    out = getattr(torch.ops.gemmtiles, tier)(a, b, c, 1.0, 1.0)
    assert out.device.type == "meta" and out.dtype == torch.float32
    assert tuple(out.shape) == out_shape and out.is_contiguous()


@pytest.mark.parametrize("tier,device", tier_params())
def test_fake_matches_real(tier, device):
    a, b = operand(7, 5, device, "col"), operand(5, 3, device, batch=2)
    real = getattr(torch.ops.gemmtiles, tier)(a, b)
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        fake = getattr(torch.ops.gemmtiles, tier)(mode.from_tensor(a), mode.from_tensor(b))
    assert fake.shape == real.shape and fake.stride() == real.stride() and fake.dtype == real.dtype


def _opcheck_args(device):
    g = torch.Generator().manual_seed(0)
    a = operand(6, 5, device, generator=g).requires_grad_()
    b = operand(5, 4, device, "col", generator=g).requires_grad_()
    c = torch.randn(4, generator=g).to(device).requires_grad_()
    ab = operand(6, 5, device, batch=3, generator=g).requires_grad_()
    return [
        (a, b, None, 1.0, 0.0),
        (a, b, c, 0.5, 2.0),
        (a.detach(), b.detach().T.contiguous().T, c.detach(), -1.0, 1.0),
        (ab, b, c, 1.0, 1.0),
        (a.detach().mT.contiguous().mT, operand(3, 5, device).mT, None, 2.0, 0.0),
    ]


@pytest.mark.parametrize("tier,device", tier_params())
def test_opcheck(tier, device):
    op = getattr(torch.ops.gemmtiles, tier)
    for args in _opcheck_args(device):
        torch.library.opcheck(op, args)
