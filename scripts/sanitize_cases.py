"""Every CUDA tier on small odd shapes, layouts, misaligned offsets, batches and alpha/beta:
the workload that scripts/sanitize.sh runs under compute-sanitizer. Also checks the results,
so an out-of-bounds read that happens to return zeros still fails here."""

from __future__ import annotations

import math
import sys

import torch

import gemmtiles
from gemmtiles._tiers import BY_NAME
from gemmtiles.testing import TF32_FORCED_ROUTES, assert_gemm_close, operand

CASES = [
    # m, n, k, a layout, b layout, pad, offset, batch
    (1, 1, 1, "row", "row", 0, 0, None),
    (3, 5, 7, "row", "col", 1, 1, None),
    (17, 13, 9, "col", "row", 0, 3, None),
    (33, 31, 29, "col", "col", 2, 2, None),
    (129, 131, 37, "row", "row", 0, 1, None),
    (130, 257, 11, "row", "col", 3, 0, None),
    (257, 129, 16, "col", "row", 0, 0, 2),
    (65, 66, 67, "row", "row", 0, 0, 3),
    (130, 516, 260, "row", "row", 0, 0, 2),  # tf32 on B N-major as it is (the kernel computes C^T)
    (1031, 4099, 13, "row", "col", 1, 1, None),  # warptile's 128 x 256 configuration
    (1031, 4099, 13, "col", "row", 0, 0, None),
    (5, 4099, 1031, "row", "col", 1, 1, None),  # auto's split-K skinny kernels
    (31, 700, 300, "col", "row", 3, 2, 2),
    (3, 20000, 40, "row", "col", 0, 0, None),  # auto's skinny kernel with K whole
    (7, 300, 5004, "row", "col", 0, 0, None),  # W^T as float4, A staged, K split,
    (5, 1028, 3000, "row", "row", 0, 0, None),  # row-major B as float4: 8 slices a block, 6 blocks along K,
    (13, 1028, 1500, "row", "row", 0, 0, None),  # its 16-row configuration,
    (3, 20000, 40, "row", "row", 0, 0, None),  # K whole
    (13, 300, 4133, "row", "col", 1, 1, None),  # its 16-row W^T kernel, split
    (16, 20000, 2100, "row", "col", 0, 0, None),  # K whole: chunks of A in two buffers, W^T through shared memory
    (20, 301, 1001, "row", "col", 1, 1, None),  # auto's split tiles: 32 rows,
    (50, 515, 2003, "row", "row", 0, 3, None),  # 64 rows on warptile's kernel (B off 16 bytes),
    (190, 1000, 517, "row", "col", 1, 1, None),  # the 64-row tile on the pipelined kernel, last tile moved back,
    (64, 1032, 2001, "row", "row", 0, 0, None),  # its B M-major, split,
    (200, 1030, 3001, "row", "col", 2, 0, None),  # the pipelined 128 x 128 (A and B K-major),
    (500, 300, 77, "col", "row", 0, 0, None),  # both M-major, K ending mid-slice,
    (260, 1030, 3001, "col", "col", 0, 0, None),  # A M-major, B K-major, split,
    (2100, 300, 50, "col", "row", 0, 0, None),  # past 2048 rows,
    (1100, 1032, 301, "row", "col", 1, 1, None),  # 2 slices added in their cluster,
    (836, 832, 450, "col", "row", 0, 0, None),  # 3 slices in their cluster, both M-major,
    (2176, 2048, 64, "row", "col", 0, 0, None),  # K whole past full waves, the rest on 4 slices,
    (200, 1030, 3001, "row", "row", 0, 0, None),  # warptile's 128 x 256 split (B's rows not float4),
    (16, 1, 1, "row", "row", 0, 0, None),  # K whole
    (260, 132, 33, "col", "row", 0, 0, None),  # both M-major: whole slices, the first starting early,
    (1028, 2052, 37, "row", "row", 0, 0, None),  # NN with A transposed first (the heuristic's plans),
    (1024, 2048, 301, "row", "row", 1, 1, None),  # and with B realigned first (likewise)
    (2048, 2048, 517, "col", "row", 0, 0, None),  # CUTLASS's SIMT kernel on its tiles,
    (2040, 2047, 513, "row", "row", 1, 1, None),  # 128 x 256, odd sizes, operands off 16 bytes
    (1030, 3000, 1003, "row", "col", 1, 1, None),  # its stream-K kernel (x @ W^T): under a wave of tiles,
    (2000, 3000, 700, "row", "col", 0, 0, None),  # a wave of whole tiles, then the rest's k shared out
]

