"""auto's CUTLASS SIMT path (csrc/auto/cutlass_simt.h): when it is planned (the rule and the
tuned table's `cutlass` entries, no GPU needed), and that it is right on every layout, odd
size, stride and epilogue it takes, and falls back where it does not take the problem."""

from __future__ import annotations

import contextlib

import pytest
import torch

from gemmtiles import tune
from gemmtiles.bench import Shape
from gemmtiles._ops import _C
from gemmtiles.testing import check_tier, needs_cuda, operand

H100_SMS = 132


def plan(m, n, k, layout, batch=1, table=None, cutlass=True):
    """auto's plan for a problem in layout NN, NT, TN or TT (first letter: A, second: B;
    T: stored transposed) on an H100, where CUTLASS's kernel can run it (cutlass)."""
    return _C.auto_plan(m, n, k, batch, layout[1] == "T", True, H100_SMS, layout[0] == "N", table, True, cutlass)


@pytest.mark.parametrize(
    "m,n,k,layout,tile",
    [
        (2048, 2048, 2048, "NN", (128, 256)),  # one wave of 128 tiles on 132 SMs
        (2048, 2048, 2048, "TN", (256, 128)),  # weight gradients: 256 x 128 tiles
        (4096, 4096, 4096, "NN", (128, 256)),  # 512 tiles: 3.9 waves
        (32000, 2048, 2048, "TN", (256, 128)),
        (2048, 2048, 32000, "TT", (128, 256)),
        (4096, 4096, 2048, "NT", None),  # both K-major: stream-K's rule, else the table alone
        (2048, 5504, 2048, "NN", None),  # 352 tiles: a last wave 2/3 full
        (2048, 5504, 2048, "TN", None),
        (1000, 4096, 4096, "NN", None),  # under 1024 rows
        (2048, 2048, 500, "NN", None),  # shallow
    ],
)
def test_rule_plans_cutlass_on_full_waves(m, n, k, layout, tile):
    got = plan(m, n, k, layout)
    if tile is None:
        assert got[0] != "cutlass" and got == plan(m, n, k, layout, cutlass=False)
    else:
        assert got[:3] == ("cutlass", *tile)
        # Not where the build or the GPU lacks it, nor for a batch.
        assert plan(m, n, k, layout, cutlass=False)[0] != "cutlass"
        assert plan(m, n, k, layout, batch=2)[0] != "cutlass"


def test_table_entry_names_cutlass():
    table = ("NT 2048 2048 2048 cutlass 0 1\nTN 256 512 64 cutlass 0 1\nTT 8 8 8 cutlass 0 1\n"
             "NN 2048 2048 2048 warptile 0 1\nNN 2048 2048 32768 transposed 0 1\n")
    assert plan(2048, 2048, 2048, "NT", table=table)[:3] == ("cutlass", 128, 256)
    assert plan(2000, 2000, 2000, "NT", table=table)[:3] == ("cutlass", 128, 256)  # the same buckets
    assert plan(256, 512, 64, "TN", table=table)[:3] == ("cutlass", 256, 128)
    assert plan(8, 8, 8, "TT", table=table)[:3] == ("cutlass", 128, 256)
    # The entries name A's layout: a TN entry is not an NN one's, nor the other way round.
    assert plan(256, 512, 64, "NN", table=table) == plan(256, 512, 64, "NN")
    # An entry of another kernel decides instead of the rule; a `transposed` one leaves the
    # copy to the launch, whose M-major product then plans on its own.
    assert plan(2048, 2048, 2048, "NN", table=table)[0] == "warptile"
    assert plan(2048, 2048, 32000, "NN", table=table)[0] == "split_tile"
    assert plan(2048, 2048, 32000, "TN", table=table)[0] == "cutlass"
    # Without CUTLASS's kernel, or batched: the heuristic.
    assert plan(2048, 2048, 2048, "NT", table=table, cutlass=False) == plan(2048, 2048, 2048, "NT", cutlass=False)
    assert plan(2048, 2048, 2048, "NT", batch=3, table=table) == plan(2048, 2048, 2048, "NT", batch=3)
    # An entry the problem cannot take counts as none: a `transposed` one where A's rows
    # (2046, not a multiple of 4) cannot be copied leaves the rule to decide; a `cutlass` one
    # without the kernel leaves the copy's size bounds to decide.
    assert plan(2046, 2048, 32000, "NN", table=table)[0] == "cutlass"
    assert not _C.transpose_a_first(2046, 2048, 32000, 1, True, False, True, table)
    nn = "NN 2048 4096 4096 cutlass 0 1"
    assert _C.transpose_a_first(2048, 4096, 4096, 1, True, False, True, nn)
    assert plan(2048, 4096, 4096, "NN", table=nn, cutlass=False) == plan(2048, 4096, 4096, "NN", cutlass=False)


