// Tier `coalesced`: naive with the thread mapping turned around.
//
// threadIdx.x now runs along a row of C, so a warp holds 32 consecutive columns n of one
// row m. Its load of B(k, n..n+31) is 128 contiguous bytes (one coalesced request, four
// sectors, all bytes used), its load of A(m, k) is one address broadcast to the warp, and its
// store of C is one contiguous row segment. Same arithmetic and the same number of loads as
// `naive`, a fraction of the memory transactions.
// Costs: as naive. Coalescing assumes a row-major B; other strides are read correctly, slower.
#pragma once

#include "common.cuh"

namespace gemmtiles {

// Configuration: a block of BM rows (threadIdx.y) x BN columns (threadIdx.x) of C.
template <int BM_, int BN_>
struct CoalescedConfig {
  static constexpr int BM = BM_, BN = BN_, kThreads = BM * BN;
  static dim3 block() { return dim3(BN, BM); }
};

template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, 0) coalesced_kernel(GemmProblem p) {
  const BatchView v = batch_view(p);
  const int64_t m = int64_t(blockIdx.y) * Cfg::BM + threadIdx.y;
  const int64_t n = int64_t(blockIdx.x) * Cfg::BN + threadIdx.x;
  if (m >= p.M || n >= p.N) return;
  const float* a = v.a + m * p.a_rs;
  const float* b = v.b + n * p.b_cs;
  float acc = 0.0f;
  for (int64_t k = 0; k < p.K; ++k, a += p.a_cs, b += p.b_rs) acc += *a * *b;
  v.out[m * p.out_rs + n] = epilogue(p, v.c, m, n, acc);
}

}  // namespace gemmtiles
