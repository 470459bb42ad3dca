"""gemmtiles' fp32 precision setting (gemmtiles.precision) and what auto runs under it and
torch's: the setting's API and scope (every machine), the plan's choice of tensor cores (no
GPU needed), and on a Hopper GPU which tier actually ran, eager and compiled."""

from __future__ import annotations

import copy
import threading

import pytest
import torch

import gemmtiles
from gemmtiles import precision
from gemmtiles._ops import _C
from gemmtiles.testing import CUDA

H100_SMS = 132


@pytest.fixture(autouse=True)
def _settings_restored():
    """Every test leaves gemmtiles' and torch's settings as it found them."""
    ours, theirs = gemmtiles.get_fp32_precision(), torch.get_float32_matmul_precision()
    yield
    gemmtiles.set_fp32_precision(ours)
    torch.set_float32_matmul_precision(theirs)


def test_default_follows_torch():
    assert gemmtiles.get_fp32_precision() == "none"
    torch.set_float32_matmul_precision("highest")
    assert precision.auto_tensor_cores() == "none"
    for level in ("high", "medium"):
        torch.set_float32_matmul_precision(level)
        assert precision.auto_tensor_cores() == "tf32"


@pytest.mark.parametrize("setting,under_highest,under_high",
                         [("ieee", "none", "none"), ("tf32", "tf32", "tf32"), ("tf32x3", "tf32x3", "tf32x3")])
def test_setting_overrides_torch(setting, under_highest, under_high):
    gemmtiles.set_fp32_precision(setting)
    torch.set_float32_matmul_precision("highest")
    assert precision.auto_tensor_cores() == under_highest
    torch.set_float32_matmul_precision("high")
    assert precision.auto_tensor_cores() == under_high


@pytest.mark.parametrize("bad,error", [("fast", ValueError), ("TF32X3", ValueError), (3, TypeError), (None, TypeError)])
def test_bad_settings_name_the_choices(bad, error):
    with pytest.raises(error, match="'none', 'ieee', 'tf32', 'tf32x3'"):
        gemmtiles.set_fp32_precision(bad)
    with pytest.raises(error, match="gemmtiles.fp32_precision"):
        gemmtiles.fp32_precision(bad)
    if bad is not None:  # enable(precision=None) leaves the setting as it is
        with pytest.raises(error):
            gemmtiles.enable(precision=bad)
    assert gemmtiles.get_fp32_precision() == "none"


def test_context_manager_nests_and_restores():
    with gemmtiles.fp32_precision("tf32x3"):
        assert gemmtiles.get_fp32_precision() == "tf32x3"
        with gemmtiles.fp32_precision("ieee"):
            assert gemmtiles.get_fp32_precision() == "ieee"
        assert gemmtiles.get_fp32_precision() == "tf32x3"
    assert gemmtiles.get_fp32_precision() == "none"


def test_context_manager_restores_on_exception():
    gemmtiles.set_fp32_precision("tf32")
    with pytest.raises(KeyError):
        with gemmtiles.fp32_precision("tf32x3"):
            raise KeyError("inside")
    assert gemmtiles.get_fp32_precision() == "tf32"


def test_decorator_and_reentry():
    ctx = gemmtiles.fp32_precision("ieee")

    @ctx
    def inner():
        return gemmtiles.get_fp32_precision()

    assert inner() == "ieee" and gemmtiles.get_fp32_precision() == "none"
    with ctx:  # the same object entered twice, nested
        with ctx:
            assert gemmtiles.get_fp32_precision() == "ieee"
        assert gemmtiles.get_fp32_precision() == "ieee"
    assert gemmtiles.get_fp32_precision() == "none"


def test_setting_is_process_wide():
    # Like torch's own: autograd's backward threads see what the forward's thread set.
    seen = []
    with gemmtiles.fp32_precision("tf32x3"):
        t = threading.Thread(target=lambda: seen.append(gemmtiles.get_fp32_precision()))
        t.start()
        t.join()
    assert seen == ["tf32x3"]


def test_enable_sets_the_precision_for_its_block():
    with gemmtiles.enable(precision="tf32x3"):
        assert gemmtiles.get_fp32_precision() == "tf32x3"
        assert torch.mm(torch.ones(2, 3), torch.ones(3, 4)).sum().item() == 24.0  # CPU: through gemmtiles
    assert gemmtiles.get_fp32_precision() == "none"
    with pytest.raises(ZeroDivisionError):
        with gemmtiles.enable(precision="ieee"):
            1 / 0
    assert gemmtiles.get_fp32_precision() == "none"
    with gemmtiles.enable():  # no precision: left as it is
        assert gemmtiles.get_fp32_precision() == "none"


def test_info_shows_the_settings(capsys):
    with gemmtiles.fp32_precision("tf32x3"):
        gemmtiles.show_config()
    out = capsys.readouterr().out
    assert "gemmtiles.get_fp32_precision(): 'tf32x3'" in out
    assert "auto may run on the tensor cores: tf32x3" in out