# Each of auto's CUTLASS SIMT tiles forced (_C.force_auto_plan), whole and with K split 3 ways,
# on unaligned products of every layout, operands off 4 and 12 bytes, batched: the cases above
# reach only the tiles auto's plan picks for them. Then on one tile, the K-major operands
# copied transposed first (COPYING), where a case has them: a B shared by a batch copied once
# (TT), a batch of A and of B (NT with a B per entry).
FORCED_CASES = [
    (131, 263, 77, "row", "col", 1, 1, None),  # NT
    (97, 130, 203, "col", "row", 0, 3, None),  # TN
    (70, 45, 90, "col", "col", 2, 1, 2),  # TT, batched
    (45, 70, 61, "row", "row", 0, 0, 3),  # NN, batched (one product of 135 rows: B shared)
    (45, 70, 61, "row", "col", 2, 1, 3, True),  # NT, batched, a B per entry
]


# The copying CUTLASS plans, with the operands each copies: (kernel, A, B).
COPYING = [("cutlass_a_copied", True, False), ("cutlass_b_copied", False, True), ("cutlass_ab_copied", True, True)]


def cutlass_tiles() -> list[tuple[int, int, int]]:
    """The tiles auto's CUTLASS candidates use, (rows, columns, warps) (gemmtiles._C.cutlass_tiles),
    where this build runs them."""
    from gemmtiles._ops import _C

    return sorted(_C.cutlass_tiles()) if _C.cutlass_kernels() else []


# Every skinny and gemv candidate auto weighs (each load width and block width, K whole and
# cut), forced, on products of up to 16 rows: (case, a B per batch entry).
SKINNY_CASES = [
    ((1, 1027, 3000, "row", "col", 0, 0, None), False),  # W^T as float4s
    ((3, 61, 1001, "row", "col", 1, 1, None), False),  # single floats, fewer columns than a block
    ((13, 300, 4132, "row", "col", 0, 0, None), False),  # W^T past 8 rows: float4s through shared memory
    ((6, 1027, 3000, "row", "col", 0, 0, None), False),  # and of 5-8 rows
    ((12, 130, 4097, "row", "col", 3, 0, None), False),  # W^T's aligned lines, K past a float4, past 8 rows
    ((2, 300, 517, "row", "col", 0, 0, 3), True),  # a batch with a B per entry
    ((5, 1028, 3000, "row", "row", 0, 0, None), False),  # a row-major B: float4s and single floats
    ((7, 259, 1500, "row", "row", 0, 1, None), False),  # a row-major B off 4 bytes
    ((4, 130, 4097, "row", "col", 3, 0, None), False),  # W^T's aligned lines, K past a float4
    ((1, 2113, 301, "row", "col", 0, 1, None), False),  # a shallow K: groups of 4 lanes, W^T realigned
    ((4, 1030, 300, "row", "col", 0, 0, 3), True),  # and of 2-4 rows, a batch with a B per entry
    ((1030, 3, 517, "row", "col", 1, 1, None), False),  # few columns: the swapped plans, out^T = B^T A^T
    ((777, 8, 300, "col", "row", 0, 2, None), False),  # and of a column-major A
    ((301, 5, 2000, "row", "row", 0, 0, 3), True),  # and of a batch
]


# tf32's K in slices summed apart, forced to a count (_C.force_tf32_slices), on unaligned
# products of each layout, operands off 4 and 12 bytes; slices of 352 and 416 (32 past a
# multiple of 64: the pack's last tile of a slice half past it), 320 and 128.
TF32_SLICES_CASES = [
    ((7, 70, 1000, "row", "col", 1, 1, None), 3),  # NT: 3 slices of 352
    ((5, 33, 777, "col", "row", 0, 3, None), 2),  # TN: 2 of 416
    ((3, 130, 2049, "row", "row", 0, 0, None), 7),  # NN: 7 of 320
    ((9, 45, 500, "col", "col", 2, 1, None), 5),  # TT: 4 of 128
]


