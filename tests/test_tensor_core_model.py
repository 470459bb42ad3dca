"""The model behind auto's tensor-core choice: its parameters as auto reads them (the shipped
table's line, the defaults scaled to a GPU), its table line's parsing, that a table's model
drives the plan, and that the fit recovers a model from times it generated. No GPU needed."""

from __future__ import annotations

import pathlib
import random

import pytest

from gemmtiles import tensor_core_model as tcm
from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags

H100 = (10.94, 13.08, 0.02179, 2.5e6, 9.818, 3.339e7, 2.5e6)  # kTensorCoreModel in csrc/auto/plan.h
H200_DRAM = dict(dram_khz=3201000, bus_bits=6016)  # as torch reports it; the H100's: 2619 MHz on 5120 bits
SHIPPED = pathlib.Path(__file__).resolve().parent.parent / "gemmtiles" / "tables" / "NVIDIA_H100_80GB_HBM3.txt"


def test_defaults_and_the_shipped_table_agree():
    assert _C.tensor_core_model() == pytest.approx(H100)
    assert _C.tensor_core_model(table=SHIPPED.read_text()) == pytest.approx(H100)
    assert _C.tensor_core_model(table="") == pytest.approx(H100)  # no model line: the defaults


def test_defaults_scale_with_the_gpu():
    assert _C.tensor_core_model(sms=132, clock_khz=1980000) == pytest.approx(H100)
    launch, x3, wave_k, bw, exact_launch, rate, floor = _C.tensor_core_model(sms=66, clock_khz=990000)
    assert (launch, x3, bw, exact_launch, floor) == pytest.approx((H100[0], H100[1], H100[3], H100[4], H100[6]))
    assert wave_k == pytest.approx(2 * H100[2])  # half the clock: a k step takes twice as long
    assert rate == pytest.approx(H100[5] / 4)     # half the SMs at half the clock
    # The floor's bandwidth with the DRAM's rate; the passes' stays the H100's.
    scaled = _C.tensor_core_model(sms=132, clock_khz=1980000, **H200_DRAM)
    assert scaled[:6] == pytest.approx(H100[:6])
    assert scaled[6] == pytest.approx(H100[6] * (3201000 * 6016) / (2619000 * 5120))
    assert _C.tensor_core_model(dram_khz=3201000)[6] == pytest.approx(H100[6])  # no bus width: as fitted
    # A table's model is its GPU's fit; the floor's bandwidth stays the GPU's.
    line = "model tensor_cores 1 2 3 4 5 6"
    assert _C.tensor_core_model(table=line, **H200_DRAM) == pytest.approx((1, 2, 3, 4, 5, 6, scaled[6]))


@pytest.mark.parametrize("line", ["model tensor_cores 1 2 3", "model tensor_cores 1 2 3 4 5 -6",
                                  "model tensor_cores 1 2 3 4 5 0", "model tensor_cores 1 2 3 4 5 x",
                                  "model tensor_core 1 2 3 4 5 6", "model tensor_cores 1 2 3 4 5 inf",
                                  "model tensor_cores 1 2 3 4 5 6\nmodel tensor_cores 1 2 3 4 5 6"])
def test_bad_model_lines_name_the_line(line):
    with pytest.raises(ValueError, match="model tensor_cores"):
        _C.tensor_core_model(table=line)


def _plan(m, n, k, table, math="tf32"):
    return _C.auto_plan(m, n, k, 1, True, True, 132, True, table, True, False, tensor_cores=math).kernel


def test_a_tables_model_drives_the_plan():
    assert _plan(4096, 4096, 4096, None) == "tf32"
    costly = "model tensor_cores 1e9 1e9 0.02136 2.5e6 13.3 3.25e7"  # a launch no product repays
    assert _plan(4096, 4096, 4096, costly) != "tf32"
    slow_exact = "model tensor_cores 12.3 14.2 0.02136 2.5e6 13.3 1e3"  # exact kernels at 1 GFLOP/s
    assert _plan(256, 256, 256, None) != "tf32" and _plan(256, 256, 256, slow_exact) == "tf32"
    assert _plan(256, 256, 256, slow_exact, math="none") != "tf32"


