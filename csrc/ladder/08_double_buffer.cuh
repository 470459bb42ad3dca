// Tier `double_buffer`: bank_free, with the next K slice loaded while this one is computed.
//
// In `bank_free` a K slice goes load -> store -> barrier -> compute -> barrier: while the
// global loads are in flight (hundreds of cycles) the FMA units of the block idle, and only
// other resident blocks can fill the gap; with ~128 registers per thread there are few.
// Here shared memory holds two slices. The loads for slice s+1 are issued into registers
// before slice s is computed, land during that compute, and are stored into the other buffer
// afterwards; one barrier per slice then both publishes s+1 and retires s. The latency of
// global memory hides behind BK * TM * TN FMAs per thread, and half the barriers are gone.
// Costs: twice the shared memory (~17 KB), and the staging registers stay live across the
// compute loop.
#pragma once

#include "common.cuh"

namespace gemmtiles {

// Its configuration asks for two blocks per SM (MIN_BLOCKS = 2 in __launch_bounds__), as
// bank_free gets without asking: the staging
// registers would otherwise take the kernel past 128 registers per thread (137 without the
// bound), down to one block per SM, and the latency the prefetch hides would come back as
// latency the second block no longer hides.
template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) double_buffer_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
  constexpr int kPad = 4;
  constexpr int kGroupM = BM / (TM / 4), kGroupN = BN / (TN / 4);
  using LoadA = TileLoader<BM, BK, kThreads, /*K_MAJOR=*/true, kPad>;
  using LoadB = TileLoader<BN, BK, kThreads, /*K_MAJOR=*/false, 0>;
  __shared__ __align__(16) float As[2][BK][BM + kPad];
  __shared__ __align__(16) float Bs[2][BK][BN];
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

  la.load(a, lda, p.M - m0, p.K, vec_a);
  lb.load(b, ldb, p.N - n0, p.K, vec_b);
  la.store(&As[0][0][0]);
  lb.store(&Bs[0][0][0]);
  __syncthreads();
  int cur = 0;
  for (int64_t k0 = 0; k0 < p.K; k0 += BK) {
    const bool has_next = k0 + BK < p.K;
    if (has_next) {
      a += LoadA::k_step(lda);
      b += LoadB::k_step(ldb);
      la.load(a, lda, p.M - m0, p.K - k0 - BK, vec_a);
      lb.load(b, ldb, p.N - n0, p.K - k0 - BK, vec_b);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int g = 0; g < TM / 4; ++g) load4(&ra[g * 4], &As[cur][k][g * kGroupM + tr * 4]);
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) load4(&rb[g * 4], &Bs[cur][k][g * kGroupN + tc * 4]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    if (has_next) {
      la.store(&As[cur ^ 1][0][0]);
      lb.store(&Bs[cur ^ 1][0][0]);
    }
    __syncthreads();
    cur ^= 1;
  }
  const bool vec_out = out_vec_ok(p);
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int g = 0; g < TN / 4; ++g)
      store_row4(p, v, m0 + (i / 4) * kGroupM + tr * 4 + i % 4, n0 + g * kGroupN + tc * 4,
                 &acc[i][g * 4], vec_out);
}

}  // namespace gemmtiles
