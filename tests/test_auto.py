"""The auto tier: which kernel it picks for a shape (auto_plan, no timing), that its split-K
paths give the same bits on every run, and that each of its paths is right on edge shapes."""

from __future__ import annotations

import itertools
import re

import pytest
import torch

from gemmtiles import bench
from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags, _layout_flags
from gemmtiles.testing import check_tier, kernels_run, needs_cuda, operand
from gemmtiles.tune import _cutlass_here

H100_SMS = 132
# Where auto plans by its cost model (CUTLASS's kernels built, an sm_80+ GPU), which copies
# nothing before a plan; elsewhere its heuristic, whose plans may copy an operand first.
MODEL_PLANS = _cutlass_here()


@pytest.mark.parametrize(
    "m,n,k,batch,b_kmajor,kernel,mt",
    [
        (1, 4096, 4096, 1, True, "skinny_kmajor", 4),
        (8, 4096, 4096, 1, False, "skinny_nmajor", 8),
        (8, 4096, 4096, 5, False, "skinny_nmajor", 8),
        (9, 11008, 4096, 1, True, "skinny_kmajor", 16),  # W^T: skinny up to 16 rows
        (16, 4096, 4096, 3, True, "skinny_kmajor", 16),
        (16, 4096, 4096, 1, False, "skinny_nmajor", 16),  # B's rows float4s: skinny up to 16 rows
        (17, 11008, 4096, 1, True, "split_tile", 32),
        (32, 4096, 11008, 1, True, "split_tile", 32),
        (33, 4096, 4096, 1, True, "split_tile", 64),
        (96, 4096, 4096, 1, False, "split_tile", 32),  # three 32-row tiles waste nothing
        (128, 4096, 4096, 1, True, "split_tile", 128),
        (192, 11008, 4096, 1, True, "split_tile", 64),
        (512, 4096, 4096, 1, False, "split_tile", 128),
        (2048, 4096, 4096, 1, False, "split_tile", 128),  # the pipelined tile, K whole
        (2049, 11008, 4096, 1, True, "split_tile", 128),  # past the 32- and 64-row tiles' rows
        (2049, 11008, 4096, 1, False, "split_tile", 128),  # NN too: the pipelined tile, K whole
        (4095, 4097, 4093, 1, False, "warptile", 0),  # B's rows not whole float4s: warptile
        (64, 4096, 4096, 2, False, "warptile", 0),  # batched: tiles enough
        (4, 64, 64, 70000, False, "warptile", 0),  # batch past the grid's z limit
    ],
)
def test_plan_picks_the_kernel(m, n, k, batch, b_kmajor, kernel, mt):
    got, got_mt, nw, w, splits, k_slice, _ = _C.auto_plan(m, n, k, batch, b_kmajor, True, H100_SMS)
    assert (got, got_mt) == (kernel, mt)
    if kernel.startswith("skinny"):
        # K is covered exactly by whole slices of a multiple of 16.
        assert k_slice % 16 == 0 and (splits - 1) * k_slice < k <= splits * k_slice
        assert w == 4 and _C.auto_plan(m, n, k, batch, b_kmajor, False, H100_SMS)[3] == 1
    elif kernel == "split_tile":
        # Whole 8-deep slices, so a row-major A's slices keep their float4 alignment.
        assert k_slice % 8 == 0 and (splits - 1) * k_slice < k <= splits * k_slice
        assert nw == 128  # 32 x 128, 64 x 128, or the pipelined 128 x 128


def test_plan_of_an_empty_product():
    # The op returns before planning an empty output; the planner itself answers too (no
    # division by the zero blocks of an empty output).
    for m, n, k, batch in [(1, 0, 4096, 1), (0, 4096, 4096, 1), (4, 4096, 4096, 0), (200, 0, 64, 1), (1, 4096, 0, 1)]:
        for b_kmajor in (False, True):
            assert _C.auto_plan(m, n, k, batch, b_kmajor, True, H100_SMS)[0] == "warptile"


def _plan(m, n, k, a_kmajor, a_vec, b_kmajor, b_vec):
    return _C.auto_plan(m, n, k, 1, b_kmajor, b_vec, H100_SMS, a_kmajor, None, a_vec)


def test_plan_takes_the_pipelined_tile_where_the_operands_allow():
    # It copies a K-major operand 4 bytes at a time (any leading dimension) and an M-major
    # one 16 bytes at a time (rows 16-byte aligned). Otherwise: warptile's 128 x 256 tile
    # with K split for row-major A, warptile itself for column-major A.
    assert _plan(512, 4096, 4096, True, False, True, False)[:3] == ("split_tile", 128, 128)
    assert _plan(512, 4096, 4096, False, True, False, True)[:3] == ("split_tile", 128, 128)
    # At least one tile along M and N (its last tile is moved back to end at the edge).
    assert _plan(128, 128, 4096, False, True, True, True)[:3] == ("split_tile", 128, 128)
    assert _plan(127, 4096, 4096, False, True, True, True)[0] == "warptile"
    assert _plan(4096, 127, 4096, True, True, True, True)[0] == "warptile"
    assert _plan(512, 4096, 4096, True, True, False, False)[:3] == ("split_tile", 128, 256)
    assert _plan(2048, 4096, 4096, True, True, False, False)[0] == "warptile"  # 128 x 256, no split
    assert _plan(512, 4096, 4096, False, False, True, True)[0] == "warptile"
    assert _plan(512, 4096, 4096, False, True, False, False)[0] == "warptile"
    # An M-major operand in whole runs of 4 only: N = 4094 against a row-major B, M = 510
    # for a column-major A.
    assert _plan(512, 4094, 4096, True, True, False, True)[:3] == ("split_tile", 128, 256)
    assert _plan(510, 4096, 4096, False, True, True, True)[0] == "warptile"
    assert _plan(510, 4094, 4096, True, True, True, True)[:3] == ("split_tile", 128, 128)
    # 64 rows of a row-major A: the 64-row tile; of a column-major A warptile, since the 32-
    # and 64-row tiles read A row-major and the 128-row one needs 128 rows.
    assert _plan(64, 4096, 4096, True, True, True, True)[:2] == ("split_tile", 64)
    assert _plan(64, 4096, 4096, False, True, True, True)[0] == "warptile"
    # More rows than one launch of 128-row blocks covers (65535 along the grid's y): warptile,
    # which launches them in parts.
    assert _plan(65535 * 128, 128, 64, True, True, True, True)[:3] == ("split_tile", 128, 128)
    assert _plan(65535 * 128 + 1, 128, 64, True, True, True, True)[0] == "warptile"
    # Past 2048 rows: every layout on the pipelined tile.
    for a_kmajor, b_kmajor in [(True, False), (True, True), (False, False), (False, True)]:
        assert _plan(4096, 4096, 4096, a_kmajor, True, b_kmajor, True)[:3] == ("split_tile", 128, 128)


@pytest.mark.parametrize(
    "m,n,k,splits",
    [
        (32, 4096, 4096, 24),  # 32 tiles on 6 x 132 slots: one wave of 768 blocks
        (128, 4096, 4096, 8),  # 32 tiles of 128 x 128, two blocks per SM: 8 splits fill 256
        (256, 11008, 4096, 3),  # 172 tiles of 128 x 128: 3 splits, two waves of 1368-deep slices
        (512, 4096, 4096, 2),
        (64, 300, 100, 1),  # K too short to split
        # 344 tiles on 264 slots: K whole, since the 80 tiles past the first wave run on 3
        # slices of K (the launch's split last wave) — three slices of all would be 4 waves
        (1024, 5504, 2048, 1), (512, 11008, 4096, 1),
    ],
)
def test_plan_splits_the_tiles_to_fill_the_gpu(m, n, k, splits):
    assert _C.auto_plan(m, n, k, 1, True, True, H100_SMS)[4] == splits


