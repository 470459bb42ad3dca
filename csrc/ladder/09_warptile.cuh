// Tier `warptile`: double_buffer, with a block -> warp -> thread hierarchy, every operand
// layout read natively, and tile shapes chosen per problem.
//
// The block tile (BM x BN) is split into warp tiles (WM x WN), and each warp computes its
// tile in WMITER x WNITER steps of a (WM/WMITER) x (WN/WNITER) sub-tile in which each of its
// kWarpSize lanes (32; 64 on AMD CDNA) owns a TM x TN fragment. Compared with `double_buffer`:
//  * the fragments a warp reads from shared memory for one k are a few contiguous float4 runs
//    (one per sub-tile row and column), so every LDS.128 is conflict-free and broadcast-
//    friendly whatever BM and BN are, which lets the block tile grow;
//  * the large configuration (128 x 256 x 8, 16 x 8 outputs per thread, one block of 256
//    threads per SM, the shape of cuBLAS's own Hopper SIMT kernel turned on its side) does
//    128 FMAs per 6 shared loads per k, against 64 per 4 at 128 x 128;
//  * the outer product runs in serpentine order (odd rows of the fragment walk the columns
//    backwards), so consecutive FFMAs share an operand register at each row change and the
//    operand reuse cache serves it, a clear gain at 8192^3;
//  * the slice loop is unrolled by two, so which shared buffer a slice reads and which it
//    fills are compile-time constants: addresses fold into the LDS/STS immediates (a small
//    gain);
//  * A and B are read row- or column-major in place (template flags), so nn.Linear's
//    x @ W^T (B column-major) and its backward products move no copies.
// Gains measured with scripts/tune_warptile.cu (docs/ladder.md). Costs: ~250 registers per
// thread in the large configuration (one block per SM: latency is hidden by instruction-level
// parallelism, not by other warps), ~25 KB of shared memory.
#pragma once

#include <type_traits>

#include "common.cuh"

