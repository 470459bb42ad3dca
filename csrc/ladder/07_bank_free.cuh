// Tier `bank_free`: vectorized, with its shared-memory bank conflicts removed.
//
// Shared memory has 32 banks of 4 bytes; a warp's access is replayed once per extra address
// that lands in an already-used bank. `vectorized` has two such collisions:
//  * transposed stores of A: the threads that load the two float4 halves of one row of an
//    A tile store to As[k][m] and As[k+4][m]; with a row pitch of BM = 128 floats (a multiple
//    of 32) both land in bank m % 32: 2-way conflicts. A pitch of BM + 4 moves As[k+4][m]
//    by 16 banks: conflict-free, and rows stay 16-byte aligned for the float4 reads.
//  * fragment reads: a thread read TN = 8 consecutive floats of Bs[k][*], so neighbouring
//    threads' float4s sat 8 floats apart and a quarter-warp's eight 16-byte reads hit each
//    bank twice. Here each thread reads its 8 columns as two float4 groups BN/2 apart (and
//    its 8 rows of A likewise, BM/2 apart): the 16 threads that differ in tc read 64
//    consecutive floats, the minimum number of shared-memory wavefronts.
// The thread's C tile is now 2 x 2 blocks of 4 x 4, each group of 4 at a stride of half the
// block tile. Costs: BK * 4 floats of padding; nothing else changes.
#pragma once

#include "common.cuh"

namespace gemmtiles {

template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) bank_free_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int kThreads = Cfg::kThreads;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
  constexpr int kPad = 4;
  // A thread's TM rows are TM/4 groups of 4, the groups BM/(TM/4) rows apart (likewise N).
  constexpr int kGroupM = BM / (TM / 4), kGroupN = BN / (TN / 4);
  using LoadA = TileLoader<BM, BK, kThreads, /*K_MAJOR=*/true, kPad>;
  using LoadB = TileLoader<BN, BK, kThreads, /*K_MAJOR=*/false, 0>;
  __shared__ __align__(16) float As[BK][BM + kPad];
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
      for (int g = 0; g < TM / 4; ++g) load4(&ra[g * 4], &As[k][g * kGroupM + tr * 4]);
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) load4(&rb[g * 4], &Bs[k][g * kGroupN + tc * 4]);
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
    for (int g = 0; g < TN / 4; ++g)
      store_row4(p, v, m0 + (i / 4) * kGroupM + tr * 4 + i % 4, n0 + g * kGroupN + tc * 4,
                 &acc[i][g * 4], vec_out);
}

}  // namespace gemmtiles