def test_plan_splits_k_to_fill_the_gpu():
    # 4096 columns in 64-column blocks (W^T, float4s: the async kernel) is 64 blocks: K is
    # split in 4 so that 256 blocks fill 2 per SM once (5 splits would leave a partial second
    # wave); single floats, 32-column blocks, split K in 2.
    *_, splits, k_slice, _ = _C.auto_plan(8, 4096, 4096, 1, True, True, H100_SMS)
    assert splits == 4 and k_slice == 1024
    *_, splits, k_slice, _ = _C.auto_plan(8, 4096, 4095, 1, True, False, H100_SMS)
    assert splits == 2 and k_slice == 2048
    # Row-major B, 128 columns a block (float4s) and 8 slices of K in it: 32 blocks, 8 along K
    # fill 2 per SM once (64 slices of 64); 86 blocks of 11008 columns take 3 along K (24
    # slices of 176, whole multiples of 16). 9 blocks of 1028 columns fill at most 207 of 264
    # slots (23 along K, 16 rows a slice at K = 3000), so single floats take it: 33 blocks of
    # 32 columns, 8 along K fill all 264 (63 slices of 48).
    *_, splits, k_slice, _ = _C.auto_plan(1, 4096, 4096, 1, False, True, H100_SMS)
    assert splits == 64 and k_slice == 64
    assert _C.auto_plan(8, 11008, 4096, 1, False, True, H100_SMS)[4:6] == (24, 176)
    assert _C.auto_plan(5, 1028, 3000, 1, False, True, H100_SMS)[3:6] == (1, 63, 48)
    # Row-major B not float4: single floats, 32 columns a block, 2 along K fill 256 of 264
    # slots (16 slices of 256), up to 16 rows (the cost model weighs the ring's single-float
    # copies too; the heuristic, unpriced, does not).
    assert _C.auto_plan(1, 4096, 4096, 1, False, False, H100_SMS)[2:6] == (1, 1, 16, 256)
    assert _C.auto_plan(16, 4096, 4096, 1, False, False, H100_SMS)[2:6] == (1, 1, 16, 256)
    # 9-16 rows of a float4 row-major B: one block per SM, so 4 blocks along K fill 128 of
    # 132 slots at 4096 columns, 3 make two waves of 258 at 11008 (24 slices of 176).
    assert _C.auto_plan(16, 4096, 4096, 1, False, True, H100_SMS)[4:6] == (32, 128)
    assert _C.auto_plan(12, 11008, 4096, 1, False, True, H100_SMS)[4:6] == (24, 176)
    # Enough blocks along N: K stays whole (no workspace, no reduction pass).
    assert _C.auto_plan(8, 20000, 4096, 1, True, True, H100_SMS)[4] == 1
    # 16 rows of W^T: 128 columns a block, two blocks per SM (float4s, the async kernel): 32
    # blocks, 8 splits fill 256.
    *_, splits, k_slice, _ = _C.auto_plan(16, 4096, 4096, 1, True, True, H100_SMS)
    assert splits == 8 and k_slice == 512


CUDA_SHAPES = [
    # m, n, k, b layout: every skinny configuration, split and unsplit, edges off 32 and 256
    (1, 4099, 1031, "col"), (3, 257, 4097, "row"), (5, 20000, 100, "col"), (8, 129, 33, "row"),
    (2, 1, 1, "col"), (1, 1, 70000, "row"), (7, 3000, 255, "row"),
    # row-major B with 16-byte aligned rows (n + 1 a multiple of 4): 128 columns a block, 8
    # slices of K in it; blocks along K through the workspace, a ragged last block, K whole
    (2, 4099, 1031, "row"), (8, 131, 5000, "row"), (5, 1023, 64, "row"), (4, 255, 130, "row"),
    (16, 4099, 1031, "row"), (12, 303, 2000, "row"), (9, 127, 64, "row"),  # 9-16 rows
    # W^T up to 8 rows, B as float4: A staged, K whole and split
    (6, 8000, 1003, "col"), (3, 300, 5003, "col"),
    # W^T's 16-row skinny kernel: five chunks of A of 1024 columns (K whole), split, one column
    (9, 20000, 4100, "col"), (16, 129, 2085, "col"), (11, 1, 300, "col"), (16, 4096, 4096, "col"),
    # every split tile (32, 64, 128 rows), split and unsplit, edges off 8 and the tiles
    (13, 1000, 2049, "col"), (16, 3000, 255, "row"), (17, 77, 5000, "col"), (32, 4097, 257, "row"),
    (31, 9000, 64, "row"), (50, 515, 2003, "row"), (33, 4097, 257, "col"), (16, 1, 1, "row"),
    (130, 700, 701, "col"), (200, 1030, 3001, "row"), (300, 517, 4000, "col"),
    (2000, 3000, 3001, "row"), (64, 1032, 2001, "row"),  # 64 rows, B's rows not float4: warptile's kernel
    # rows of A and B not 16-byte aligned, output large enough for auto's heuristic to realign
    # them first (a build or GPU without CUTLASS's kernels; the cost model prices them as they are)
    (1029, 1031, 1027, "row"), (1100, 1030, 515, "col"),
]


@needs_cuda
@pytest.mark.parametrize("m,n,k,layout", CUDA_SHAPES, ids=str)
def test_skinny_paths(m, n, k, layout):
    a = operand(m, k, "cuda", pad=3, offset=1)
    b = operand(k, n, "cuda", layout, pad=1)
    c = torch.randn(n, device="cuda")
    check_tier("auto", a, b, c, 0.5, -2.0)
    check_tier("auto", a, b)


# The 64-row split tile on the pipelined kernel (row-major A; B K-major, or M-major with its
# rows 16-byte aligned): split and whole, K ending mid-slice and below the three stages, the
# last tile moved back along M (190 rows) or N (129 columns).
ASYNC64_SHAPES = [(64, 1030, 3001, "col"), (190, 1000, 517, "row"), (190, 1000, 517, "col"), (64, 300, 37, "row"),
                  (64, 1032, 2001, "row"), (64, 129, 300, "col"), (64, 300, 5, "row")]


@needs_cuda
@pytest.mark.parametrize("m,n,k,layout", ASYNC64_SHAPES, ids=str)
def test_pipelined_64_row_tile(m, n, k, layout):
    assert _C.auto_plan(m, n, k, 1, layout == "col", True, H100_SMS)[:3] == ("split_tile", 64, 128)
    a = operand(m, k, "cuda", pad=3, offset=1)
    b = operand(k, n, "cuda", layout)
    check_tier("auto", a, b, torch.randn(n, device="cuda"), 0.5, -2.0)
    check_tier("auto", a, b, torch.randn(m, n, device="cuda"), 1.0, 1.0)
    check_tier("auto", a, b)


# The pipelined 128 x 128 tile: every layout of A and B, K ending mid-slice and mid-float4,
# split and whole, edges off the tile (its last tile moved back over the one before, by 1 to
# 127 rows or columns; a K-major B's by a count off 4, which the float4 stores must not
# assume), one tile exactly, past 2048 rows; M-major operands with aligned rows (M, N
# multiples of 4), K-major ones with any.
ASYNC_SHAPES = [
    (250, 130, 37, "row", "col"), (500, 1036, 3001, "col", "row"), (1100, 260, 515, "col", "col"),
    (383, 4100, 1000, "row", "row"), (2300, 700, 300, "row", "col"), (256, 132, 4103, "col", "row"),
    (251, 131, 1000, "row", "col"), (132, 129, 77, "col", "col"), (128, 128, 8, "col", "col"),
    (132, 260, 9, "col", "row"), (255, 383, 2049, "row", "col"),
    # NN (four stages): K shorter than the stages in flight, and past 2048 rows
    (128, 128, 5, "row", "row"), (2100, 260, 37, "row", "row"),
    # Slices of K added in their cluster with column-major A (the heuristic's 3 and 2 slices)
    (836, 832, 450, "col", "row"), (1000, 1056, 301, "col", "col"),
    # K whole on more tiles than whole waves: the full waves' columns, then the rest with K
    # split, through the workspace (80 tiles on 3 slices; also with the rest's last tile moved
    # back, off a multiple of 4), in clusters (120 tiles on 2, 17 on 8)
    (1024, 5504, 200, "row", "col"), (1024, 5504, 200, "col", "row"), (1000, 5502, 200, "row", "col"),
    (1536, 4100, 200, "row", "row"), (2176, 2048, 256, "row", "col"),
    # Both M-major: whole slices, the first one starting early (K = 1, 15: one slice, fewer
    # than the stages; 17: two; K = 16, 48: no early start; 33 past one wave of blocks; split
    # and in clusters: (836, 832, 450) above)
    (128, 128, 1, "col", "row"), (132, 136, 15, "col", "row"), (260, 132, 17, "col", "row"),
    (132, 136, 16, "col", "row"), (256, 260, 48, "col", "row"), (1100, 1032, 33, "col", "row"),
]