namespace gemmtiles {

// Configuration: the block tile (Block::M x Block::N, Block::K deep per slice), the warp tile
// (Warp::M x Warp::N), the thread fragment (Thread::M x Thread::N) and WNITER, the sub-tiles
// a warp's tile is split into along N; the rest derives from them.
template <class Block_, class Warp_, class Thread_, int WNITER_, int MIN_BLOCKS = 1>
struct WarptileConfig {
  using Block = Block_;
  using Warp = Warp_;
  using Thread = Thread_;
  static constexpr int BM = Block::M, BN = Block::N, BK = Block::K, WM = Warp::M, WN = Warp::N;
  static constexpr int WNITER = WNITER_, TM = Thread::M, TN = Thread::N;
  static constexpr int kWarps = (BM / WM) * (BN / WN);
  static constexpr int kThreads = kWarps * kWarpSize;
  static constexpr int WMITER = (WM * WN) / (kWarpSize * TM * TN * WNITER);
  static constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
  // Blocks per SM that the register allocation must leave room for (__launch_bounds__).
  static constexpr int kMinBlocks = MIN_BLOCKS;
  // Two buffers of A and B slices, each row padded by 4 floats (see TileLoader); dynamic
  // shared memory, since the deeper slices pass the 48 KB of a static allocation.
  static constexpr int kPad = 4;
  static constexpr int kPitchA = BM + kPad, kPitchB = BN + kPad;
  static constexpr size_t kSmemBytes = sizeof(float) * 2 * BK * (kPitchA + kPitchB);
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
  static_assert(WMITER >= 1 && (WM * WN) % (kWarpSize * TM * TN * WNITER) == 0,
                "a warp's lanes must cover its tile in whole sub-tiles");
  static_assert(WM % WMITER == 0 && WN % WNITER == 0, "sub-tiles must tile the warp tile");
  static_assert((WSUBM / TM) * (WSUBN / TN) == kWarpSize, "a sub-tile holds one fragment per lane");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read and written as float4");
  static dim3 block() { return dim3(kThreads); }
};

// SPLIT_K: blockIdx.z is a slice of K (GemmProblem::k_split), not a batch entry; the
// launcher points the batch strides at the slices' first k and the output at a workspace.
template <typename Cfg, bool A_KMAJOR, bool B_KMAJOR, bool SPLIT_K = false>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) warptile_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN;
  constexpr int TM = Cfg::TM, TN = Cfg::TN, WMITER = Cfg::WMITER, WNITER = Cfg::WNITER;
  constexpr int WSUBM = Cfg::WSUBM, WSUBN = Cfg::WSUBN;
  constexpr int kPitchA = Cfg::kPitchA, kPitchB = Cfg::kPitchB;
  using LoadA = TileLoader<BM, BK, Cfg::kThreads, A_KMAJOR, Cfg::kPad>;
  using LoadB = TileLoader<BN, BK, Cfg::kThreads, B_KMAJOR, Cfg::kPad>;
  constexpr int kSliceA = BK * kPitchA, kSliceB = BK * kPitchB;
  // Buffer buf of A at As + buf * kSliceA, element (k, m) at k * kPitchA + m; B likewise.
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;
  float* const Bs = smem + 2 * kSliceA;

  const BatchView v = batch_view(p);
  const int64_t k_rest = p.K - int64_t(blockIdx.z) * p.k_split;
  const int64_t K = !SPLIT_K ? p.K : k_rest < p.k_split ? k_rest : p.k_split;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
  const int lm0 = lane / (WSUBN / TN) * TM, ln0 = lane % (WSUBN / TN) * TN;
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  // A: (M, K) read as row-major (ld = a_rs) or column-major (ld = a_cs); B likewise.
  const int64_t lda = A_KMAJOR ? p.a_rs : p.a_cs;
  const int64_t ldb = B_KMAJOR ? p.b_cs : p.b_rs;
  const bool vec_a = operand_vec_ok(v.a, lda), vec_b = operand_vec_ok(v.b, ldb);
  const float* a = LoadA::origin(v.a, lda, m0);
  const float* b = LoadB::origin(v.b, ldb, n0);
  LoadA la;
  LoadB lb;
  float acc[WMITER * TM][WNITER * TN] = {};
  float ra[WMITER * TM], rb[WNITER * TN];

  // Blocks away from the right and bottom edges, with aligned operands, load every slice but
  // the last partial one without bounds checks.
  const bool interior = vec_a && vec_b && m0 + BM <= p.M && n0 + BN <= p.N;
  la.load(a, lda, p.M - m0, K, vec_a);
  lb.load(b, ldb, p.N - n0, K, vec_b);
  la.store(As);
  lb.store(Bs);
  __syncthreads();
  // One K slice computed from buffer `cur` while the next is staged into buffer cur ^ 1.
  auto slice = [&](auto buf, int64_t k0) {
    constexpr int cur = decltype(buf)::value;
    const bool has_next = k0 + BK < K;
    if (has_next) {
      a += LoadA::k_step(lda);
      b += LoadB::k_step(ldb);
      if (interior && k0 + 2 * BK <= K) {
        la.load_interior(a, lda);
        lb.load_interior(b, ldb);
      } else {
        la.load(a, lda, p.M - m0, K - k0 - BK, vec_a);
        lb.load(b, ldb, p.N - n0, K - k0 - BK, vec_b);
      }
    }
    const float* as = As + cur * kSliceA;
    const float* bs = Bs + cur * kSliceB;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; i += 4)
          load4(&ra[wm * TM + i], as + k * kPitchA + wm0 + wm * WSUBM + lm0 + i);
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
          load4(&rb[wn * TN + j], bs + k * kPitchB + wn0 + wn * WSUBN + ln0 + j);
#pragma unroll
      for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int jj = 0; jj < WNITER * TN; ++jj) {
          const int j = i % 2 ? WNITER * TN - 1 - jj : jj;
          acc[i][j] += ra[i] * rb[j];
        }
    }
    if (has_next) {
      la.store(As + (cur ^ 1) * kSliceA);
      lb.store(Bs + (cur ^ 1) * kSliceB);
    }
    __syncthreads();
  };
  for (int64_t k0 = 0;;) {
    slice(std::integral_constant<int, 0>{}, k0);
    if ((k0 += BK) >= K) break;
    slice(std::integral_constant<int, 1>{}, k0);
    if ((k0 += BK) >= K) break;
  }

  const bool vec_out = out_vec_ok(p);
#pragma unroll
  for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
          store_row4(p, v, m0 + wm0 + wm * WSUBM + lm0 + i, n0 + wn0 + wn * WSUBN + ln0 + j,
                     &acc[wm * TM + i][wn * TN + j], vec_out);
}

}  // namespace gemmtiles
