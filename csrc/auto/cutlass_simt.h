// CUTLASS's SIMT SGEMM (exact fp32, CUDA cores: the kernel family cuBLAS runs for fp32 on
// Hopper), which `auto` runs where it is faster than its own tiles: large products whose
// 128 x 256 tiles fill the GPU's waves (auto/plan.h, cutlass_rule; or the tuned table's
// `cutlass` entries). Compiled in csrc/auto/cutlass_simt_sm90a.cu with the tensor-core tiers
// (setup.py: for sm_90a, where CUTLASS's headers are found; GEMMTILES_SM90A then).
#pragma once

#include <cuda_runtime.h>

#include "../core/gemm_problem.h"

namespace gemmtiles {

// Whether launch_cutlass_simt takes the problem: one product (batch 1) whose sizes fit int32
// and whose c, where read (beta != 0), has a unit column stride (a full matrix or a bias row).
// Any strides and alignment of A and B otherwise (single-float copies).
inline bool cutlass_simt_takes(const GemmProblem& p) {
  constexpr int64_t kMax = (int64_t(1) << 31) - 1 - 256;  // CUTLASS rounds sizes up to tiles in int
  return p.batch == 1 && p.M <= kMax && p.N <= kMax && p.K <= kMax && (p.N + 127) / 128 <= 65535 &&
         !(p.c && p.beta != 0.0f && p.c_cs != 1);
}

// c as CUTLASS's LinearCombination epilogue is given it: read only where beta != 0 (the
// epilogue skips the source then), as the other tiers' epilogue; otherwise the output stands in
// for it, never read, with beta 0. A bias row is a c of row stride 0.
struct CutlassSource {
  const float* c;
  int64_t ldc;
  float beta;
};
inline CutlassSource cutlass_source(const GemmProblem& p) {
  if (p.c != nullptr && p.beta != 0.0f) return {p.c, p.c_rs, p.beta};
  return {p.out, p.out_rs, 0.0f};
}

// Whether launch_cutlass_streamk takes the problem: cutlass_simt_takes's, with both operands
// K-major (A row-major, B column-major: nn.Linear's x @ W^T).
inline bool cutlass_streamk_takes(const GemmProblem& p) {
  return cutlass_simt_takes(p) && a_kmajor(p) && b_kmajor(p);
}

#if GEMMTILES_SM90A
// out = alpha * A @ B + beta * c on CUTLASS's SIMT kernel for A's and B's layouts (A: its
// column stride 1 = row-major, else column-major; B: its column stride 1 = row-major, else
// column-major): 128 x 256 x 8 tiles (256 x 128 for a column-major A and row-major B), eight
// warps of 64 x 64, four stages of cp.async. Requires cutlass_simt_takes(p) and an sm_90 GPU.
void launch_cutlass_simt(const GemmProblem& p, cudaStream_t stream);

// The same on 256 x 128 x 8 tiles with stream-K scheduling (auto/cutlass_streamk_sm90a.cu: whole
// tiles data-parallel while they fill whole waves, the k iterations of the rest shared out
// between about one block per SM, their partial tiles added in a fixed order through a
// workspace from the caching allocator).
// Requires cutlass_streamk_takes(p) and an sm_90 GPU.
void launch_cutlass_streamk(const GemmProblem& p, cudaStream_t stream);
#endif

}  // namespace gemmtiles