@needs_cuda
@pytest.mark.parametrize("m,n,k,la,lb", ASYNC_SHAPES, ids=str)
def test_pipelined_tile(m, n, k, la, lb):
    # Rows of an M-major operand padded to whole float4s; K-major ones padded by 1 or 3.
    a = operand(m, k, "cuda", la, pad=(-m) % 4 if la == "col" else 1)
    b = operand(k, n, "cuda", lb, pad=(-n) % 4 if lb == "row" else 3)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    plan = _C.auto_plan(m, n, k, 1, lb == "col", lb == "row", sms, la == "row", None, True)
    assert plan[:3] == ("split_tile", 128, 128)
    check_tier("auto", a, b, torch.randn(n, device="cuda"), 0.5, -2.0)
    check_tier("auto", a, b, torch.randn(m, n, device="cuda"), 1.0, 1.0)
    check_tier("auto", a, b)


# NN with A copied M-major first (transpose_a_first): K past, at and short of whole slices;
# B's rows off 16 bytes (pad 1: realigned first, then A transposed), M past one transposing
# tile's rows. The copy (M x K floats) is allocated while the product runs.
@needs_cuda
@pytest.mark.skipif(MODEL_PLANS, reason="with CUTLASS's kernels on an sm_80+ GPU auto plans by the cost model, "
                    "which copies no A first (test_cutlass.py)")
@pytest.mark.parametrize("m,n,k,pad", [(1024, 2048, 37, 0), (2048, 2048, 32, 0), (1028, 2052, 301, 1),
                                       (1092, 2100, 7, 0)], ids=str)
def test_nn_with_a_transposed_first(m, n, k, pad):
    assert _C.transpose_a_first(m, n, k, 1, True, False, True)
    a = operand(m, k, "cuda", pad=pad)
    b = operand(k, n, "cuda", pad=pad)
    check_tier("auto", a, b, torch.randn(n, device="cuda"), 0.5, -2.0)
    check_tier("auto", a, b, torch.randn(m, n, device="cuda"), 1.0, 1.0)
    device = torch.cuda.current_device()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    out = torch.ops.gemmtiles.auto(a, b)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated(device) - before >= out.numel() * 4 + m * k * 4
    assert torch.equal(torch.ops.gemmtiles.auto(a, b), out)  # the same bits again


@pytest.mark.parametrize(
    "m,n,k,batch,a_kmajor,b_kmajor,b_vec,want",
    [
        (4096, 4096, 4096, 1, True, False, True, True),
        (1024, 2048, 4096, 1, True, False, True, True),  # the copy no larger than B
        (4096, 2048, 1024, 1, True, False, True, True),  # ... or than the output
        (4096, 2048, 4096, 1, True, False, True, False),  # larger than both
        (1020, 4096, 4096, 1, True, False, True, False),  # too few rows
        (1024, 2044, 1024, 1, True, False, True, False),  # too few columns
        (4094, 4096, 4096, 1, True, False, True, False),  # M-major rows not whole float4s
        (4096, 4096, 4096, 2, True, False, True, False),  # batched
        (4096, 4096, 4096, 1, False, False, True, False),  # A M-major already
        (4096, 4096, 4096, 1, True, True, True, False),  # NT
        (4096, 4096, 4096, 1, True, False, False, False),  # B's rows not float4s
    ],
)
def test_transpose_a_first_rule(m, n, k, batch, a_kmajor, b_kmajor, b_vec, want):
    assert _C.transpose_a_first(m, n, k, batch, a_kmajor, b_kmajor, b_vec) is want


def test_table_entry_decides_the_transposition():
    # A tuned NN entry decides within the operands' bounds, its kind `transposed` or another;
    # its plan is the heuristic's (the entry is for the launch).
    transposed = _entry_line("NN", 2048, 2048, 2048, "transposed", 0, 1)
    other = _entry_line("NN", 2048, 2048, 2048, "warptile", 0, 1)
    small = _entry_line("NN", 256, 512, 4096, "transposed", 0, 1)
    assert _C.transpose_a_first(2048, 2048, 2048, 1, True, False, True)
    assert not _C.transpose_a_first(2048, 2048, 2048, 1, True, False, True, other)
    assert _C.transpose_a_first(2048, 2048, 2048, 1, True, False, True, transposed)
    # the same bucket, M not a multiple of 4
    assert not _C.transpose_a_first(2046, 2048, 2048, 1, True, False, True, transposed)
    assert not _C.transpose_a_first(256, 512, 4096, 1, True, False, True)  # below the rule's sizes
    assert _C.transpose_a_first(256, 512, 4096, 1, True, False, True, small)  # the table says so
    wide = _entry_line("NN", 2048, 1024, 4096, "transposed", 0, 1)
    assert not _C.transpose_a_first(2048, 1024, 4096, 1, True, False, True, wide)  # a copy larger than B and out
    heuristic = _C.auto_plan(2048, 2048, 2048, 1, False, True, H100_SMS, True)
    assert _C.auto_plan(2048, 2048, 2048, 1, False, True, H100_SMS, True, transposed) == heuristic
    for line in ["NT 2048 2048 2048 transposed 0 1", "NN 2048 2048 2048 transposed 128 1",
                 "NN 2048 2048 2048 transposed 0 2"]:
        with pytest.raises(ValueError, match="line 1"):
            _C.transpose_a_first(2048, 2048, 2048, 1, True, False, True, line)


# The pipelined tile's slices of K added in their cluster (sm_90+): 2-8 slices of K = 301
# (the last one shorter, ending mid-slice), each shape more blocks than the H100's 132 SMs but
# no more clusters than it runs at once, so that the clusters are taken there; edges off the
# tile (moved back), M odd. The cluster path needs no workspace: the op allocates its output
# alone.
def _built_for_sm90():
    # Clusters need code compiled for compute capability 9.0 or newer.
    from gemmtiles import _build_info
    archs = re.split(r"[;,\s]+", getattr(_build_info, "CUDA_ARCH_LIST", None) or "")
    return any(float(a.split("+")[0].rstrip("af")) >= 9.0 for a in archs if a)


CLUSTER_SHAPES = [(2, 1000, 1056), (3, 833, 832), (4, 700, 704), (5, 600, 712), (6, 620, 540), (7, 500, 600),
                  (8, 510, 520)]


@needs_cuda
@pytest.mark.parametrize("splits,m,n", CLUSTER_SHAPES, ids=str)
@pytest.mark.parametrize("lb", ["row", "col"])
def test_pipelined_tile_split_in_clusters(splits, m, n, lb):
    k = 301
    device = torch.cuda.current_device()
    bucket = " ".join(str(_C.auto_bucket(x)) for x in (m, n, k))
    entry = f"{'NT' if lb == 'col' else 'NN'} {bucket} pipelined 128 {splits}"
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    assert _C.auto_plan(m, n, k, 1, lb == "col", True, sms, True, entry)[:5] == ("split_tile", 128, 128, 1, splits)
    a = operand(m, k, "cuda")
    b = operand(k, n, "cuda", lb)
    try:
        _C.set_auto_table(device, entry, "test")
        check_tier("auto", a, b, torch.randn(n, device="cuda"), 0.5, -2.0)
        check_tier("auto", a, b, torch.randn(m, n, device="cuda"), 1.0, 1.0)
        check_tier("auto", a, b)
        if torch.cuda.get_device_capability(device) == (9, 0) and sms == H100_SMS and _built_for_sm90():
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats(device)
            # Bytes asked of the allocator, not the blocks it gave: a cached block a little
            # larger than asked is handed out whole.
            before = torch.cuda.memory_stats(device)["requested_bytes.all.current"]
            out = torch.ops.gemmtiles.auto(a, b)
            torch.cuda.synchronize()
            # no partial products: the output alone
            assert torch.cuda.memory_stats(device)["requested_bytes.all.peak"] - before <= out.numel() * 4
            assert torch.equal(torch.ops.gemmtiles.auto(a, b), out)  # the same bits again
    finally:
        _C.set_auto_table(device, None)


