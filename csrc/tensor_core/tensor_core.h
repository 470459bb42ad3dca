// The tensor-core tiers (tf32, tf32x3): kernels for sm_90a (wgmma fed by TMA) live in
// csrc/tensor_core/wgmma_sm90a.cu, a translation unit of their own that setup.py compiles for sm_90a
// only, and only when the arch list holds Hopper (9.0 / 9.0a) and CUTLASS's headers are
// found. GEMMTILES_SM90A is defined (to 1) for the whole extension when it was.
#pragma once

#include "../core/gemm_problem.h"

namespace gemmtiles {

// One TF32 tensor-core GEMM: A and B rounded to TF32 (10 mantissa bits) by the tensor
// cores, products accumulated in fp32.
void launch_tf32_sm90a(const GemmProblem& p);

// fp32 accuracy on TF32 tensor cores by compensation: each operand is split into
// hi = tf32(x) and lo = tf32(x - hi), and A·B ≈ A_lo·B_hi + A_hi·B_lo + A_hi·B_hi,
// accumulated in fp32 (A_lo·B_lo is below fp32's rounding).
void launch_tf32x3_sm90a(const GemmProblem& p);

// For measurement: every later tf32 call (on any thread) runs its wgmma kernels on `splits`
// (0: CUTLASS's heuristic decomposition, the plan's own; s >= 1: each tile's K in s splits, 1
// data-parallel; Ampere's kernel keeps its plan's splits); a negative value ends it.
void force_tf32_splits(int splits);
// For measurement: every later tf32 call of one product runs K in about `slices` slices summed
// apart (tf32_slices_of in auto/plan.h), where K holds two slices of 32 or more, instead of
// what its plan gives; a value below 2 ends it.
void force_tf32_slices(int slices);

// For measurement: every later tf32 call (on any thread; process-wide, not for concurrent
// callers) runs B on `kernel` instead of its route's (tf32_b_route in auto/plan.h): the narrow
// kernel on 128 x tile_n tiles of C^T (32, 64 or 128) or tf32's own on 128 x tile_n (128 or
// 256), B packed K-major where they cannot read it as it lies; the transposing kernel, or
// Ampere's on `splits`, where B is N-major and read as it lies; kModel ends it. A call the
// forced kernel cannot run (the transposing or Ampere's kernel on a K-major B, or on one not
// read as it lies, 16-byte aligned lines and N a multiple of 4; Ampere's on a batch, on K off a
// multiple of 4 or where its launch does not take the output or c; the narrow kernel on a
// batch that does not fold into one product) runs its route's, and
// forced_tf32_route_refused() says so until the next force_tf32_route. K slices forced too
// (force_tf32_slices) run in its place on one product.
enum class Tf32RouteKernel { kModel, kNarrow, kOwn, kTransposing, kAmpere };
void force_tf32_route(Tf32RouteKernel kernel, int tile_n, int splits);
bool forced_tf32_route_refused();

// The bytes of the stream-K kernels' kept locks left nonzero (0: every launch reset those it
// used; stream_k_locks.cuh). Synchronises each device that holds some.
int64_t stream_k_locks_left_set();

}  // namespace gemmtiles
