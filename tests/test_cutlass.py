"""auto's CUTLASS SIMT kernels (csrc/auto/cutlass_simt.h) and the cost model that chooses
among them and the skinny kernels (csrc/auto/exact_model.h): the planner on thousands of
random problems (no GPU needed), then each candidate forced through the auto op on every
layout, odd size, stride, offset, batch and epilogue, and the kernel the plan names seen
running in the profiler."""

from __future__ import annotations

import contextlib
import itertools
import math
import random

import pytest
import torch

import gemmtiles
from gemmtiles import exact_fit
from gemmtiles._ops import _C
from gemmtiles.testing import assert_gemm_close, check_tier, kernels_run, needs_cuda, operand
from gemmtiles.tune import _cutlass_here

H100_SMS = 132
LAYOUTS = ("NN", "NT", "TN", "TT")


# The CUTLASS SIMT tiles, the same on every layout: rows, columns, warps (cutlass_tile_at in
# csrc/auto/plan.h; a CUTLASS plan's w is its tile's warps).
TILES = [(128, 256, 8), (128, 128, 4), (64, 64, 2), (32, 128, 2), (128, 32, 2), (32, 32, 1), (32, 32, 2), (64, 64, 4)]
# CUTLASS's kernel on the operands as they lie, then after a transposing copy of a K-major A,
# B or both: whether each copies A, B.
CUTLASS_COPIES = {"cutlass": (False, False), "cutlass_a_copied": (True, False), "cutlass_b_copied": (False, True),
                  "cutlass_ab_copied": (True, True)}
CUTLASS_KERNELS = tuple(CUTLASS_COPIES)


def _kmajor(layout):
    """Whether A and B are K-major (A row-major, B column-major) in a layout of LAYOUTS."""
    return layout[0] == "N", layout[1] == "T"


def _problems(count, seed):
    rng = random.Random(seed)

    def log_uniform(lo, hi):
        return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))

    for _ in range(count):
        m, n, k = log_uniform(1, 20000), log_uniform(1, 20000), log_uniform(1, 40000)
        batch = 1 if rng.random() < 0.8 else log_uniform(2, 64)
        yield m, n, k, batch, rng.choice(LAYOUTS), rng.random() < 0.8, rng.random() < 0.8