def run_tf32_slices() -> None:
    """tf32 with each of TF32_SLICES_CASES' slice counts forced."""
    from gemmtiles._ops import _C

    for case, count in TF32_SLICES_CASES:
        _C.force_tf32_slices(count)
        try:
            run_case("tf32", *case)
        finally:
            _C.force_tf32_slices(0)
    print(f"tf32: {len(TF32_SLICES_CASES)} forced K-slices cases ok", flush=True)


# Each of tf32's routes (TF32_FORCED_ROUTES) forced on an aligned product (the one the
# transposing kernel and Ampere's take) and unaligned ones of each layout: operands off 4 and
# 12 bytes, past 128 rows on rows of N off a multiple of 4, and a batch sharing B. The cases
# above reach only the route tf32's model picks for them. A route whose kernel cannot take a
# case runs the model's route there (forced_tf32_route_refused).
TF32_ROUTE_CASES = [
    (96, 1000, 516, "row", "row", 0, 0, None),  # NN: B N-major, read where it lies
    (50, 999, 515, "row", "row", 0, 0, None),  # NN, N off a multiple of 4: B packed
    (96, 1000, 516, "row", "col", 1, 1, None),  # NT, operands off 4 bytes
    (300, 1030, 300, "row", "col", 0, 0, None),  # NT past 128 rows, C's rows off 16 bytes
    (300, 257, 1000, "col", "row", 0, 3, None),  # TN, operands off 12 bytes
    (131, 70, 203, "col", "col", 2, 1, None),  # TT
    (45, 70, 61, "row", "row", 0, 0, 3),  # NN, a batch sharing B
]


def run_tf32_routes() -> None:
    """tf32 with each of TF32_FORCED_ROUTES forced on each of TF32_ROUTE_CASES."""
    from gemmtiles._ops import _C

    ran = refused = 0
    try:
        for route in TF32_FORCED_ROUTES:
            for case in TF32_ROUTE_CASES:
                _C.force_tf32_route(*route)  # each case's refusal apart: forcing clears it
                run_case("tf32", *case)
                ran += 1
                refused += _C.forced_tf32_route_refused()
    finally:
        _C.force_tf32_route()
    print(f"tf32: {ran} forced route cases ok ({refused} ran the model's route)", flush=True)


# c in the layouts that the tensor-core tiers read where they lie, along c's own strides (rows of
# a wider tensor, a mask shared by a batch's entries, a row per entry), or copy into the output
# first (rows off 16 bytes for a kernel writing through TMA, rows per entry of a batch sharing B),
# each c in storage that ends at its last element, so a read past it is out of bounds.
C_CASES = [
    # m, n, k, batch, bmm (a B per entry, else one shared), c's shape, its rows' padding, its offset
    (37, 130, 61, None, False, (37, 130), 4, 0),
    (37, 132, 61, None, False, (37, 132), 4, 0),
    (130, 260, 99, None, False, (130, 260), 0, 1),
    (65, 132, 40, 3, True, (65, 132), 0, 0),
    (65, 131, 40, 3, True, (3, 1, 131), 0, 0),
    (5, 64, 33, 3, False, (3, 5, 64), 3, 0),
    (1, 68, 33, 3, False, (3, 1, 68), 4, 0),
]


def run_c_layouts(tier) -> None:
    """tier on each of C_CASES' c's."""
    for m, n, k, batch, bmm, shape, pad, off in C_CASES:
        a = operand(m, k, "cuda", "row", 0, 0, batch)
        b = operand(k, n, "cuda", "col", 0, 0, batch if bmm else None)
        # The strides of rows padded to shape[-1] + pad; storage up to the last row's last element.
        strides = torch.empty((*shape[:-1], shape[-1] + pad), device="meta").stride()
        storage = torch.randn(off + (math.prod(shape[:-1]) - 1) * (shape[-1] + pad) + shape[-1], device="cuda")
        c = storage.as_strided(shape, strides, off)
        out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=0.5, beta=-1.0)
        torch.cuda.synchronize()
        assert_gemm_close(out, a, b, c.expand(out.shape), 0.5, -1.0, precision=BY_NAME[tier].precision)
    print(f"{tier}: {len(C_CASES)} c layouts ok", flush=True)


