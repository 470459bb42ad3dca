"""The auto tier: which kernel it picks for a shape (auto_plan, no timing), that its split-K
paths give the same bits on every run, and that each of its paths is right on edge shapes."""

from __future__ import annotations

import pytest
import torch

from gemmtiles._ops import _C
from gemmtiles.testing import check_tier, needs_cuda, operand

H100_SMS = 132


@pytest.mark.parametrize(
    "m,n,k,batch,b_kmajor,kernel,mt",
    [
        (1, 4096, 4096, 1, True, "skinny_kmajor", 4),
        (8, 4096, 4096, 1, False, "skinny_nmajor", 8),
        (8, 4096, 4096, 5, False, "skinny_nmajor", 8),
        (9, 11008, 4096, 1, True, "split_tile", 32),
        (32, 4096, 11008, 1, True, "split_tile", 32),
        (33, 4096, 4096, 1, True, "split_tile", 64),
        (96, 4096, 4096, 1, False, "split_tile", 32),  # three 32-row tiles waste nothing
        (128, 4096, 4096, 1, True, "split_tile", 128),
        (192, 11008, 4096, 1, True, "split_tile", 64),
        (512, 4096, 4096, 1, False, "split_tile", 128),
        (2048, 4096, 4096, 1, False, "warptile", 0),  # waves enough without a split
        (2049, 11008, 4096, 1, False, "warptile", 0),  # past the split tiles' rows
        (64, 4096, 4096, 2, False, "warptile", 0),  # batched: tiles enough
        (4, 64, 64, 70000, False, "warptile", 0),  # batch past the grid's z limit
    ],
)
def test_plan_picks_the_kernel(m, n, k, batch, b_kmajor, kernel, mt):
    got, got_mt, nw, w, splits, k_slice = _C.auto_plan(m, n, k, batch, b_kmajor, True, H100_SMS)
    assert (got, got_mt) == (kernel, mt)
    if kernel.startswith("skinny"):
        # K is covered exactly by whole slices of a multiple of 32.
        assert k_slice % 32 == 0 and (splits - 1) * k_slice < k <= splits * k_slice
        assert w == 4 and _C.auto_plan(m, n, k, batch, b_kmajor, False, H100_SMS)[3] == 1
    elif kernel == "split_tile":
        # Whole 8-deep slices, so a row-major A's slices keep their float4 alignment.
        assert k_slice % 8 == 0 and (splits - 1) * k_slice < k <= splits * k_slice
        assert nw == (256 if mt == 128 else 128)


def test_plan_leaves_column_major_a_to_warptile():
    # The split tiles read A row-major only (activations); A^T (a weight gradient) stays on
    # warptile.
    assert _C.auto_plan(64, 4096, 4096, 1, True, True, H100_SMS, True)[0] == "split_tile"
    assert _C.auto_plan(64, 4096, 4096, 1, True, True, H100_SMS, False)[0] == "warptile"


@pytest.mark.parametrize(
    "m,n,k,splits",
    [
        (32, 4096, 4096, 24),  # 32 tiles on 6 x 132 slots: one wave of 768 blocks
        (128, 4096, 4096, 8),  # 16 tiles of 128 x 256, one block per SM: 8 splits fill 128
        (256, 11008, 4096, 3),  # 86 tiles: 3 splits, two waves of 1366-deep slices
        (512, 4096, 4096, 2),
        (64, 300, 100, 1),  # K too short to split
    ],
)
def test_plan_splits_the_tiles_to_fill_the_gpu(m, n, k, splits):
    assert _C.auto_plan(m, n, k, 1, True, True, H100_SMS)[4] == splits


def test_plan_splits_k_to_fill_the_gpu():
    # 4096 columns in 32-column blocks is 128 blocks: K is split to reach 2 blocks per SM.
    *_, splits, k_slice = _C.auto_plan(8, 4096, 4096, 1, True, True, H100_SMS)
    assert splits == 3 and k_slice == 1376
    # Enough blocks along N: K stays whole (no workspace, no reduction pass).
    assert _C.auto_plan(8, 20000, 4096, 1, True, True, H100_SMS)[4] == 1


CUDA_SHAPES = [
    # m, n, k, b layout: every skinny configuration, split and unsplit, edges off 32 and 256
    (1, 4099, 1031, "col"), (3, 257, 4097, "row"), (5, 20000, 100, "col"), (8, 129, 33, "row"),
    (2, 1, 1, "col"), (1, 1, 70000, "row"), (7, 3000, 255, "row"),
    # every split tile (32, 64, 128 x 256 rows), split and unsplit, edges off 8 and the tiles
    (13, 1000, 2049, "col"), (16, 3000, 255, "row"), (17, 77, 5000, "col"), (32, 4097, 257, "row"),
    (31, 9000, 64, "row"), (50, 515, 2003, "row"), (33, 4097, 257, "col"), (16, 1, 1, "row"),
    (130, 700, 701, "col"), (200, 1030, 3001, "row"), (300, 517, 4000, "col"),
    (2000, 3000, 3001, "row"),
]


@needs_cuda
@pytest.mark.parametrize("m,n,k,layout", CUDA_SHAPES, ids=str)
def test_skinny_paths(m, n, k, layout):
    a = operand(m, k, "cuda", pad=3, offset=1)
    b = operand(k, n, "cuda", layout, pad=1)
    c = torch.randn(n, device="cuda")
    check_tier("auto", a, b, c, 0.5, -2.0)
    check_tier("auto", a, b)


@needs_cuda
def test_skinny_batched():
    a = operand(7, 300, "cuda", batch=3)
    b = operand(300, 500, "cuda", "col", batch=3)
    check_tier("auto", a, b)
    check_tier("auto", a, operand(300, 500, "cuda"))


@needs_cuda
@pytest.mark.parametrize("m,layout", [(1, "col"), (8, "row"), (32, "col"), (64, "row"), (128, "col")])
def test_split_k_is_deterministic(m, layout):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert _C.auto_plan(m, 4096, 11008, 1, layout == "col", True, sms)[4] > 1  # K is split
    a = operand(m, 11008, "cuda")
    b = operand(11008, 4096, "cuda", layout)
    first = torch.ops.gemmtiles.auto(a, b)
    for _ in range(3):
        assert torch.equal(torch.ops.gemmtiles.auto(a, b), first)
