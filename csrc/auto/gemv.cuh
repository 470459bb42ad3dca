// Up to kGemvMaxRows (4) rows of A times a K-major B (nn.Linear's x @ W^T in decode):
// out[m][n] = sum_k A[m][k] W[n][k], bound by reading W once.
//
// A block of 8 warps takes NB columns of B, each whole: its warps take K's chunks of 32 W
// elements in turn (warp w: chunks w, w + 8, ...), so that at any moment the block's warps
// read neighbouring runs of the same NB lines of W, and a lane's sums need no workspace: the
// lanes' sums are added by warp shuffles, the warps' in shared memory in a fixed order, and
// the block writes its outputs through the epilogue. One launch, no second pass, the same bits
// every run. NB trades blocks for loads in flight: NB lines of W per lane and step (NB loads
// issued before the first is used), ceil(N / NB) blocks (gemv_candidates in auto/plan.h).
// Against the skinny kernel (skinny.cuh), whose blocks hold different columns per warp and
// split K across blocks through a workspace and a second kernel, this needs no second launch
// and keeps each block's reads of a line of W together.
// A is read in place (float4s along k where its rows are 16-byte aligned), once by each block,
// through L2; rows past M load nothing (zeros) and are never stored.
// Torch-free, like the ladder's kernels.
#pragma once

#include "../ladder/common.cuh"
#include "skinny.cuh"

namespace gemmtiles {

inline constexpr int kGemvWarps = 8;

// MT rows of A (M <= MT); W: 4 (float4 loads of B, for 16-byte-aligned lines and a unit k
// stride) or 1.
template <int MT, int NB, int W>
__global__ void __launch_bounds__(32 * kGemvWarps, kGemvBlocksPerSm) gemv_kmajor_kernel(GemmProblem p) {
  constexpr int kStep = 32 * W;
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t n0 = int64_t(blockIdx.x) * NB;
  const float* col[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) col[j] = v.b + (n0 + j < p.N ? n0 + j : p.N - 1) * p.b_cs;
  const float* row[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) row[m] = v.a + (m < p.M ? m : 0) * p.a_rs;
  const bool a_vec = W == 4 && p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
  float acc[MT][NB] = {};
  for (int64_t k = int64_t(warp) * kStep + lane * W; k < p.K; k += int64_t(kGemvWarps) * kStep) {
    float b[NB][W], a[MT][W];
#pragma unroll
    for (int j = 0; j < NB; ++j) load_line<W>(b[j], col[j], k, p.b_rs, p.K);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m >= p.M) {
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = 0.0f;
      } else if (a_vec) {
        load_line<W, false>(a[m], row[m], k, 1, p.K);
      } else {
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = k + w < p.K ? row[m][(k + w) * p.a_cs] : 0.0f;
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int j = 0; j < NB; ++j)
#pragma unroll
        for (int w = 0; w < W; ++w) acc[m][j] = fmaf(a[m][w], b[j][w], acc[m][j]);
  }
  __shared__ float sums[kGemvWarps][MT * NB];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      float s = acc[m][j];
#pragma unroll
      for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);
      if (lane == 0) sums[warp][m * NB + j] = s;
    }
  __syncthreads();
  for (int t = threadIdx.x; t < MT * NB; t += blockDim.x) {
    const int m = t / NB, j = t % NB;
    const int64_t n = n0 + j;
    if (m >= p.M || n >= p.N) continue;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kGemvWarps; ++w) s += sums[w][t];
    v.out[m * p.out_rs + n] = epilogue(p, v.c, m, n, s);
  }
}

}  // namespace gemmtiles