@pytest.mark.parametrize("line", ["TN 32 4096 4096 pipelined 128 1", "TT 32 4096 4096 warptile 0 1",
                                  "NT 32 4096 4096 cutlass 128 1", "NN 32 4096 4096 cutlass 0 2",
                                  "TX 32 4096 4096 cutlass 0 1"])
def test_table_cutlass_lines_that_do_not_parse(line):
    with pytest.raises(ValueError, match=r"line 2: expected"):
        plan(32, 4096, 4096, "NT", table="# header\n" + line)


def test_tuner_offers_cutlass_where_auto_can_run_it(monkeypatch):
    monkeypatch.setattr(tune, "_cutlass_here", lambda: True)
    assert tune.CUTLASS in tune.candidates(2048, 2048, None, "NT", 2048)
    assert tune.CUTLASS in tune.candidates(1024, 2048, None, "NN", 5504)
    assert tune.CUTLASS not in tune.candidates(512, 2048, None, "NT", 2048)
    # The heuristic's plan, as a candidate: CUTLASS's where the rule names it.
    assert tune.heuristic_plan(Shape(2048, 2048, 2048), sms=132) == tune.CUTLASS
    assert tune.heuristic_plan(Shape(4096, 4096, 4096, "NT"), sms=132) == ("pipelined", 128, 1)
    monkeypatch.setattr(tune, "_cutlass_here", lambda: False)
    assert tune.CUTLASS not in tune.candidates(2048, 2048, None, "NT", 2048)
    assert tune.heuristic_plan(Shape(2048, 2048, 2048), sms=132) == tune.TRANSPOSED


@pytest.mark.parametrize(
    "m,n,k,layout,streamk",
    [
        # 256 x 128 tiles on 132 SMs: a last wave far from full
        (1024, 5504, 2048, "NT", True),  # 172 tiles: 1.3 waves
        (2048, 32000, 2048, "NT", True),  # 2000: 15.2 waves (a last wave 15% full)
        (512, 11008, 4096, "NT", True),
        (256, 11008, 4096, "NT", True),  # 86 tiles: 0.65 of a wave
        (4096, 5504, 4096, "NT", True),
        (1024, 2048, 2048, "NT", False),  # 64 tiles: under half a wave
        (2048, 2048, 2048, "NT", False),  # 128 tiles: a wave 97% full
        (4096, 4096, 4096, "NT", False),  # 512 tiles: 3.9 waves
        (255, 11008, 4096, "NT", False),  # under 256 rows
        (1024, 1023, 4096, "NT", False),  # under 1024 columns
        (1024, 5504, 511, "NT", False),  # shallow
        (1024, 5504, 4097, "NT", False),  # deep (slower there)
        (1024, 5504, 2048, "NN", False),  # K-major operands only
        (1024, 5504, 2048, "TN", False),
        (1024, 5504, 2048, "TT", False),
    ],
)
def test_rule_plans_streamk_for_x_at_w_t(m, n, k, layout, streamk):
    got = plan(m, n, k, layout)
    if streamk:
        assert got[:3] == ("cutlass_streamk", 256, 128)
        # Not where the build or the GPU lacks CUTLASS, nor for a batch.
        assert plan(m, n, k, layout, cutlass=False)[0] != "cutlass_streamk"
        assert plan(m, n, k, layout, batch=2)[0] != "cutlass_streamk"
    else:
        assert got[0] != "cutlass_streamk"


