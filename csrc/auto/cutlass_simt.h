// CUTLASS's SIMT SGEMM (exact fp32 on the CUDA cores: the kernel family cuBLAS runs for fp32
// from Ampere on), `auto`'s kernel for every product past the skinny kernels' rows. One
// kernel type per layout of A and B and per tile (csrc/auto/cutlass_simt_*_cutlass.cu),
// built for every arch of the list from sm_80 wherever CUTLASS's headers are found
// (GEMMTILES_CUTLASS then). Each is CUTLASS's GemmUniversal with its stream-K scheduler,
// which runs one of three schedules (the plan's splits, auto/plan.h):
//   0: stream-K: whole tiles data-parallel while they fill whole waves, the k iterations of
//      the rest shared out evenly between about one block per SM (CUTLASS's own choice of
//      how many, from its model of the waves);
//   1: data-parallel, one block per output tile (and per batch entry);
//   s > 1: split-K, every tile's K cut into s slices (a batch: one product at a time). Where
//      CUTLASS would add the slices in a wave of reduction blocks inside its grid, they run
//      apart on the same tile's data-parallel kernel instead, each writing its partial product
//      to a workspace that a second kernel adds up (run_slices in cutlass_simt.cuh).
// Partial tiles are added in a fixed order (CUTLASS's turnstile through its workspace; slices
// run apart by split_k_reduce_kernel's groups), so every run gives the same bits. Single-float
// copies: any leading dimension and any offset.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "../core/gemm_problem.h"

