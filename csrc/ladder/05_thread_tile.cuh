// Tier `thread_tile`: unroll, blocked in two dimensions: each thread computes a TM x TN tile
// of C as outer products from registers.
//
// Per k of a K slice a thread reads TM values of A and TN values of B from shared memory into
// registers and does TM*TN FMAs with them: 16 shared loads for 64 FMAs at 8x8 (0.25 per FMA,
// down from ~1.1 in `unroll`). The block tile grows to BM x BN = 128 x 128, so each element
// fetched from global memory serves 128 outputs. This is the step that moves the kernel from
// memory-bound to compute-bound.
// Costs: TM*TN accumulators plus TM + TN operands per thread (~100 registers at 8x8, which
// caps occupancy); BM*BK + BK*BN floats of shared memory (8 KB). Loads are still scalar and
// read any strides in place.
#pragma once

#include "common.cuh"

namespace gemmtiles {

template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) thread_tile_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(TN % 4 == 0, "the epilogue writes rows of 4");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0,
                "every thread stages the same number of elements");
  constexpr int kALoads = BM * BK / kThreads, kBLoads = BK * BN / kThreads;
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const BatchView v = batch_view(p);
  const int t = threadIdx.x;
  const int tr = t / (BN / TN), tc = t % (BN / TN);  // this thread's TM x TN tile of C
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  const float* a = v.a + m0 * p.a_rs;
  const float* b = v.b + n0 * p.b_cs;
  float acc[TM][TN] = {};
  float ra[TM], rb[TN];
  for (int64_t k0 = 0; k0 < p.K; k0 += BK, a += BK * p.a_cs, b += BK * p.b_rs) {
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int e = t + i * kThreads, r = e / BK, k = e % BK;
      As[r][k] = m0 + r < p.M && k0 + k < p.K ? a[r * p.a_rs + k * p.a_cs] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int e = t + i * kThreads, k = e / BN, c = e % BN;
      Bs[k][c] = k0 + k < p.K && n0 + c < p.N ? b[k * p.b_rs + c * p.b_cs] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = As[tr * TM + i][k];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = Bs[k][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; j += 4)
      store_row4(p, v, m0 + tr * TM + i, n0 + tc * TN + j, &acc[i][j], false);
}

}  // namespace gemmtiles