def plan(m, n, k, tensor_cores, layout="NT", batch=1):
    return _C.auto_plan(m, n, k, batch, layout[1] == "T", True, H100_SMS, layout[0] == "N",
                        tensor_cores=tensor_cores)[0]


@pytest.mark.parametrize("m,n,k,layout", [(4096, 4096, 4096, "NN"), (2048, 5504, 2048, "NT"),
                                          (8192, 4096, 4096, "TN"), (512, 4096, 4096, "NT")])
def test_large_products_plan_tensor_cores(m, n, k, layout):
    assert plan(m, n, k, "none", layout) not in ("tf32", "tf32x3")
    assert plan(m, n, k, "tf32", layout) == "tf32"
    assert plan(m, n, k, "tf32x3", layout) == "tf32x3"


@pytest.mark.parametrize("m,n,k,layout", [(1, 4096, 4096, "NT"), (8, 11008, 4096, "NT"), (64, 64, 64, "NT"),
                                          (100, 200, 300, "NT"), (200, 200, 16384, "NN")])
def test_small_and_deep_products_stay_exact(m, n, k, layout):
    # Few tiles on a deep K (200 x 200 x 16384): the split-K tiles win over tf32x3, and over
    # tf32 where B is N-major (x @ W).
    for math in ("tf32", "tf32x3"):
        assert plan(m, n, k, math, layout) == plan(m, n, k, "none", layout)


def test_few_tiles_on_a_deep_k_run_tf32_on_the_narrow_kernel():
    # x @ W^T: the narrow kernel's 128 x 32 tiles (14 of them) share their k iterations between
    # the SMs (stream-K), a modelled time under the exact split-K tiles': tf32 under "high".
    assert plan(200, 200, 16384, "tf32") == "tf32"
    assert plan(200, 200, 16384, "tf32x3") == plan(200, 200, 16384, "none") != "tf32x3"


def test_the_model_prices_what_the_kernels_do():
    # tf32x3 does three products and splits both operands: never cheaper than tf32.
    for shape in [(4096, 4096, 4096), (1024, 768, 3072), (300, 5000, 700)]:
        if plan(*shape, "tf32x3") == "tf32x3":
            assert plan(*shape, "tf32") == "tf32"
    # A batch of products is priced by its tiles, like one product of as many rows.
    assert plan(512, 1024, 1024, "tf32", "NN", batch=16) == "tf32"
    with pytest.raises(ValueError, match="tensor_cores"):
        plan(64, 64, 64, "fp16")


# --- on a Hopper GPU: which tier ran --------------------------------------------------------

def _tensor_cores_run():
    from gemmtiles._ops import unavailable_on_gpu
    from gemmtiles._tiers import BY_NAME

    return CUDA and unavailable_on_gpu(BY_NAME["tf32"]) is None


needs_tensor_cores = pytest.mark.skipif(not _tensor_cores_run(), reason="needs a GPU that runs the tensor-core tiers")

# torch's setting, gemmtiles', and the tier auto must match bitwise on a large product (the
# plan for it is checked above) and on a small one (exact: as under "highest").
CASES = [("highest", "none", "exact"), ("high", "none", "tf32"), ("medium", "none", "tf32"),
         ("highest", "tf32x3", "tf32x3"), ("high", "tf32x3", "tf32x3"), ("high", "ieee", "exact"),
         ("highest", "tf32", "tf32")]


def _operands(m, n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(m, k, device="cuda", generator=g),
            torch.randn(n, k, device="cuda", generator=g).T)  # x @ W^T


@needs_tensor_cores
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("torch_level,ours,expected", CASES)
def test_auto_runs_what_the_settings_allow(torch_level, ours, expected, compiled):
    a, b = _operands(2048, 2048, 2048, seed=7)
    small_a, small_b = _operands(64, 96, 80, seed=8)
    with gemmtiles.fp32_precision("ieee"):
        exact, small_exact = gemmtiles.sgemm(a, b), gemmtiles.sgemm(small_a, small_b)
    want = exact if expected == "exact" else gemmtiles.sgemm(a, b, tier=expected)

    def product(x, y):
        return gemmtiles.sgemm(x, y)

    fn = torch.compile(product, fullgraph=True, dynamic=False) if compiled else product
    torch.set_float32_matmul_precision(torch_level)
    with gemmtiles.fp32_precision(ours):
        got, small = fn(a, b), fn(small_a, small_b)
    assert torch.equal(got, want)
    assert torch.equal(small, small_exact)


@needs_tensor_cores
def test_model_under_the_switch_trains_on_tf32x3():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 1024)).cuda()
    x = torch.randn(2048, 1024, device="cuda")
    with gemmtiles.enable(precision="tf32x3"):
        out = model(x)
        out.square().mean().backward()
    ref = copy.deepcopy(model).double()
    with torch.no_grad():
        want = ref(x.double())
    err = (out.double() - want).norm() / want.norm()
    assert err < 1e-5, err  # fp32-class, far below TF32's ~1e-3
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
