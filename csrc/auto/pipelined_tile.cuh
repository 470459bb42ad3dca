// The `auto` tier's pipelined tile kernel: warptile's block -> warp -> thread hierarchy, with
// the operands copied global -> shared by asynchronous copies (cp.async, sm_80+) several
// slices ahead of the one computed, instead of staged through registers.
//
//  * STAGES buffers of slices BK deep (8 or 16: auto/launch.cuh); the copies of slice
//    it + STAGES - 1 are issued during the k steps of slice it, a few per step (spread out,
//    they do not queue in front of the fragment reads, which made issuing all of them at the
//    slice's start slower), so a block has STAGES - 1 slices in flight while it computes, with
//    no registers holding them and one barrier per slice;
//  * both operands are kept k by k in shared memory (smem[k][r], rows padded by 4 floats), as
//    warptile keeps them, and read as float4 runs along r. An M-major operand (A
//    column-major, B row-major) is copied 16 bytes at a time as it lies; a K-major one (A
//    row-major, nn.Linear's W^T) 4 bytes at a time, BK lanes along k and 32 / BK rows a warp,
//    so that the copy itself transposes: no registers, no scalar stores, any leading
//    dimension. (Copying 2-8 consecutive k per lane, which saves addresses, was much slower:
//    a copy instruction writes shared memory once per global line it reads.);
//  * the last tile along M (N) is moved back to end at the matrix's edge, so that no copy
//    reads outside a row or column of it (M, N >= the tile: async_tile_ok) and only K's end
//    needs a test: past it a copy reads nothing and fills zeros (cp.async's source size), so
//    the partial slice adds nothing to the sums. The copies are branch-free: a branch per
//    slice between whole and partial tiles ran slower (the copies bunched up), and so did
//    storing zeros in a branch;
//  * 128 x 128 tiles of four warps, two blocks per SM: each block's barriers stall only its
//    own four warps, and the smaller tile fills a GPU with fewer rows.
// Tried and slower (docs/auto.md): a K-major operand kept K-major in shared memory (16-byte
// copies) and read as float4 runs along k, 4 k of one row per load, which needs 4 x (TM + TN)
// operand registers at once; and a K-major operand loaded 16 bytes at a time into registers
// and stored transposed, which the 4-byte copies matched or beat on most products.
// Torch-free, like the ladder's kernels.
#pragma once

#include <cstdint>

#include "../ladder/common.cuh"
#include "cluster.cuh"

namespace gemmtiles {

// One operand of the block tile (ROWS of A's rows or B's columns, BK deep) in shared memory,
// kept as smem[k][r] with a row pitch of ROWS + 4 floats whatever its layout in global memory,
// its copies and its fragment reads. A thread's T fragment rows within a warp tile: lane l of
// the L lanes along this side owns the float4 runs 4l + 4Lg .. 4l + 4Lg + 3 (g < T / 4).
//
// K_MAJOR (k is the unit-stride index: A row-major, B column-major): 4-byte copies, BK lanes
// along k and 32 / BK rows a warp, that transpose on the way (bank (4k + r) % 32: distinct
// for BK = 8; for BK = 16 lanes k and k + 8 share one); any leading dimension. A copy writes
// shared memory once per 128-byte global line it reads (32 / BK lines an instruction), which
// is what the 16-deep slices halve. Otherwise 16-byte copies along r, which need aligned rows
// (async_tile_ok).
template <int ROWS, int BK, int THREADS, bool K_MAJOR>
struct AsyncOperand {
  static constexpr int kPitch = ROWS + 4;
  static constexpr int kStage = BK * kPitch;  // floats per stage
  static_assert(ROWS % 4 == 0 && BK % 4 == 0, "tile sides must be multiples of the float4 width");
  static_assert(K_MAJOR ? THREADS % BK == 0 && (ROWS * BK) % THREADS == 0
                        : THREADS % (ROWS / 4) == 0 && (ROWS * BK / 4) % THREADS == 0,
                "a thread's copies share their k (or r) and cover the tile evenly");

