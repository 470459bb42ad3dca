// Tier `warptile`: double_buffer, with a block -> warp -> thread hierarchy, a deeper
// asynchronous copy pipeline, every operand layout read natively, and tile shapes chosen per
// problem.
//
// Warp tiling. The block tile (BM x BN) is split into warp tiles (WM x WN); each warp covers
// its tile in WMITER x WNITER steps of a (WM/WMITER) x (WN/WNITER) sub-tile in which each of
// its 32 lanes owns a TM x TN fragment. The fragments a warp reads from shared memory for one
// k are a few contiguous float4 runs (one per sub-tile row and column), so every LDS.128 is
// conflict-free whatever BM and BN are, and the block tile can grow: the large configuration
// (256 x 128 x 8, 16 x 8 outputs per thread, one block of 256 threads per SM, the shape of
// cuBLAS's own Hopper SIMT kernel) does 128 FMAs per 6 shared loads per k, against 64 per 4
// in double_buffer's 128 x 128.
//
// Asynchronous copies. At one block per SM, double_buffer's register staging stalls: the
// loaded slice must pass through registers (which the 128 accumulators need) and be stored
// by the same warps that compute. Here global -> shared copies are cp.async (sm_80+), issued
// STAGES - 1 slices ahead into a ring of STAGES shared buffers; the copy engine writes shared
// memory while the warps compute, and one barrier per slice both publishes the next slice
// and frees the oldest buffer. A K-major operand (A row-major, B column-major) is transposed
// on the way in by 4-byte copies; an M/N-major one takes 16-byte copies when aligned.
// Out-of-range elements are zero-filled by the copy itself (src-size 0).
//
// Layouts. A and B are read row- or column-major in place (template flags), so nn.Linear's
// x @ W^T (B column-major) and its backward products move no copies.
// Costs: ~220 registers per thread in the large configuration (one block per SM: latency is
// hidden by instruction-level parallelism, not by other warps); STAGES x BK x (BM + BN + 8)
// floats of dynamic shared memory; sm_80 or newer for cp.async (older GPUs copy
// synchronously through the same code).
#pragma once

#include "common.cuh"

namespace gemmtiles {

// dst <- src_bytes (0 or 4) bytes of src, zero-filled to 4 bytes, asynchronously.
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
#else
  *dst = src_bytes ? *src : 0.0f;
#endif
}

// dst[0..3] <- src_bytes (0..16) bytes of src, zero-filled to 16 bytes; both 16-byte aligned.
__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
#else
  for (int j = 0; j < 4; ++j) dst[j] = 4 * j < src_bytes ? src[j] : 0.0f;
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// Issues the asynchronous copies of one BK-deep operand tile into smem[k * PITCH + r]
// (r over the ROWS = BM rows of A or BN columns of B), as TileLoader lays it out.
template <int ROWS, int BK, int THREADS, bool K_MAJOR, int PITCH>
struct AsyncTileLoader {
  static_assert((ROWS * BK) % (4 * THREADS) == 0, "each thread copies whole float4s");
  static_assert(PITCH % 4 == 0, "smem rows must stay 16-byte aligned");

  // src: the tile's element (0, 0) (see TileLoader::origin); rows, ks: how many of its r and k
  // lie inside the matrix; any: a valid address to name in zero-filled copies.
  static __device__ __forceinline__ void issue(float* smem, const float* src, int64_t ld,
                                               int64_t rows, int64_t ks, bool vec,
                                               const float* any) {
    if (!K_MAJOR && vec) {
#pragma unroll
      for (int i = 0; i < ROWS * BK / 4 / THREADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        const int k = e / (ROWS / 4), r = e % (ROWS / 4) * 4;
        const int64_t left = k < ks ? rows - r : 0;  // elements of this float4 inside
        const int valid = left >= 4 ? 4 : (left > 0 ? int(left) : 0);
        cp_async16(smem + k * PITCH + r, valid ? src + k * ld + r : any, valid * 4);
      }
    } else {
#pragma unroll
      for (int i = 0; i < ROWS * BK / THREADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        // K-major: consecutive threads take consecutive k of one row (coalesced reads), and
        // the transposed writes of a warp land in 32 distinct banks for PITCH % 32 == 4.
        const int r = K_MAJOR ? e / BK : e % ROWS, k = K_MAJOR ? e % BK : e / ROWS;
        const bool valid = r < rows && k < ks;
        const float* s = K_MAJOR ? src + r * ld + k : src + k * ld + r;
        cp_async4(smem + k * PITCH + r, valid ? s : any, valid ? 4 : 0);
      }
    }
  }
};