namespace gemmtiles {

// Whether launch_cutlass_simt takes the problem: sizes and batch strides that fit CUTLASS's
// int32 coordinates, a batch the grid holds, and a c that, where read (beta != 0), has a unit
// column stride (a full matrix or a bias row) and, batched, one c per entry or one for all.
inline bool cutlass_simt_takes(const GemmProblem& p) {
  constexpr int64_t kMax = (int64_t(1) << 31) - 1 - 256;  // CUTLASS rounds sizes up to tiles in int
  return p.batch >= 1 && p.batch <= 65535 && p.M <= kMax && p.N <= kMax && p.K <= kMax &&
         (p.N + 127) / 128 <= kMax / 2 && !(p.c && p.beta != 0.0f && p.c_cs != 1);
}

// c as CUTLASS's LinearCombination epilogue is given it: read only where beta != 0 (the
// epilogue skips the source then), as the other tiers' epilogue; otherwise the output stands in
// for it, never read, with beta 0. A bias row is a c of row stride 0.
struct CutlassSource {
  const float* c;
  int64_t ldc, batch_stride;
  float beta;
};
inline CutlassSource cutlass_source(const GemmProblem& p) {
  if (p.c != nullptr && p.beta != 0.0f) return {p.c, p.c_rs, p.c_bs, p.beta};
  return {p.out, p.out_rs, p.out_bs, 0.0f};
}

// Whether launch_cutlass_tf32_nn takes the problem as it lies: one product of a row-major A and
// an N-major (row-major) B, K and N multiples of 4, and A, B, the output and a c that is read
// (a full matrix or a bias row) in lines of 16-byte aligned floats: the kernel's copies and
// stores move four floats at a time. cutlass_tf32_takes_but_a: all of it but A's layout, which a
// K-major copy of A (rows of K floats, K a multiple of 4) meets.
inline bool cutlass_tf32_takes_but_a(const GemmProblem& p) {
  const bool c_read = p.c != nullptr && p.beta != 0.0f;
  return cutlass_simt_takes(p) && p.batch == 1 && p.b_cs == 1 && p.K % 4 == 0 && p.N % 4 == 0 &&
         operand_vec_ok(p.b, p.b_rs) && operand_vec_ok(p.out, p.out_rs) && (!c_read || operand_vec_ok(p.c, p.c_rs));
}
inline bool cutlass_tf32_takes(const GemmProblem& p) {
  return cutlass_tf32_takes_but_a(p) && p.a_cs == 1 && operand_vec_ok(p.a, p.a_rs);
}

#if GEMMTILES_CUTLASS
// out = alpha * A @ B + beta * c on the CUTLASS SIMT kernel of tile `tile_rows` x `tile_cols`
// on `tile_warps` warps (one of cutlass_tile_at in auto/plan.h) for A's and B's layouts, on
// schedule `splits` (above). Requires cutlass_simt_takes(p) and an sm_80+ GPU; a batch runs
// data-parallel. It calls its layout's instantiation (cutlass_simt_<layout>_cutlass.cu): NN (A
// row-major, B row-major), NT (B column-major), TN (A column-major), TT (both column-major).
void launch_cutlass_simt_nn(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream);
void launch_cutlass_simt_nt(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream);
void launch_cutlass_simt_tn(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream);
void launch_cutlass_simt_tt(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream);
// out = alpha * (the sum of `slices` partial products, M x N each, at ws) + beta * c on the
// stream, in a fixed order: the reduction of split-K's slices where they run apart
// (cutlass_simt.cuh's run_slices). auto.cu's, split_k_reduce_kernel (launch_reduce in
// auto/launch.cuh), which a CUTLASS unit cannot include.
void launch_split_k_reduce(const GemmProblem& p, int64_t slices, const float* ws, cudaStream_t stream);
// The blocks of each layout's kernel on that tile the current device holds an SM at once, -1
// where it cannot say: what CUTLASS's scheduler plans its waves on, and what auto's cost model
// takes (tile_blocks_per_sm in auto/exact_model.h).
int cutlass_simt_nn_blocks_per_sm(int rows, int cols, int warps);
int cutlass_simt_nt_blocks_per_sm(int rows, int cols, int warps);
int cutlass_simt_tn_blocks_per_sm(int rows, int cols, int warps);
int cutlass_simt_tt_blocks_per_sm(int rows, int cols, int warps);
// out = alpha * A @ B + beta * c rounded to TF32 on Ampere's tensor-core instruction (CUTLASS's
// Sm80 TF32 GEMM on kTf32AmpereTile, auto/plan.h), K split `splits` ways (1: data-parallel),
// for a row-major A and an N-major B. Requires cutlass_tf32_takes(p) and an sm_80+ GPU.
void launch_cutlass_tf32_nn(const GemmProblem& p, int64_t splits, cudaStream_t stream);
// Barrier flags for the launches above that share tiles (split-K, stream-K): `bytes` of them,
// all zero, the current device's and `stream`'s own, zeroed on the stream when made. Every
// launch leaves its flags zero again: the block that finishes a shared tile resets the flag
// its peers counted up as it takes their partial tiles (CUTLASS's Barrier::wait_eq_reset), so
// the next launch on the stream needs no memset. nullptr while the stream captures a graph,
// whose replays may run beside the stream's later launches: the caller zeroes flags of its
// own then.
void* zeroed_cutlass_flags(size_t bytes, cudaStream_t stream);
// The bytes of every stream's flags that are not zero, once the devices finish their work: 0 unless
// a launch failed to reset them. For the tests.
int64_t cutlass_flags_left_set();
inline void launch_cutlass_simt(const GemmProblem& p, int tile_rows, int tile_cols, int tile_warps, int64_t splits,
                                cudaStream_t stream) {
  const bool a_k = a_kmajor(p), b_k = b_kmajor(p);
  (a_k ? (b_k ? launch_cutlass_simt_nt : launch_cutlass_simt_nn) : (b_k ? launch_cutlass_simt_tt : launch_cutlass_simt_tn))(
      p, tile_rows, tile_cols, tile_warps, splits, stream);
}
inline int cutlass_simt_blocks_per_sm(int rows, int cols, int warps, bool a_k, bool b_k) {
  return (a_k ? (b_k ? cutlass_simt_nt_blocks_per_sm : cutlass_simt_nn_blocks_per_sm)
              : (b_k ? cutlass_simt_tt_blocks_per_sm : cutlass_simt_tn_blocks_per_sm))(rows, cols, warps);
}
#endif

}  // namespace gemmtiles