  // A thread's copies of one slice, and the k step of the computation each is issued at
  // (spread evenly, so that they do not queue up in front of the fragment reads).
  static constexpr int kCopies = K_MAJOR ? ROWS * BK / THREADS : ROWS * BK / 4 / THREADS;
  static constexpr int kRowStep = THREADS / BK;  // K-major: rows between a thread's copies
  static constexpr int kPerK = ROWS / 4, kKStep = THREADS / kPerK;  // M-major: float4 runs per k
  static __host__ __device__ constexpr int at_step(int c) { return c * BK / kCopies; }

  // Issues the copies due at k step j of slice (0..ROWS, 0..BK) of the operand at `tile`
  // (its element (0, 0), leading dimension ld) into `stage`; every row of it lies inside the
  // matrix, and ks of its k (ks <= 0: none, the copies only fill zeros). Past ks a copy reads
  // nothing (from the slice's first k) and fills zeros.
  static __device__ __forceinline__ void copy(float* stage, const float* tile, int64_t ld, int64_t ks, int j) {
    const int t = threadIdx.x;
    if constexpr (K_MAJOR) {
      // A thread's copies share their k: one test and one address a slice, then a fixed step.
      const int k = t % BK, r = t / BK;
      const bool in = k < ks;
      const float* src = tile + r * ld + (in ? k : 0);
#pragma unroll
      for (int c = 0; c < kCopies; ++c)
        if (at_step(c) == j)
          cp_async4(stage + k * kPitch + r + c * kRowStep, src + c * kRowStep * ld, in ? 4 : 0);
    } else {
      const int r = t % kPerK * 4, k = t / kPerK;
#pragma unroll
      for (int c = 0; c < kCopies; ++c) {
        const int kk = k + c * kKStep;
        const bool in = kk < ks;
        if (at_step(c) == j) cp_async16(stage + kk * kPitch + r, tile + (in ? kk : 0) * ld + r, in ? 16 : 0);
      }
    }
  }

  // How far the tile pointer moves for the next slice.
  static __device__ __forceinline__ int64_t k_step(int64_t ld) { return K_MAJOR ? BK : BK * ld; }

  // Whole slices (an M-major operand; async_tile_kernel, kWholeSlices): K's first slice
  // starts `shift` (0 .. BK - 1) k before K's start, so that every other slice lies inside K
  // and copies with neither a test nor a source size. A thread's copies of a slice read
  // `step` (copy_step) apart, the first at thread_offset from the slice's element (0, 0).
  static __device__ __forceinline__ int64_t thread_offset(int64_t ld) {
    return int64_t(threadIdx.x / kPerK) * ld + threadIdx.x % kPerK * 4;
  }
  static __device__ __forceinline__ int64_t copy_step(int64_t ld) { return kKStep * ld; }

  // Issues the copies due at k step j of a whole slice into `stage`, if `on`. src: the next
  // copy's source, moved on by `step` after each copy (at the slice's start, this thread's
  // first copy's source): one running address, a 64-bit add per copy.
  static __device__ __forceinline__ void copy_whole(float* stage, const float*& src, int64_t step, bool on, int j) {
    static_assert(!K_MAJOR, "whole slices copy M-major operands");
    const int r = threadIdx.x % kPerK * 4, k = threadIdx.x / kPerK;
#pragma unroll
    for (int c = 0; c < kCopies; ++c) {
      if (at_step(c) != j) continue;
      if (on) cp_async16_all(stage + (k + c * kKStep) * kPitch + r, src);
      src += step;
    }
  }

  // The same for the first slice, whose first `shift` k lie before K's start: their copies
  // read nothing (from the start of the thread's column) and fill zeros. src: this thread's
  // first copy's source in a slice starting at K's start.
  static __device__ __forceinline__ void copy_first(float* stage, const float* src, int64_t ld, int shift, int j) {
    static_assert(!K_MAJOR, "whole slices copy M-major operands");
    const int r = threadIdx.x % kPerK * 4, k = threadIdx.x / kPerK;
#pragma unroll
    for (int c = 0; c < kCopies; ++c) {
      const int kk = k + c * kKStep;
      const bool in = kk >= shift;
      if (at_step(c) == j)
        cp_async16(stage + kk * kPitch + r, in ? src + (kk - k - shift) * ld : src - k * ld, in ? 16 : 0);
    }
  }
  // How far the source moves from the first slice to the second.
  static __device__ __forceinline__ int64_t first_step(int64_t ld, int shift) { return (BK - shift) * ld; }

