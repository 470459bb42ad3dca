// Tier `vectorized`: thread_tile with 128-bit memory accesses and A transposed in shared memory.
//
// Global loads become float4 (LDG.128): a quarter of the load instructions and address
// computations of `thread_tile`. A is stored transposed, As[k][m], so that the TM values of A
// a thread needs for one k are contiguous; with B's TN values already contiguous in Bs[k][n],
// the inner loop reads both fragments as float4 (LDS.128): TM/4 + TN/4 shared loads per k
// instead of TM + TN. Stores to C are float4 too.
// Costs: the float4 paths need 16-byte aligned operands with leading dims divisible by 4
// (checked per launch; otherwise scalar loads, never a misaligned access) and read row-major
// A and B (other layouts are copied first). The transposed stores of A into shared memory,
// and the B fragment reads at a stride of TN floats, collide in shared-memory banks: the
// next tier removes that.
#pragma once

#include "common.cuh"

namespace gemmtiles {

template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) vectorized_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
  using LoadA = TileLoader<BM, BK, kThreads, /*K_MAJOR=*/true, /*PAD=*/0>;   // A row-major
  using LoadB = TileLoader<BN, BK, kThreads, /*K_MAJOR=*/false, /*PAD=*/0>;  // B row-major
  __shared__ __align__(16) float As[BK][BM];  // A transposed: As[k][m]
  __shared__ __align__(16) float Bs[BK][BN];
  const BatchView v = batch_view(p);
  const int t = threadIdx.x;
  const int tr = t / (BN / TN), tc = t % (BN / TN);
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  const int64_t lda = p.a_rs, ldb = p.b_rs;
  const bool vec_a = operand_vec_ok(v.a, lda), vec_b = operand_vec_ok(v.b, ldb);
  const float* a = LoadA::origin(v.a, lda, m0);
  const float* b = LoadB::origin(v.b, ldb, n0);
  LoadA la;
  LoadB lb;
  float acc[TM][TN] = {};
  float ra[TM], rb[TN];
  for (int64_t k0 = 0; k0 < p.K; k0 += BK, a += LoadA::k_step(lda), b += LoadB::k_step(ldb)) {
    la.load(a, lda, p.M - m0, p.K - k0, vec_a);
    lb.load(b, ldb, p.N - n0, p.K - k0, vec_b);
    la.store(&As[0][0]);
    lb.store(&Bs[0][0]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; i += 4) load4(&ra[i], &As[k][tr * TM + i]);
#pragma unroll
      for (int j = 0; j < TN; j += 4) load4(&rb[j], &Bs[k][tc * TN + j]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
  const bool vec_out = out_vec_ok(p);
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; j += 4)
      store_row4(p, v, m0 + tr * TM + i, n0 + tc * TN + j, &acc[i][j], vec_out);
}

}  // namespace gemmtiles