def test_with_cutlass_the_exact_side_is_the_exact_plans_estimate():
    # Where CUTLASS's kernels run the problem, the tensor cores are weighed against the exact
    # plan auto would run, as the exact-kernel model estimates it (the least candidate), with
    # the same margin; the plan is otherwise that exact plan.
    rng = random.Random(11)
    params = dict(zip(tcm.PARAMS, H100))
    chosen = 0
    for _ in range(400):
        m, n, k = (int(2 ** rng.uniform(0, 13)), int(2 ** rng.uniform(7, 14)), int(2 ** rng.uniform(7, 14)))
        layout = rng.choice(["NN", "NT", "TN"])
        # Contiguous operands: their lines 16-byte aligned where they hold whole float4s.
        a_k, b_k = layout[0] == "N", layout[1] == "T"
        a_vec, b_vec = (k if a_k else m) % 4 == 0, (k if b_k else n) % 4 == 0
        exact = min(e for _, e in _C.exact_candidates(m, n, k, 1, a_k, b_k, b_vec, 132, a_vec))
        x = tcm.sample(m, n, k, 1, layout, False, {})
        tc = tcm.tensor_core_us(x, "tf32", params, 132)
        _, by, read = _C.tensor_core_work(m, n, k, 1, "tf32", a_k, a_vec, b_k, b_vec, 132, True)
        floor = params["launch_us"] + (read + by) / params["bytes_per_us"]
        plan = _C.auto_plan(m, n, k, 1, b_k, b_vec, 132, a_k, "", a_vec, True, tensor_cores="tf32")
        if plan.kernel == "tf32":
            chosen += 1
        t = max(tcm.MARGINS["tf32"] * tc, floor)
        if abs(t / exact - 1) > 1e-6:  # not on the line itself
            assert (plan.kernel == "tf32") == (t < exact) == tcm.pays(x, "tf32", params, 132, exact), (m, n, k, layout)
        if plan.kernel != "tf32":
            assert tuple(plan) == tuple(_C.auto_plan(m, n, k, 1, b_k, b_vec, 132, a_k, "", a_vec, True))
    assert 0 < chosen < 400


def _synthetic(params, sms, count, seed):
    """Shapes timed by the model itself (exactly, for tf32 and tf32x3; auto as the exact kernels)."""
    rng = random.Random(seed)
    data = []
    for _ in range(count):
        # The random sample's distribution: M log-uniform in [1, 8192], N and K in [128, 16384].
        x = tcm.sample(int(2 ** rng.uniform(0, 13)), int(2 ** rng.uniform(7, 14)), int(2 ** rng.uniform(7, 14)), 1,
                       rng.choice(["NN", "NT", "TN"]), False, {})
        x["t"] = {"tf32": tcm.tensor_core_us(x, "tf32", params, sms),
                  "tf32x3": tcm.tensor_core_us(x, "tf32x3", params, sms), "auto": tcm.exact_us(x, params)}
        data.append(x)
    return data


def test_fit_recovers_the_model_that_timed_the_shapes():
    params = dict(zip(tcm.PARAMS, H100[:6]))
    got = tcm.fit(_synthetic(params, 132, 60, seed=3), 132)
    assert [got[k] for k in tcm.PARAMS] == pytest.approx(H100[:6], rel=1e-6)
    line = tcm.model_line(got)
    assert _C.tensor_core_model(table=line) == pytest.approx(H100, rel=1e-5)
    assert tcm.model_line_of("# header\nNN 8 8 8 warptile 0 1\n" + line + "   # note\n") == line
    assert tcm.model_line_of("NN 8 8 8 warptile 0 1\n") is None


def test_check_counts_what_the_rule_would_do():
    params = dict(zip(tcm.PARAMS, H100))
    data = _synthetic(params, 132, 40, seed=4)
    r = tcm.check(data, params, "tf32", 132, exact="flat")  # the exact side that timed them
    assert r["shapes"] == 40 and r["slower"] == 0 and 0 < r["chosen"] < 40
    assert r["speedup"] >= 1.0 and r["oracle"] >= r["speedup"]
    with pytest.raises(ValueError, match="exact"):
        tcm.check(data, params, "tf32", 132, exact="cublas")


def test_check_chooses_as_auto_plans():
    # The check's rule is auto's own: the shapes it counts as chosen are those auto_plan gives
    # the tier, for this build (the exact plan's estimate with CUTLASS's kernels).
    params = dict(zip(tcm.PARAMS, H100))
    data = _synthetic(params, 132, 60, seed=5)
    for x in data[:20]:
        x["bmm"], x["batch"] = True, 3  # a B per entry
    for tier in ("tf32", "tf32x3"):
        planned = 0
        for x in data:
            a_k, b_k, a_vec, b_vec = _flags(x["layout"], x["M"], x["N"], x["K"], x["batch"] if x["bmm"] else 1)
            plan = _C.auto_plan(x["M"], x["N"], x["K"], x["batch"], b_k, b_vec, 132, a_k, tcm.model_line(params),
                                a_vec, _C.cutlass_kernels(), tensor_cores=tier)
            planned += plan.kernel == tier
        assert tcm.check(data, params, tier, 132)["chosen"] == planned