@pytest.mark.parametrize("seed", range(4))
def test_planner_takes_the_least_estimate_and_a_kernel_that_takes_it(seed):
    for m, n, k, batch, layout, b_vec, a_vec in _problems(1000, seed):
        a_k, b_k = _kmajor(layout)
        plan = _C.auto_plan(m, n, k, batch, b_k, b_vec, H100_SMS, a_k, None, a_vec, True)
        cands = _C.exact_candidates(m, n, k, batch, a_k, b_k, b_vec, H100_SMS, a_vec)
        best = exact_fit.planned(cands)  # the least rank, the first of equals, as auto does
        where = (m, n, k, batch, layout, b_vec, a_vec)
        assert tuple(plan) == tuple(best[0]), where
        assert all(us > 0 and math.isfinite(us) for _, us in cands), where
        # A swapped plan runs the N x M product of B^T and A^T: n rows, A read as its B.
        rows, rows_b_k, rows_b_vec = (n, a_k, a_vec) if plan.swapped else (m, b_k, b_vec)
        assert not plan.swapped or plan.kernel.startswith("skinny") or plan.kernel == "gemv", where
        if plan.kernel.startswith("skinny"):
            assert rows <= _C.skinny_max_m(rows_b_k), where
            continue
        if plan.kernel == "gemv":  # up to 8 rows of a K-major B's product, K whole
            assert plan.nw in _C.gemv_columns(rows, rows_b_k, plan.w == 4), where
            assert plan.splits == 1 and plan.k_slice == k, where
            assert plan.w == 1 or rows_b_vec or rows == 1, where  # one row's float4s realign B's lines
            continue
        if plan.kernel == "split_tile":  # gemmtiles' own tiles: one product
            assert batch == 1 and plan.nw == 128 and plan.mt in (32, 64, 128), where
            assert plan.mt < 128 or _C.async_tile_ok(m, n, a_k, a_vec, b_k, b_vec), where
            assert plan.splits == 1 or (k + 7) // 8 // plan.splits >= 4, where
            continue
        assert plan.kernel in CUTLASS_KERNELS, where
        assert a_k or plan.kernel not in ("cutlass_a_copied", "cutlass_ab_copied"), where
        assert b_k or plan.kernel not in ("cutlass_b_copied", "cutlass_ab_copied"), where
        assert (plan.mt, plan.nw, plan.w) in TILES, where
        # K split: one product, or a batch of up to 32, one launch each; slices of 4+ iterations.
        assert plan.splits >= 1 and (plan.splits == 1 or (batch <= 32 and (k + 7) // 8 // plan.splits >= 4)), where


def test_candidates_cover_each_tile_and_split():
    cands = [c for c, _ in _C.exact_candidates(2048, 2048, 6144, 1, True, True, True, H100_SMS)]
    kinds = {(c.kernel, c.mt, c.nw, c.w) for c in cands}
    assert {("cutlass", *t) for t in TILES} <= kinds
    for copied in CUTLASS_KERNELS[1:]:
        assert {(copied, *t) for t in TILES} <= kinds
    # CUTLASS's split-K to 16 slices (24 or 32 slices of these many tiles would fill the SMs
    # more waves than an SM holds, and add them in the stream-K kernel), gemmtiles' split tiles
    # (a reduction pass) to 64.
    assert {c.splits for c in cands if c.kernel in CUTLASS_KERNELS} == {1, 2, 3, 4, 6, 8, 12, 16}
    assert {c.splits for c in cands if c.kernel == "split_tile"} == {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}
    # A batch of products runs data-parallel, its K-major operands copied or not; up to 32
    # products also one launch each, K split (a product of few tiles past 16 slices too: below).
    batched = [c for c, _ in _C.exact_candidates(64, 64, 4096, 8, True, True, True, H100_SMS)
               if c.kernel in CUTLASS_KERNELS]
    assert {c.splits for c in batched} == {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}
    assert {c.kernel for c in batched} == set(CUTLASS_KERNELS)
    many = [c for c, _ in _C.exact_candidates(64, 64, 4096, 33, True, True, True, H100_SMS)
            if c.kernel in CUTLASS_KERNELS]
    assert {c.splits for c in many} == {1}
    # Only a K-major operand is copied: none of TN's, A of NN's, B of TT's.
    for a_k, b_k, copies in [(False, False, {"cutlass"}), (True, False, {"cutlass", "cutlass_a_copied"}),
                             (False, True, {"cutlass", "cutlass_b_copied"})]:
        got = {c.kernel for c, _ in _C.exact_candidates(2048, 2048, 4096, 1, a_k, b_k, True, H100_SMS)}
        assert got & set(CUTLASS_KERNELS) == copies, (a_k, b_k)
    # gemmtiles' own tiles: 32 and 64 rows for any layout, the pipelined 128 x 128 tile where
    # it takes the operands.
    own = {(c.mt, c.nw) for c, _ in _C.exact_candidates(512, 512, 4096, 1, True, True, True, H100_SMS)
           if c.kernel == "split_tile"}
    assert own == {(32, 128), (64, 128), (128, 128)}
    own = {(c.mt, c.nw) for c, _ in _C.exact_candidates(510, 512, 4096, 1, False, False, True, H100_SMS)
           if c.kernel == "split_tile"}
    assert own == {(32, 128), (64, 128)}  # a column-major A of rows not a multiple of 4
    # The skinny kernel is a candidate up to its rows.
    assert any(c.kernel.startswith("skinny") for c, _ in _C.exact_candidates(8, 4096, 4096, 1, True, True, True, 132))
    assert not any(c.kernel.startswith("skinny")
                   for c, _ in _C.exact_candidates(64, 4096, 4096, 1, True, True, True, 132))


def test_cutlass_slices_apart_is_cutlasss_rule():
    # CUTLASS's reduction-wave rule (ThreadblockSwizzleStreamK), by hand, on the 64 x 64 tile on
    # two warps with a K-major A (six blocks an SM): the tiles x slices in fewer waves over the
    # SMs than an SM holds, and more than two blocks a tile, a tile's blocks at most its k
    # iterations of 8.
    assert _C.cutlass_blocks_per_sm(64, 64, 2, True, False)[0] == 6
    apart = lambda m, n, k, s, sms=H100_SMS: _C.cutlass_slices_apart(64, 64, 2, m, n, k, s, sms, True, False)  # noqa: E731
    assert apart(192, 576, 8192, 24)  # 27 tiles: 648 blocks, 5 waves of 132
    assert not apart(192, 577, 8192, 24)  # 30 tiles: 720 blocks, 6 waves
    assert apart(192, 577, 8192, 24, sms=145)  # 5 waves of 145
    assert apart(100, 70, 17, 3) and not apart(100, 70, 16, 3)  # 3 k iterations a tile, then 2
    assert not apart(100, 70, 8192, 2)  # two slices: no more than two blocks a tile
    assert not apart(0, 70, 8192, 12) and not apart(100, 70, 8192, 1)
    for bad in [(48, 64, 2, 1, 1, 1, 2, 132, True, True), (64, 64, 2, -1, 1, 1, 2, 132, True, True),
                (64, 64, 2, 1, 1, 1, 0, 132, True, True), (64, 64, 2, 2**31, 1, 1, 2, 132, True, True)]:
        with pytest.raises(ValueError, match="cutlass_slices_apart"):
            _C.cutlass_slices_apart(*bad)


@pytest.mark.parametrize("m,n,k,a_k,b_k,few", [(100, 70, 8192, False, False, True), (17, 3000, 4100, True, True, True),
                                               (300, 257, 2049, True, False, True), (64, 64, 1024, False, True, True),
                                               (64, 64, 760, False, True, False), (2048, 2048, 8192, True, True, False),
                                               (1000, 1000, 6000, False, False, False)])
def test_cutlass_goes_past_16_slices_where_it_runs_them_apart(m, n, k, a_k, b_k, few):
    # CUTLASS's candidates of 24 and 32 slices are exactly those that run their slices apart
    # (its data-parallel kernel and a reduction, cutlass_slices_apart) and keep 4 k iterations
    # of 8 a slice; a K-major operand copied first is row-major to CUTLASS's kernel.
    cands = [c for c, _ in _C.exact_candidates(m, n, k, 1, a_k, b_k, True, H100_SMS)]
    past = {(c.kernel, c.mt, c.nw, c.w, c.splits) for c in cands if c.kernel in CUTLASS_COPIES and c.splits > 16}
    want = set()
    for kernel, (ca, cb) in CUTLASS_COPIES.items():
        if (ca and not a_k) or (cb and not b_k):
            continue
        for mt, nw, w in TILES:
            for s in (24, 32):
                if -(-k // 8) // s >= 4 and _C.cutlass_slices_apart(mt, nw, w, m, n, k, s, H100_SMS, a_k and not ca,
                                                                    b_k and not cb):
                    want.add((kernel, mt, nw, w, s))
    assert past == want
    # Some, on few tiles and deep K; none where the tiles' blocks fill the SMs many times over,
    # or where 24 slices would be of fewer than 4 k iterations (760: 95).
    assert bool(past) == few


@pytest.mark.parametrize("m,n,k,b_k,b_vec", [(1, 807, 240, True, True), (2, 2801, 487, True, False),
                                             (16, 4096, 11008, True, True), (1, 5005, 429, False, True),
                                             (9, 130, 16384, False, True), (3, 4097, 33, False, False)])
def test_skinny_candidates_cut_k_every_way_the_model_weighs(m, n, k, b_k, b_vec):
    # K whole, the kernel's own split among them, and every cut a whole number of slices that
    # covers K, distinct; a row-major B's four columns a lane (float4 copies of aligned lines,
    # single-float copies elsewhere) and single floats.
    cands = [c for c, _ in _C.exact_candidates(m, n, k, 1, True, b_k, b_vec, H100_SMS) if c.kernel.startswith("skinny")]
    kind = "skinny_kmajor" if b_k else "skinny_nmajor"
    assert cands and {c.kernel for c in cands} == {kind}
    own = tuple(_C.auto_plan(m, n, k, 1, b_k, b_vec, H100_SMS, True, None, True, False))  # no CUTLASS: the kernel's own
    assert own in {tuple(c) for c in cands}
    assert len({tuple(c) for c in cands}) == len(cands)
    multiple = 32 if b_k else 16
    for c in cands:
        assert c.k_slice % multiple == 0 and c.splits * c.k_slice >= k > (c.splits - 1) * c.k_slice, tuple(c)
    partials = {-(-c.splits // 8) if not b_k else c.splits for c in cands}
    # K whole always; cut wherever K holds more than one slice and the blocks leave room: of
    # the problems here, those of K >= 240.
    assert 1 in partials and (max(partials) > 1) == (k >= 240)
    assert {c.w for c in cands} == ({4} if b_k and b_vec else {1} if b_k else {1, 4})
    # Each width with K whole too (one block along K: the row-major-B kernel's 8 warps' slices).
    whole = {c.w for c in cands if (c.splits if b_k else -(-c.splits // 8)) == 1}
    assert {c.w for c in cands} == whole


@pytest.mark.parametrize("m,rows", [(1, 1), (2, 4), (4, 4), (5, 8), (8, 8), (9, 16), (16, 16)])
def test_skinny_row_builds_and_their_steps_features(m, rows):
    # The row-major-B kernel's builds: one row for M = 1 (the column-major-B kernel's smallest
    # is 4); its steps in series a feature apart on float4s (its shared-memory ring) and on
    # single floats, the column-major-B kernel's in a third; priced alike while the ring's
    # parameter is the single floats'.
    n, k = 4096, 3000
    for b_k in (False, True):
        cands = [c for c, _ in _C.exact_candidates(m, n, k, 1, True, b_k, True, H100_SMS) if c.kernel.startswith("skinny")]
        assert cands and {c.mt for c in cands} == {rows if not b_k else max(rows, 4)}
        for c in cands:
            f = _C.exact_features(*c, m, n, k, 1, True, b_k, H100_SMS)
            s0 = len(f) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY
            steps = f[s0 + 5:s0 + 8]
            at = 0 if b_k else 2 if c.w == 4 else 1
            assert steps[at] > 0 and [x for i, x in enumerate(steps) if i != at] == [0, 0], tuple(c)
    params = _C.exact_model()
    s0 = len(params) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY
    assert params[s0 + 7] == params[s0 + 6]


def test_skinny_kmajor_steps_count_staged_single_floats_twice_and_a_blocks_own():
    # The column-major-B kernel's steps in series on single floats of 8 and 16 rows (A staged
    # in shared memory) count kSkinnyStagedSingleSteps (2) times the 4-row build's (A read in
    # place); float4 steps stay as counted. On 4096 columns, K whole (3072), every build's
    # blocks in one wave: the 4-row single floats' steps are K / 32 lanes x 4 columns (384),
    # the 8-row build's (the same shape) twice that, the 16-row build's (8 lanes along k)
    # K / 8 x 4, twice; the 4-row float4s' K / (32 x 4) x 4, the 8-row ring's K / (8 x 4) x 2.
    # Each adds the steps its block runs once, kSkinnyKMajorBlockSteps (16), once per wave.
    n, k = 4096, 3072
    s0 = len(_C.exact_model()) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY

    def steps(mt, w, m):
        plan = [c for c, _ in _C.exact_candidates(m, n, k, 1, True, True, w == 4, H100_SMS)
                if c.kernel == "skinny_kmajor" and c.splits == 1 and c.w == w][0]
        assert plan.mt == mt
        return _C.exact_features(*plan, m, n, k, 1, True, True, H100_SMS, True, w == 4)[s0 + 5] * 1e3

    own = 16
    assert steps(4, 1, 4) == pytest.approx(k / 32 * 4 + own)
    assert steps(8, 1, 8) == pytest.approx(2 * k / 32 * 4 + own)
    assert steps(16, 1, 16) == pytest.approx(2 * k / 8 * 4 + own)
    assert steps(4, 4, 4) == pytest.approx(k / 128 * 4 + own)
    assert steps(8, 4, 8) == pytest.approx(k / 32 * 2 + own)


def test_row_major_b_blocks_along_k_in_a_cluster_price_no_reduction():
    # 2 to kMaxClusterSplits (8) blocks along K of the row-major-B kernel add up in their cluster
    # where its clusters all run at once, one block an SM (the shipped model's cluster_blocks:
    # an H200's): no reduction's launch and no partial products, K whole's features. 9 blocks
    # along K, or more blocks than those clusters hold, go through the workspace; so do the
    # column-major-B kernel's blocks along K. The row-major-B kernel's reduction is priced at a
    # share of the fixed cost that the column-major-B kernel's is priced at whole
    # (kSkinnyNMajorReduceShare in csrc/auto/exact_model.h).
    m, k = 4, 8000
    s0 = len(_C.exact_model()) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY
    model, _ = _C.cluster_blocks()
    assert len(model) == 9 and model[:2] == [0, 0]
    assert all(n <= blocks <= H100_SMS and blocks % n == 0 for n, blocks in enumerate(model) if n > 1)

    def reduction(n, splits, kernel="skinny_nmajor"):
        b_k = kernel == "skinny_kmajor"
        plan = (kernel, 4, 1, 1, splits, -(-k // splits // 16) * 16 if not b_k else -(-k // splits // 32) * 32, False)
        return _C.exact_features(*plan, m, n, k, 1, True, b_k, H100_SMS, True, False)[s0 + 3:s0 + 5]

    share, _ = reduction(300, 8 * 9)
    assert 0 < share < 1
    assert reduction(300, 8) == [0, 0]  # K whole
    for partials in range(2, 9):
        n = 32 * (model[partials] // partials)  # columns of blocks of 32: as many blocks as fit
        assert reduction(n, 8 * partials) == [0, 0], partials
        fixed, mb = reduction(n + 1, 8 * partials)  # a block more along N, in each of the slices
        assert fixed == share and mb == pytest.approx(partials * m * (n + 1) * 4 / 1e6), partials
    _, mb = reduction(300, 8 * 9)
    assert mb == pytest.approx(9 * m * 300 * 4 / 1e6)
    assert reduction(300, 2, "skinny_kmajor")[0] == 1


def test_skinny_ring_reads_b_over_its_busiest_sm():
    # The ring kernel (x @ W^T's float4s of 5-16 rows) weighs B's bytes over the busiest SM's
    # share of the SMs, blocks / (ceil(blocks / SMs) SMs): 172 blocks on 132 SMs stream as 86
    # SMs would; the other skinny kernels over the share their blocks occupy, at most all.
    n, k = 11008, 4096
    b_mb = 4.0 * k * n / 1e6
    s0 = len(_C.exact_model()) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY

    def b_feature(m, splits, w=4, b_vec=True):
        plan = [c for c, _ in _C.exact_candidates(m, n, k, 1, True, True, b_vec, H100_SMS)
                if c.kernel == "skinny_kmajor" and c.splits == splits and c.w == w][0]
        f = _C.exact_features(*plan, m, n, k, 1, True, True, H100_SMS, True, b_vec)
        return f[s0 + 1], -(-n // _C.skinny_cols(plan.kernel, plan.mt, plan.nw, plan.w)) * splits

    for m in (8, 16):
        for splits in (1, 2, 3):
            got, blocks = b_feature(m, splits)
            share = blocks / (-(-blocks // H100_SMS) * H100_SMS)
            assert got == pytest.approx(b_mb / share), (m, splits, blocks)
    got, blocks = b_feature(16, 2)
    assert blocks == 172 and got == pytest.approx(b_mb * 264 / 172)
    got, blocks = b_feature(4, 1)  # the 4-row register kernel: all SMs past 132 blocks
    assert blocks > H100_SMS and got == pytest.approx(b_mb)
    for m, splits in ((8, 1), (16, 2)):  # single floats of an unaligned W: the register kernel
        got, blocks = b_feature(m, splits, w=1, b_vec=False)
        assert blocks > H100_SMS and got == pytest.approx(b_mb), m


@pytest.mark.parametrize("m,b_k,b_vec", [(1, True, True), (1, True, False), (4, True, True), (3, True, False), (5, True, True),
                                         (8, True, True), (7, True, False), (9, True, True), (1, False, True),
                                         (16, True, True)])
def test_gemv_candidates_take_few_rows_of_a_kmajor_b(m, b_k, b_vec):
    # Up to 4 rows of A times a K-major B: float4s where B's lines are aligned (and for one row
    # where they are not, realigned), on blocks of 8 or 2 columns for one row (the one-row
    # build), 4 or 2 for 2-4 rows; single floats on the 4-row single-float build, blocks of 8
    # or 2 columns; 5-8 rows: blocks of 8 columns, float4s of aligned lines alone; K whole;
    # nothing for more rows or a row-major B.
    cands = {tuple(c) for c, _ in _C.exact_candidates(m, 4096, 1001, 1, True, b_k, b_vec, H100_SMS)
             if c.kernel == "gemv"}
    if m > 8 or not b_k:
        assert not cands and _C.gemv_columns(m, b_k) == []
        return
    if m <= 4:
        builds, columns = {4: 1 if m == 1 else 4, 1: 4}, {4: [2, 8] if m == 1 else [2, 4], 1: [2, 8]}
    else:
        builds, columns = {4: 8}, {4: [8]}
    widths = [w for w in builds if w == 1 or b_vec or m == 1]
    assert sorted(_C.gemv_columns(m, b_k)) == columns[4]
    assert sorted(_C.gemv_columns(m, b_k, b_vec)) == (columns[4 if b_vec or m == 1 else 1] if widths else [])
    assert cands == {("gemv", builds[w], cols, w, 1, 1001, False) for w in widths for cols in columns[w]}


def test_the_gemv_kernel_follows_blocks_and_k():
    # (columns, lanes along k, blocks an SM): the 5-8-row build's kernel on blocks of 4 columns
    # where its blocks of 8 number fewer than the SMs (the batch's blocks counted), else its own
    # 8 lanes, at any K; the 1- and 2-4-row float4 builds' groups of 4 lanes on blocks of 32 and
    # 16 columns below a K of 512, else their own 32 lanes; the single-float build its own.
    assert _C.gemv_kernel(8, 1000, 4096, 1, True, H100_SMS) == (4, 16, 2)  # 125 blocks
    assert _C.gemv_kernel(5, 1000, 300, 1, True, H100_SMS) == (4, 16, 2)
    assert _C.gemv_kernel(8, 1056, 4096, 1, True, H100_SMS) == (8, 8, 2)  # 132 blocks
    assert _C.gemv_kernel(8, 1000, 4096, 2, True, H100_SMS) == (8, 8, 2)  # 250 blocks
    assert _C.gemv_kernel(6, 4096, 1024, 1, True, H100_SMS) == (8, 8, 2)
    assert _C.gemv_kernel(6, 4096, 16384, 1, True, H100_SMS) == (8, 8, 2)
    assert _C.gemv_kernel(6, 4096, 1020, 1, True, H100_SMS) == (8, 8, 2)
    assert _C.gemv_kernel(8, 1000, 4096, 1, True, 0) == (8, 8, 2)  # SMs unknown: no few-block kernel
    assert _C.gemv_kernel(1, 100, 100, 1, True, H100_SMS) == (32, 4, 4)
    assert _C.gemv_kernel(1, 100, 511, 3, True, H100_SMS) == (32, 4, 4)
    assert _C.gemv_kernel(1, 100, 512, 1, True, H100_SMS) == (8, 32, 4)
    assert _C.gemv_kernel(4, 100, 511, 1, True, H100_SMS) == (16, 4, 4)
    assert _C.gemv_kernel(2, 100, 1, 1, True, H100_SMS) == (16, 4, 4)
    assert _C.gemv_kernel(3, 100, 512, 1, True, H100_SMS) == (4, 32, 4)
    assert _C.gemv_kernel(4, 100, 5000, 1, False, H100_SMS) == (8, 32, 2)
    assert _C.gemv_kernel(4, 100, 300, 1, False, H100_SMS) == (8, 32, 2)  # single floats
    assert _C.gemv_kernel(1, 100, 5001, 1, False, H100_SMS) == (8, 32, 4)  # realigned float4s
    assert _C.gemv_kernel(1, 100, 301, 1, False, H100_SMS) == (32, 4, 4)
    assert _C.gemv_kernel(6, 100, 100, 1, False, H100_SMS) is None  # 5-8 rows: float4s alone
    assert _C.gemv_kernel(9, 100, 100, 1, True, H100_SMS) is None


def test_split_tiles_price_their_edge_blocks():
    # The split tiles on warptile's kernel load float4 slices only in blocks inside the matrix
    # with aligned operands: where any block is an edge block, their serial iterations count
    # again (the 32-row tile's in global feature 6, the 64-row one's in 7); the 64-row tile on
    # the pipelined kernel (M >= 64, N >= 128, B's lines aligned or K-major) has none.
    g = exact_fit.GLOBAL_FEATURES

    def edges(mt, m, n, b_k=False, a_vec=True, b_vec=True):
        f = _C.exact_features("split_tile", mt, 128, 1, 4, 1024, False, m, n, 4096, 1, True, b_k, H100_SMS, a_vec, b_vec)
        serial = f[g + exact_fit.PER_TILE * (len(_C.cutlass_tiles()) + (mt == 64))]
        assert serial > 0
        assert f[g - 2 + (mt == 64)] in (0, serial) and f[g - 1 - (mt == 64)] == 0
        return f[g - 2 + (mt == 64)] > 0

    assert not edges(32, 64, 4096)
    assert edges(32, 40, 4096) and edges(32, 64, 4000) and edges(32, 64, 4096, a_vec=False)
    assert edges(32, 64, 4096, b_vec=False)
    assert not edges(64, 64, 4096) and not edges(64, 100, 4000) and not edges(64, 100, 4001, b_k=True, b_vec=False)
    assert not edges(64, 128, 4096, a_vec=False)  # the pipelined kernel loads a K-major A by floats
    assert edges(64, 40, 4096) and edges(64, 100, 4001, b_vec=False) and edges(64, 32, 4096, b_k=True)
    # Without the alignment flags, aligned operands (the bench's contiguous ones of sizes a
    # multiple of 4).
    assert _C.exact_features("split_tile", 32, 128, 1, 4, 1024, False, 64, 4096, 4096, 1, True, False, H100_SMS) == \
        _C.exact_features("split_tile", 32, 128, 1, 4, 1024, False, 64, 4096, 4096, 1, True, False, H100_SMS, True, True)


def test_fit_own_recovers_the_own_tiles_and_edge_costs():
    # Timings made from planted parameters (the own tiles' and the edge costs changed, the rest
    # as shipped): fit_own, the rest held, gives back estimates equal to those timings and the
    # planted edge costs (the split tiles' FMAs and K-major A copies are proportional, so each
    # tile's split between those two is not asked for).
    pytest.importorskip("scipy")
    g, per = exact_fit.GLOBAL_FEATURES, exact_fit.PER_TILE
    own = [g + per * t + i for t in range(len(_C.cutlass_tiles()), exact_fit._tiles()) for i in range(per)]
    shipped = _C.exact_model()
    planted = list(shipped)
    planted[g - 2], planted[g - 1] = 0.3, 0.25
    for c in own:
        planted[c] *= 1.3
    probs, rng = {}, random.Random(0)
    for _ in range(60):
        m, n, k = rng.choice([32, 40, 64, 100, 128, 200]), rng.choice([512, 1000, 2048, 4096]), rng.choice([512, 4096])
        b_k, a_vec, b_vec = rng.random() < 0.5, rng.random() < 0.7, rng.random() < 0.7
        cands = []
        for plan, _ in _C.exact_candidates(m, n, k, 1, True, b_k, b_vec, H100_SMS, a_vec):
            if plan.kernel == "split_tile":
                f = _C.exact_features(*plan, m, n, k, 1, True, b_k, H100_SMS, a_vec, b_vec)
                cands.append((plan, f, sum(x * p for x, p in zip(f, planted))))
        probs[(m, n, k, b_k, a_vec, b_vec)] = {"cublas": 1.0, "auto": None, "candidates": cands}
    fitted = exact_fit.fit_own(probs, shipped)
    held = [i for i in range(len(shipped)) if i not in own and i not in (g - 2, g - 1)]
    assert [fitted[i] for i in held] == [shipped[i] for i in held]
    assert fitted[g - 2:g] == pytest.approx([0.3, 0.25], rel=1e-6)
    for p in probs.values():
        for _, f, us in p["candidates"]:
            assert sum(x * q for x, q in zip(f, fitted)) == pytest.approx(us, rel=1e-6)


def test_builds_short_of_dram_count_their_streaming_excess():
    # B's bytes again at a build's share past the DRAM-bound rate (stream_excess in auto/plan.h):
    # the 4-row single-float builds (loads of 4 bytes, few in flight) and the 4-row float4
    # skinny kernel; none for the float4 GEMV builds and the ring kernel, which ran at DRAM's
    # rate, nor for the column-major-B kernel's 8- and 16-row single floats, whose steps count
    # twice instead (kSkinnyStagedSingleSteps).
    n = len(_C.exact_model())
    g0 = n - exact_fit.GEMV
    s0 = g0 - exact_fit.COPY - exact_fit.SKINNY
    gemv = lambda mt, nw, w, m: _C.exact_features(  # noqa: E731
        "gemv", mt, nw, w, 1, 6646, False, m, 15992, 6646, 1, True, True, H100_SMS)
    for (mt, nw, w, m), share in (((4, 8, 1, 3), 0.64), ((4, 2, 1, 1), 0.34), ((1, 8, 4, 1), 0.0), ((4, 4, 4, 4), 0.0)):
        f = gemv(mt, nw, w, m)
        assert f[g0 + 1] > 0 and f[g0 + 7] == pytest.approx(share * f[g0 + 1], abs=0)
    skinny = lambda mt, w, m: _C.exact_features(  # noqa: E731
        "skinny_kmajor", mt, 4 if w == 1 or mt == 4 else 2, w, 1, 6656, False, m, 15992, 6646, 1, True, True, H100_SMS)
    for (mt, w, m), share in (((4, 1, 2), 0.16), ((4, 4, 4), 0.28), ((8, 1, 8), 0.0), ((8, 4, 8), 0.0)):
        f = skinny(mt, w, m)
        assert f[s0 + 1] > 0 and f[s0 + 8] == pytest.approx(share * f[s0 + 1], abs=0)
    # Priced at the shipped rates, the 8-column single-float build streams a large B slower
    # than the 4-row float4 build, as it runs.
    params = _C.exact_model(1980000, 3201000, 6016)
    est = lambda f: sum(a * b for a, b in zip(f, params))  # noqa: E731
    assert est(gemv(4, 8, 1, 4)) > 1.4 * est(gemv(4, 4, 4, 4))


def test_gemv_features_are_its_own():
    # A gemv plan's features fill the model's GEMV block alone: the parameters fitted to it
    # price it, and no other kernel's.
    n = len(_C.exact_model())
    g0 = n - exact_fit.GEMV
    f = _C.exact_features("gemv", 1, 8, 4, 1, 4096, False, 1, 4096, 4096, 1, True, True, H100_SMS)
    assert [i for i, x in enumerate(f) if x != 0] == list(range(g0, g0 + 5))
    # The 5-8-row build shares the launch, A's bytes and the waves, its B's bytes and steps in
    # series at rates of its own.
    f8 = _C.exact_features("gemv", 8, 8, 4, 1, 4096, False, 8, 4096, 4096, 1, True, True, H100_SMS)
    assert [i for i, x in enumerate(f8) if x != 0] == [g0, g0 + 2, g0 + 3, g0 + 5, g0 + 6]
    assert f8[g0 + 5] == pytest.approx(f[g0 + 1])  # the same B, over as many SMs
    # Few blocks occupy few SMs: on 40 columns, 8 a block leave more SMs idle than 2, so B's
    # bytes weigh more per byte there.
    narrow = _C.exact_features("gemv", 1, 2, 4, 1, 4096, False, 1, 40, 4096, 1, True, True, H100_SMS)
    wide = _C.exact_features("gemv", 1, 8, 4, 1, 4096, False, 1, 40, 4096, 1, True, True, H100_SMS)
    assert narrow[n - exact_fit.GEMV + 1] < wide[n - exact_fit.GEMV + 1]
    # A block or load width the kernel is not built for has no features (no estimate), nor
    # a build of other rows than the problem's (one row's float4s run the one-row build, its
    # single floats the single-float build of up to 4 rows).
    for mt, nw, w, m in ((4, 0, 4, 4), (4, 8, 4, 4), (4, 4, 1, 4), (1, 4, 4, 1), (4, 8, 0, 4), (4, 8, 2, 4), (4, 16, 4, 4), (8, 2, 4, 8),
                         (8, 16, 4, 8), (8, 8, 1, 8), (8, 8, 4, 4), (4, 8, 4, 8), (8, 8, 4, 9), (4, 8, 4, 1),
                         (1, 8, 1, 1), (1, 8, 4, 2)):
        assert not any(_C.exact_features("gemv", mt, nw, w, 1, 4096, False, m, 4096, 4096, 1, True, True, H100_SMS))
    feature = lambda mt, nw, m, w=4, n_=4096: _C.exact_features(  # noqa: E731
        "gemv", mt, nw, w, 1, 4096, False, m, n_, 4096, 1, True, True, H100_SMS)
    assert any(feature(4, 8, 1, w=1))
    # The 8-row build's warps step through K in chunks of 8 lanes x 4 floats, a quarter of the
    # 4-row build's 32 lanes: four times the steps in series on the same K and blocks.
    assert feature(4, 4, 4)[g0 + 4] > 0
    assert feature(8, 8, 8)[g0 + 6] == pytest.approx(4 * feature(4, 4, 4)[g0 + 4])
    # The float4 builds of 1 and 4 rows run four blocks an SM, the single-float build two.
    assert feature(1, 8, 1, n_=33000)[g0 + 3] == math.ceil(33000 / 8 / (4 * H100_SMS))
    assert feature(4, 4, 2, n_=33000)[g0 + 3] == math.ceil(33000 / 4 / (4 * H100_SMS))
    assert feature(4, 8, 2, w=1, n_=33000)[g0 + 3] == math.ceil(33000 / 8 / (2 * H100_SMS))
    # Below a K of 512 the float4 builds run (and are priced as) the shallow-K kernel: groups of
    # 4 lanes on blocks of 32 columns for one row, 16 for 2-4, whatever the plan's width, and
    # their steps are 4 lanes' chunks of 4 floats.
    shallow = lambda mt, nw, m, k, w=4: _C.exact_features(  # noqa: E731
        "gemv", mt, nw, w, 1, k, False, m, 33000, k, 1, True, True, H100_SMS)
    for mt, m, cols in ((1, 1, 32), (4, 3, 16)):
        wide, narrow = (shallow(mt, nw, m, 300) for nw in _C.gemv_columns(m, True))
        assert wide == narrow
        assert wide[g0 + 3] == math.ceil(33000 / cols / (4 * H100_SMS))
        assert wide[g0 + 4] * 1e3 == pytest.approx(wide[g0 + 3] * math.ceil(300 / (8 * 4 * 4)))
        assert wide[g0 + 2] == pytest.approx(4.0 * m * 300 * math.ceil(33000 / cols) / 1e6)
        deep = shallow(mt, max(_C.gemv_columns(m, True)), m, 512)
        assert deep[g0 + 4] * 1e3 == pytest.approx(deep[g0 + 3])  # 32 lanes: one chunk of 1024 floats
    single = shallow(4, 8, 3, 300, w=1)  # the single-float build keeps its own kernel
    assert single[g0 + 3] == math.ceil(33000 / 8 / (2 * H100_SMS))
    assert single[g0 + 4] * 1e3 == pytest.approx(single[g0 + 3] * math.ceil(300 / (8 * 32)))


def test_a_tables_gemv_entry_runs_gemv():
    entry = lambda m, n, k, cols: f"NT {_C.auto_bucket(m)} {_C.auto_bucket(n)} {_C.auto_bucket(k)} gemv {cols} 1"  # noqa: E731
    # 2-4 rows: blocks of 4 or 2 columns on float4s, 8 or 2 on single floats.
    for b_vec, w, widths in ((True, 4, (2, 4)), (False, 1, (2, 8))):
        for cols in widths:
            plan = _C.auto_plan(2, 4096, 4096, 1, True, b_vec, H100_SMS, True, entry(2, 4096, 4096, cols), True, True)
            assert tuple(plan) == ("gemv", 4, cols, w, 1, 4096, False)
    # One row: float4s on the one-row build, B's lines aligned or not (realigned).
    for cols in (2, 8):
        for b_vec, rows, w in ((True, 1, 4), (False, 1, 4)):
            plan = _C.auto_plan(1, 4096, 4096, 1, True, b_vec, H100_SMS, True, entry(1, 4096, 4096, cols), True, True)
            assert tuple(plan) == ("gemv", rows, cols, w, 1, 4096, False)
    # 5-8 rows: the 8-row build's width, float4s alone.
    plan = _C.auto_plan(6, 4096, 4096, 1, True, True, H100_SMS, True, entry(6, 4096, 4096, 8), True, True)
    assert tuple(plan) == ("gemv", 8, 8, 4, 1, 4096, False)
    # A width its build lacks, single floats where it has none, or past its rows: the entry
    # counts as none, and the model's own plan runs.
    for m, cols, b_vec in ((6, 2, True), (6, 8, False), (9, 8, True), (2, 8, True), (2, 4, False), (1, 4, True)):
        own = tuple(_C.auto_plan(m, 4096, 4096, 1, True, b_vec, H100_SMS, True, None, True, True))
        assert tuple(_C.auto_plan(m, 4096, 4096, 1, True, b_vec, H100_SMS, True, entry(m, 4096, 4096, cols),
                                  True, True)) == own
    for bad in ("NN 1 4096 4096 gemv 8 1", "NT 1 4096 4096 gemv 3 1", "NT 1 4096 4096 gemv 8 2",
                "NT 1 4096 4096 gemv 16 1"):
        with pytest.raises(ValueError, match="gemv"):
            _C.auto_plan(1, 4096, 4096, 1, True, True, H100_SMS, True, bad, True, True)


def test_exact_fit_reads_a_csv_without_widths_only_where_it_names_one_plan(tmp_path):
    # An earlier CSV (no w column) timed one plan per (kernel, tile, splits). Where two load
    # widths share those, the timing is neither's; where one plan has them, it is that plan's.
    m, n, k = 4, 4096, 4096  # NN: a row-major B of aligned rows, float4s and single floats
    plans = [c for c, _ in _C.exact_candidates(m, n, k, 1, True, False, True, H100_SMS)
             if c.kernel == "skinny_nmajor"]
    both = next(c for c in plans if sum((d.mt, d.splits) == (c.mt, c.splits) for d in plans) == 2)
    alone = next(c for c in plans if sum((d.mt, d.splits) == (c.mt, c.splits) for d in plans) == 1)
    path = tmp_path / "old.csv"
    rows = ["batch,m,n,k,layout,bmm,candidate,mt,nw,splits,us,err",
            f"1,{m},{n},{k},NN,0,cublas,0,0,0,10.0,0", f"1,{m},{n},{k},NN,0,auto,0,0,0,11.0,0"]
    for c, us in ((both, 20.0), (alone, 30.0)):
        rows.append(f"1,{m},{n},{k},NN,0,{c.kernel},{c.mt},{c.nw},{c.splits},{us},0")
    path.write_text("\n".join(rows) + "\n")
    probs = exact_fit.problems(exact_fit.load(str(path)), H100_SMS)
    timed = {tuple(p): us for p, _, us in next(iter(probs.values()))["candidates"]}
    assert timed == {tuple(alone): 30.0}


@pytest.mark.parametrize("with_w", [True, False])
def test_exact_fit_reads_cutlass_rows_written_before_w_named_the_warps(tmp_path, with_w):
    # A CSV of an earlier gemmtiles wrote w 1 for every CUTLASS tile (or had no w column): it
    # timed the builds of that time, the 32 x 32 tile's one-warp build and the 64 x 64 tile's
    # two-warp one; the builds added since (32 x 32 on two warps, 64 x 64 on four) stay untimed.
    m, n, k = 300, 300, 600
    path = tmp_path / "old.csv"
    fields = exact_fit.CSV_FIELDS if with_w else exact_fit.CSV_FIELDS[:-1]
    w, w0 = (",1", ",0") if with_w else ("", "")
    rows = [",".join(fields), f"1,{m},{n},{k},NN,0,cublas,0,0,0,10.0,0{w0}",
            f"1,{m},{n},{k},NN,0,cutlass,64,64,1,20.0,0{w}", f"1,{m},{n},{k},NN,0,cutlass,32,32,1,30.0,0{w}"]
    path.write_text("\n".join(rows) + "\n")
    probs = exact_fit.problems(exact_fit.load(str(path)), H100_SMS)
    timed = {tuple(p)[:5]: us for p, _, us in next(iter(probs.values()))["candidates"]}
    assert timed == {("cutlass", 64, 64, 2, 1): 20.0, ("cutlass", 32, 32, 1, 1): 30.0}


def _timed_by_model(path, shapes, kernel, params):
    """A candidates CSV at `path` of every `kernel` candidate of each (m, n, k, layout) in
    `shapes`, each timed as the model with `params` estimates it (cuBLAS 10 µs), on the layout
    and alignment the fits charge the shape's operands (exact_fit._flags); the path."""
    rows = [",".join(exact_fit.CSV_FIELDS)]
    for m, n, k, layout in shapes:
        a_k, b_k, a_vec, b_vec = exact_fit._flags(layout, m, n, k)
        rows.append(f"1,{m},{n},{k},{layout},0,cublas,0,0,0,10.0,0,0")
        for c, _ in _C.exact_candidates(m, n, k, 1, a_k, b_k, b_vec, H100_SMS, a_vec):
            if c.kernel == kernel:
                f = _C.exact_features(*c, m, n, k, 1, a_k, b_k, H100_SMS, a_vec, b_vec)
                us = sum(a * b for a, b in zip(f, params))
                rows.append(f"1,{m},{n},{k},{layout},0,{kernel},{c.mt},{c.nw},{c.splits},{us},0,{c.w}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_fit_gemv_recovers_the_gemv_parameters_and_holds_the_others(tmp_path):
    # Timings made from known GEMV parameters (the skinny kernels' rates per MB of B and of
    # streaming excess among them): the fit finds them, and changes no other parameter.
    params = _C.exact_model()
    g0 = len(params) - exact_fit.GEMV
    s0 = g0 - exact_fit.COPY - exact_fit.SKINNY
    truth = list(params)
    truth[g0:] = [5.0, params[s0 + 1], 0.01, 0.8, 20.0, 0.25, 300.0, params[s0 + 8]]
    rng = random.Random(3)
    shapes = [(rng.randint(1, 8), rng.randint(100, 30000), rng.randint(100, 12000), "NT") for _ in range(40)]
    path = _timed_by_model(tmp_path / "gemv.csv", shapes, "gemv", truth)
    start = list(params)
    start[g0 + 1], start[g0 + 7] = 2 * params[s0 + 1], 3 * params[s0 + 8]  # both taken from the skinny kernels'
    fitted = exact_fit.fit_gemv(exact_fit.problems(exact_fit.load(str(path)), H100_SMS), start)
    assert fitted[:g0] == pytest.approx(params[:g0], rel=0, abs=0)
    assert fitted[g0:] == pytest.approx(truth[g0:], rel=1e-3, abs=1e-6)


def test_fit_kmajor_recovers_cutlass_kmajor_costs_and_holds_the_others(tmp_path):
    # Timings of CUTLASS's kernel on K-major operands made from known costs per K-major
    # element: the fit finds each tile's, and changes no other parameter.
    params = _C.exact_model()
    g, per = exact_fit.GLOBAL_FEATURES, exact_fit.PER_TILE
    tiles = {(c.mt, c.nw, c.w) for c, _ in _C.exact_candidates(512, 512, 512, 1, True, True, True, H100_SMS)
             if c.kernel == "cutlass"}
    cols = [g + per * t + i for t in range(len(tiles)) for i in (2, 3)]
    truth = list(params)
    for j, col in enumerate(cols):
        truth[col] = 10.0 + 7.0 * j
    rng = random.Random(4)
    shapes = [(rng.randint(64, 4000), rng.randint(64, 4000), rng.randint(64, 4000), ("NN", "NT")[i % 2])
              for i in range(60)]
    path = _timed_by_model(tmp_path / "kmajor.csv", shapes, "cutlass", truth)
    fitted = exact_fit.fit_kmajor(exact_fit.problems(exact_fit.load(str(path)), H100_SMS), params)
    held = [i for i in range(len(params)) if i not in cols]
    assert [fitted[i] for i in held] == pytest.approx([params[i] for i in held], rel=0, abs=0)
    assert [fitted[i] for i in cols] == pytest.approx([truth[i] for i in cols], rel=1e-3)


def test_fit_tile_recovers_one_tiles_parameters_and_holds_the_others(tmp_path):
    # Timings of CUTLASS's kernel made from known parameters of the 32 x 32 tile on two warps:
    # the fit finds that tile's five, and changes no other parameter, the same tile's on one
    # warp included.
    assert _C.cutlass_tiles() == TILES
    assert [exact_fit.tile_index(*t) for t in TILES] == list(range(len(TILES)))
    for index, (mt, nw, warps) in enumerate(TILES):  # each tile's plans fill its own parameters' features
        f = _C.exact_features("cutlass", mt, nw, warps, 1, 0, False, 4096, 4096, 4096, 1, False, False, H100_SMS)
        filled = [t for t in range(len(TILES)) if f[exact_fit.GLOBAL_FEATURES + exact_fit.PER_TILE * t]]
        assert filled == [index]
    with pytest.raises(ValueError, match="32 x 32 on 4 warps"):
        exact_fit.tile_index(32, 32, 4)
    params = _C.exact_model()
    tile = exact_fit.tile_index(32, 32, 2)
    cols = [exact_fit.GLOBAL_FEATURES + exact_fit.PER_TILE * tile + i for i in range(exact_fit.PER_TILE)]
    truth = list(params)
    for j, col in enumerate(cols):
        truth[col] = [0.3, 6.0, 12.0, 9.0, 0.5][j]
    rng = random.Random(7)
    shapes = [(rng.randint(16, 3000), rng.randint(16, 3000), rng.randint(16, 6000), ("NN", "NT", "TN")[i % 3])
              for i in range(60)]
    path = _timed_by_model(tmp_path / "tile.csv", shapes, "cutlass", truth)
    fitted = exact_fit.fit_tile(exact_fit.problems(exact_fit.load(str(path)), H100_SMS), tile, params)
    held = [i for i in range(len(params)) if i not in cols]
    assert [fitted[i] for i in held] == pytest.approx([params[i] for i in held], rel=0, abs=0)
    assert [fitted[i] for i in cols] == pytest.approx([truth[i] for i in cols], rel=1e-3)


def test_fit_skinny_recovers_the_skinny_parameters_and_holds_the_others(tmp_path):
    # Timings of the skinny kernels made from known parameters: the fit finds them but the
    # streaming excess's rate, which it holds (the GEMV's single-float builds share it), the
    # GEMV kernel's rate per byte of B follows the skinny kernels', and nothing else changes.
    params = _C.exact_model()
    s0 = len(params) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY
    truth = list(params)
    truth[s0:s0 + exact_fit.SKINNY - 1] = [6.0, 0.25, 12.0, 3.0, 5.0, 10.0, 20.0, 8.0]
    rng = random.Random(6)
    shapes = [(rng.randint(1, 16), rng.randint(100, 20000), rng.randint(100, 12000), ("NN", "NT")[i % 2])
              for i in range(60)]
    rows = _timed_by_model(tmp_path / "skinny-nk.csv", shapes, "skinny_kmajor", truth).read_text().splitlines()
    more = _timed_by_model(tmp_path / "skinny-nn.csv", shapes, "skinny_nmajor", truth).read_text().splitlines()
    path = tmp_path / "skinny.csv"
    path.write_text("\n".join(rows + [r for r in more[1:] if ",cublas," not in r]) + "\n")
    fitted = exact_fit.fit_skinny(exact_fit.problems(exact_fit.load(str(path)), H100_SMS), params)
    g_rate = len(params) - exact_fit.GEMV + 1
    held = [i for i in range(len(params)) if not s0 <= i < s0 + exact_fit.SKINNY - 1 and i != g_rate]
    assert s0 + exact_fit.SKINNY - 1 in held and len(params) - 1 in held  # the excess's rates
    assert [fitted[i] for i in held] == pytest.approx([params[i] for i in held], rel=0, abs=0)
    assert fitted[s0:s0 + exact_fit.SKINNY] == pytest.approx(truth[s0:s0 + exact_fit.SKINNY], rel=1e-3)
    assert fitted[g_rate] == pytest.approx(truth[s0 + 1], rel=1e-3)


def test_exact_fit_writes_its_fit_as_a_table_auto_reads(tmp_path, capsys):
    # --table-out: the fitted parameters as a table of one 'model exact' line, which auto's
    # table parser takes and plans by.
    params = _C.exact_model()
    truth = list(params)
    truth[exact_fit.GLOBAL_FEATURES + 2] = 60.0  # the large tile's cost per K-major element of A
    rng = random.Random(5)
    shapes = [(rng.randint(64, 4000), rng.randint(64, 4000), rng.randint(64, 4000), "NT") for _ in range(20)]
    path = _timed_by_model(tmp_path / "kmajor.csv", shapes, "cutlass", truth)
    table = tmp_path / "table.txt"
    assert exact_fit.main([str(path), "--kmajor", "--table-out", str(table)]) == 0
    text = table.read_text()
    assert text.startswith("model exact ") and len(text.splitlines()) == 1
    assert _C.auto_plan(2048, 2048, 2048, 1, True, True, H100_SMS, True, text, True, True).kernel in CUTLASS_KERNELS
    with pytest.raises(SystemExit):
        exact_fit.main([str(path), "--kmajor", "--gemv"])
    capsys.readouterr()


def test_exact_fit_refuses_to_append_to_a_csv_of_other_columns(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("batch,m,n,k,layout,bmm,candidate,mt,nw,splits,us,err\n")
    with pytest.raises(ValueError, match="expected"):
        exact_fit.measure([], str(path), None, start=1)


def test_model_splits_deep_k_on_few_tiles():
    # 64 x 64 x 16384: one tile's 2048 serial k iterations; split, the SMs share them.
    plan = _C.auto_plan(64, 64, 16384, 1, False, True, H100_SMS, True, None, True, True)
    assert plan.kernel in CUTLASS_KERNELS and plan.splits > 1
    # Many full waves: data-parallel.
    assert _C.auto_plan(8192, 8192, 1024, 1, False, True, H100_SMS, True, None, True, True).splits == 1


@pytest.mark.parametrize("bad", [(0, 1, 1, 1), (1, 1, 1, 0)])
def test_exact_candidates_rejects_empty_problems(bad):
    with pytest.raises(ValueError, match="must be >= 1"):
        _C.exact_candidates(*bad, True, True, True, 132)


needs_cutlass = pytest.mark.skipif(not _cutlass_here(), reason="needs an sm_80+ GPU and a build with CUTLASS")


@contextlib.contextmanager
def forced_plan(*plan):
    """Every auto call inside runs `plan` (force_auto_plan's fields: kernel, mt, nw, w, splits,
    k_slice), which none of them may refuse."""
    _C.force_auto_plan(*plan)
    try:
        yield
        assert not _C.forced_plan_refused(), plan
    finally:
        _C.force_auto_plan()


def forced(kernel, mt=0, nw=0, splits=1, warps=None):
    """forced_plan of a plan whose k_slice the kernel derives (CUTLASS's tiles): the tile of mt x nw
    on `warps` warps (None: the first such tile of TILES)."""
    if warps is None:
        warps = next(w for r, c, w in TILES if (r, c) == (mt, nw))
    return forced_plan(kernel, mt, nw, warps, splits, 0)


def _copies(a, b):
    """The copying CUTLASS plans that take a and b: those copying K-major operands alone."""
    a_k, b_k = a.stride(-1) == 1, b.stride(-1) != 1
    return [kernel for kernel, (copies_a, copies_b) in CUTLASS_COPIES.items()
            if (copies_a or copies_b) and (a_k or not copies_a) and (b_k or not copies_b)]


def _operands(m, n, k, layout, pad=0, batch=None):
    a = operand(m, k, "cuda", "row" if layout[0] == "N" else "col", pad=pad, offset=1 if pad else 0, batch=batch)
    b = operand(k, n, "cuda", "col" if layout[1] == "T" else "row", pad=pad + 2 if pad else 0,
                offset=3 if pad else 0, batch=batch)
    return a, b


SHAPES = [(1, 1, 1), (3, 5, 7), (17, 33, 129), (130, 257, 67), (300, 129, 1001)]


def test_the_model_holds_as_many_blocks_an_sm_as_its_waves_take():
    """The blocks an SM holds, by tile and layout, are what the model's waves count: a split
    product whose blocks fill the table's count on every SM is one wave, one more block two."""
    sms = H100_SMS
    for tile, (mt, nw, warps) in enumerate(TILES):
        for layout in LAYOUTS:
            a_k, b_k = _kmajor(layout)
            held, device = _C.cutlass_blocks_per_sm(mt, nw, warps, a_k, b_k)
            assert held >= 1 and (device is None or device >= 1)
            base = exact_fit.GLOBAL_FEATURES + exact_fit.PER_TILE * tile
            # K long enough for every block of every split to run at least one k step.
            for blocks, waves in ((held * sms, 1), (held * sms + 1, 2)):
                f = _C.exact_features("cutlass", mt, nw, warps, blocks, 0, False, mt, nw, 8 * blocks, 1, a_k, b_k, sms)
                assert f[base + 4] == waves, (TILES[tile], layout, blocks)
    with pytest.raises(ValueError, match="cutlass_tiles"):
        _C.cutlass_blocks_per_sm(48, 64, 2, True, False)


@needs_cuda
@needs_cutlass
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                    reason="the model's counts are Hopper's (sm_90), whose SMs it was fitted on")
@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_models_blocks_an_sm_are_the_devices(layout):
    """CUTLASS's kernels take registers by layout, and its scheduler plans its waves on what the
    device holds: on the GPU the model was fitted on, its count must be the device's for every
    tile of this build (a compiler that gives a kernel other registers fails it)."""
    a_k, b_k = _kmajor(layout)
    counts = {tile: _C.cutlass_blocks_per_sm(*tile, a_k, b_k) for tile in TILES}
    assert all(model == device for model, device in counts.values()), counts


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("tile", range(len(TILES)))
@pytest.mark.parametrize("splits", [1, 3, 16])
def test_each_cutlass_candidate_is_right(layout, tile, splits):
    for m, n, k in SHAPES:
        for pad in (0, 3):
            a, b = _operands(m, n, k, layout, pad)
            mt, nw, warps = TILES[tile]
            with forced("cutlass", mt, nw, splits, warps):
                check_tier("auto", a, b, alpha=-1.5)
            # A K-major operand also copied transposed first.
            for copied in _copies(a, b):
                with forced(copied, mt, nw, splits, warps):
                    check_tier("auto", a, b, alpha=0.5)


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cutlass_batched_is_right(layout):
    for m, n, k in [(1, 3, 5), (33, 65, 17), (130, 70, 300)]:
        a, b = _operands(m, n, k, layout, batch=3)
        for tile in range(len(TILES)):
            mt, nw, warps = TILES[tile]
            with forced("cutlass", mt, nw, 1, warps):
                check_tier("auto", a, b)
            for copied in _copies(a, b):
                with forced(copied, mt, nw, 1, warps):
                    check_tier("auto", a, b, alpha=0.5)
    # An operand shared by the batch (batch stride 0) is copied once. A batch of rows that
    # does not follow one another (a slice of each entry's rows) keeps a shared B from being
    # folded into one product of the batch's rows.
    a, b = _operands(70, 50, 90, layout, batch=3)
    shared_a = a[:1].expand(3, -1, -1)
    sliced_a = _operands(80, 50, 90, layout, batch=3)[0][:, :70]
    shared_b = b[:1].expand(3, -1, -1)
    for x, y in [(shared_a, b), (sliced_a, shared_b), (shared_a, shared_b)]:
        assert x.stride(0) != x.shape[1] * x.stride(1) or y.stride(0) != 0  # not folded
        for copied in _copies(x, y):
            with forced(copied, 64, 64, 1):
                check_tier("auto", x, y)


# Products whose tiles the plan's schedule shares, each counting a shared tile's blocks on a
# flag: CUTLASS's stream-K (0), which shares out the k iterations of the tiles past its whole
# waves where its own heuristic finds that pays, and split-K whose slices the stream-K kernel
# adds in turn (2 slices; 81 tiles in 16 slices, more blocks than fit the SMs at once); and
# among them split-K whose slices run apart (3, 5 and 16 slices of few tiles: no flags), so that
# no schedule leaves a flag set for another.
SHARED_TILES = [(300, 129, 1001, "NN", 64, 64, 3), (130, 257, 2000, "NT", 32, 128, 16),
                (2000, 300, 4000, "TN", 64, 64, 0), (300, 129, 1001, "TN", 64, 64, 2),
                (64, 64, 9000, "NT", 32, 32, 0), (576, 576, 1600, "NT", 64, 64, 16),
                (1000, 1000, 3000, "TT", 128, 128, 0), (33, 1500, 700, "NN", 128, 32, 5)]


def test_a_batch_launched_product_by_product_is_priced_as_its_products():
    # K split on a batch: its products one launch each, so batch times one product's features
    # (launches included); data-parallel, one launch whatever the batch.
    one = _C.exact_features("cutlass", 64, 64, 2, 4, 1024, False, 100, 300, 4096, 1, True, True, H100_SMS)
    five = _C.exact_features("cutlass", 64, 64, 2, 4, 1024, False, 100, 300, 4096, 5, True, True, H100_SMS)
    assert five == pytest.approx([5 * x for x in one])
    assert _C.exact_features("cutlass", 64, 64, 2, 1, 4096, False, 100, 300, 4096, 5, True, True, H100_SMS)[0] == 1
    # After copies, only the product's features scale: the copies are one launch per operand,
    # for the whole batch, as before.
    params = len(_C.exact_model())
    copy0 = params - exact_fit.GEMV - exact_fit.COPY
    both1 = _C.exact_features("cutlass_ab_copied", 64, 64, 2, 4, 1024, False, 100, 300, 4096, 1, True, True, H100_SMS)
    both5 = _C.exact_features("cutlass_ab_copied", 64, 64, 2, 4, 1024, False, 100, 300, 4096, 5, True, True, H100_SMS)
    assert both5[:copy0 - exact_fit.SKINNY] == pytest.approx([5 * x for x in both1[:copy0 - exact_fit.SKINNY]])
    assert both5[copy0] == both1[copy0] == 2 and both5[copy0 + 1] == pytest.approx(5 * both1[copy0 + 1])
    # Few deep tiles per product: the model splits K, product by product.
    plan = _C.auto_plan(25, 249, 9779, 7, True, True, H100_SMS, True, None, True, True)
    assert plan.splits > 1, tuple(plan)


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_batch_with_k_split_is_right(layout):
    # One launch per product, K split, on the operands as they lie and after the copies; odd
    # sizes, misaligned rows, a bias row and a C per product through the epilogue.
    for m, n, k, batch in [(17, 33, 1001, 3), (5, 130, 300, 2), (64, 65, 4097, 4)]:
        for pad in (0, 3):
            a, b = _operands(m, n, k, layout, pad, batch=batch)
            for kernel in ("cutlass",) + tuple(_copies(a, b)):
                with forced(kernel, 64, 64, 3):
                    check_tier("auto", a, b, alpha=-1.5)
                    check_tier("auto", a, b, torch.randn(n, device="cuda"), alpha=0.5, beta=2.0)
                    check_tier("auto", a, b, torch.randn(batch, m, n, device="cuda"), alpha=1.0, beta=-1.0)


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("layout", LAYOUTS)
def test_deep_splits_are_right(layout):
    # K in 24 to 64 slices (a few deep tiles filling the SMs) on every split tile that takes
    # them (32 and 64 rows of any layout, the pipelined 128 x 128 tile), and in 24 and 32 on
    # CUTLASS's tiles where their slices run apart, the operands as they lie or copied first:
    # odd sizes, operands aligned and not, a bias row through the epilogue.
    tiles, cutlass = set(), set()
    for (m, n, k), pad in itertools.product([(70, 300, 5001), (200, 300, 6001)], (0, 3)):
        a, b = _operands(m, n, k, layout, pad)
        a_k, b_k, a_vec, b_vec = exact_fit._layout_flags(a, b)
        plans = [tuple(p) for p, _ in _C.exact_candidates(m, n, k, 1, a_k, b_k, b_vec, H100_SMS, a_vec)
                 if p.splits in (24, 32, 48, 64)]
        assert {p[0] for p in plans} <= {"split_tile", *CUTLASS_KERNELS}, plans
        tiles |= {p[1] for p in plans if p[0] == "split_tile"}
        cutlass |= {p[4] for p in plans if p[0] != "split_tile"}
        for plan in plans:
            with forced_plan(*plan):
                check_tier("auto", a, b, torch.randn(n, device="cuda"), alpha=0.5, beta=2.0)
    assert tiles == {32, 64, 128}, tiles
    assert cutlass == {24, 32}, cutlass


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("shared", ["a", "b"])
def test_a_batch_with_k_split_shares_an_operand(shared):
    # A batch whose one operand is the same matrix for every product (batch stride 0, as
    # expand gives), launched product by product with K split: each launch reads the shared
    # operand at its own start, each writes its own product. (A shared B stays a batch where
    # A is column-major: a row-major A's batch would be folded into one product's rows.)
    m, n, k, batch = 37, 70, 2049, 5
    a, b = _operands(m, n, k, "NT" if shared == "a" else "TN", batch=batch)
    if shared == "a":
        a = a[0].expand(batch, m, k)
    else:
        b = b[0].expand(batch, k, n)
    for kernel in ("cutlass",) + tuple(_copies(a, b)):
        with forced(kernel, 32, 32, 4):
            out = gemmtiles.sgemm(a, b, tier="auto")
        assert_gemm_close(out, a, b)


def _graph_replays_right(a, b):
    """auto's call on a and b (its plan, or the one forced) captured in a CUDA graph after a
    call that ran it eagerly, and replayed three times, each right."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = gemmtiles.sgemm(a, b, tier="auto")
    for _ in range(3):
        out.zero_()
        graph.replay()
        torch.cuda.synchronize()
        assert_gemm_close(out, a, b)


@needs_cuda
@needs_cutlass
def test_a_batch_with_k_split_leaves_the_flags_zero_and_captures():
    # Launched product by product with K split: in 2 slices every launch shares tiles through
    # the stream's flags and must leave them zero for the next, and captured in a graph each
    # launch zeroes flags of its own; in 6 slices of these 3 tiles the slices run apart, each
    # product's reduction done with the workspace before the next product's slices write it.
    # The replays must be right.
    a, b = _operands(40, 129, 3001, "NN", batch=6)
    for splits in (2, 6):
        with forced("cutlass", 64, 64, splits):
            for _ in range(2):
                check_tier("auto", a, b, alpha=0.75)
            torch.cuda.synchronize()
            assert _C.cutlass_flags_left_set() == 0
            _graph_replays_right(a, b)
        assert _C.cutlass_flags_left_set() == 0


@needs_cuda
@needs_cutlass
def test_a_split_forced_on_a_batch_past_the_launch_limit_is_refused():
    # A batch of more products than auto launches one by one (kEntryLaunchMaxBatch, 32) runs
    # in one batched launch, which splits nothing: a forced split there is refused, and auto's
    # own plan gives the right answer.
    a, b = _operands(20, 33, 1024, "NT", batch=33)
    _C.force_auto_plan("cutlass", 32, 32, 2, 4, 0)
    try:
        out = gemmtiles.sgemm(a, b, tier="auto")
        assert _C.forced_plan_refused()
    finally:
        _C.force_auto_plan()
    assert_gemm_close(out, a, b)
    with forced("cutlass", 32, 32, 1):  # data-parallel, the batched launch, is taken
        check_tier("auto", a, b)


@needs_cuda
@needs_cutlass
def test_cutlass_launches_leave_their_flags_zero():
    # The launches that share tiles count their peers up on the stream's barrier flags, which
    # nothing zeroes between launches (zeroed_cutlass_flags): each must leave them zero for
    # the next, whatever its grid. Launches of every grid in turn, twice, on the current
    # stream and on another, each right; then a graph captured and replayed.
    side = torch.cuda.Stream()
    for stream in (torch.cuda.current_stream(), side):
        with torch.cuda.stream(stream):
            for _ in range(2):
                for m, n, k, layout, mt, nw, splits in SHARED_TILES:
                    a, b = _operands(m, n, k, layout)
                    with forced("cutlass", mt, nw, splits):
                        check_tier("auto", a, b, alpha=0.75)
    torch.cuda.synchronize()
    assert _C.cutlass_flags_left_set() == 0
    a, b = _operands(300, 129, 1001, "NN")
    for splits in (2, 3):  # the stream-K kernel's slices added in turn; slices apart
        with forced("cutlass", 64, 64, splits):
            gemmtiles.sgemm(a, b, tier="auto")
            _graph_replays_right(a, b)
        assert _C.cutlass_flags_left_set() == 0


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_k_split_runs_its_slices_apart_where_cutlass_would_add_them_in_a_wave(layout):
    # K split where CUTLASS's stream-K kernel would add the slices in a wave of reduction
    # blocks of its grid (3 or more slices, its blocks in fewer waves than an SM holds: 4 tiles
    # in 12 slices): its data-parallel kernel writes each slice's partial product and
    # split_k_reduce_kernel adds them (run_slices in auto/cutlass_simt.cuh). CUTLASS rounds a
    # slice up to whole cache lines where A's or B's rows run along K and K is a multiple of 32
    # (NN, NT, TT: 1408 in 12 slices, 11 of 128; TN 12 of 120): the reduction adds the slices
    # written. The allocator's blocks the workspace may reuse hold NaNs first, which an
    # unwritten slice added would carry into the output. Elsewhere (2 slices; 100 tiles in 12
    # slices, more blocks than fit the SMs at once; stream-K and data-parallel schedules) the
    # stream-K kernel alone.
    def kernels(m, n, schedule):
        a, b = _operands(m, n, 1408, layout)
        nans = [torch.full((32 * m * n,), float("nan"), device="cuda") for _ in range(4)]
        del nans
        out = []
        with forced("cutlass", 64, 64, schedule):
            names = kernels_run(lambda: out.append(gemmtiles.sgemm(a, b, tier="auto")))
            check_tier("auto", a, b, torch.randn(m, n, device="cuda"), alpha=0.5, beta=-2.0)
        assert_gemm_close(out[0], a, b)
        tiles = [x for x in names if "cutlass::Kernel2<" in x]
        assert len(tiles) == 1, names
        apart = "GemmIdentityThreadblockSwizzle" in tiles[0]
        assert apart != ("ThreadblockSwizzleStreamK" in tiles[0]), names
        assert sum("split_k_reduce_kernel" in x for x in names) == int(apart), names
        if schedule > 1:  # the model's restatement of CUTLASS's rule, which prices the plans
            a_k, b_k, _, _ = exact_fit._layout_flags(a, b)
            warps = next(w for r, c, w in TILES if (r, c) == (64, 64))
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            assert _C.cutlass_slices_apart(64, 64, warps, m, n, 1408, schedule, sms, a_k, b_k) == apart
        return apart

    assert kernels(100, 70, 12)
    # 32 slices, as CUTLASS's candidates past 16 slices (exact_candidates): apart.
    assert kernels(100, 70, 32)
    assert not any(kernels(m, n, schedule) for m, n, schedule in [(100, 70, 2), (640, 640, 12), (100, 70, 0),
                                                                  (100, 70, 1)])


# One row with K a multiple of 4 (B's lines aligned where unpadded) runs the one-row build; 1-4
# rows on either side of the shallow K (512), and 5-8 rows on fewer blocks than the SMs and on
# more of them, K a multiple of 4 or not (the whole-step and checked kernels), run each of
# their builds' kernels (gemv_kernel).
GEMV_SHAPES = [(1, 2113, 300), (3, 2113, 508), (2, 67, 512), (1, 1, 1), (2, 3, 5), (3, 130, 7), (4, 257, 129),
               (1, 1031, 1001), (4, 70, 4099), (3, 9, 300), (5, 130, 300), (8, 257, 1028), (7, 33, 4100), (6, 17, 8),
               (8, 1, 4), (1, 1031, 1000), (1, 9, 1028), (1, 130, 4100), (5, 67, 1020), (6, 67, 1024),
               (6, 2113, 1020), (7, 2113, 1028)]


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("pad", [0, 3])
def test_each_gemv_candidate_is_right(pad):
    # Every block width and load width on odd sizes, misaligned rows (pad 3: an offset and an
    # odd leading dimension), a batch, and the epilogue with a C.
    for m, n, k in GEMV_SHAPES:
        for batch in (None, 3):
            a, b = _operands(m, n, k, "NT", pad, batch=batch)
            a_k, b_k, a_vec, b_vec = exact_fit._layout_flags(a, b)  # as auto sees them
            cands = [c for c, _ in _C.exact_candidates(m, n, k, batch or 1, a_k, b_k, b_vec, H100_SMS, a_vec)
                     if c.kernel == "gemv"]
            # A B of one column has both strides 1: row-major to auto. 5-8 rows: float4s alone.
            assert cands or not b_k or (m > 4 and not b_vec)
            for c in cands:
                with forced_plan(*c):
                    check_tier("auto", a, b, alpha=-1.5)
                    if batch is None:
                        check_tier("auto", a, b, torch.randn(n, device="cuda"), alpha=0.5, beta=2.0)
    # float4s of an aligned W with an A off its alignment (an offset and an odd leading dimension).
    for m, n, k in [(1, 130, 300), (1, 9, 1028), (3, 130, 300), (4, 9, 1028), (7, 130, 300), (8, 9, 1028)]:
        a = operand(m, k, "cuda", "row", pad=1, offset=1)
        b = operand(k, n, "cuda", "col")
        for cols in _C.gemv_columns(m, True):
            with forced_plan("gemv", 1 if m == 1 else 4 if m <= 4 else 8, cols, 4, 1, k):
                check_tier("auto", a, b, alpha=0.5)
                check_tier("auto", a, b, torch.randn(n, device="cuda"), alpha=0.5, beta=2.0)
    # 5-8 rows on float4s where K is not a multiple of 4 and W's and A's lines are padded to
    # 16 bytes: the steps inside K run unchecked, the last one's elements checked
    # (gemv_accumulate_whole), on blocks of 8 columns and, fewer than the SMs, of 4.
    for m, n, k in [(5, 130, 1023), (8, 2113, 4097), (7, 9, 3), (6, 257, 7), (8, 1500, 1025)]:
        a = operand(m, k, "cuda", "row", pad=(-k) % 4)
        b = operand(k, n, "cuda", "col", pad=(-k) % 4)
        with forced_plan("gemv", 8, 8, 4, 1, k):
            check_tier("auto", a, b, alpha=0.5)
            check_tier("auto", a, b, torch.randn(n, device="cuda"), alpha=0.5, beta=2.0)
    # One row's float4s on W^T's lines realigned: each start off 16 bytes (pitch a multiple of
    # 4, offsets 1-3), half of them (pitch 2 mod 4) or each in turn (odd pitch), with A's row
    # aligned, not, or along m, a batch whose stride moves the starts, and K shorter than the
    # distance to the first boundary.
    for n, k, pad, offset in [(131, 300, 0, 1), (67, 301, 3, 2), (130, 1026, 2, 3), (2113, 999, 0, 0), (9, 2, 1, 3),
                              (1031, 4097, 1, 1), (257, 3, 0, 2), (1300, 1030, 0, 0), (1100, 2051, 0, 1)]:
        for batch in (None, 3):
            b = operand(k, n, "cuda", "col", pad=pad, offset=offset, batch=batch)
            for a_layout, a_pad, a_offset in (("row", (-k) % 4, 0), ("row", 1, 1), ("col", 1, 2)):
                a = operand(1, k, "cuda", a_layout, pad=a_pad, offset=a_offset, batch=batch)
                for cols in _C.gemv_columns(1, True):
                    with forced_plan("gemv", 1, cols, 4, 1, k):
                        check_tier("auto", a, b, alpha=0.5)
                        if batch is None:
                            check_tier("auto", a, b, torch.randn(1, n, device="cuda"), alpha=0.5, beta=2.0)


@needs_cuda
@needs_cutlass
def test_a_gemv_plan_runs_the_kernel_of_its_k():
    # A float4 plan of 5-8 rows runs its build's 8 lanes on 2 columns each at any K where its
    # blocks fill the SMs, on the whole-step kernel where A's rows are aligned lines.
    for m, n, k in [(6, 4096, 4096), (8, 2113, 1028), (5, 1500, 300)]:
        a, b = _operands(m, n, k, "NT")
        with forced_plan("gemv", 8, 8, 4, 1, k):
            names = kernels_run(lambda: gemmtiles.sgemm(a, b, tier="auto"))
            check_tier("auto", a, b, alpha=0.5)
        # 8 lanes on 2 columns each, the whole-step kernel (A's rows aligned)
        assert any("gemv_kmajor_kernel<8, 2, 4, 8, 2, false, true>" in x for x in names), (m, n, k, names)
    # Fewer blocks of 8 columns than the SMs: kGemvFew's 16 lanes on 2 columns each, whole-step,
    # on a K of whole rounds of the block's warps (512 elements) and on one 4 past them.
    for m, n, k in [(5, 130, 1024), (7, 257, 1028)]:
        a, b = _operands(m, n, k, "NT")
        with forced_plan("gemv", 8, 8, 4, 1, k):
            names = kernels_run(lambda: gemmtiles.sgemm(a, b, tier="auto"))
            check_tier("auto", a, b, alpha=0.5)
        assert any("gemv_kmajor_kernel<8, 2, 4, 16, 2, false, true>" in x for x in names), (m, n, k, names)
    # A batch: one A for every W (a batch stride of 0) keeps the whole-step kernel; entries of A
    # 2 floats apart beyond their rows (every other entry's rows off 16 bytes) take the checked
    # kernel.
    m, n, k, batch = 6, 1500, 1028, 3
    b = operand(k, n, "cuda", "col", batch=batch)
    apart = torch.randn(batch * (m * k + 2), device="cuda").as_strided((batch, m, k), (m * k + 2, k, 1))
    for a, kernel in ((operand(m, k, "cuda", "row"), "<8, 2, 4, 8, 2, false, true>"),
                      (apart, "<8, 2, 4, 8, 2, false, false>")):
        with forced_plan("gemv", 8, 8, 4, 1, k):
            names = kernels_run(lambda: gemmtiles.sgemm(a, b, tier="auto"))
            check_tier("auto", a, b, alpha=0.5)
        assert any("gemv_kmajor_kernel" + kernel in x for x in names), (a.stride(), names)
    # A float4 plan of 1 or 2-4 rows, of either width it names, runs groups of 4 lanes along k
    # below a K of 512 (blocks of 32 columns for one row, 16 for 2-4: NB 4 and 2) and its
    # build's 32 lanes on its own width from 512 on: one row's W^T realigned on an odd K, a
    # batch with a W per entry, fewer columns than a block.
    for m, n, k, batch in [(1, 700, 300, None), (1, 700, 301, None), (3, 700, 300, 2), (4, 70, 508, None),
                           (2, 9, 20, None), (1, 700, 512, None), (3, 700, 516, 2)]:
        a, b = _operands(m, n, k, "NT", batch=batch)
        mt = 1 if m == 1 else 4
        for cols in _C.gemv_columns(m, True):
            with forced_plan("gemv", mt, cols, 4, 1, k):
                names = kernels_run(lambda: gemmtiles.sgemm(a, b, tier="auto"))
                check_tier("auto", a, b, alpha=0.5)
            nb, lanes = ((4 if m == 1 else 2), 4) if k < 512 else (cols, 32)
            built = f"gemv_kmajor_kernel<{mt}, {nb}, 4, {lanes}, "
            assert any(built in x for x in names), (m, n, k, cols, names)


def _c_operand(c_shape, m, n):
    return {"full": lambda: torch.randn(m, n, device="cuda"),
            "sliced": lambda: torch.randn(m, n + 7, device="cuda")[:, 3:-4],
            "row": lambda: torch.randn(n, device="cuda"), "col": lambda: torch.randn(m, 1, device="cuda"),
            "scalar": lambda: torch.randn((), device="cuda"),
            "strided": lambda: torch.randn(n, m, device="cuda").t()}[c_shape]()


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("c_shape", ["full", "sliced", "row", "col", "scalar", "strided"])
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_auto_epilogue_on_its_own_plan(c_shape, beta):
    for m, n, k in [(300, 260, 77), (2000, 1500, 700), (5, 3000, 900)]:
        a = operand(m, k, "cuda", "col")
        b = operand(k, n, "cuda", "row")
        c = _c_operand(c_shape, m, n)
        if beta == 0.0:
            c = c.fill_(float("nan"))  # never read
        out = check_tier("auto", a, b, c, alpha=2.0, beta=beta)
        assert not out.isnan().any()


@contextlib.contextmanager
def _no_table():
    # No per-shape entries, and the shipped model's parameters as they are (not scaled to this
    # GPU's clocks: scaled_exact_model), which _planned weighs.
    device = torch.cuda.current_device()
    line = f"model exact {_C.exact_model_layout()} " + " ".join(f"{x:.17g}" for x in _C.exact_model())
    _C.set_auto_table(device, line, "test_cutlass: the shipped model, no per-shape entries")
    try:
        yield
    finally:
        _C.set_auto_table(device, None)


def _planned(a, b):
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    a_k, b_k = a.stride(-1) == 1, b.stride(-1) != 1
    batch = a.shape[0] if a.dim() == 3 else 1
    b_vec = (b.stride(-2) if not b_k else b.stride(-1)) % 4 == 0 and b.data_ptr() % 16 == 0
    return _C.auto_plan(a.shape[-2], b.shape[-1], a.shape[-1], batch, b_k, b_vec, sms, a_k, None, True, True)


# Problems the model gives each kind of candidate on an H100-class GPU (pinned: the shipped
# model, no table), each layout; the last two, split tiles where the heuristic's plans would
# copy A transposed first (1040 x 5644 x 5971 NN) or run the last 8 columns apart (1034 x 2824 x
# 2264 NN and NT): the model's plan runs alone.
REGIONS = [(4, 4096, 4096), (8, 4096, 4096), (64, 64, 16384), (2048, 2048, 2048), (300, 5000, 700), (5000, 300, 4000),
           (2048, 5504, 2048), (1040, 5644, 5971), (1034, 2824, 2264)]


@needs_cuda
@needs_cutlass
def test_a_forced_plan_the_problem_does_not_take_runs_autos_own():
    # No crash, no wrong answer: auto's own plan runs, and the refusal is reported.
    a = operand(64, 64, "cuda")
    b = operand(64, 64, "cuda")
    a_col = operand(64, 64, "cuda", "col")
    # A tile not built; a built tile on warps it is not built on; B copied where B is not
    # K-major; A copied where A is not; a split tile of rows not built.
    for plan, x in [(("cutlass", 256, 128, 8), a), (("cutlass", 32, 32, 4), a), (("cutlass_b_copied", 128, 256, 8), a),
                    (("cutlass_a_copied", 128, 256, 8), a_col), (("split_tile", 16, 128, 1), a)]:
        _C.force_auto_plan(*plan, 1, 0)
        try:
            check_tier("auto", x, b)
            assert _C.forced_plan_refused(), plan
        finally:
            _C.force_auto_plan()
        assert not _C.forced_plan_refused()


@needs_cuda
@needs_cutlass
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("m,n,k", REGIONS)
def test_the_kernel_planned_is_the_kernel_that_runs(layout, m, n, k):
    a, b = _operands(m, n, k, layout)
    plan = _planned(a, b)
    with _no_table():
        check_tier("auto", a, b)
        names = kernels_run(lambda: torch.ops.gemmtiles.auto(a, b))
    if plan.kernel.startswith("skinny"):
        assert any("skinny" in x for x in names), (plan, names)
        assert not any("cutlass" in x for x in names), (plan, names)
    elif plan.kernel == "gemv":
        # The build of the plan's rows and loads, on its block width (the 1- and 2-4-row float4
        # builds' kernel follows K, the 5-8-row build's its blocks: gemv_kernel): the kernel's MT, NB
        # (columns per group of lanes) and W.
        cols, lanes, blocks = _C.gemv_kernel(m, n, k, 1, plan.w == 4, torch.cuda.get_device_properties(0).multi_processor_count)
        cols = plan.nw if lanes == 32 else cols  # a build of 32 lanes runs the plan's width
        built = f"gemv_kmajor_kernel<{plan.mt}, {cols * lanes // 32}, {plan.w}, {lanes}, "
        assert any(built in x for x in names), (plan, names)
        assert not any("cutlass" in x or "skinny" in x for x in names), (plan, names)
    elif plan.kernel == "split_tile":  # gemmtiles' own tiles: the pipelined kernel or warptile's
        assert any("async_tile" in x or "warptile" in x for x in names), (plan, names)
        assert not any("cutlass" in x or "transpose" in x or "skinny" in x for x in names), (plan, names)
    else:
        assert any("cutlass" in x for x in names), (plan, names)
        assert any("transpose" in x for x in names) == plan.kernel.endswith("_copied"), (plan, names)


_PARAMS = len(_C.exact_model())
_TAG = f"model exact {_C.exact_model_layout()} "


# The GPU the shipped model was fitted on (scaled_exact_model, exact_model.h): SM clock, DRAM clock
# (kHz) and bus width (bits) of the H100 SXM.
_H100_CLOCKS = (1980000, 2619000, 5120)


def _scaled_parts(params):
    """The indices of the parameters scaled_exact_model (exact_model.h) scales by the DRAM's rate
    and by the SM clock: DRAM traffic; the SMs' work."""
    g0 = len(params) - exact_fit.GEMV
    c0 = g0 - exact_fit.COPY
    s0 = c0 - exact_fit.SKINNY
    dram = {4, s0 + 1, c0 + 1, g0 + 1, g0 + 5}  # operands' bytes, B streamed by skinny and GEMV, copies
    # split blocks per SM, the split tiles' edge iterations, every tile's parameters, the
    # streaming excess (the loads in flight an SM holds)
    sm = {*range(5, s0), s0 + 2, s0 + 5, s0 + 6, s0 + 7, s0 + 8, g0 + 2, g0 + 3, g0 + 4, g0 + 6, g0 + 7}
    return dram, sm


def test_the_model_scales_to_a_gpus_dram_and_sm_clock():
    fitted = _C.exact_model()
    assert _C.exact_model(*_H100_CLOCKS) == pytest.approx(fitted)  # the GPU it was fitted on
    assert _C.exact_model(0, 0, 0) == pytest.approx(fitted)         # unknown: as fitted
    dram, sm = _scaled_parts(fitted)
    assert not dram & sm
    # Twice the DRAM rate (the bus twice as wide): DRAM traffic's microseconds halve, the rest stay.
    wide = _C.exact_model(_H100_CLOCKS[0], _H100_CLOCKS[1], 2 * _H100_CLOCKS[2])
    assert wide == pytest.approx([x / 2 if i in dram else x for i, x in enumerate(fitted)], rel=1e-12, abs=0)
    # Half the SM clock: the SMs' work takes twice as long; launches, fix-ups, partial
    # products and DRAM traffic do not.
    slow = _C.exact_model(_H100_CLOCKS[0] / 2, *_H100_CLOCKS[1:])
    assert slow == pytest.approx([2 * x if i in sm else x for i, x in enumerate(fitted)], rel=1e-12, abs=0)


def test_gpu_model_is_the_gpus_table_line_or_the_fit_scaled_to_its_clocks(monkeypatch, tmp_path):
    # What the partial fits hold and the tools estimate by: the GPU's table's own 'model exact'
    # line where it has one, else the shipped fit scaled to the GPU's clocks (as auto.cu does);
    # python -m gemmtiles.info says which.
    from gemmtiles import _tables, info

    class Props:
        clock_rate, memory_clock_rate, memory_bus_width, multi_processor_count = 1980000, 3201000, 6016, 132

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "a GPU nobody tuned")
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d=None: Props())
    monkeypatch.setattr(_tables, "find", lambda c, name: None)
    scaled = _C.exact_model(1980000, 3201000, 6016)
    assert scaled != pytest.approx(_C.exact_model())
    assert exact_fit.gpu_model() == pytest.approx(scaled, rel=1e-15)
    assert "DRAM traffic x0.70 and SM work x1.00" in info._exact_model(0, None)
    params = [1.5 * x for x in _C.exact_model()]
    table = tmp_path / "table.txt"
    table.write_text("NN 1 4096 4096 skinny 0 64\n" + exact_fit.model_line(params, digits=17) + "   # fitted here\n")
    monkeypatch.setattr(_tables, "find", lambda c, name: table)
    assert exact_fit.gpu_model() == pytest.approx(params, rel=1e-15)
    assert "the table's own fit" in info._exact_model(0, table)
    # Estimates by those parameters: each candidate's features times them.
    by_table = exact_fit.candidates(16, 4096, 4096, 1, True, True, True, H100_SMS, True, params)
    shipped = _C.exact_candidates(16, 4096, 4096, 1, True, True, True, H100_SMS, True)
    assert [tuple(p) for p, _ in by_table] == [tuple(p) for p, _ in shipped]
    assert [e for _, e in by_table] == pytest.approx([1.5 * e for _, e in shipped], rel=1e-9)
    # The same where the operands' alignment prices the split tiles' edge blocks.
    for a_vec, b_vec in ((False, True), (True, False)):
        by_table = exact_fit.candidates(64, 4096, 4096, 1, True, False, b_vec, H100_SMS, a_vec, params)
        shipped = _C.exact_candidates(64, 4096, 4096, 1, True, False, b_vec, H100_SMS, a_vec)
        assert [e for _, e in by_table] == pytest.approx([1.5 * e for _, e in shipped], rel=1e-9)


def test_more_dram_bandwidth_moves_few_rows_to_the_kernels_that_stream_w():
    # 16 rows against a 4096 x 4096 W^T: reading W bounds the skinny kernel, less so CUTLASS's
    # tiles. On the fitted GPU the model gives CUTLASS's tile; at 1.5 times its DRAM rate, the
    # skinny kernel.
    line = lambda p: f"model exact {_C.exact_model_layout()} " + " ".join(f"{x:.17g}" for x in p)  # noqa: E731
    args = (16, 4096, 4096, 1, True, True, H100_SMS, True)
    assert _C.auto_plan(*args, line(_C.exact_model()), True, True).kernel == "cutlass"
    faster = _C.exact_model(_H100_CLOCKS[0], _H100_CLOCKS[1], 1.5 * _H100_CLOCKS[2])
    assert _C.auto_plan(*args, line(faster), True, True).kernel.startswith("skinny")


def test_a_tables_exact_model_line_sets_the_model():
    params = _C.exact_model()
    line = lambda p: _TAG + " ".join(f"{x:.9g}" for x in p)  # noqa: E731
    args = (4, 4096, 4096, 1, False, True, H100_SMS, True)  # x @ W: the row-major-B skinny kernel's
    assert _C.auto_plan(*args, line(params), True, True).kernel.startswith("skinny")
    costly = list(params)
    costly[len(params) - exact_fit.GEMV - exact_fit.COPY - exact_fit.SKINNY] = 1e6  # the skinny kernels' launch
    assert not _C.auto_plan(*args, line(costly), True, True).kernel.startswith("skinny")
    assert tuple(_C.auto_plan(*args, None, True, True)) == tuple(_C.auto_plan(*args, line(params), True, True))
    # The line the fit writes parses.
    assert _C.auto_plan(*args, exact_fit.model_line(params), True, True).kernel.startswith("skinny")
    # The GEMV kernel's parameters: its launch made costly, a one-row x @ W^T runs another.
    gemv = (1, 4096, 4096, 1, True, True, H100_SMS, True)
    assert _C.auto_plan(*gemv, line(params), True, True).kernel == "gemv"
    costly = list(params)
    costly[len(params) - exact_fit.GEMV] = 1e6
    assert _C.auto_plan(*gemv, line(costly), True, True).kernel != "gemv"


def test_an_exact_model_line_of_other_features_is_refused():
    # A line without the feature layout's name (gemmtiles before the per-operand model wrote
    # bare numbers), or with an earlier layout's (per-operand: before the skinny kernels' steps;
    # per-operand-skinny-steps: before the GEMV kernel; per-operand-skinny-steps-gemv: before the
    # row-major-B skinny kernel's steps on float4s had their own parameter;
    # per-operand-skinny-ring-steps-gemv-tile32w2-edges: before the GEMV kernel's 5-8-row build
    # had its own rates; per-operand-skinny-ring-steps-gemv-rows8-tile32w2-edges: before the
    # row-major-B kernel's steps on single floats counted its rows in flight;
    # per-operand-skinny-ring-steps-in-flight-gemv-rows8-tile32w2-edges: before the builds'
    # streaming excess; ...-edges-stream-excess: before the column-major-B kernel's staged
    # single-float steps counted twice), would be read with another meaning: refused, naming
    # the refit.
    for layout in ["", "per-layout ", "per-operand ", "per-operand-skinny-steps ", "per-operand-skinny-steps-gemv ",
                   "per-operand-skinny-ring-steps-gemv-tile32w2-edges ",
                   "per-operand-skinny-ring-steps-gemv-rows8-tile32w2-edges ",
                   "per-operand-skinny-ring-steps-in-flight-gemv-rows8-tile32w2-edges ",
                   "per-operand-skinny-ring-steps-in-flight-gemv-rows8-tile32w2-edges-stream-excess "]:
        text = "model exact " + layout + " ".join(["1"] * _PARAMS)
        with pytest.raises(ValueError, match="refit"):
            _C.auto_plan(4, 4096, 4096, 1, True, True, H100_SMS, True, text, True, True)


@pytest.mark.parametrize("text", [_TAG + "1 2 3", _TAG + " ".join(["1"] * (_PARAMS - 1) + ["-1"]),
                                  _TAG + " ".join(["x"] * _PARAMS),
                                  _TAG + " ".join(["1"] * (_PARAMS + 1)), "model exact"])
def test_exact_model_lines_that_do_not_parse(text):
    with pytest.raises(ValueError, match="model exact"):
        _C.auto_plan(4, 4096, 4096, 1, True, True, H100_SMS, True, text, True, True)