def test_table_entry_names_streamk():
    table = "NT 1024 2048 2048 streamk 0 1\nNT 4096 4096 4096 streamk 0 1\nNT 1024 6144 2048 pipelined 128 1\n"
    # Where the rule does not name it.
    assert plan(1024, 2048, 2048, "NT", table=table)[:3] == ("cutlass_streamk", 256, 128)
    assert plan(4000, 4000, 4000, "NT", table=table)[:3] == ("cutlass_streamk", 256, 128)
    # An entry of another kernel decides instead of the rule.
    assert plan(1024, 5504, 2048, "NT", table=table)[:3] == ("split_tile", 128, 128)
    # Without CUTLASS's kernel: the heuristic.
    assert plan(4096, 4096, 4096, "NT", table=table, cutlass=False) == plan(4096, 4096, 4096, "NT", cutlass=False)


@pytest.mark.parametrize("line", ["NN 1024 2048 2048 streamk 0 1", "TN 1024 2048 2048 streamk 0 1",
                                  "NT 1024 2048 2048 streamk 128 1", "NT 1024 2048 2048 streamk 0 2"])
def test_table_streamk_lines_that_do_not_parse(line):
    with pytest.raises(ValueError, match=r"line 2: expected"):
        plan(1024, 2048, 2048, "NT", table="# header\n" + line)


def test_tuner_offers_streamk_for_nt(monkeypatch):
    monkeypatch.setattr(tune, "_cutlass_here", lambda: True)
    assert tune.STREAMK in tune.candidates(256, 2048, None, "NT", 256)
    assert tune.STREAMK in tune.candidates(1024, 2048, None, "NT", 5504)
    assert tune.STREAMK not in tune.candidates(128, 2048, None, "NT", 2048)
    assert tune.STREAMK not in tune.candidates(1024, 128, None, "NT", 2048)
    assert tune.STREAMK not in tune.candidates(1024, 2048, None, "NN", 2048)
    assert tune.heuristic_plan(Shape(1024, 5504, 2048, "NT"), sms=132) == tune.STREAMK
    monkeypatch.setattr(tune, "_cutlass_here", lambda: False)
    assert tune.STREAMK not in tune.candidates(1024, 2048, None, "NT", 2048)
    assert tune.heuristic_plan(Shape(1024, 5504, 2048, "NT"), sms=132) == ("pipelined", 128, 1)


# On the GPU: the path itself, forced onto small shapes by table entries.

needs_cutlass = pytest.mark.skipif(not tune._cutlass_here(), reason="needs an sm_90 GPU and a build with CUTLASS")

SHAPES = [(1, 1, 1), (1, 7, 3), (5, 1, 9), (3, 5, 7), (17, 33, 129), (129, 257, 65), (131, 127, 1), (300, 260, 77),
          (1031, 1033, 517)]


def _table_for(shapes, layouts=("NN", "NT", "TN", "TT")):
    return "\n".join(f"{lay} {' '.join(str(_C.auto_bucket(x)) for x in s)} cutlass 0 1" for s in shapes
                     for lay in layouts)


@pytest.fixture
def cutlass_table():
    device = torch.cuda.current_device()
    _C.set_auto_table(device, _table_for(SHAPES), "test_cutlass: every shape on CUTLASS")
    try:
        yield
    finally:
        _C.set_auto_table(device, None)