@needs_cuda
@pytest.mark.parametrize("m,n,k,batch", [(16, 4096, 4096, 1), (9, 1000, 2084, 1), (5, 300, 4100, 3)])
def test_skinny_wt_aligned(m, n, k, batch):
    # nn.Linear's W^T with 16-byte aligned rows: B as float4, A staged as float4, K split
    # (3 x 5 rows make one 15-row product).
    a = operand(m, k, "cuda", batch=batch if batch > 1 else None)
    b = operand(k, n, "cuda", "col")
    check_tier("auto", a, b, torch.randn(n, device="cuda"), 0.5, -2.0)
    check_tier("auto", a, b)


@needs_cuda
def test_skinny_batched():
    a = operand(7, 300, "cuda", batch=3)
    b = operand(300, 500, "cuda", "col", batch=3)
    check_tier("auto", a, b)
    check_tier("auto", a, operand(300, 500, "cuda", batch=3))  # row-major B as float4, one block row a batch entry
    check_tier("auto", a, operand(300, 500, "cuda"))


@needs_cuda
@pytest.mark.parametrize("batch,m,layout", [(4, 2, "col"), (3, 50, "row"), (8, 130, "col"), (2, 1100, "row")])
def test_batch_sharing_b_is_one_product(batch, m, layout):
    # batch * m rows in one plan: with a bias row, a full c per entry, a c shared by the batch
    # (which keeps the batch apart), and A with padded rows (realigned where large and the
    # heuristic plans).
    a = operand(m, 515, "cuda", batch=batch)
    b = operand(515, 1030, "cuda", layout)
    check_tier("auto", a, b, torch.randn(1030, device="cuda"), 0.5, -2.0)
    check_tier("auto", a, b, torch.randn(batch, m, 1030, device="cuda"), 1.0, 1.0)
    check_tier("auto", a, b, torch.randn(m, 1030, device="cuda"), 1.0, 1.0)
    check_tier("auto", operand(m, 515, "cuda", pad=3, batch=batch), b)


@needs_cuda
@pytest.mark.parametrize("m,layout,n", [(1, "col", 4096), (8, "row", 4096), (16, "col", 4096), (32, "col", 4096),
                                        (64, "row", 4096), (128, "col", 4096), (512, "row", 4096)])
def test_split_k_is_deterministic(m, layout, n):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert _C.auto_plan(m, n, 11008, 1, layout == "col", True, sms)[4] > 1  # K is split
    a = operand(m, 11008, "cuda")
    b = operand(11008, n, "cuda", layout)
    first = torch.ops.gemmtiles.auto(a, b)
    for _ in range(3):
        assert torch.equal(torch.ops.gemmtiles.auto(a, b), first)


def _check_each_forced(plans, a, b, c):
    """auto with each plan forced in turn: the plan runs (no refusal) and the result is right,
    with c, alpha and beta."""
    for plan in plans:
        _C.force_auto_plan(*plan)
        try:
            check_tier("auto", a, b, c, alpha=0.5, beta=-1.5)
            assert not _C.forced_plan_refused(), plan
        finally:
            _C.force_auto_plan()


@pytest.mark.parametrize("layout", ["NN", "NT", "TN"])
def test_fits_charge_the_layout_auto_sees(layout):
    """exact_fit._flags, the layout and alignment the fits charge a shape's contiguous operands,
    is what auto's plan sees of them (_C.operand_layout, after prepare_gemm's strides): a
    one-row or one-column operand, strided in any layout, is read K- or N-major as its
    strides keep aligned; a batch entry's operands are aligned only where their sizes are."""
    g = torch.Generator().manual_seed(0)
    seen = set()
    for batch in (1, 3):
        for m, n, k in itertools.product((1, 2, 4, 6), (1, 3, 4), (1, 2, 4, 5)):
            a, b = bench.operands(bench.Shape(m, n, k, layout, batch=batch, bmm=batch > 1), g, torch.device("cpu"))
            flags = _C.operand_layout(a, b)
            assert _flags(layout, m, n, k, batch) == flags, (m, n, k, batch, flags)
            seen.add(flags)
    assert len(seen) >= 6, seen  # the layouts and alignments told apart


def test_operand_layout_checks_its_arguments():
    with pytest.raises(TypeError, match="operand_layout: a and b must be tensors"):
        _C.operand_layout(torch.ones(2, 2), [[1.0]])
    with pytest.raises(ValueError, match="shapes cannot be multiplied"):
        _C.operand_layout(torch.ones(2, 3), torch.ones(2, 2))
    with pytest.raises(ValueError, match="operand_layout: expected a non-empty product"):
        _C.operand_layout(torch.ones(0, 3), torch.ones(3, 2))