def test_the_work_is_what_the_kernels_move():
    # x @ W^T, aligned, 256 rows: tf32 reads both in place and writes the output once, on
    # one row of clusters of two tiles along M; fewer tiles than half the SMs, so stream-K
    # shares their k iterations of 32 between 132 units, and the additions of partial tiles
    # after the first on each tile count 2 x the tile's bytes against a k iteration's
    # operands. On 128 x 256 tiles: 32 tiles, 32 x 128 iterations, 32 a unit
    # (ceil(4096 / 132)), up to 6 units on a tile (4.1 each, straddling): 32 x 32 + 5 x 170.7
    # = 1877 steps. On 128 x 128 tiles: 64 tiles, 63 a unit, up to 4 on a tile: 63 x 32 +
    # 3 x 128 steps of the smaller tile, 0.64 of the larger's, 1536: under 0.9 x 1877, so tf32
    # runs 128 x 128.
    fixup_128x128 = 32 * (2 * 128 * 128) / ((128 + 128) * 32)
    small = 0.64 * (63 * 32 + 3 * fixup_128x128)
    assert _C.tensor_core_work(256, 4096, 4096, 1, "tf32", True, True, True, True, 132) == \
        pytest.approx((small, 8 * 256 * 4096, 4 * (256 + 4096) * 4096))  # tf32's output counted twice
    # The narrow kernel's tiles count no fewer (128 x 128, one block a tile: the same 1536;
    # 128 x 64: 128 tiles in one wave, 0.5 x 4096), so tf32's own kernel runs.
    # 128 rows run the narrow kernel (C^T on tiles of 128 of C's columns by 32, 64 or 128 of
    # its rows, one block a tile), on the tile of fewest k steps: 128 x 128, 32 tiles, 32 k
    # iterations a unit, up to 6 units on a tile, at 0.64 of the large tile's step; 128 x 64
    # (64 tiles, 63 a unit, up to 4 on a tile, fix-ups of 2 x 128 x 64 / 192 steps, at 0.5) and
    # 128 x 32 (128 tiles in one wave, at 160 / 384) count more.
    out = 4 * 128 * 4096  # tf32x3's output; tf32's counts twice
    narrow = 0.64 * (32 * 32 + 5 * fixup_128x128)
    assert narrow < 0.5 * (63 * 32 + 3 * (2 * 128 * 64 / (128 + 64))) < 160 / 384 * 4096
    assert _C.tensor_core_work(128, 4096, 4096, 1, "tf32", True, True, True, True, 132) == \
        pytest.approx((narrow, 2 * out, 4 * (128 + 4096) * 4096))
    # tf32x3 splits both operands and runs three K on whole waves (data-parallel, 128 x 256
    # tiles, clusters along M: 2 x 16 tiles).
    assert _C.tensor_core_work(128, 4096, 4096, 1, "tf32x3", True, True, True, True, 132) == \
        (3 * 4096, 12 * (128 * 4096 + 4096 * 4096) + out, 8 * (128 + 4096) * 4096)  # reads hi and lo parts
    # 1024 x 5504 x 2048: 8 x 22 = 176 tiles of 128 x 256, a wave and a third: all of them
    # shared between 132 units (86 k iterations a unit, two to a tile at most), 2923 steps; on
    # 128 x 128 tiles, 344 tiles in three waves: 3 x 2048 x 0.64 = 3932. tf32 runs 128 x 256.
    fixup = 32 * (2 * 128 * 256) / ((128 + 256) * 32)
    assert _C.tensor_core_work(1024, 5504, 2048, 1, "tf32", True, True, True, True, 132)[0] == \
        pytest.approx(86 * 32 + fixup)
    # 1024 x 2048 x 2048: 64 tiles of 128 x 256 (32 x 32 + 3 x 170.7 = 1536 steps) against 128
    # of 128 x 128 in one wave (0.64 x 2048 = 1311, under 0.9 x 1536): tf32 runs 128 x 128
    # (test_tensor_core.py checks the kernel).
    assert _C.tensor_core_work(1024, 2048, 2048, 1, "tf32", True, True, True, True, 132)[0] == \
        pytest.approx(0.64 * 2048)
    # One whole wave (12 x 11 tiles) and tiles of at most 8 k iterations (K 256) run
    # data-parallel: on 128 x 256 tiles; at K 256 on the narrow kernel's 128 x 64 tiles (32 x 4
    # in one wave, at 0.5 of the steps; tf32's own 128 x 128 would run 0.64).
    for m, n, k, steps in ((1536, 2816, 4096, 4096), (256, 4096, 256, 0.5 * 256)):
        assert _C.tensor_core_work(m, n, k, 1, "tf32", True, True, True, True, 132)[:2] == \
            pytest.approx((steps, 8 * m * n))
    # A last wave at least half full (10 x 20 tiles of 128 x 256: 2 waves, 8192 steps) against
    # the narrow kernel's 128 x 128 tiles (40 x 10: two whole waves, then 136 tiles shared
    # between 132 units, two to a tile at most: 0.64 x (2 x 4096 + 132 x 32 + 128) = 8028
    # steps), fewer: the narrow kernel runs.
    assert _C.tensor_core_work(1280, 5120, 4096, 1, "tf32", True, True, True, True, 132)[0] == \
        pytest.approx(0.64 * (2 * 4096 + 132 * 32 + fixup_128x128))
    # Two whole waves and a short third (12 x 23 = 276 tiles): the first wave data-parallel,
    # the second and the 12 tiles past it shared between 132 units, two to a tile at most.
    k_steps, by, _ = _C.tensor_core_work(1536, 5888, 4096, 1, "tf32", True, True, True, True, 132)
    assert k_steps == pytest.approx(4096 + -(-144 * 128 // 132) * 32 + fixup) and by == 8 * 1536 * 5888
    # N off a multiple of 4: tf32 reads B and writes the output in place, on a K this shallow
    # on the narrow kernel (tf32's own tiles would store the unaligned rows a float at a time
    # across 8 rows): 33 x 33 tiles of 128 x 128 of 2 k iterations, 9 waves at 0.64; tf32x3
    # copies its output out of a scratch of aligned rows, its 17 x 17 clusters of two 128 x 256
    # tiles (578) 5 waves.
    k_steps, by, _ = _C.tensor_core_work(4200, 4097, 64, 1, "tf32", True, True, True, True, 132)
    assert k_steps == pytest.approx(9 * 64 * 0.64) and by == 8 * 4200 * 4097
    k_steps, by, _ = _C.tensor_core_work(4200, 4097, 64, 1, "tf32x3", True, True, True, True, 132)
    assert k_steps == 5 * 3 * 64 and by == 12 * (4200 * 64 + 64 * 4097) + 8 * 4200 * 4097 + 4 * 4200 * 4097
    with pytest.raises(ValueError, match="tensor_core_work"):
        _C.tensor_core_work(1, 1, 1, 1, "bf16", True, True, True, True, 132)


def test_tf32_route_is_what_its_model_prices():
    """Over random problems: tf32's route (tf32_route, as the launch runs it) is the one its
    model prices (tensor_core_work: the same k steps; B's pack exactly where B is not read in
    place); B is read in place wherever it can be and a kernel takes it so; the narrow kernel
    runs one product, and up to 128 rows of one product always; an N-major B in place runs the
    narrow kernel's 64- or 128-wide tile up to 128 rows, the transposing kernel past them (or
    in a batch); K in slices summed apart runs one product, both operands packed, their
    partial outputs written and read."""
    rng = random.Random(7)
    kernels = set()
    for _ in range(3000):
        m, n = (int(2 ** rng.uniform(0, 13)) for _ in range(2))
        k = int(2 ** rng.uniform(0, 14)) * rng.choice((1, 4))
        batch = rng.choice((1, 1, 1, 2, 7))
        b_kmajor, b_vec = rng.random() < 0.5, rng.random() < 0.8
        sms = rng.choice((78, 114, 132))
        kernel, tile_m, tile_n, b_in_place, k_steps, own_n, splits = _C.tf32_route(m, n, k, batch, b_kmajor, b_vec,
                                                                                   sms, True)
        assert own_n in (128, 256) and (kernel != "own" or (tile_m, tile_n) == (128, own_n))
        kernels.add(kernel)
        # b_vec: B's lines 16-byte aligned, whatever K (TMA fills the last K slice with zeros).
        readable = b_vec and (b_kmajor or n % 4 == 0)
        k_steps_w, by, _ = _C.tensor_core_work(m, n, k, batch, "tf32", True, True, b_kmajor, b_vec, sms, True)
        assert k_steps_w == pytest.approx(k_steps)
        sliced = kernel == "slices"
        b_pack = 0 if b_in_place else 8 * k * n * batch
        a_pack = 8 * m * k if sliced else 0  # the slices pack A too, and write and read partial outputs
        parts = 8 * splits * m * n if sliced else 0
        assert by == pytest.approx(b_pack + a_pack + parts + 8 * m * n * batch)
        # A K-major A of unaligned lines is packed.
        _, by_a, _ = _C.tensor_core_work(m, n, k, batch, "tf32", True, False, b_kmajor, b_vec, sms, True)
        assert by_a == pytest.approx(by + (0 if sliced else 8 * m * k * batch))
        assert b_in_place <= readable and (b_in_place or sliced or not (readable and b_kmajor))
        assert (splits > 0) == (kernel in ("ampere", "slices"))
        # Without Ampere's kernel (a build without it, or where its launch cannot take the
        # operands) the same route but for it, reading B where it did.
        base = _C.tf32_route(m, n, k, batch, b_kmajor, b_vec, sms, False)
        assert base[0] != "ampere"
        if "slices" not in (kernel, base[0]):
            assert base[3] == b_in_place
        if kernel not in ("ampere", "slices"):
            assert base == (kernel, tile_m, tile_n, b_in_place, k_steps, own_n, splits)
        if kernel == "ampere":  # its copies move 4 floats along K
            assert batch == 1 and b_in_place and not b_kmajor and k % 4 == 0 and (tile_m, tile_n) == (64, 128)
            assert splits in (1, 2, 3, 4, 6, 8, 12, 16) and (splits == 1 or -(-k // splits) >= 32)
        elif sliced:  # slices of a multiple of 32, the last one filled past K
            assert batch == 1 and not b_in_place and tile_m == 128 and tile_n in (32, 64, 128)
            assert 2 <= splits <= 32 and (splits - 1) * 32 < k
        elif kernel == "narrow":
            assert batch == 1 and tile_m == 128 and tile_n in (32, 64, 128)
            if b_in_place and not b_kmajor:
                assert m <= 128 and tile_n == (64 if m <= 64 else 128)
        elif batch == 1 and m <= 128:
            assert False, (m, n, k, b_kmajor, b_vec, kernel)
        if kernel == "transposing":
            assert b_in_place and not b_kmajor and (m > 128 or batch > 1)
    assert kernels == {"narrow", "transposing", "own", "ampere", "slices"}
    with pytest.raises(ValueError, match="tf32_route"):
        _C.tf32_route(0, 1, 1, 1, True, True, 132)


def test_tf32_sums_k_slices_apart_on_few_tiles_over_a_deep_k():
    """Few output tiles over a deep K: rather than share a few tiles' k iterations between the
    SMs (stream-K), whose partial tiles are added one after another, tf32 cuts K into slices of
    a multiple of 32, packs both operands slice by slice, runs every slice's narrow tiles at
    once and adds the partial outputs apart. Its k steps are the busiest SM's waves of those
    tiles; its bytes both packs and the partial outputs written and read. Not on a large
    square, nor over a shallow K, nor in a batch."""
    m, n, k = 21, 358, 8192
    kernel, tile_m, tile_n, b_in_place, k_steps, _, slices = _C.tf32_route(m, n, k, 1, True, True, 132, True)
    assert (kernel, tile_m, b_in_place) == ("slices", 128, False) and 2 <= slices <= 32
    slice_k = -(-(-(-k // slices)) // 32) * 32
    assert -(-k // slice_k) == slices
    step = {32: 160 / 384, 64: 0.5, 128: 0.64}[tile_n]
    tiles = -(-n // 128) * -(-m // tile_n) * slices
    assert k_steps == pytest.approx(step * -(-tiles // 132) * slice_k)
    k_work, by, _ = _C.tensor_core_work(m, n, k, 1, "tf32", True, True, True, True, 132, True)
    assert k_work == pytest.approx(k_steps)
    assert by == pytest.approx(8 * (m + n) * k + 8 * slices * m * n + 8 * m * n)
    # x @ W likewise: the slices pack B K-major whatever its layout.
    assert _C.tf32_route(m, n, k, 1, False, True, 132, True)[0] == "slices"
    assert _C.tf32_route(4096, 4096, 4096, 1, True, True, 132, True)[0] != "slices"
    assert _C.tf32_route(m, n, 96, 1, True, True, 132, True)[0] != "slices"
    assert _C.tf32_route(m, n, k, 2, True, True, 132, True)[0] != "slices"


def test_tf32_writes_unaligned_rows_on_the_narrow_kernel_where_k_is_shallow():
    """An output whose rows are not 16-byte aligned (N off a multiple of 4): tf32's own tiles
    store it a float at a time across 8 rows, the narrow kernel's tiles of C^T along C's rows,
    so past 128 rows the narrow kernel runs it where its extra k steps cost less than the own
    tiles' stores (a shallow K), and the own tiles where K is deep; an aligned output (through
    TMA) stays on the own tiles; the tier's work counts the route's k steps."""
    route = _C.tf32_route(4385, 13058, 232, 1, True, True, 132, True)
    assert route[:4] == ("narrow", 128, 128, True), route
    assert _C.tf32_route(4385, 13056, 232, 1, True, True, 132, True)[0] == "own"
    assert _C.tf32_route(3000, 1030, 4000, 1, True, True, 132, True)[0] == "own"
    # x @ W of unaligned N: B packed K-major, then the same choice.
    assert _C.tf32_route(1795, 4833, 222, 1, False, False, 132, True)[:4] == ("narrow", 128, 128, False)
    k_steps, by, _ = _C.tensor_core_work(4385, 13058, 232, 1, "tf32", True, True, True, True, 132, True)
    assert k_steps == pytest.approx(route[4]) and by == 8 * 4385 * 13058


def test_ampere_kernel_reads_x_at_w_where_reading_w_is_the_work():
    """x @ W (an N-major W): Ampere's kernel, which reads W as it lies, where the wgmma kernels
    would transpose W^T into registers and reading W is the work (few rows against a large W);
    not where the math is (a large square), nor for x @ W^T, nor a batch; its split gives the
    busiest SM the fewest k steps."""
    route = _C.tf32_route(32, 4096, 4096, 1, False, True, 132, True)
    assert route[0] == "ampere" and route[3] and route[6] == 4  # 32 tiles x 4 splits: a block an SM
    # 172 tiles: on 3 splits, 4 blocks on the busiest SM of 1366 k and a partial tile each, the
    # fewest k steps (2 splits: 3 blocks of 2048; 16: 21 of 256, whose partial tiles outweigh them).
    assert _C.tf32_route(128, 11008, 4096, 1, False, True, 132, True)[6] == 3
    assert _C.tf32_route(4096, 4096, 4096, 1, False, True, 132, True)[0] != "ampere"
    assert _C.tf32_route(32, 4096, 4096, 1, True, True, 132, True)[0] != "ampere"
    assert _C.tf32_route(32, 4096, 4096, 2, False, True, 132, True)[0] != "ampere"
    assert _C.tf32_route(32, 4096, 4096, 1, False, False, 132, True)[0] != "ampere"  # W's rows unaligned: packed
    # Its k steps are what the model prices, and its read of W is not weighed as a transposition.
    k_steps, _, read = _C.tensor_core_work(32, 4096, 4096, 1, "tf32", True, True, False, True, 132, True)
    assert k_steps == pytest.approx(_C.tf32_route(32, 4096, 4096, 1, False, True, 132, True)[4])
    # A build without it (or auto where CUTLASS's kernels do not take the problem) prices the
    # wgmma route, and auto plans so: the `cutlass` argument of auto_plan.
    assert _C.tensor_core_work(32, 4096, 4096, 1, "tf32", True, True, False, True, 132, False)[0] == \
        pytest.approx(_C.tf32_route(32, 4096, 4096, 1, False, True, 132, False)[4])
    assert _C.tensor_core_work(32, 4096, 4096, 1, "tf32", True, True, False, True, 132, False)[2] == \
        pytest.approx(4 * (32 + 1.14 * 4096) * 4096)
    assert read == pytest.approx(4 * (32 + 4096) * 4096)


def test_tf32_reads_an_n_major_b_where_packing_it_costs_more():
    """x @ W, W row-major (NN): tf32 reads B as it is, on the kernel that computes C^T (its tiles
    128 rows of C's columns by 256 of C's rows, clusters along C's columns), its k steps at
    1.04x, where that beats packing B (8 bytes an element) and running the K-major kernel; up
    to 128 rows on the narrow kernel, which computes C^T too, or Ampere's kernel where the build
    has it and its model says."""
    fixup = 2 * 128 * 256 / (128 + 256)
    # 256 rows: 32 tiles of C^T, stream-K over 132 units (32 k iterations of 32 a unit, up
    # to 6 units on a tile), and the output written once; packing B would move 134 MB.
    k_steps, by, _ = _C.tensor_core_work(256, 4096, 4096, 1, "tf32", True, True, False, True, 132)
    assert k_steps == pytest.approx(1.04 * (32 * 32 + 5 * fixup)) and by == 8 * 256 * 4096
    # 128 rows, on a build without Ampere's kernel: the narrow kernel on 128 x 128 tiles (B^T
    # transposed into registers for 128 columns of A^T a tile), 32 of them, 32 k iterations a
    # unit, up to 6 units on a tile; 64 rows on 128 x 64 tiles, 32 of them likewise.
    kernel, _, tile_n, b_in_place, k_steps, _, _ = _C.tf32_route(128, 4096, 4096, 1, False, True, 132, False)
    assert (kernel, tile_n, b_in_place) == ("narrow", 128, True)
    assert k_steps == pytest.approx(1.14 * 0.64 * (32 * 32 + 5 * 128))
    kernel, _, tile_n, _, k_steps, _, _ = _C.tf32_route(64, 4096, 4096, 1, False, True, 132, False)
    assert (kernel, tile_n) == ("narrow", 64)
    # Each partial tile added waits for the one before it: 1.13 µs, past the 128 x 64 tile's
    # bytes (2 x 128 x 64 / 192 k steps of it).
    assert k_steps == pytest.approx(1.14 * 0.5 * (32 * 32 + 5 * max(2 * 128 * 64 / 192, 1.13 / 0.02179 / 0.5)))
    # With it, Ampere's kernel on 64 x 128 tiles: 64 of them at 128 rows, K in 2 slices, a block
    # an SM, 2048 k a block and a partial tile in and out (2 x 64 x 128 floats, 85.3 k steps of
    # 64 + 128); 32 at 64 rows, in 4 slices of 1024.
    fixup = 2 * 64 * 128 / (64 + 128)
    k_steps, by, read = _C.tensor_core_work(128, 4096, 4096, 1, "tf32", True, True, False, True, 132, True)
    assert k_steps == pytest.approx((2048 + fixup) * 0.568) and by == 8 * 128 * 4096
    assert _C.tensor_core_work(64, 4096, 4096, 1, "tf32", True, True, False, True, 132, True)[0] == \
        pytest.approx((1024 + fixup) * 0.568)
    # Ampere's kernel reads B as it lies; the wgmma kernels read it into registers transposed:
    # its bytes weigh in the floor as the kernel's k steps do (1.04x; the narrow kernel's
    # 1.14x), whose read of a K-major B (x @ W^T) weighs as it is.
    assert read == pytest.approx(4 * (128 + 4096) * 4096)
    assert _C.tensor_core_work(256, 4096, 4096, 1, "tf32", True, True, False, True, 132)[2] == \
        pytest.approx(4 * (256 + 1.04 * 4096) * 4096)
    assert _C.tensor_core_work(128, 4096, 4096, 1, "tf32", True, True, False, True, 132, False)[2] == \
        pytest.approx(4 * (128 + 1.14 * 4096) * 4096)
    assert _C.tensor_core_work(128, 4096, 4096, 1, "tf32", True, True, True, True, 132)[2] == 4 * (128 + 4096) * 4096
    # 8192^3: 16 whole waves either way; 4% more k steps cost less than the pack's 0.5 GB. A
    # tall product against a small B packs it: 65536 x 1024 x 1024.
    k_steps, by, _ = _C.tensor_core_work(8192, 8192, 8192, 1, "tf32", True, True, False, True, 132)
    assert k_steps == pytest.approx(1.04 * 16 * 8192) and by == 8 * 8192 * 8192
    _, by, _ = _C.tensor_core_work(65536, 1024, 1024, 1, "tf32", True, True, False, True, 132)
    assert by == 8 * 1024 * 1024 + 8 * 65536 * 1024
    # B's rows not 16-byte aligned, or N off a multiple of 4: B is packed. K off a multiple of 4
    # in aligned rows (W[:4094] of a 4096 x 4096 W) is read in place: TMA needs the rows alone.
    for n, k, b_vec in ((4096, 4096, False), (4094, 4096, True)):
        _, by, _ = _C.tensor_core_work(128, n, k, 1, "tf32", True, True, False, b_vec, 132)
        assert by >= 8 * n * k + 8 * 128 * n
    _, by, _ = _C.tensor_core_work(128, 4096, 4094, 1, "tf32", True, False, False, True, 132)
    assert by == 8 * 128 * 4094 + 8 * 128 * 4096
    # tf32x3 splits B whatever its layout.
    _, by, _ = _C.tensor_core_work(128, 4096, 4096, 1, "tf32x3", True, True, False, True, 132)
    assert by == 12 * (128 * 4096 + 4096 * 4096) + 4 * 128 * 4096


def test_tf32_prices_the_transposing_kernel_higher_on_few_rows():
    """A batch of at most 128 rows against N-major Bs runs the transposing kernel at 1.5x its
    k step (kTf32TransposedFewRowsStep), and B's bytes weigh as much in the floor: against 129
    rows, on as many tiles (one tile across the rows either way), 1.5x the k steps."""
    few = _C.tf32_route(128, 4096, 4096, 4, False, True, 132)
    more = _C.tf32_route(129, 4096, 4096, 4, False, True, 132)
    assert few[0] == more[0] == "transposing" and few[3] and more[3]
    assert few[4] == pytest.approx(1.5 * more[4])
    for m, route, weight in ((128, few, 1.5 * 1.04), (129, more, 1.04)):
        work = _C.tensor_core_work(m, 4096, 4096, 4, "tf32", True, True, False, True, 132)
        assert work[0] == route[4]
        assert work[2] == pytest.approx(4 * 4 * (m + weight * 4096) * 4096)
    # One product of few rows runs the narrow kernel, its B's bytes at its own 1.14.
    assert _C.tf32_route(128, 4096, 4096, 1, False, True, 132, False)[0] == "narrow"
    assert _C.tensor_core_work(128, 4096, 4096, 1, "tf32", True, True, False, True, 132, False)[2] == \
        pytest.approx(4 * (128 + 1.14 * 4096) * 4096)


def test_a_product_bound_by_reading_its_operands_stays_exact():
    # One row against a 32000 x 2048 W^T: the tensor cores' k steps are few, but the kernel
    # still reads W (262 MB), which at the model's bandwidth takes longer than the exact
    # kernels' estimate: the floor keeps it exact, whatever the margin makes of the k steps.
    params = dict(zip(tcm.PARAMS, H100))
    m, n, k = 1, 32000, 2048
    x = tcm.sample(m, n, k, 1, "NT", False, {})
    exact = min(e for _, e in _C.exact_candidates(m, n, k, 1, True, True, True, 132, True))
    _, by, read = _C.tensor_core_work(m, n, k, 1, "tf32", True, True, True, True, 132)
    floor = params["launch_us"] + (read + by) / params["bytes_per_us"]
    assert tcm.MARGINS["tf32"] * tcm.tensor_core_us(x, "tf32", params, 132) < exact < floor
    assert not tcm.pays(x, "tf32", params, 132, exact)
    assert _C.auto_plan(m, n, k, 1, True, True, 132, True, "", True, True, tensor_cores="tf32").kernel != "tf32"
    # Where the exact kernels take longer than that read, the k steps decide, as before.
    assert tcm.pays(x, "tf32", params, 132, floor * 1.01) == (tcm.MARGINS["tf32"] * tcm.tensor_core_us(x, "tf32", params, 132)
                                                             < floor * 1.01)
    # Few rows against a W read as it is, x @ W (Ampere's kernel, its floor the read of W as it
    # lies): four rows stay exact, 32 run tf32, as do 32 rows of x @ W^T.
    plan = lambda m, b_kmajor: _C.auto_plan(m, 4096, 4096, 1, b_kmajor, True, 132, True, "", True, True,  # noqa: E731
                                            tensor_cores="tf32").kernel
    assert plan(4, False) != "tf32" and plan(32, False) == "tf32" and plan(32, True) == "tf32"
    # A large product is bound by its k steps: tf32.
    assert _C.auto_plan(2048, 2048, 2048, 1, True, True, 132, True, "", True, True, tensor_cores="tf32").kernel == "tf32"
    with pytest.raises(ValueError, match="bytes_per_us"):
        _C.tensor_cores_pay(1, 1, 1, 1, "tf32", True, True, True, True, 132, (1, 1, 1, 0, 1, 1), -1.0)
    with pytest.raises(ValueError, match="floor_bytes_per_us"):
        _C.tensor_cores_pay(1, 1, 1, 1, "tf32", True, True, True, True, 132, (1, 1, 1, 1, 1, 1), -1.0, True, 0.0)


def test_the_floor_reads_at_the_gpus_dram_rate():
    # 16 rows against an 11008 x 4096 W^T, on the models auto scales to an H200 (the H100's SMs
    # and SM clock, HBM3e): the exact kernels' estimate lies between W's read at the H100's
    # bandwidth and at the H200's, above the margin's k steps. At the H100's floor the product
    # stays exact; at the GPU's own, tf32.
    params = dict(zip(tcm.PARAMS, H100))
    x = tcm.sample(16, 11008, 4096, 1, "NT", False, {})
    exact = tcm.exact_plan_us(x, 132, _C.exact_model(1980000, H200_DRAM["dram_khz"], H200_DRAM["bus_bits"]))
    floor = _C.tensor_core_model(**H200_DRAM)[6]
    assert tcm.MARGINS["tf32"] * tcm.tensor_core_us(x, "tf32", params, 132) < exact
    assert not tcm.pays(x, "tf32", params, 132, exact)
    assert tcm.pays(x, "tf32", params, 132, exact, floor)


def test_each_tiers_margin_is_auto_s():
    # tf32 and tf32x3 weigh their estimates by margins of their own (plan.h's kTf32Margin and
    # kTf32x3Margin, tcm.MARGINS): on a large square, where the k steps outweigh the floor, the
    # rule turns from exact to tensor cores as the exact kernels' time crosses the margin times
    # the tier's estimate.
    p = _C.tensor_core_model()
    assert tcm.MARGINS == {"tf32": 1.1, "tf32x3": 1.25}
    for tier, launch in (("tf32", p[0]), ("tf32x3", p[1])):
        k_steps, by, read = _C.tensor_core_work(4096, 4096, 4096, 1, tier, True, True, True, True, 132, True)
        t = launch + k_steps * p[2] + by / p[3]
        assert launch + (read + by) / p[6] < t

        def pays(exact_us):
            return _C.tensor_cores_pay(4096, 4096, 4096, 1, tier, True, True, True, True, 132, tuple(p[:6]),
                                       exact_us, True, p[6])

        assert not pays(tcm.MARGINS[tier] * t * 0.999) and pays(tcm.MARGINS[tier] * t * 1.001)