def _kernels(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not names:  # CUPTI held by another tool (compute-sanitizer): the kernels are unseen
        pytest.skip("the profiler sees no kernels in this process")
    return names


def _ran_cutlass(fn):
    """Whether fn (one gemmtiles op call, nothing else) ran CUTLASS's kernel."""
    return any("cutlass" in name for name in _kernels(fn))


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("a_layout,b_layout", [("row", "row"), ("row", "col"), ("col", "row"), ("col", "col")])
def test_cutlass_path_is_right(cutlass_table, m, n, k, a_layout, b_layout):
    a = operand(m, k, "cuda", a_layout)
    b = operand(k, n, "cuda", b_layout)
    check_tier("auto", a, b)
    # Sliced operands (a leading dimension past the rows) and pointers off float4 alignment.
    a2 = operand(m, k, "cuda", a_layout, pad=3, offset=1)
    b2 = operand(k, n, "cuda", b_layout, pad=5, offset=3)
    check_tier("auto", a2, b2, alpha=-1.5)
    assert _ran_cutlass(lambda: torch.ops.gemmtiles.auto(a, b))
    assert _ran_cutlass(lambda: torch.ops.gemmtiles.auto(a2, b2, None, -1.5, 0.0))


def _c_operand(c_shape, m, n):
    """c for an m x n output: a full matrix, one sliced from a wider one, a bias row, a column,
    a scalar, or a column-major (strided) matrix."""
    return {"full": lambda: torch.randn(m, n, device="cuda"),
            "sliced": lambda: torch.randn(m, n + 7, device="cuda")[:, 3:-4],
            "row": lambda: torch.randn(n, device="cuda"), "col": lambda: torch.randn(m, 1, device="cuda"),
            "scalar": lambda: torch.randn((), device="cuda"),
            "strided": lambda: torch.randn(n, m, device="cuda").t()}[c_shape]()


@contextlib.contextmanager
def _rule_alone(kernel, m, n, k, layout):
    """auto without a tuned table, for an m x n x k problem in `layout` that the rule gives
    `kernel` on this GPU's SM count (skipped where it does not)."""
    device = torch.cuda.current_device()
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    if _C.auto_plan(m, n, k, 1, layout[1] == "T", True, sms, layout[0] == "N", None, True, True)[0] != kernel:
        pytest.skip(f"the rule leaves {m} x {n} x {k} {layout} to other kernels on {sms} SMs")
    _C.set_auto_table(device, "", "test_cutlass: the heuristic")
    try:
        yield
    finally:
        _C.set_auto_table(device, None)


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("c_shape", ["full", "sliced", "row", "col", "scalar", "strided"])
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_cutlass_path_epilogue(cutlass_table, c_shape, beta):
    m, n, k = 300, 260, 77
    a = operand(m, k, "cuda", "col")
    b = operand(k, n, "cuda", "row")
    c = _c_operand(c_shape, m, n)
    if beta == 0.0:
        c = c.fill_(float("nan"))  # never read
    out = check_tier("auto", a, b, c, alpha=2.0, beta=beta)
    assert not out.isnan().any()
    # CUTLASS's kernel takes c with rows of unit stride (or none read); others stay on the tiles.
    ran = _ran_cutlass(lambda: torch.ops.gemmtiles.auto(a, b, c, 2.0, beta))
    assert ran == (beta == 0.0 or c_shape in ("full", "sliced", "row"))


@needs_cuda
@needs_cutlass
def test_cutlass_runs_where_planned(cutlass_table):
    a = operand(300, 77, "cuda", "col")
    b = operand(77, 260, "cuda", "row")
    # A c whose rows are not unit-stride is not CUTLASS's: the tiles run it, still right.
    c = torch.randn(260, 300, device="cuda").t()
    check_tier("auto", a, b, c, beta=1.0)
    assert _ran_cutlass(lambda: torch.ops.gemmtiles.auto(a, b))
    assert not _ran_cutlass(lambda: torch.ops.gemmtiles.auto(a, b, c, 1.0, 1.0))


@needs_cuda
@needs_cutlass
def test_rule_runs_cutlass_on_a_weight_gradient():
    # No table entry (the shipped table holds NN and NT): the rule's 256 x 128 tiles, one wave
    # of 128 on 132 SMs (on other SM counts the rule may leave it to the tiles).
    with _rule_alone("cutlass", 2048, 2048, 1024, "TN"):
        a = operand(2048, 1024, "cuda", "col")
        b = operand(1024, 2048, "cuda", "row")
        check_tier("auto", a, b)
        assert _ran_cutlass(lambda: torch.ops.gemmtiles.auto(a, b))


# Stream-K: NT shapes forced onto it by table entries. Small outputs make few tiles, so most
# SMs share out one tile's k iterations and add their partial tiles: the path under test.
STREAMK_SHAPES = SHAPES + [(300, 1000, 2000), (1024, 1031, 997), (2047, 3001, 1999)]


@pytest.fixture
def streamk_table():
    device = torch.cuda.current_device()
    _C.set_auto_table(device, "\n".join(f"NT {' '.join(str(_C.auto_bucket(x)) for x in s)} streamk 0 1"
                                         for s in STREAMK_SHAPES), "test_cutlass: NT on stream-K")
    try:
        yield
    finally:
        _C.set_auto_table(device, None)


def _ran_streamk(fn):
    return any("cutlass" in name and "StreamK" in name for name in _kernels(fn))


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("m,n,k", STREAMK_SHAPES)
def test_streamk_path_is_right(streamk_table, m, n, k):
    a = operand(m, k, "cuda", "row")
    b = operand(k, n, "cuda", "col")
    first = check_tier("auto", a, b)
    # The same bits on every run: the partial tiles are added in a fixed order.
    assert torch.equal(torch.ops.gemmtiles.auto(a, b), first)
    a2 = operand(m, k, "cuda", "row", pad=3, offset=1)
    b2 = operand(k, n, "cuda", "col", pad=5, offset=3)
    check_tier("auto", a2, b2, alpha=-1.5)
    # An operand of one row or one column has a unit stride both ways, which auto reads as
    # row-major: B of one column or one row (K = 1) is not W^T to it, so no stream-K.
    if n > 1 and k > 1:
        assert _ran_streamk(lambda: torch.ops.gemmtiles.auto(a, b))
        assert _ran_streamk(lambda: torch.ops.gemmtiles.auto(a2, b2, None, -1.5, 0.0))
    if m > 1 and k > 1 and n > 1:
        # Other layouts have no stream-K entry: the heuristic runs them. (Not a column-major A:
        # where the plan leaves one on warptile, auto copies it K-major first.)
        assert not _ran_streamk(lambda: torch.ops.gemmtiles.auto(a, operand(k, n, "cuda", "row")))


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("c_shape", ["full", "sliced", "row", "col", "strided"])
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_streamk_path_epilogue(streamk_table, c_shape, beta):
    m, n, k = 300, 1000, 2000
    a = operand(m, k, "cuda", "row")
    b = operand(k, n, "cuda", "col")
    c = _c_operand(c_shape, m, n)
    if beta == 0.0:
        c = c.fill_(float("nan"))  # never read
    out = check_tier("auto", a, b, c, alpha=2.0, beta=beta)
    assert not out.isnan().any()
    ran = _ran_streamk(lambda: torch.ops.gemmtiles.auto(a, b, c, 2.0, beta))
    assert ran == (beta == 0.0 or c_shape in ("full", "sliced", "row"))


@needs_cuda
@needs_cutlass
def test_rule_runs_streamk_for_a_linear_layer():
    # No table entry: prefill's 1024 x 5504 x 2048 through gemmtiles.nn.Linear, on the rule
    # (172 tiles of 256 x 128 on 132 SMs; on other SM counts the rule may leave it to the tiles).
    import gemmtiles

    with _rule_alone("cutlass_streamk", 1024, 5504, 2048, "NT"):
        layer = gemmtiles.nn.Linear(2048, 5504, device="cuda")
        x = torch.randn(1, 1024, 2048, device="cuda")
        with torch.no_grad():
            torch.testing.assert_close(layer(x), torch.nn.functional.linear(x, layer.weight, layer.bias),
                                       rtol=1e-4, atol=1e-4)
            assert _ran_streamk(lambda: layer(x))


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("m,n,k", [(300, 1000, 2000), (1024, 1031, 997), (2047, 3001, 1999)])
def test_streamk_shares_tiles_between_blocks(streamk_table, m, n, k):
    # 16 or 36 tiles of 256 x 128 for the SMs, or 192 (a last wave part-filled): blocks share
    # tiles' k iterations and add their partial tiles, whose turnstile's flags the launch zeroes
    # first (a memset; none where every tile runs data-parallel).
    a = operand(m, k, "cuda", "row")
    b = operand(k, n, "cuda", "col")
    names = _kernels(lambda: torch.ops.gemmtiles.auto(a, b))
    assert any("cutlass" in x and "StreamK" in x for x in names) and any("Memset" in x for x in names), names
    first = check_tier("auto", a, b)
    assert all(torch.equal(torch.ops.gemmtiles.auto(a, b), first) for _ in range(3))