def _candidates(a, b, keep):
    """The plans auto weighs for a @ b (one product) whose kernel's name `keep` admits, the
    swapped plans of few columns aside (_swapped_candidates)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a_k, b_k, a_vec, b_vec = _layout_flags(a, b)
    (m, k), n = a.shape, b.shape[1]
    return [tuple(p) for p, _ in _C.exact_candidates(m, n, k, 1, a_k, b_k, b_vec, sms, a_vec)
            if keep(p[0]) and not p.swapped]


@needs_cuda
@pytest.mark.parametrize("m,n,k,layout", [(1, 643, 4241, "TN"), (3, 260, 4187, "NN"), (5, 257, 3001, "NT"),
                                          (13, 130, 2049, "NN"), (20, 300, 5003, "NT"), (45, 129, 7001, "NN"),
                                          (2, 1027, 3001, "NT"), (4, 61, 1000, "NT"), (1, 300, 517, "NT")])
def test_split_candidates_and_their_reduction_are_right(m, n, k, layout):
    # Every skinny and split-tile candidate auto weighs for the problem, forced: K in up to
    # hundreds of slices, added by the reduction's groups of splits, with c, alpha and beta.
    a = operand(m, k, "cuda", "row" if layout[0] == "N" else "col")
    b = operand(k, n, "cuda", "col" if layout[1] == "T" else "row")
    c = torch.randn(m, n, device="cuda")
    plans = _candidates(a, b, lambda kernel: kernel.startswith("skinny") or kernel == "split_tile")
    assert plans and max(p[4] for p in plans) > 1
    _check_each_forced(plans, a, b, c)


@needs_cuda
@pytest.mark.parametrize("b_pad,b_offset", [(0, 0), (1, 0), (0, 1)])
@pytest.mark.parametrize("m,n,k", [(1, 643, 4241), (1, 644, 1000), (3, 260, 4187), (9, 1023, 515), (16, 132, 2000),
                                   (5, 4099, 33), (8, 3, 700)])
def test_row_major_b_skinny_kernels_forced(m, n, k, b_pad, b_offset):
    # The row-major-B skinny kernel, forced: single floats and four columns a lane (float4
    # copies where B's rows are 16-byte aligned, a float4 cut by N among them; four single
    # floats where a row stride or the start is not); K in warps' slices of 16 rows to K
    # whole, a slice past K's end, c, alpha and beta.
    a = operand(m, k, "cuda", pad=3, offset=1)
    b = operand(k, n, "cuda", "row", pad=b_pad, offset=b_offset)
    c = torch.randn(m, n, device="cuda")
    mt = 1 if m == 1 else 4 if m <= 4 else 8 if m <= 8 else 16
    plans = []
    for k_slice in (16, 48, 256, -(-k // 16) * 16):
        plans += [("skinny_nmajor", mt, 1, w, -(-k // k_slice), k_slice) for w in (1, 4)]
    _check_each_forced(plans, a, b, c)


@needs_cuda
@pytest.mark.parametrize("n,b_pad,b_offset,singles", [(644, 0, 0, False), (643, 1, 0, False), (643, 0, 0, True),
                                                      (644, 0, 2, True), (644, 2, 0, True)])
def test_row_major_b_four_columns_a_lane_take_the_ring(n, b_pad, b_offset, singles):
    # Four columns a lane of a row-major B run through the ring of shared memory on sm_90 (whose
    # SMs hold its blocks) whatever B's alignment: float4 copies on 16-byte aligned rows (N cut
    # inside a float4 too), four single floats a lane elsewhere; never the register kernel.
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("the ring's blocks on an sm_90 SM")
    m, k = 4, 1000
    a = operand(m, k, "cuda")
    b = operand(k, n, "cuda", "row", pad=b_pad, offset=b_offset)
    _C.force_auto_plan("skinny_nmajor", 4, 1, 4, 8, 128)
    try:
        names = kernels_run(lambda: check_tier("auto", a, b))
        assert not _C.forced_plan_refused()
    finally:
        _C.force_auto_plan()
    rings = [x for x in names if "skinny_nmajor_async_kernel" in x]
    assert len(rings) == 1 and "skinny_nmajor_split_kernel" not in " ".join(names), names
    assert re.search(r"skinny_nmajor_async_kernel<4, 6, (true|false)>", rings[0]).group(1) == str(singles).lower()


# The row-major-B skinny kernel's blocks along K added in their cluster (sm_90+): 2-8 blocks
# of 8 warps' slices of 16 rows, the last slice cut by K; one row to 16, fewer rows than the
# build's (5 of 8, 12 of 16), N cut inside a block's columns, single floats and four columns a
# lane (float4 copies on aligned rows; on rows that are not, and on a batch stride that is not,
# the ring's single-float copies), a batch. Where the clusters run at once (the device's
# cluster_blocks), no workspace: the op allocates its output alone; elsewhere the workspace's
# partial products. The same bits every run.
@needs_cuda
@pytest.mark.parametrize("partials", range(2, 9))
@pytest.mark.parametrize("m,n,w,batch", [(1, 300, 1, 1), (5, 643, 1, 1), (12, 1000, 4, 1), (16, 260, 4, 1),
                                         (3, 517, 1, 3), (5, 643, 4, 1), (3, 517, 4, 3)])
def test_row_major_b_skinny_blocks_along_k_in_clusters(partials, m, n, w, batch):
    k = 16 * 8 * partials - 5
    mt = 1 if m == 1 else 4 if m <= 4 else 8 if m <= 8 else 16
    a = operand(m, k, "cuda", pad=3, offset=1, batch=batch if batch > 1 else None)
    b = operand(k, n, "cuda", "row", batch=batch if batch > 1 else None)
    plan = ("skinny_nmajor", mt, 1, w, 8 * partials, 16)
    _check_each_forced([plan], a, b, torch.randn(m, n, device="cuda"))
    device = torch.cuda.current_device()
    _, here = _C.cluster_blocks()
    blocks = -(-n // (32 * w)) * batch * partials
    if here[partials] > 0:  # clusters only of code built for sm_90+, on such a GPU
        assert torch.cuda.get_device_capability(device) >= (9, 0) and _built_for_sm90()
    in_cluster = blocks <= here[partials]
    _C.force_auto_plan(*plan)
    try:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_stats(device)["requested_bytes.all.current"]
        out = torch.ops.gemmtiles.auto(a, b)
        torch.cuda.synchronize()
        asked = torch.cuda.memory_stats(device)["requested_bytes.all.peak"] - before
        # the output alone, or with the partial products
        assert asked <= out.numel() * 4 if in_cluster else asked >= (partials + 1) * out.numel() * 4
        assert torch.equal(torch.ops.gemmtiles.auto(a, b), out)
        assert not _C.forced_plan_refused()
    finally:
        _C.force_auto_plan()


@needs_cuda
def test_cluster_blocks_on_sm90():
    # Code built for sm_90 on an sm_90 GPU runs the row-major-B kernel's clusters of every size
    # (a device query that failed, leaving every plan to the workspace, fails here), each count
    # whole clusters of one block an SM, so at most the SMs. Not the model's counts to the
    # block: they depend on how a chip's SMs fall into its GPCs.
    device = torch.cuda.current_device()
    if torch.cuda.get_device_capability(device) != (9, 0) or not _built_for_sm90():
        pytest.skip("clusters of code built for sm_90, on sm_90")
    model, here = _C.cluster_blocks()
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    assert len(here) == len(model) == 9 and here[:2] == [0, 0]
    for n in range(2, 9):
        assert n <= here[n] <= sms and here[n] % n == 0, (n, here)


@needs_cuda
@pytest.mark.parametrize("m,n,k", [(5, 643, 4240), (8, 1000, 2084), (9, 130, 516), (16, 257, 3000), (12, 3, 700),
                                   (16, 4099, 32), (7, 1000, 2085)])
def test_column_major_b_skinny_kernels_forced(m, n, k):
    # Each column-major-B skinny plan of 5-16 rows auto weighs, forced: float4s of B through
    # shared memory (where B's lines are aligned and the GPU holds the async kernel), single
    # floats through registers; K whole and in slices, c, alpha and beta.
    a = operand(m, k, "cuda", pad=3, offset=1)
    b = operand(k, n, "cuda", "col")
    plans = _candidates(a, b, lambda kernel: kernel == "skinny_kmajor")
    assert plans and {p[3] for p in plans} == ({4} if k % 4 == 0 else {1})
    _check_each_forced(plans, a, b, torch.randn(m, n, device="cuda"))


def _swapped_candidates(a, b):
    """The swapped plans auto weighs for a @ b (out^T = B^T A^T), a batch's too."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a_k, b_k, a_vec, b_vec = _layout_flags(a, b)
    m, k, n, batch = a.shape[-2], a.shape[-1], b.shape[-1], a.shape[0] if a.dim() == 3 else 1
    return [tuple(p) for p, _ in _C.exact_candidates(m, n, k, batch, a_k, b_k, b_vec, sms, a_vec) if p.swapped]


@needs_cuda
@pytest.mark.parametrize("m,n,k,layout,pad,offset", [
    (1000, 1, 300, "NT", 0, 0), (777, 3, 1025, "NN", 3, 1), (4099, 5, 67, "TN", 0, 0), (300, 8, 2049, "NT", 1, 2),
    (65, 16, 515, "NN", 0, 3), (1301, 2, 4000, "TN", 2, 0), (16, 7, 33, "NT", 0, 0), (5000, 12, 200, "TN", 0, 1),
    (3, 4, 1, "NN", 0, 0), (2, 1, 5, "TN", 0, 0), (513, 6, 700, "TT", 1, 1)])
def test_swapped_plans_of_few_columns(m, n, k, layout, pad, offset):
    # Each swapped plan auto weighs for a product of 1-16 columns (the skinny and GEMV kernels on
    # out^T = B^T A^T, writing out through its row stride), forced: A and B in each layout, A's
    # rows unaligned (pad, offset), K whole and in slices, with c (full, column-major, a bias
    # row, a column broadcast along the row), alpha and beta.
    a = operand(m, k, "cuda", "row" if layout[0] == "N" else "col", pad=pad, offset=offset)
    b = operand(k, n, "cuda", "col" if layout[1] == "T" else "row")
    plans = _swapped_candidates(a, b)
    assert plans and {p[0] for p in plans} <= {"skinny_kmajor", "skinny_nmajor", "gemv"}
    for c in (torch.randn(m, n, device="cuda"), torch.randn(n, m, device="cuda").t(), torch.randn(n, device="cuda"),
              torch.randn(m, 1, device="cuda")):
        _check_each_forced(plans, a, b, c)