  // The fragment row e of lane l (of L), relative to the warp tile.
  template <int L>
  static __device__ __forceinline__ int row(int l, int e) {
    return 4 * l + 4 * L * (e / 4) + e % 4;
  }

  // f[e] = the operand at (row e of this lane's fragment, k); `base`: the warp tile's first
  // row in the block tile.
  template <int T, int L>
  static __device__ __forceinline__ void read(float (&f)[T], const float* stage, int base, int l, int k) {
#pragma unroll
    for (int g = 0; g < T / 4; ++g) load4(&f[4 * g], stage + k * kPitch + base + row<L>(l, 4 * g));
  }
};

// Configuration: the block tile (Block::M x Block::N, Block::K deep per slice), the warp tile
// (Warp::M x Warp::N), the fragment of a thread (Thread::M x Thread::N), the slices in flight
// (STAGES - 1 copied ahead of the one computed) and the blocks per SM the register allocation
// must leave room for.
template <class Block_, class Warp_, class Thread_, int STAGES_, int MIN_BLOCKS>
struct AsyncTileConfig {
  using Block = Block_;
  static constexpr int BM = Block_::M, BN = Block_::N, BK = Block_::K, WM = Warp_::M, WN = Warp_::N;
  static constexpr int TM = Thread_::M, TN = Thread_::N, kStages = STAGES_, kMinBlocks = MIN_BLOCKS;
  static constexpr int LM = WM / TM, LN = WN / TN;  // lanes along the warp tile's rows and columns
  static constexpr int kWarps = (BM / WM) * (BN / WN), kThreads = kWarps * kWarpSize;
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles must nest");
  static_assert(LM * LN == kWarpSize, "a warp tile holds one fragment per lane");
  static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, "k and the fragments run in fours");
  static_assert(kStages >= 2, "at least one slice in flight");
  template <bool A_KMAJOR, bool B_KMAJOR>
  static constexpr size_t smem_bytes() {
    return sizeof(float) * kStages *
           (AsyncOperand<BM, BK, kThreads, A_KMAJOR>::kStage + AsyncOperand<BN, BK, kThreads, B_KMAJOR>::kStage);
  }
  // Shared memory of a block whose slice of K is added in its cluster (GemmProblem::k_cluster):
  // the stages, then its partial product (BM x BN floats) in their place.
  template <bool A_KMAJOR, bool B_KMAJOR>
  static constexpr size_t cluster_smem_bytes() {
    return smem_bytes<A_KMAJOR, B_KMAJOR>() > sizeof(float) * BM * BN ? smem_bytes<A_KMAJOR, B_KMAJOR>()
                                                                       : sizeof(float) * BM * BN;
  }
  static dim3 block() { return dim3(kThreads); }
};