def skinny_candidates(case, bmm):
    """The skinny and gemv plans of gemmtiles._C.exact_candidates for `case`'s operands, as auto
    sees them (the swapped plans of few columns among them)."""
    from gemmtiles._ops import _C
    from gemmtiles.exact_fit import _layout_flags

    m, n, k, la, lb, pad, off, batch = case
    a = operand(m, k, "cuda", la, pad, off, batch)
    b = operand(k, n, "cuda", lb, pad, off, batch if bmm else None)
    a_k, b_k, a_vec, b_vec = _layout_flags(a, b)
    rows, products = (m, batch or 1) if bmm else (m * (batch or 1), 1)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return [tuple(p) for p, _ in _C.exact_candidates(rows, n, k, products, a_k, b_k, b_vec, sms, a_vec)
            if p.kernel.startswith(("skinny", "gemv"))]


def run_skinny_forced() -> None:
    """auto with each of SKINNY_CASES' skinny and gemv candidates forced in turn."""
    from gemmtiles._ops import _C

    ran = 0
    for case, bmm in SKINNY_CASES:
        for plan in skinny_candidates(case, bmm):
            _C.force_auto_plan(*plan)
            try:
                run_case("auto", *case, bmm=bmm)
                if _C.forced_plan_refused():
                    raise AssertionError(f"{plan} refused {case}")
            finally:
                _C.force_auto_plan()
            ran += 1
    print(f"auto: {ran} forced skinny and gemv candidate cases ok", flush=True)


def run_case(tier, m, n, k, la, lb, pad, off, batch, bmm=False) -> None:
    """bmm: a B per batch entry; else one B shared by the batch."""
    a = operand(m, k, "cuda", la, pad, off, batch)
    b = operand(k, n, "cuda", lb, pad, off, batch if bmm else None)
    c = torch.randn(n, device="cuda")
    out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=0.5, beta=-1.0)
    torch.cuda.synchronize()
    assert_gemm_close(out, a, b, c, 0.5, -1.0, precision=BY_NAME[tier].precision)


def main() -> int:
    tiers = sys.argv[1:] or gemmtiles.tiers("cuda")
    for tier in tiers:
        for case in CASES:
            run_case(tier, *case)
        print(f"{tier}: {len(CASES)} cases ok", flush=True)
        if tier == "tf32":
            run_tf32_slices()
            run_tf32_routes()
        if tier in ("tf32", "tf32x3"):
            run_c_layouts(tier)
        if tier != "auto":
            continue
        from gemmtiles._ops import _C

        forced = [("cutlass", mt, nw, w, splits, case) for mt, nw, w in cutlass_tiles() for splits in (1, 3)
                  for case in FORCED_CASES]
        for kernel, copies_a, copies_b in COPYING if cutlass_tiles() else []:
            for case in FORCED_CASES:
                la, lb, batch = case[3], case[4], case[7]
                if (copies_a and la != "row") or (copies_b and lb != "col"):
                    continue  # only a K-major operand is copied
                forced += [(kernel, 64, 64, 2, splits, case) for splits in ((1,) if batch else (1, 3))]
        for kernel, mt, nw, w, splits, case in forced:
            _C.force_auto_plan(kernel, mt, nw, w, splits, 0)
            try:
                run_case(tier, *case)
                if _C.forced_plan_refused():
                    raise AssertionError(f"{kernel} {mt} x {nw} on {w} warps, {splits} splits refused {case}")
            finally:
                _C.force_auto_plan()
        ran = len(forced)
        print(f"auto: {ran} forced CUTLASS tile cases ok", flush=True)
        run_skinny_forced()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