template <int BM_, int BN_, int BK_, int WM_, int WN_, int WNITER_, int TM_, int TN_,
          int STAGES_ = 3, int MIN_BLOCKS = 1>
struct WarptileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int WNITER = WNITER_, TM = TM_, TN = TN_, STAGES = STAGES_;
  static constexpr int kWarps = (BM / WM) * (BN / WN);
  static constexpr int kThreads = kWarps * 32;
  static constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
  static constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
  // Blocks per SM that the register allocation must leave room for (__launch_bounds__).
  static constexpr int kMinBlocks = MIN_BLOCKS;
  // STAGES buffers of A and B slices, rows padded by 4 floats; dynamic shared memory, since
  // deeper pipelines pass the 48 KB of a static allocation.
  static constexpr int kPitchA = BM + 4, kPitchB = BN + 4;
  static constexpr size_t kSmemBytes = sizeof(float) * STAGES * BK * (kPitchA + kPitchB);
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
  static_assert(WMITER >= 1 && (WM * WN) % (32 * TM * TN * WNITER) == 0,
                "a warp's lanes must cover its tile in whole sub-tiles");
  static_assert(WM % WMITER == 0 && WN % WNITER == 0, "sub-tiles must tile the warp tile");
  static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "a sub-tile holds one fragment per lane");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read and written as float4");
  static_assert(STAGES >= 2, "the pipeline needs a buffer to compute from and one to fill");
  static dim3 block() { return dim3(kThreads); }
};

template <typename Cfg, bool A_KMAJOR, bool B_KMAJOR>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) warptile_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN;
  constexpr int TM = Cfg::TM, TN = Cfg::TN, WMITER = Cfg::WMITER, WNITER = Cfg::WNITER;
  constexpr int WSUBM = Cfg::WSUBM, WSUBN = Cfg::WSUBN, STAGES = Cfg::STAGES;
  constexpr int kPitchA = Cfg::kPitchA, kPitchB = Cfg::kPitchB;
  constexpr int kSliceA = BK * kPitchA, kSliceB = BK * kPitchB;
  using LoadA = AsyncTileLoader<BM, BK, Cfg::kThreads, A_KMAJOR, kPitchA>;
  using LoadB = AsyncTileLoader<BN, BK, Cfg::kThreads, B_KMAJOR, kPitchB>;
  // Stage s of A at As + s * kSliceA, element (k, m) at k * kPitchA + m; B likewise.
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;
  float* const Bs = smem + STAGES * kSliceA;

  const BatchView v = batch_view(p);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
  const int lm0 = lane / (WSUBN / TN) * TM, ln0 = lane % (WSUBN / TN) * TN;
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  // A: (M, K) read as row-major (ld = a_rs) or column-major (ld = a_cs); B likewise.
  const int64_t lda = A_KMAJOR ? p.a_rs : p.a_cs;
  const int64_t ldb = B_KMAJOR ? p.b_cs : p.b_rs;
  const bool vec_a = operand_vec_ok(v.a, lda), vec_b = operand_vec_ok(v.b, ldb);
  const float* const a0 = A_KMAJOR ? v.a + m0 * lda : v.a + m0;
  const float* const b0 = B_KMAJOR ? v.b + n0 * ldb : v.b + n0;
  const int64_t a_step = A_KMAJOR ? BK : BK * lda, b_step = B_KMAJOR ? BK : BK * ldb;
  const int64_t slices = (p.K + BK - 1) / BK;

  // Slice s of K into stage s % STAGES; every call commits one group (empty past the end),
  // so "wait until STAGES - 2 groups remain" always means "slice s has landed".
  auto issue = [&](int64_t s) {
    if (s < slices) {
      const int64_t k0 = s * BK;
      LoadA::issue(As + s % STAGES * kSliceA, a0 + s * a_step, lda, p.M - m0, p.K - k0, vec_a, v.a);
      LoadB::issue(Bs + s % STAGES * kSliceB, b0 + s * b_step, ldb, p.N - n0, p.K - k0, vec_b, v.b);
    }
    cp_async_commit();
  };

  float acc[WMITER * TM][WNITER * TN] = {};
  float ra[WMITER * TM], rb[WNITER * TN];
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (int64_t s = 0; s < slices; ++s) {
    cp_async_wait<STAGES - 2>();
    // Slice s is visible to every thread, and every thread is done with slice s - 1,
    // whose stage the next issue refills.
    __syncthreads();
    issue(s + STAGES - 1);
    const float* as = As + s % STAGES * kSliceA;
    const float* bs = Bs + s % STAGES * kSliceB;
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
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
  }
  cp_async_wait<0>();

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