// SPLIT_K: blockIdx.z is a slice of K (GemmProblem::k_split), as in warptile_kernel; with
// k_cluster > 1 the slices of a tile are one cluster (its ranks 0 .. k_cluster - 1 being
// blockIdx.z), which adds them up: every block stores its partial product in its own shared
// memory, and after a cluster barrier block r sums the float4 groups g = r, r + k_cluster, ...
// of every thread over the cluster's blocks in rank order (so the same bits on every run)
// and stores them through the epilogue. The out and c of such a launch are the product's.
template <typename Cfg, bool A_KMAJOR, bool B_KMAJOR, bool SPLIT_K = false>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, Cfg::kMinBlocks) async_tile_kernel(GemmProblem p) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN;
  constexpr int TM = Cfg::TM, TN = Cfg::TN, LM = Cfg::LM, LN = Cfg::LN, S = Cfg::kStages;
  using OpA = AsyncOperand<BM, BK, Cfg::kThreads, A_KMAJOR>;
  using OpB = AsyncOperand<BN, BK, Cfg::kThreads, B_KMAJOR>;
  // Both operands M-major: K in whole slices (AsyncOperand::copy_whole), faster than testing
  // the copies of every slice (docs/auto.md). (K-major operands ran slower on whole slices:
  // their 4-byte copies' addresses then took more registers.)
  constexpr bool kWholeSlices = !A_KMAJOR && !B_KMAJOR;
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;                // stage s at As + s * OpA::kStage
  float* const Bs = smem + S * OpA::kStage;

  const BatchView v = batch_view(p);
  const int64_t k_rest = p.K - int64_t(blockIdx.z) * p.k_split;
  const int64_t K = !SPLIT_K ? p.K : k_rest < p.k_split ? k_rest : p.k_split;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
  const int lm = lane / LN, ln = lane % LN;
  // The block's outputs start at (m0, n0); its tile at (mt, nt): the last tile along M (N)
  // is moved back to end at M (N), so that every row and column it copies lies inside the
  // matrix (M >= BM, N >= BN: async_tile_ok). The rows before m0 and columns before n0 of a
  // tile moved back belong to the tile before it and are not stored.
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  const int64_t mt = m0 < p.M - BM ? m0 : p.M - BM, nt = n0 < p.N - BN ? n0 : p.N - BN;
  const int64_t lda = A_KMAJOR ? p.a_rs : p.a_cs, ldb = B_KMAJOR ? p.b_cs : p.b_rs;
  const float* a = v.a + (A_KMAJOR ? mt * lda : mt);
  const float* b = v.b + (B_KMAJOR ? nt * ldb : nt);
  const int64_t slices = (K + BK - 1) / BK;

  float acc[TM][TN] = {};
  // k step k of the slice in stages as, bs.
  auto compute = [&](const float* as, const float* bs, int k) {
    float fa[TM], fb[TN];
    OpA::template read<TM, LM>(fa, as, wm0, lm, k);
    OpB::template read<TN, LN>(fb, bs, wn0, ln, k);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int jj = 0; jj < TN; ++jj) {
        // Serpentine order: consecutive FMAs share an operand at each row change.
        const int j = i % 2 ? TN - 1 - jj : jj;
        acc[i][j] += fa[i] * fb[j];
      }
  };
  int read = 0, write = S - 1;  // the stage computed, and the stage copied into
  auto next_stage = [&] {
    read = read == S - 1 ? 0 : read + 1;
    write = write == S - 1 ? 0 : write + 1;
  };

  if constexpr (kWholeSlices) {
    // K's first slice starts `shift` k early (its first shift k are zeros), so that the
    // others lie inside K: their copies read from a running address, with no test (past the
    // last slice, predicated off). The sources a and b: this thread's first copies'.
    const int shift = static_cast<int>(slices * BK - K);
    const int64_t step_a = OpA::copy_step(lda), step_b = OpB::copy_step(ldb);
    a += OpA::thread_offset(lda);
    b += OpB::thread_offset(ldb);
#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      if (s < slices) {
        const float *ca = a, *cb = b;
#pragma unroll
        for (int j = 0; j < BK; ++j) {
          if (s == 0) {
            OpA::copy_first(As, a, lda, shift, j);
            OpB::copy_first(Bs, b, ldb, shift, j);
          } else {
            OpA::copy_whole(As + s * OpA::kStage, ca, step_a, true, j);
            OpB::copy_whole(Bs + s * OpB::kStage, cb, step_b, true, j);
          }
        }
        if (s + 1 < slices) {
          a += s == 0 ? OpA::first_step(lda, shift) : OpA::k_step(lda);
          b += s == 0 ? OpB::first_step(ldb, shift) : OpB::k_step(ldb);
        }
      }
      cp_async_commit();
    }
    for (int64_t it = 0; it < slices; ++it) {
      cp_async_wait<S - 2>();  // slice it has landed (this thread's copies) ...
      __syncthreads();         // ... everyone's; and stage `write` was last read in iteration it - 1
      const int64_t next = it + S - 1;  // copied into stage `write` during this slice, if any
      const bool copy = next < slices;
      const float *ca = a, *cb = b;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        OpA::copy_whole(As + write * OpA::kStage, ca, step_a, copy, k);
        OpB::copy_whole(Bs + write * OpB::kStage, cb, step_b, copy, k);
        compute(As + read * OpA::kStage, Bs + read * OpB::kStage, k);
      }
      cp_async_commit();
      if (next + 1 < slices) a += OpA::k_step(lda), b += OpB::k_step(ldb);
      next_stage();
    }
  } else {
    // (The two main loops differ in their copies alone. One loop with the copies passed in
    // as a lambda compiled to the same instructions in another order, and ran the K-major
    // copies a little slower: docs/auto.md.)
    // Slices 0 .. S - 2 in flight; one group of copies per slice, empty past the last. The
    // tile pointers a and b then move on slice by slice while there is one to copy.
#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      if (s < slices) {
#pragma unroll
        for (int j = 0; j < BK; ++j) {
          OpA::copy(As + s * OpA::kStage, a, lda, K - s * BK, j);
          OpB::copy(Bs + s * OpB::kStage, b, ldb, K - s * BK, j);
        }
        if (s + 1 < slices) a += OpA::k_step(lda), b += OpB::k_step(ldb);
      }
      cp_async_commit();
    }
    for (int64_t it = 0; it < slices; ++it) {
      cp_async_wait<S - 2>();  // slice it has landed (this thread's copies) ...
      __syncthreads();         // ... everyone's; and stage `write` was last read in iteration it - 1
      // Slice it + S - 1 is copied into stage `write` during this slice's k steps, without a
      // branch: past the last slice the copies read nothing (ks <= 0) from the last one.
      const int64_t next = it + S - 1, ks = next < slices ? K - next * BK : 0;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        OpA::copy(As + write * OpA::kStage, a, lda, ks, k);
        OpB::copy(Bs + write * OpB::kStage, b, ldb, ks, k);
        compute(As + read * OpA::kStage, Bs + read * OpB::kStage, k);
      }
      cp_async_commit();
      if (next + 1 < slices) a += OpA::k_step(lda), b += OpB::k_step(ldb);
      next_stage();
    }
  }
  cp_async_wait<0>();

  // Outputs (i, j .. j + 3) of this thread's fragment: r[0..3] through the epilogue.
  const bool vec_out = out_vec_ok(p) && nt % 4 == 0;
  auto store4 = [&](int i, int j, const float* r) {
    const int64_t m = mt + wm0 + OpA::template row<LM>(lm, i);
    if (m < m0) return;
    const int64_t n = nt + wn0 + OpB::template row<LN>(ln, j);
    if (n >= n0) {
      store_row4(p, v, m, n, r, vec_out);
    } else {
#pragma unroll
      for (int jj = 0; jj < 4; ++jj)
        if (n + jj >= n0) v.out[m * p.out_rs + n + jj] = epilogue(p, v.c, m, n + jj, r[jj]);
    }
  };

  if constexpr (SPLIT_K) {
    if (p.k_cluster > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      // This thread's float4 group g of its fragment at part[g * threads + thread]: a warp
      // stores and loads 512 contiguous bytes, no bank conflicts.
      constexpr int kGroups = TM * TN / 4;
      static_assert(kGroups * 4 * Cfg::kThreads == BM * BN, "the partial product fills BM x BN floats");
      float4* const part = reinterpret_cast<float4*>(smem);
      __syncthreads();  // every warp is done with the stages
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
          part[(i * (TN / 4) + j / 4) * Cfg::kThreads + threadIdx.x] =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      cluster_sync();
      const int splits = static_cast<int>(p.k_cluster);
      for (int g = static_cast<int>(cluster_rank()); g < kGroups; g += splits) {
        const float4 sum = cluster_sum4(part + g * Cfg::kThreads + threadIdx.x, splits);
        const float r4[4] = {sum.x, sum.y, sum.z, sum.w};
        store4(g / (TN / 4), g % (TN / 4) * 4, r4);
      }
      cluster_sync();  // this block's partial stays until the cluster has read it
#else
      __trap();  // the launch asks for clusters only of code built for sm_90+ (auto/launch.cuh)
#endif
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; j += 4) store4(i, j, &acc[i][j]);
}

}  // namespace gemmtiles