@needs_cuda
@pytest.mark.parametrize("batch,a_shared", [(3, False), (5, True)])
def test_swapped_plans_of_a_batch(batch, a_shared):
    # A batch of few-column products, swapped: a B per entry, A per entry or shared (batch
    # stride 0: the swapped problem's shared B), c per entry.
    m, n, k = 515, 6, 300
    a = operand(m, k, "cuda", pad=1, batch=None if a_shared else batch)
    b = operand(k, n, "cuda", "col", batch=batch)
    a = a.expand(batch, m, k) if a_shared else a
    plans = _swapped_candidates(a, b)
    assert plans
    _check_each_forced(plans, a, b, torch.randn(batch, m, n, device="cuda"))


def test_few_columns_plan_the_swapped_product():
    # Few columns of a long A: the tiles would spend most of their columns on nothing, the
    # swapped product streams A once as the few-row kernels' B. Many columns: never swapped.
    for m, n, k, layout in ((18739, 1, 701, "NT"), (29425, 5, 512, "NN"), (13608, 7, 14245, "TN")):
        a_k, b_k, a_vec, b_vec = _flags(layout, m, n, k, 1)
        plan = _C.auto_plan(m, n, k, 1, b_k, b_vec, H100_SMS, a_k, None, a_vec, True)
        assert plan.swapped and plan.kernel in ("skinny_kmajor", "skinny_nmajor", "gemv"), (m, n, k, plan)
    for n in (17, 64, 4096):
        cands = _C.exact_candidates(4096, n, 1024, 1, True, True, True, H100_SMS, True)
        assert not any(p.swapped for p, _ in cands)
    assert any(p.swapped for p, _ in _C.exact_candidates(4096, 16, 1024, 1, True, True, True, H100_SMS, True))


def test_swapped_plans_are_priced_as_the_transposed_product():
    # A swapped plan's estimate is its kernel's on the N x M product of B^T and A^T: B^T is
    # row-major (K-major as an A) where B is K-major, A^T K-major (as a B) where A is row-major,
    # their alignments exchanged.
    for m, n, k, batch, a_k, b_k, a_vec, b_vec in ((5000, 3, 700, 1, True, True, True, False),
                                                   (900, 8, 2048, 4, False, False, False, True),
                                                   (64, 12, 301, 1, True, False, True, True)):
        swapped = [(p, us) for p, us in _C.exact_candidates(m, n, k, batch, a_k, b_k, b_vec, H100_SMS, a_vec)
                   if p.swapped]
        assert swapped
        mine = {tuple(p)[:6]: us for p, us in _C.exact_candidates(n, m, k, batch, b_k, a_k, a_vec, H100_SMS, b_vec)
                if not p.swapped}
        for p, us in swapped:
            assert us == pytest.approx(mine[tuple(p)[:6]], rel=1e-12), p


