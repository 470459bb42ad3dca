// Tier `unroll`: smem, with the inner product unrolled across TM outputs per thread.
//
// In `smem` every FMA needs two shared-memory loads. Here each thread owns a column strip of
// TM outputs (rows trow*TM .. +TM-1, one column), and the K-slice loop is unrolled over that
// strip: one B value read from shared memory is kept in a register and feeds TM FMAs, and the
// A values are warp-wide broadcasts (all threads of a warp share trow). Shared loads per FMA
// fall from 2 to about 1 + 1/TM, and the unrolled loop carries TM independent accumulators,
// so FMAs issue back to back instead of waiting on each other.
// Costs: TM accumulators per thread; BM*BK + BK*BN floats of shared memory (4 KB).
#pragma once

#include "common.cuh"

namespace gemmtiles {

// Configuration: TileConfig<Shape<BM, BN, BK>, Shape<TM, 1>>, a strip of TM rows per thread.
template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) unroll_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM;
  static_assert(Cfg::TN == 1, "a thread owns a strip of one column");
  static_assert(BM * BK == Cfg::kThreads && BN * BK == Cfg::kThreads,
                "each thread stages exactly one element of A and one of B per K slice");
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const BatchView v = batch_view(p);
  const int t = threadIdx.x;
  const int trow = t / BN, tcol = t % BN;  // outputs: rows trow*TM + i, column tcol
  const int ar = t / BK, ak = t % BK;      // staged element of A
  const int bk = t / BN, bn = t % BN;      // staged element of B
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  const float* a = v.a + (m0 + ar) * p.a_rs + ak * p.a_cs;
  const float* b = v.b + bk * p.b_rs + (n0 + bn) * p.b_cs;
  const int64_t a_step = BK * p.a_cs, b_step = BK * p.b_rs;
  float acc[TM] = {};
  for (int64_t k0 = 0; k0 < p.K; k0 += BK, a += a_step, b += b_step) {
    As[ar][ak] = m0 + ar < p.M && k0 + ak < p.K ? *a : 0.0f;
    Bs[bk][bn] = k0 + bk < p.K && n0 + bn < p.N ? *b : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float bv = Bs[k][tcol];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[trow * TM + i][k] * bv;
    }
    __syncthreads();
  }
  const int64_t n = n0 + tcol;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t m = m0 + trow * TM + i;
    if (m < p.M && n < p.N) v.out[m * p.out_rs + n] = epilogue(p, v.c, m, n, acc[i]);
  }
}

}  // namespace gemmtiles
