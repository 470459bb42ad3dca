// Up to 8 rows of A times a K-major B (nn.Linear's x @ W^T in decode, a batch of a few
// sequences): out[m][n] = sum_k A[m][k] W[n][k], bound by reading W once.
//
// A block of 8 warps takes its columns of B whole: its warps take K's chunks in turn (warp w:
// chunks w, w + 8, ...), so that at any moment the block's warps read neighbouring runs of
// the same lines of W, and a lane's sums need no workspace: the lanes' sums are added by warp
// shuffles, the warps' in shared memory in a fixed order, and the block writes its outputs
// through the epilogue. One launch, no second pass, the same bits every run.
// A warp is 32 / KL groups of KL lanes along k, each group on NB columns (a block: 32 / KL x NB
// of them): with all 32 lanes along k (up to 4 rows), a lane's A loads are its own; with
// groups of 8 (5-8 rows; 16 on few blocks or a deep K: gemv_kernel in auto/plan.h), the
// groups of a warp load the same A(m, k..k+3), one line a row shared by the warp, so that A's
// loads, MT a step against NB of B, stay few in the load pipe. NB trades blocks for loads in
// flight: NB lines of W per lane and step, issued before the first is used (gemv_candidates
// in auto/plan.h).
// Against the skinny kernel (skinny.cuh), whose blocks hold different columns per warp and
// split K across blocks through a workspace and a second kernel, this needs no second launch
// and keeps each block's reads of a line of W together.
// A is read in place (float4s along k where its rows are 16-byte aligned), once by each block,
// through L1 and L2; rows past M load nothing (zeros) and are never stored.
// Torch-free, like the ladder's kernels.
#pragma once

#include "../ladder/common.cuh"
#include "skinny.cuh"

namespace gemmtiles {

inline constexpr int kGemvWarps = 8;

// MT rows of A (M <= MT); NB columns of B per group of KL lanes; W: 4 (float4 loads of B, for
// 16-byte-aligned lines and a unit k stride) or 1; BPS blocks per SM, whose registers the
// builds auto runs (kGemvBuilds in auto/plan.h) fit under.
// The columns of B a block takes: NB for each of a warp's 32 / KL groups of lanes.
template <int NB, int KL>
inline constexpr int kGemvBlockColumns = 32 / KL * NB;

template <int MT, int NB, int W, int KL, int BPS>
__global__ void __launch_bounds__(32 * kGemvWarps, BPS) gemv_kmajor_kernel(GemmProblem p) {
  static_assert(KL >= 1 && KL <= 32 && 32 % KL == 0, "a warp holds whole groups of lanes along k");
  constexpr int kStep = KL * W, kCols = kGemvBlockColumns<NB, KL>;
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int kl = lane % KL, group = lane / KL;
  const int64_t c0 = int64_t(blockIdx.x) * kCols, n0 = c0 + group * NB;
  const float* col[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) col[j] = v.b + (n0 + j < p.N ? n0 + j : p.N - 1) * p.b_cs;
  const bool a_vec = W == 4 && p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
  float acc[MT][NB] = {};
  // (Loading the next step's B before this step's sums, one step ahead, ran slower: the
  // registers it takes cost more loads in flight than it adds.)
  for (int64_t k = int64_t(warp) * kStep + kl * W; k < p.K; k += int64_t(kGemvWarps) * kStep) {
    float b[NB][W], a[MT][W];
#pragma unroll
    for (int j = 0; j < NB; ++j) load_line<W>(b[j], col[j], k, p.b_rs, p.K);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      const float* row = v.a + m * p.a_rs;
      if (m >= p.M) {
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = 0.0f;
      } else if (a_vec) {
        load_line<W, false>(a[m], row, k, 1, p.K);
      } else {
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = k + w < p.K ? row[(k + w) * p.a_cs] : 0.0f;
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int j = 0; j < NB; ++j)
#pragma unroll
        for (int w = 0; w < W; ++w) acc[m][j] = fmaf(a[m][w], b[j][w], acc[m][j]);
  }
  __shared__ float sums[kGemvWarps][MT * kCols];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      float s = acc[m][j];
#pragma unroll
      for (int d = KL / 2; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);  // within the group
      if (kl == 0) sums[warp][m * kCols + group * NB + j] = s;
    }
  __syncthreads();
  for (int t = threadIdx.x; t < MT * kCols; t += blockDim.x) {
    const int m = t / kCols;
    const int64_t n = c0 + t % kCols;
    if (m >= p.M || n >= p.N) continue;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kGemvWarps; ++w) s += sums[w][t];
    v.out[m * p.out_rs + n] = epilogue(p, v.c, m, n, s);
  }
}

}  // namespace gemmtiles