@needs_cuda
@pytest.mark.parametrize("m", [6, 16])
@pytest.mark.parametrize("k", [5, 301, 1027])
def test_column_major_b_float4s_on_a_view_shorter_than_its_lines(m, k):
    # Lines of B (its columns, along K) 16-byte aligned but K not a multiple of 4: the float4
    # plans' last float4 of a line is cut by K, on a B whose storage ends at its last line's
    # K-th element.
    n = 300
    ld = -(-k // 4) * 4
    b = torch.randn((n - 1) * ld + k, device="cuda").as_strided((k, n), (1, ld))
    a = operand(m, k, "cuda")
    plans = [p for p in _candidates(a, b, lambda kernel: kernel == "skinny_kmajor") if p[3] == 4]
    assert plans
    _check_each_forced(plans, a, b, torch.randn(m, n, device="cuda"))


@needs_cuda
@pytest.mark.parametrize("m", [1, 4, 12])
@pytest.mark.parametrize("n", [6, 130])
def test_row_major_b_float4s_on_a_view_narrower_than_its_rows(m, n):
    # Rows of B 16-byte aligned (row stride a multiple of 4) but N not: float4 plans, whose
    # last float4 is cut by N, on a B whose storage ends at its last row's N-th element.
    k = 300
    ld = -(-n // 4) * 4
    b = torch.randn((k - 1) * ld + n, device="cuda").as_strided((k, n), (ld, 1))
    a = operand(m, k, "cuda")
    c = torch.randn(m, n, device="cuda")
    mt = 1 if m == 1 else 4 if m <= 4 else 16
    _check_each_forced([("skinny_nmajor", mt, 1, 4, -(-k // s), s) for s in (16, 112, 304)], a, b, c)


# The tuned tables (python -m gemmtiles.tune): format, buckets, and that auto follows them.

def test_table_entry_decides_the_plan():
    table = "# a comment\n\nNT 32 4096 4096 split_tile 64 5   # 32x4096x4096 NT\nNN 8 4096 4096 skinny 0 7\n"
    plan = _C.auto_plan(32, 4096, 4096, 1, True, True, H100_SMS, True, table)
    assert plan[:2] == ("split_tile", 64) and plan[4] == 5 and plan[5] == 824
    # The same bucket: 30 rows round to 32, 4000 to 4096.
    assert _C.auto_plan(30, 4000, 4000, 1, True, True, H100_SMS, True, table)[:2] == ("split_tile", 64)
    assert _C.auto_plan(8, 4096, 4096, 1, False, True, H100_SMS, True, table)[4] == 7
    # Not in the table, batched, or A column-major: the heuristic.
    for args in [(32, 4096, 4096, 1, False, True), (33, 4096, 4096, 1, True, True),
                 (32, 4096, 4096, 2, True, True)]:
        assert _C.auto_plan(*args, H100_SMS, True, table) == _C.auto_plan(*args, H100_SMS)
    assert _C.auto_plan(32, 4096, 4096, 1, True, True, H100_SMS, False, table) == \
        _C.auto_plan(32, 4096, 4096, 1, True, True, H100_SMS, False)
    # 128 rows: warptile's 128 x 256 tile, or the pipelined 128 x 128 one, which takes
    # warptile's where the operands do not allow it (B's rows not float4s).
    table = "NN 256 4096 4096 split_tile 128 3\nNT 256 4096 4096 pipelined 128 5"
    assert _C.auto_plan(256, 4096, 4096, 1, False, True, H100_SMS, True, table)[:5] == ("split_tile", 128, 256, 1, 3)
    assert _C.auto_plan(256, 4096, 4096, 1, True, True, H100_SMS, True, table)[:5] == ("split_tile", 128, 128, 1, 5)
    table = "NN 256 4096 4096 pipelined 128 3"
    assert _C.auto_plan(256, 4096, 4096, 1, False, True, H100_SMS, True, table)[:5] == ("split_tile", 128, 128, 1, 3)
    assert _C.auto_plan(256, 4096, 4096, 1, False, False, H100_SMS, True, table)[:5] == ("split_tile", 128, 256, 1, 3)
    # A skinny entry names its width by the columns of B a block takes (skinny_cols).
    usual = _C.auto_plan(1, 2048, 2048, 1, True, True, H100_SMS, True, "NT 1 2048 2048 skinny 32 2")
    assert (usual.kernel, usual.nw, usual.splits) == ("skinny_kmajor", 4, 2)
    assert _C.skinny_cols(usual.kernel, usual.mt, usual.nw, usual.w) == 32
    single = _C.auto_plan(4, 4096, 4096, 1, False, True, H100_SMS, True, "NN 4 4096 4096 skinny 32 16")
    assert (single.kernel, single.w, single.splits) == ("skinny_nmajor", 1, 16)
    wide = _C.auto_plan(4, 4096, 4096, 1, False, True, H100_SMS, True, "NN 4 4096 4096 skinny 128 16")
    assert (wide.kernel, wide.w, wide.splits) == ("skinny_nmajor", 4, 16)
    assert _C.skinny_cols(wide.kernel, wide.mt, wide.nw, wide.w) == 128
    # A width the problem cannot take (32 columns a block past 8 rows of W^T, whose kernel
    # takes 128) counts as no entry. Rows of a row-major B that are not aligned take both
    # widths: N = 4095 falls in the 4096 bucket, whose entries it takes at either (40 slices as
    # skinny_plan cuts them: 37 of 112 rows).
    args = (16, 2048, 2048, 1, True, True)
    assert _C.auto_plan(*args, H100_SMS, True, "NT 16 2048 2048 skinny 32 2") == _C.auto_plan(*args, H100_SMS)
    for cols, w in ((32, 1), (128, 4)):
        entry = _C.auto_plan(4, 4095, 4096, 1, False, False, H100_SMS, True, f"NN 4 4096 4096 skinny {cols} 40")
        assert (entry.kernel, entry.w, entry.splits, entry.k_slice) == ("skinny_nmajor", w, 37, 112)
    with pytest.raises(ValueError, match=re.escape("skinny <0|32|64|128>")):
        _C.auto_plan(1, 2048, 2048, 1, True, True, H100_SMS, True, "NT 1 2048 2048 skinny 8 2")
    # An entry a problem cannot take (skinny past 16 rows) falls back to the heuristic.
    bad_fit = "NT 32 4096 4096 skinny 0 4"
    assert _C.auto_plan(32, 4096, 4096, 1, True, True, H100_SMS, True, bad_fit) == \
        _C.auto_plan(32, 4096, 4096, 1, True, True, H100_SMS)


@pytest.mark.parametrize("x,bucket", [(1, 1), (8, 8), (9, 10), (96, 96), (100, 112), (4096, 4096),
                                      (4097, 5120), (11008, 12288)])
def test_table_buckets(x, bucket):
    assert _C.auto_bucket(x) == bucket


@pytest.mark.parametrize("line", ["NN 32 4096", "TT 32 4096 4096 warptile 0 1", "NN 32 4096 4096 fast 0 1",
                                  "NN 32 4096 4096 split_tile 48 2", "NN 32 4096 4096 warptile 0 0",
                                  "NN 32 4096 4096 warptile 0 1 extra", "NN 32 4096 4096 split_tile 32 65",
                                  "NN 32 4096 4096 pipelined 64 2"])
def test_table_that_does_not_parse_names_the_line(line):
    with pytest.raises(ValueError, match=r"line 2: expected"):
        _C.auto_plan(32, 4096, 4096, 1, True, True, H100_SMS, True, "# header\n" + line)


def test_shipped_tables_hold_no_per_shape_entries():
    # A shipped table carries fitted models alone: an entry that names one shape bucket would fit
    # the shapes it was tuned on, not the user's (python -m gemmtiles.tune --shapes writes those).
    from gemmtiles import _tables

    paths = sorted(_tables.SHIPPED.glob("*.txt"))
    assert paths, "no shipped table found"
    for path in paths:
        lines = [line.split("#")[0].split() for line in path.read_text().splitlines()]
        assert all(fields[0] == "model" for fields in lines if fields), path
        # The table parses, and plans as no table does where it holds no exact model.
        assert _C.auto_plan(32, 4096, 4096, 1, False, True, H100_SMS, True, path.read_text(), True, True) == \
            _C.auto_plan(32, 4096, 4096, 1, False, True, H100_SMS, True, None, True, True)


def test_plan_needs_a_gpu_with_sms():
    with pytest.raises(ValueError, match="sms must be >= 1"):
        _C.auto_plan(64, 4096, 4096, 1, True, True, 0)


def test_tune_tunes_what_auto_runs():
    from gemmtiles.bench import Shape
    from gemmtiles.tune import tuned_shape

    # auto's heuristic runs the last 1-8 columns of a large output apart: the table decides the
    # rest. The cost model's plans (where CUTLASS's kernels run) take the output whole.
    assert tuned_shape(Shape(4095, 4097, 4093), cutlass=False) == Shape(4095, 4096, 4093)
    assert tuned_shape(Shape(4095, 4105, 4093), cutlass=False) == Shape(4095, 4105, 4093)  # 9 columns
    assert tuned_shape(Shape(512, 4097, 4093), cutlass=False) == Shape(512, 4097, 4093)  # small output
    assert tuned_shape(Shape(4095, 4097, 4093), cutlass=True) == Shape(4095, 4097, 4093)
    assert tuned_shape(Shape(4095, 4097, 4093, batch=2), cutlass=True) == Shape(8190, 4097, 4093)


def _entry_line(layout, m, n, k, kernel, rows, splits):
    keys = " ".join(str(_C.auto_bucket(x)) for x in (m, n, k))
    return f"{layout} {keys} {kernel} {rows} {splits}"


def test_tune_weighs_the_heuristics_own_plan(monkeypatch):
    from gemmtiles import tune
    from gemmtiles.bench import Shape
    from gemmtiles.tune import candidates, heuristic_plan

    # auto's own kernels (tests/test_cutlass.py has the plans with CUTLASS's beside them).
    monkeypatch.setattr(tune, "_cutlass_here", lambda: False)

    # The heuristic splits 8 x 5504 x 4096 in 43, a count the tuner's list lacks: the plan
    # is timed beside the list's, so a table entry is never slower than no entry.
    plan = heuristic_plan(Shape(8, 5504, 4096), sms=132)
    assert plan == ("skinny", 128, 43)
    # Named by its width, the columns of B a block takes, an entry of the heuristic's plan runs
    # that plan: at 8 x 640 x 2048 single floats on B's aligned rows, which "skinny 0" (float4s
    # where the rows allow) would not.
    narrow = heuristic_plan(Shape(8, 640, 2048), sms=132)
    assert narrow == ("skinny", 32, 64)
    for (m, n, k), entry in [((8, 5504, 4096), plan), ((8, 640, 2048), narrow)]:
        table = _entry_line("NN", m, n, k, *entry)
        assert _C.auto_plan(m, n, k, 1, False, True, 132, True, table) == _C.auto_plan(m, n, k, 1, False, True, 132)
    assert _C.auto_plan(8, 640, 2048, 1, False, True, 132, True, _entry_line("NN", 8, 640, 2048, "skinny", 0, 64)).w == 4
    # Each width of the skinny kernels is a candidate where the problem allows it.
    assert {c[1] for c in candidates(1, 2048, layout="NT", n=2048) if c[0] == "skinny"} == {32}
    assert {c[1] for c in candidates(16, 2048, layout="NT", n=2048) if c[0] == "skinny"} == {128}
    assert {c[1] for c in candidates(4, 4096, layout="NN", n=4096) if c[0] == "skinny"} == {32, 128}
    # Rows of B not 16-byte aligned: the ring's single-float copies too.
    assert {c[1] for c in candidates(4, 4096, layout="NN", n=4095) if c[0] == "skinny"} == {32, 128}
    assert plan in candidates(8, 4096, plan, n=5504) and plan not in candidates(8, 4096, n=5504)
    assert ("skinny", 128, 48) in candidates(8, 4096, n=5504)
    assert heuristic_plan(Shape(2048, 2048, 2048, "NT"), sms=132) == ("pipelined", 128, 1)
    # NN: A copied M-major first, the rule's choice from 1024 x 2048 outputs, a candidate from
    # the pipelined tile's 128 x 128 (operands allowing).
    assert heuristic_plan(Shape(2048, 2048, 2048), sms=132) == ("transposed", 0, 1)
    assert ("transposed", 0, 1) in candidates(256, 4096, layout="NN", n=4096)
    for m, n, layout in [(256, 4096, "NT"), (254, 4096, "NN"), (256, 4094, "NN"), (64, 4096, "NN")]:
        assert ("transposed", 0, 1) not in candidates(m, 4096, layout=layout, n=n)
    # The pipelined tile beside warptile's 128 x 256 where the operands allow it.
    assert ("pipelined", 128, 4) in candidates(256, 4096, layout="NN", n=4096)
    assert ("split_tile", 128, 4) in candidates(256, 4096, layout="NN", n=4096)
    for m, n, layout in [(127, 4096, "NT"), (256, 127, "NT"), (256, 4094, "NN")]:
        assert not any(c[0] == "pipelined" for c in candidates(m, 4096, layout=layout, n=n))
    assert any(c[0] == "pipelined" for c in candidates(256, 4096, layout="NT", n=4094))
    kernel, rows, _ = heuristic_plan(Shape(64, 4096, 4096, "NT"), sms=132)
    assert (kernel, rows) == ("split_tile", 64)
    assert len(candidates(64, 4096, ("split_tile", 64, 12))) == len(candidates(64, 4096))
    # More splits than a table entry may name (the heuristic's 171 for one row against a
    # 255-wide weight, whose rows are not float4s, or 69 at 4095 columns on a GPU of 148
    # SMs, or 128 slices of 32 rows of a 1024-wide one): not a candidate, so tuning goes on.
    wide = heuristic_plan(Shape(1, 255, 8192), sms=132)
    assert wide[2] > 64 and wide not in candidates(1, 8192, wide)
    assert heuristic_plan(Shape(1, 4095, 11008), sms=148)[2] > 64
    narrow = heuristic_plan(Shape(1, 1024, 4096), sms=132)
    assert narrow[2] == 128 and narrow not in candidates(1, 4096, narrow)
    entries = [_entry_line("NN", 1, 1023, 4096, kernel, rows, splits)
               for kernel, rows, splits in candidates(1, 4096, wide)]
    for line in entries:
        _C.auto_plan(1, 1023, 4096, 1, False, False, H100_SMS, True, "# header\n" + line)  # parses


def test_table_names_its_gpu():
    assert _C.auto_table_file("NVIDIA H100 80GB HBM3") == "NVIDIA_H100_80GB_HBM3.txt"


@needs_cuda
def test_auto_runs_the_table_it_is_given():
    device = torch.cuda.current_device()
    a = operand(50, 2003, "cuda", pad=1)
    b = operand(2003, 515, "cuda", "col")
    a2 = operand(200, 2003, "cuda", pad=1)
    try:
        for entry in ["NT 56 640 2048 split_tile 32 7", "NT 56 640 2048 split_tile 128 3",
                      "NT 56 640 2048 pipelined 128 3", "NT 56 640 2048 warptile 0 1"]:
            _C.set_auto_table(device, entry, "test")
            assert _C.auto_table_source(device) == "test"
            check_tier("auto", a, b)
        for entry in ["NT 224 640 2048 split_tile 128 3", "NT 224 640 2048 pipelined 128 3"]:
            _C.set_auto_table(device, entry, "test")
            check_tier("auto", a2, b)
        # The skinny kernels' widths (columns of B a block), K whole and cut.
        a1 = operand(3, 2003, "cuda", pad=1)
        b_row = operand(2003, 516, "cuda", "row")
        for entry in ["NT 3 640 2048 skinny 32 1", "NT 3 640 2048 skinny 32 3", "NN 3 640 2048 skinny 32 16",
                      "NN 3 640 2048 skinny 128 40"]:
            _C.set_auto_table(device, entry, "test")
            check_tier("auto", a1, b if entry.startswith("NT") else b_row)
    finally:
        _C.set_auto_table(device, None)
    assert _C.auto_table_source(device) == "not loaded"


def test_tune_leaves_a_shape_to_autos_own_plan_where_it_ran_faster():
    # auto's own plan may be one no entry names (CUTLASS's smaller tiles and their splits):
    # where it beat every entry, the shape gets a comment and no entry, so auto keeps its plan.
    from gemmtiles import tune
    from gemmtiles.bench import Shape

    shape, entry = Shape(24, 700, 900, "NT"), "NT 24 768 1024 split_tile 32 4"
    result = {"heuristic_ms": 0.010, "cublas_ms": 0.012, "best": ("split_tile", 32, 4, 0.011), "entry": entry}
    line = tune.table_line(shape, result)
    assert line.startswith("# NT 24 768 1024: no entry, auto's own plan 10.0 us"), line
    args = (24, 700, 900, 1, True, True, H100_SMS, True)
    assert _C.auto_plan(*args, "# header\n" + line, True, True) == _C.auto_plan(*args, None, True, True)
    line = tune.table_line(shape, dict(result, best=("split_tile", 32, 4, 0.009)))
    assert line.startswith(entry + "   # 24x700x900 NT: 9.0 us, cuBLAS 12.0 us"), line
    assert tuple(_C.auto_plan(*args, line, True, True))[:2] == ("split_tile", 32)


@needs_cuda
def test_tune_finds_a_correct_plan(tmp_path):
    from gemmtiles import tune
    from gemmtiles.bench import Shape

    result = tune.tune_shape(Shape(24, 700, 900, "NT"), torch.device("cuda"), repeats=3, budget_s=0.01)
    kernel, rows, splits, ms = result["best"]
    assert kernel in ("warptile", "split_tile") and ms > 0
    assert result["entry"] == f"NT 24 768 1024 {kernel} {rows} {splits}"
    assert _C.auto_table_source(torch.cuda.current_device()) == "not loaded"  # left as found


def test_tune_offers_skinny_where_auto_runs_it():
    from gemmtiles.tune import candidates

    # The rows of the skinny kernels (auto/plan.h's skinny_max_m, read through the extension):
    # Up to 16, whatever B's layout and alignment (or n unknown).
    assert _C.skinny_max_m(True) == _C.skinny_max_m(False) == 16
    for m, n, layout, skinny in [(16, 4096, "NT", True), (17, 4096, "NT", False), (16, 4094, "NT", True),
                                 (16, 4096, "NN", True), (17, 4096, "NN", False), (16, 4094, "NN", True),
                                 (17, 4094, "NN", False), (16, None, "NN", True), (17, None, "NN", False)]:
        offered = any(c[0] == "skinny" for c in candidates(m, 4096, layout=layout, n=n))
        assert offered == skinny, (m, n, layout)


@pytest.mark.skipif(MODEL_PLANS, reason="with CUTLASS's kernels on an sm_80+ GPU auto plans by the cost model, "
                    "which copies no A first (test_cutlass.py)")
@needs_cuda
@pytest.mark.parametrize(
    "m,n,k,pad,offset",
    [
        (15, 2215, 9264, 0, 0),  # 15 rows against an unaligned B: past the skinny kernels' 8
        (57, 561, 888, 0, 0),  # under the pipelined tile's 128 rows
        (510, 700, 1500, 0, 0),  # M not a multiple of 4
        (300, 260, 77, 3, 1),  # A's columns off 16 bytes
        (33, 1, 2, 0, 0),
    ],
)
def test_column_major_a_left_on_warptile_is_copied_kmajor(m, n, k, pad, offset):
    """A column-major A that no split-K tile takes would run on warptile with K whole (the plan
    says warptile); auto copies it K-major (the transpose kernel runs) and splits K instead."""
    a = operand(m, k, "cuda", layout="col", pad=pad, offset=offset)
    b = operand(k, n, "cuda")
    a_vec = a.data_ptr() % 16 == 0 and a.stride(1) % 4 == 0
    b_vec = b.data_ptr() % 16 == 0 and b.stride(0) % 4 == 0
    assert _plan(m, n, k, False, a_vec, False, b_vec)[0] == "warptile"
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        check_tier("auto", a, b)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not names:  # CUPTI held by another tool (compute-sanitizer): the kernels are unseen
        pytest.skip("the profiler sees no kernels in this process")
    assert any("transpose_kernel" in name for name in names), names


def test_peeled_columns_are_the_last_few_of_a_large_output():
    # N a few columns past a multiple of 128: the last r <= 8 run apart (auto.cu: launch_peeled).
    assert _C.peeled_columns(4095, 4097, 1) == 1
    assert _C.peeled_columns(1024, 2048 + 8, 1) == 8
    assert _C.peeled_columns(1024, 2048 + 9, 1) == 0  # more than the skinny kernel's rows
    assert _C.peeled_columns(1023, 4097, 1) == 0 and _C.peeled_columns(4096, 1025 - 128, 1) == 0
    assert _C.peeled_columns(4096, 4097, 2) == 0 and _C.peeled_columns(4096, 4096, 1) == 0
    assert _C.max_table_splits() == 64
