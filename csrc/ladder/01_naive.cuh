// Tier `naive`: one thread per element of C, every operand read straight from global memory.
//
// threadIdx.x runs down a column of C, so the 32 threads of a warp hold 32 different rows m.
// Each load of A(m, k) then touches 32 rows lda apart: 32 separate 32-byte sectors to deliver
// 128 useful bytes, and the final store of C is scattered the same way. Only the B load is
// cheap (one address, broadcast to the warp). Every element of A and B is fetched again for
// every output that needs it, so the kernel is bound by memory traffic, not arithmetic.
// Costs: nothing in shared memory, a handful of registers; any strides are read in place.
#pragma once

#include "common.cuh"

namespace gemmtiles {

// Configuration: a block of BM rows (threadIdx.x) x BN columns (threadIdx.y) of C.
template <int BM_, int BN_>
struct NaiveConfig {
  static constexpr int BM = BM_, BN = BN_, kThreads = BM * BN;
  static dim3 block() { return dim3(BM, BN); }
};

template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, 0) naive_kernel(GemmProblem p) {
  const BatchView v = batch_view(p);
  const int64_t m = int64_t(blockIdx.y) * Cfg::BM + threadIdx.x;
  const int64_t n = int64_t(blockIdx.x) * Cfg::BN + threadIdx.y;
  if (m >= p.M || n >= p.N) return;
  const float* a = v.a + m * p.a_rs;  // walks row m of A
  const float* b = v.b + n * p.b_cs;  // walks column n of B
  float acc = 0.0f;
  for (int64_t k = 0; k < p.K; ++k, a += p.a_cs, b += p.b_rs) acc += *a * *b;
  v.out[m * p.out_rs + n] = epilogue(p, v.c, m, n, acc);
}

}  // namespace gemmtiles
