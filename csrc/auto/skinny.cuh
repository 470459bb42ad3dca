// Small M (decode, small batches): out = A @ B with a few rows (up to 16), bound by reading B.
//
// With few rows of A, each element of B feeds at most M FMAs: the product is bound by the
// time it takes to read B (64 MiB for a 4096 x 4096 weight) from DRAM, not by arithmetic.
// The tiled tiers waste most of a 128-row tile on rows that do not exist and leave SMs idle
// (a 4096-column output makes 16-32 tiles for 132 SMs). Here each warp streams its own
// columns of B once, with loads coalesced along B's contiguous dimension, and K is split
// over enough blocks to keep every SM's loads in flight. Each split writes its partial sums
// to a workspace; a second kernel adds the splits in a fixed order (no float atomics, so the
// result is the same bits on every run) and applies alpha, beta and c. (The row-major-B
// kernel's 2-8 blocks along K may instead add up in their thread-block cluster: no workspace,
// no second kernel; skinny_split_sums.)
//  * B column-major (nn.Linear's W^T): a lane walks k, a group of lanes holds NW columns
//    and reads A in place or from shared memory; the lanes' partial sums are added by warp
//    shuffles at the end.
//  * B row-major: a block is 8 warps on the same 32 W columns (W per lane), each warp on its
//    own slice of K, with its rows of A staged in its own shared memory (every lane reads the
//    same A(m, k): a broadcast); the block adds its warps' sums in shared memory, so the
//    workspace holds one partial product per block along K, not per slice (8 times less to
//    write and add), and most products need no workspace at all. Float4s of B reach the
//    warps through a ring of shared memory each (cp.async), single floats through registers.
// B is read as float4 (W = 4 consecutive elements per lane, 512 bytes per warp load) when
// its contiguous lines are 16-byte aligned, else one float per lane (128 bytes per load), at
// any stride.
// Costs: MT * NW accumulators per thread (MT * W in the row-major kernel); shared memory for
// A (the column-major kernel with A staged: 2 * MT * KC, two chunks; the row-major one:
// 8 * MT * max(64, 32 W), its warps' chunks of A, then their sums; with float4s through shared
// memory, skinny_async_smem: its warps' rings of B besides); a workspace of splits *
// batch * M * N floats when K is split across blocks (ceil(splits / 8) for the row-major
// kernel, whose splits are its warps').
#pragma once

#include "../ladder/common.cuh"
#include "cluster.cuh"
#include "plan.h"

namespace gemmtiles {

// Configuration of the column-major-B kernel: MT rows of A (M <= MT), NW columns per lane
// group, KC columns of A staged per step, MIN_BLOCKS resident blocks per SM
// (__launch_bounds__): enough warps in flight to cover DRAM latency; KL lanes along k per
// group of columns (32 / KL groups per warp).
template <int MT_, int NW_, int MIN_BLOCKS = 2, int KC_ = 256, int KL_ = 32>
struct SkinnyConfig {
  static constexpr int MT = MT_, NW = NW_, KC = KC_, kMinBlocks = MIN_BLOCKS, KL = KL_;
  static constexpr int kGroups = 32 / KL;
  static_assert(KL == 8 || KL == 16 || KL == 32, "a warp holds whole groups of lanes along k");
  static constexpr int kWarps = 8, kThreads = 32 * kWarps;
  // Steps of B whose loads are in flight ahead of their use (A staged), for float4s: more
  // where one block per SM leaves each thread twice the registers. Single floats keep twice
  // as many steps in flight (a quarter of the bytes a step; skinny_kmajor_kernel).
  static constexpr int kAhead = MIN_BLOCKS == 1 ? 4 : 2;
  static_assert(KC % 32 == 0 && (MT * KC) % kThreads == 0, "the A slice is staged in whole rounds");
};

// The K range a block works on, and where its partial sums go: with splits > 1 to
// ws[split][z][m][n] (the reduction kernel finishes them), else straight to out. The row-major-B
// kernels' blocks along K may instead be one cluster (cluster > 1: all of them, blockIdx.y its
// rank), which adds their sums in shared memory and writes out: no workspace, no second launch.
struct SkinnySplit {
  int64_t k_slice;  // multiple of 32 (column-major B) or 16 (row-major B, a warp's slice)
  float* ws;        // (splits, batch, M, N), or nullptr when K is not split
  int cluster = 1;  // blocks along K added in their cluster (gridDim.y), or 1
};

// Dynamic shared memory of skinny_kmajor_kernel<Cfg, W, kStaged>: the two staged chunks of A.
template <class Cfg>
constexpr size_t skinny_kmajor_smem(bool staged) {
  return staged ? 2 * sizeof(float) * Cfg::MT * Cfg::KC : 0;
}

// Writes one finished partial sum: to the workspace, or through the epilogue when K is whole.
__device__ __forceinline__ void skinny_store(const GemmProblem& p, const BatchView& v,
                                             const SkinnySplit& s, int64_t m, int64_t n,
                                             float acc) {
  if (s.ws) {
    s.ws[((int64_t(blockIdx.y) * p.batch + blockIdx.z) * p.M + m) * p.N + n] = acc;
  } else {
    v.out[m * p.out_rs + n * p.out_cs] = epilogue(p, v.c, m, n, acc);
  }
}

// Loads of B, read once per call: through L1 without allocating lines there (B is read-only
// while the kernel runs), so that the lines the block reads again (A's, in the column-major
// kernel) stay in L1 while B streams past.
__device__ __forceinline__ float load_stream(const float* p) {
  float x;
  asm volatile("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(x) : "l"(p));
  return x;
}
__device__ __forceinline__ void load_stream4(float* dst, const float* p) {
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
      : "=f"(dst[0]), "=f"(dst[1]), "=f"(dst[2]), "=f"(dst[3])
      : "l"(p));
}

// W consecutive elements of a line starting at index i, `stride` apart (elements past
// `limit` read as 0): one float4 load when W == 4 and all four are inside (W == 4 only for a
// unit stride and a 16-byte-aligned line, which the launch checks). kStream: B's loads.
template <int W, bool kStream = true>
__device__ __forceinline__ void load_line(float (&dst)[W], const float* line, int64_t i,
                                          int64_t stride, int64_t limit) {
  if (W == 4 && i + 3 < limit) {
    if (kStream) load_stream4(dst, line + i);
    else load4(dst, line + i);
  } else {
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const float* e = line + (i + w) * stride;
      dst[w] = i + w < limit ? (kStream ? load_stream(e) : *e) : 0.0f;
    }
  }
}

// The column-major-B kernels' chunk of A: its `span` columns from k0 (a multiple of 4, zeros
// past k_end and rows past M) into dst, A(m, k0 + kk) at dst[m * KC + kk], by the block's
// kThreads threads: rows' whole float4s as asynchronous copies, all in flight at once (where
// A's rows are 16-byte aligned lines: a_vec; k0 a multiple of 4), rows past M as zeros;
// float4s that cross k_end (at most one a row), and every float of an unaligned A, through
// registers. One group of copies: complete after cp_async_wait and a barrier.
template <int MT, int KC, int kThreads>
__device__ __forceinline__ void skinny_stage_a(float* dst, const GemmProblem& p, const BatchView& v, bool a_vec,
                                               int64_t k0, int64_t k_end, int span) {
  for (int e = threadIdx.x; e < MT * span / 4; e += kThreads) {
    const int m = e / (span / 4), kk = e % (span / 4) * 4;
    const int64_t k = k0 + kk;
    const float* row = v.a + m * p.a_rs;
    if (a_vec && (m >= p.M || k + 3 < k_end || k >= k_end)) {
      const bool in = m < p.M && k < k_end;
      cp_async16(&dst[m * KC + kk], in ? row + k : v.a, in ? 16 : 0);
    } else {
      float x[4];
#pragma unroll
      for (int w = 0; w < 4; ++w) x[w] = m < p.M && k + w < k_end ? row[(k + w) * p.a_cs] : 0.0f;
      *reinterpret_cast<float4*>(&dst[m * KC + kk]) = make_float4(x[0], x[1], x[2], x[3]);
    }
  }
  cp_async_commit();
}

// One step of skinny_kmajor_store's butterfly (lanes kOff apart), then the next: each lane keeps
// kHalf = T * kOff / KL of the sums (the upper half where its kOff bit is set) and adds its
// partner's partial sums of them; once it holds one total, the step adds the partner's. A
// template per step, so that every index into x is a constant and x stays in registers.
template <int T, int KL, int kOff = KL / 2>
__device__ __forceinline__ void skinny_reduce_scatter(float (&x)[T], int lane) {
  if constexpr (kOff > 0) {
    constexpr int kHalf = T * kOff / KL;
    if constexpr (kHalf > 0) {
      // Selected as bits, as one instruction each, not as a ternary on the elements.
      const unsigned upper = lane & kOff ? ~0u : 0u;
#pragma unroll
      for (int i = 0; i < kHalf; ++i) {
        const unsigned lo = __float_as_uint(x[i]), hi = __float_as_uint(x[i + kHalf]);
        const float keep = __uint_as_float((hi & upper) | (lo & ~upper));
        const float send = __uint_as_float((lo & upper) | (hi & ~upper));
        x[i] = keep + __shfl_xor_sync(0xffffffffu, send, kOff);
      }
    } else {
      x[0] += __shfl_xor_sync(0xffffffffu, x[0], kOff);
    }
    skinny_reduce_scatter<T, KL, kOff / 2>(x, lane);
  }
}

// The column-major-B kernels' end: a group's T = MT * NW sums, each added over its KL lanes by a
// fixed butterfly (the same tree on every run and every lane, so the same bits) that also
// scatters them: at each step a lane keeps the half of its sums that its lane bit names and
// sends the other half to its partner, so a lane adds T / 2 + T / 4 + ... shuffled sums, not T
// per step, and ends with R = T / KL totals of its own, flat indices R * lane + i (with T < KL,
// the last steps add the one total that KL / T neighbours share; the first of them writes it).
// One store per total a lane holds, not one per total of the group: unrolled over all T sums,
// the stores (each with its epilogue's address arithmetic, taken by one lane in KL) would be
// most of the kernel's code, which every block that writes straight to out fetches cold.
template <int MT, int NW, int KL>
__device__ __forceinline__ void skinny_kmajor_store(const GemmProblem& p, const BatchView& v, const SkinnySplit& s,
                                                    float (&acc)[MT][NW], int lane, int64_t n0) {
  constexpr int T = MT * NW, R = T >= KL ? T / KL : 1, kShare = T >= KL ? 1 : KL / T;
  static_assert((T & (T - 1)) == 0 && (KL & (KL - 1)) == 0, "sums and lanes halve evenly");
  float x[T];
#pragma unroll
  for (int i = 0; i < T; ++i) x[i] = acc[i / NW][i % NW];
  skinny_reduce_scatter<T, KL>(x, lane);
  if (lane % kShare != 0) return;
  const int first = R * (lane / kShare);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int m = (first + i) / NW, j = (first + i) % NW;
    if (m < p.M && n0 + j < p.N) skinny_store(p, v, s, m, n0 + j, x[i]);
  }
}

// B column-major (unit row stride): a warp is 32 / KL groups of KL lanes; a group holds NW
// columns, and its lanes take W consecutive k of each per step (KL W k per column and step).
// Where A comes from depends on how many of its rows there are:
//  * kStaged (8-16 rows): the block stages A's rows in shared memory KC columns at a time,
//    between two barriers, and each step reads its W columns of them there. With KL = 8 the
//    four groups of a warp read the same A(m, k..k+3) (a broadcast): one shared wavefront per
//    row and step, against four when each of the 32 lanes reads its own k — what lets 16
//    rows (4 columns per group) stay bound by B's stream rather than A's reads;
//  * otherwise (up to 4 rows): A is read in place (float4 along k where its rows allow, the
//    block's warps hitting the same lines in L1), with no shared memory and no barriers, so
//    a warp's loads of B never wait for the block; kUnroll steps' loads of B are issued
//    before any is used, and rows of A past M load nothing.
// With 8 rows in place the loads of A outnumber B's two to one in the same load pipe (much
// slower than staged); with one row staged, the barriers cost more than they save (docs/auto.md).
// Grid (ceil(N / (8 * 32 / KL * NW)), splits, batch).
template <class Cfg, int W, bool kStaged>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) skinny_kmajor_kernel(GemmProblem p, SkinnySplit s) {
  constexpr int MT = Cfg::MT, NW = Cfg::NW, KC = Cfg::KC, KL = Cfg::KL, kStep = KL * W;
  const BatchView v = batch_view(p);
  // A warp's lane index is group * KL + lane: a group's lanes are neighbours, so the
  // butterfly that adds their sums stays inside it.
  const int lane = threadIdx.x % KL, warp = threadIdx.x / 32, group = threadIdx.x % 32 / KL;
  const int64_t n0 = ((int64_t(blockIdx.x) * Cfg::kWarps + warp) * Cfg::kGroups + group) * NW;
  const int64_t k_begin = int64_t(blockIdx.y) * s.k_slice;
  const int64_t k_end = k_begin + s.k_slice < p.K ? k_begin + s.k_slice : p.K;
  const float* b_col[NW];
  int64_t b_end[NW];  // k_end, or 0 for a column past N (read as zeros)
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    b_col[j] = v.b + (n0 + j < p.N ? n0 + j : 0) * p.b_cs;
    b_end[j] = n0 + j < p.N ? k_end : 0;
  }
  float acc[MT][NW] = {};
  if constexpr (kStaged) {
    // The lane's steps run kStep apart from k_begin + lane W, across the staged chunks; B's
    // loads run kAhead steps ahead of their use, through the chunk boundaries too. A chunk is
    // up to KC columns of A, in one of two buffers (dynamic shared memory, skinny_kmajor_smem):
    // the next chunk is copied (cp.async, all of a thread's copies in flight at once) while
    // this one is used, one barrier a chunk. The last chunk is cut to whole rounds of kAhead
    // steps past k_end, whose loads of B read nothing and add zeros. (Staging through registers
    // one float4 a thread at a time, between two barriers, as before, was slower on 16 rows and
    // about as fast on 8: docs/auto.md.)
    // Single floats keep twice the float4s' steps in flight (a step is a quarter of the
    // bytes), as many as the registers hold without spilling (nvcc 13, sm_90: 118 registers for
    // 8 rows at two blocks an SM, 205 for 16 at one; twice as many again spill).
    constexpr int kAhead = W == 1 ? 2 * Cfg::kAhead : Cfg::kAhead, kRound = kAhead * kStep;
    static_assert(KC % kRound == 0, "a staged chunk is whole rounds of steps");
    // Chunk c at As + (c % 2) * MT * KC, its A(m, k0 + kk) at [m * KC + kk].
    extern __shared__ __align__(16) float As[];
    const bool a_vec = p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
    float bv[kAhead][NW][W];
    // A column past N reads the last column (an in-bounds read, never stored) instead of
    // keeping a bound per column in registers.
    auto load_b = [&](float (&dst)[NW][W], int64_t k) {
#pragma unroll
      for (int j = 0; j < NW; ++j)
        load_line<W>(dst[j], v.b + (n0 + j < p.N ? n0 + j : p.N - 1) * p.b_cs, k, p.b_rs, k_end);
    };
    // Columns of the chunk at k0: up to KC, cut to whole rounds (zeros past k_end).
    auto chunk_span = [&](int64_t k0) {
      const int64_t cols = k_end - k0 < KC ? k_end - k0 : KC;
      return int((cols + kRound - 1) / kRound) * kRound;
    };
    // Stages the chunk of A at k0 into `dst` (skinny_stage_a; k0 a multiple of 32).
    auto stage = [&](float* dst, int64_t k0) {
      skinny_stage_a<MT, KC, Cfg::kThreads>(dst, p, v, a_vec, k0, k_end, chunk_span(k0));
    };
#pragma unroll
    for (int u = 0; u < kAhead; ++u) load_b(bv[u], k_begin + lane * W + u * kStep);
    stage(As, k_begin);
    int buf = 0;
    for (int64_t k0 = k_begin; k0 < k_end; k0 += KC, buf ^= 1) {
      const int rounds = chunk_span(k0) / kRound;
      cp_async_wait<0>();  // this chunk's copies (this thread's) have landed ...
      __syncthreads();     // ... everyone's; and the other buffer's chunk has been used
      // The next chunk is copied while this one is computed.
      if (k0 + KC < k_end) stage(As + (buf ^ 1) * MT * KC, k0 + KC);
      const float* const Ac = As + buf * MT * KC;
      for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int u = 0; u < kAhead; ++u) {
          const int kk = lane * W + (r * kAhead + u) * kStep;
          float cur[NW][W];
#pragma unroll
          for (int j = 0; j < NW; ++j)
#pragma unroll
            for (int w = 0; w < W; ++w) cur[j][w] = bv[u][j][w];
          load_b(bv[u], k0 + kk + kRound);
#pragma unroll
          for (int m = 0; m < MT; ++m) {
            float av[W];
#pragma unroll
            for (int w = 0; w < W; ++w) av[w] = Ac[m * KC + kk + w];
#pragma unroll
            for (int j = 0; j < NW; ++j)
#pragma unroll
              for (int w = 0; w < W; ++w) acc[m][j] += av[w] * cur[j][w];
          }
        }
      }
    }
  } else {
    constexpr int kUnroll = W == 4 || MT > 4 ? 2 : 4;
    // A's rows as lines along k: float4 loads need unit stride along k, 16-byte aligned rows.
    const bool a_vec = W == 4 && p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
    for (int64_t k = k_begin + lane * W; k < k_end; k += kUnroll * kStep) {
      float bv[kUnroll][NW][W];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int j = 0; j < NW; ++j) load_line<W>(bv[u][j], b_col[j], k + u * kStep, p.b_rs, b_end[j]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t ku = k + u * kStep;
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          float av[W];
          const float* a_row = v.a + m * p.a_rs;
          const int64_t a_end = m < p.M ? k_end : 0;  // rows past M: zeros, no loads
          if (a_vec) {
            load_line<W, false>(av, a_row, ku, 1, a_end);
          } else {
#pragma unroll
            for (int w = 0; w < W; ++w) av[w] = ku + w < a_end ? a_row[(ku + w) * p.a_cs] : 0.0f;
          }
#pragma unroll
          for (int j = 0; j < NW; ++j)
#pragma unroll
            for (int w = 0; w < W; ++w) acc[m][j] += av[w] * bv[u][j][w];
        }
      }
    }
  }
  skinny_kmajor_store<MT, NW, KL>(p, v, s, acc, lane, n0);
}

// B column-major with 16-byte aligned lines (float4s, W = 4): the staged kernel's groups,
// steps and chunks of A, with B's float4s copied into shared memory (cp.async) instead of
// registers. Each warp keeps S steps of its loads in flight in its own ring; a lane copies its
// NW float4s of a step and later reads back only those, so its own cp.async.wait_group orders
// the ring (no barrier, no shuffle), and what bounds the bytes in flight is shared memory, not
// registers: a DRAM stream as fast as the GPU's needs more of them than the registers of 8 to
// 16 rows' accumulators leave. A's chunks are copied as the staged kernel's, one group of
// copies a chunk between the steps' groups: a chunk's copies are issued a chunk (at least S - 1
// steps) before it is used, so the steps' waits cover them too.
// Steps of B it keeps in flight per warp, for MT rows (auto's builds): what its two blocks per
// SM leave of an sm_90 SM's shared memory beside their chunks of A.
template <int MT>
constexpr int skinny_kmajor_async_stages() { return MT == 8 ? 8 : 4; }
// Dynamic shared memory skinny_kmajor_async_smem<Cfg, S>: two chunks of A, the warps' rings.
template <class Cfg, int S>
constexpr size_t skinny_kmajor_async_smem() {
  return sizeof(float) * (2 * Cfg::MT * Cfg::KC + Cfg::kWarps * S * Cfg::NW * 128);
}
template <class Cfg, int S>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) skinny_kmajor_async_kernel(GemmProblem p, SkinnySplit s) {
  constexpr int MT = Cfg::MT, NW = Cfg::NW, KC = Cfg::KC, KL = Cfg::KL, W = 4, kStep = KL * W;
  static_assert(KC % kStep == 0 && KC / kStep >= S - 1, "a chunk of A is copied at least S - 1 steps ahead");
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % KL, warp = threadIdx.x / 32, group = threadIdx.x % 32 / KL;
  const int64_t n0 = ((int64_t(blockIdx.x) * Cfg::kWarps + warp) * Cfg::kGroups + group) * NW;
  const int64_t k_begin = int64_t(blockIdx.y) * s.k_slice;
  const int64_t k_end = k_begin + s.k_slice < p.K ? k_begin + s.k_slice : p.K;
  extern __shared__ __align__(16) float smem[];
  // Chunk c of A at smem + (c % 2) * MT * KC, its A(m, k0 + kk) at [m * KC + kk]; this lane's
  // float4 of column j in ring stage st at Bs[(st * NW + j) * 128].
  float* const Bs = smem + 2 * MT * KC + warp * S * NW * 128 + threadIdx.x % 32 * 4;
  const bool a_vec = p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
  const float* b_line[NW];  // nullptr: a column past N (zeros, nothing read)
#pragma unroll
  for (int j = 0; j < NW; ++j) b_line[j] = n0 + j < p.N ? v.b + (n0 + j) * p.b_cs : nullptr;
  // Copies step t's float4s (k_begin + t kStep + lane W ...), zeros past k_end (a float4 cut by
  // K reads its floats inside); one group of copies a step, past the slice's end too.
  auto copy_b = [&](int t) {
    const int64_t k = k_begin + int64_t(t) * kStep + lane * W;
    const int bytes = k_end - k >= W ? 16 : k_end > k ? int(k_end - k) * 4 : 0;
    float* dst = Bs + (t % S) * NW * 128;
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      const bool in = b_line[j] != nullptr && bytes > 0;
      cp_async16(dst + j * 128, in ? b_line[j] + k : v.b, in ? bytes : 0);
    }
    cp_async_commit();
  };
  // Copies the chunk of A at k0 (whole steps: zeros past k_end) into dst: one group.
  auto stage = [&](float* dst, int64_t k0) {
    const int64_t cols = k_end - k0 < KC ? k_end - k0 : KC;
    skinny_stage_a<MT, KC, Cfg::kThreads>(dst, p, v, a_vec, k0, k_end, int((cols + kStep - 1) / kStep) * kStep);
  };
  float acc[MT][NW] = {};
  stage(smem, k_begin);
#pragma unroll
  for (int t = 0; t < S; ++t) copy_b(t);
  int t = 0, buf = 0;
  for (int64_t k0 = k_begin; k0 < k_end; k0 += KC, buf ^= 1) {
    cp_async_wait<S - 1>();  // this chunk's copies (this thread's) have landed ...
    __syncthreads();         // ... everyone's; and the other buffer's chunk has been used
    if (k0 + KC < k_end) stage(smem + (buf ^ 1) * MT * KC, k0 + KC);
    const float* const Ac = smem + buf * MT * KC;
    const int64_t cols = k_end - k0 < KC ? k_end - k0 : KC;
    const int steps = int((cols + kStep - 1) / kStep);
    for (int i = 0; i < steps; ++i, ++t) {
      cp_async_wait<S - 1>();  // step t's copies (this lane's) have landed
      const float* const b = Bs + (t % S) * NW * 128;
      float4 bq[NW];
#pragma unroll
      for (int j = 0; j < NW; ++j) bq[j] = *reinterpret_cast<const float4*>(b + j * 128);
      const int kk = i * kStep + lane * W;
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const float4 a4 = *reinterpret_cast<const float4*>(&Ac[m * KC + kk]);
#pragma unroll
        for (int j = 0; j < NW; ++j) {
          float x = acc[m][j];
          x += a4.x * bq[j].x;
          x += a4.y * bq[j].y;
          x += a4.z * bq[j].z;
          x += a4.w * bq[j].w;
          acc[m][j] = x;
        }
      }
      // The stage just read takes step t + S (its reads come first in the lane's order, and
      // the compiler keeps them there).
      asm volatile("" ::: "memory");
      copy_b(t + S);
    }
  }
  cp_async_wait<0>();  // copies past the slice (zeros) land before the block exits
  skinny_kmajor_store<MT, NW, KL>(p, v, s, acc, lane, n0);
}

// B row-major: the block's 8 warps (kWarps, below) share 32 W columns, lane l the W from W l
// (W = 4: one float4, for rows of B that are 16-byte aligned lines, unit column stride; W = 1:
// one float, any column stride), and split the block's K: warp w takes the slice
// blockIdx.y * 8 + w, of s.k_slice rows (any number: loads past the slice's end read nothing,
// and their FMAs add zeros). A warp stages its slice of A kSkinnyChunk columns at a time in its
// own shared memory (no barrier across the block),
// the next chunk's loads in registers while it uses the current one; its loads of B run one
// group of P rows ahead of their use, so P to 2 P rows are in flight per lane at all times
// and the first are issued before A's. At the end the 8 warps' sums are added in shared
// memory in warp order (a fixed order: the same bits on every run) and written: to the
// workspace, ws[blockIdx.y][z][m][n], when there are several blocks along K, else through
// the epilogue. Splitting K inside the block is what lets most products need no second
// launch: 8 slices of K run at once on each block's columns, with no partial products to add
// through memory. At 8 rows it runs faster than cuBLAS (docs/auto.md). Several blocks along
// K add up in their cluster instead (SkinnySplit::cluster) where all of the plan's clusters run
// at once, one block an SM (skinny_cluster_sums in auto/plan.h): clusters past those wait for
// the SMs of a whole cluster to come free, and ran slower than the workspace.
// Resident blocks per SM: skinny_split_blocks_per_sm (auto/plan.h, which counts the waves
// with it): float4s up to 8 rows two (128 registers), 16 rows one (64 accumulators a thread);
// single floats two.
// Grid (ceil(N / (32 W)), ceil(slices / kWarps), batch); dynamic shared memory
// skinny_split_smem<MT, W, kWarps>. kWarps: the block's warps, 8 in every build auto runs
// (kSkinnySplitWarps in auto/plan.h); another count builds the same kernel on more slices of K
// a block (launch bounds of one block an SM), for timing apart (scripts/skinny_rows.cu).
inline constexpr int kSkinnyChunk = 64;
template <int MT, int W, int kWarps = 8>
constexpr size_t skinny_split_smem() {
  // The warps' staged chunks of A, then (the same memory) their sums.
  return sizeof(float) * kWarps * MT * (kSkinnyChunk > 32 * W ? kSkinnyChunk : 32 * W);
}

// What the row-major-B kernels share. A warp's chunk of A: A(m, k0 + e) for this lane's e
// (lane, lane + 32, ...), zeros past M and the slice, into registers (kPer = MT * chunk / 32),
// then into the warp's As[m * chunk + e].
template <int MT, int KC = kSkinnyChunk>
__device__ __forceinline__ void skinny_split_load_a(float (&an)[MT * KC / 32], const GemmProblem& p,
                                                    const BatchView& v, int lane, int64_t k0, int64_t k_end) {
#pragma unroll
  for (int i = 0; i < MT * KC / 32; ++i) {
    const int m = i / (KC / 32);
    const int64_t k = k0 + lane + 32 * (i % (KC / 32));
    an[i] = m < p.M && k < k_end ? v.a[m * p.a_rs + k * p.a_cs] : 0.0f;
  }
}
template <int MT, int KC = kSkinnyChunk>
__device__ __forceinline__ void skinny_split_stage_a(float* As, const float (&an)[MT * KC / 32], int lane) {
  __syncwarp();  // the previous chunk's reads of As are done
#pragma unroll
  for (int i = 0; i < MT * KC / 32; ++i) As[(i / (KC / 32)) * KC + lane + 32 * (i % (KC / 32))] = an[i];
  __syncwarp();
}
// The block's sums: its kWarps warps' MT x 32 W sums, red[warp][m][32 W] at the start of
// shared memory, added in warp order (a fixed order: the same bits on every run) and written to
// the workspace, ws[blockIdx.y][z][m][n], when there are several blocks along K, else through
// the epilogue; or, blocks along K in one cluster (s.cluster), kept in red[m][32 W] and added
// over the cluster's blocks in rank order (a fixed order: the same bits on every run), each
// block writing out a share of the outputs. A lane's acc[m][j] is column lane W + j of the
// block, or, kStrided, column 32 j + lane.
template <int MT, int W, int kWarps = 8, bool kStrided = false>
__device__ __forceinline__ void skinny_split_sums(const GemmProblem& p, const BatchView& v, const SkinnySplit& s,
                                                  float* red, const float (&acc)[MT][W], int64_t n_block) {
  constexpr int kCols = 32 * W;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // every warp is done with its chunk of A (the same memory)
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    float* r = &red[(warp * MT + m) * kCols];
    if constexpr (kStrided) {
#pragma unroll
      for (int j = 0; j < W; ++j) r[32 * j + lane] = acc[m][j];
    } else if constexpr (W == 4) {
      *reinterpret_cast<float4*>(r + lane * W) = make_float4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]);
    } else {
      r[lane] = acc[m][0];
    }
  }
  __syncthreads();
  // Output i's sums over the block's warps, in warp order: they lie at i + q MT kCols.
  const auto warp_sum = [&](int i) {
    float x = red[i];
#pragma unroll
    for (int q = 1; q < kWarps; ++q) x += red[q * MT * kCols + i];
    return x;
  };
  if (s.cluster > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // In place: no other output's thread reads output i's warp sums.
    for (int i = threadIdx.x; i < MT * kCols; i += 32 * kWarps) red[i] = warp_sum(i);
    cluster_sync();
    // Float4 groups of four outputs of one row (kCols is a multiple of 4): group g by rank g % cluster.
    const float4* const sums = reinterpret_cast<const float4*>(red);
    const int rows = p.M < MT ? int(p.M) : MT;
    for (int g = int(cluster_rank()) + s.cluster * int(threadIdx.x); g < rows * kCols / 4;
         g += s.cluster * 32 * kWarps) {
      const float4 x = cluster_sum4(sums + g, s.cluster);
      const float x4[4] = {x.x, x.y, x.z, x.w};
      const int m = 4 * g / kCols;
      const int64_t n = n_block + 4 * g % kCols;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (n + j < p.N) v.out[m * p.out_rs + (n + j) * p.out_cs] = epilogue(p, v.c, m, n + j, x4[j]);
    }
    cluster_sync();  // this block's sums stay until the cluster has read them
#else
    __trap();  // the launch asks for clusters only of code built for sm_90+ (auto/launch.cuh)
#endif
    return;
  }
  for (int i = threadIdx.x; i < MT * kCols; i += 32 * kWarps) {
    const int m = i / kCols;
    const int64_t n = n_block + i % kCols;
    if (m >= p.M || n >= p.N) continue;
    const float x = warp_sum(i);
    if (s.ws) {
      s.ws[((int64_t(blockIdx.y) * p.batch + blockIdx.z) * p.M + m) * p.N + n] = x;
    } else {
      v.out[m * p.out_rs + n * p.out_cs] = epilogue(p, v.c, m, n, x);
    }
  }
}

template <int MT, int P, int W, int kWarps = 8>
__global__ void __launch_bounds__(32 * kWarps, kWarps == 8 ? skinny_split_blocks_per_sm(MT, W) : 1)
    skinny_nmajor_split_kernel(GemmProblem p, SkinnySplit s) {
  constexpr int KC = kSkinnyChunk, kPer = MT * KC / 32;  // A's elements a lane stages per chunk
  constexpr int kCols = 32 * W;                           // the block's columns
  static_assert(W == 1 || W == 4, "a lane loads one float or one float4 of a row of B");
  static_assert(KC % (2 * P) == 0 && P % 4 == 0, "a chunk is whole pairs of groups of rows, of float4s of A");
  extern __shared__ __align__(16) float smem[];
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t n_block = int64_t(blockIdx.x) * kCols, n0 = n_block + lane * W;
  const int64_t k_begin = (int64_t(blockIdx.y) * kWarps + warp) * s.k_slice;
  const int64_t k_end = k_begin + s.k_slice < p.K ? k_begin + s.k_slice : p.K;
  float* As = smem + warp * MT * KC;  // As[m * KC + kk]: this warp's chunk of A
  float acc[MT][W] = {};
  if (k_begin < k_end) {
    float bv[2][P][W];
    // The lane's line of B: its columns' bounds are the same on every row, so they are
    // decided once (a lane past N loads nothing; a float4 cut by N loads its floats inside),
    // and a row's address is the last one's plus B's row stride: a load costs few
    // instructions besides itself, which single floats, four times the loads of float4s for
    // the bytes, need in order to stay bound by memory.
    const bool lane_in = n0 < p.N, lane_whole = W == 1 ? lane_in : n0 + W - 1 < p.N;
    const float* const b_lane = v.b + (lane_in ? n0 : 0) * p.b_cs;
    // Rows k .. k + P - 1 of B (zeros past the slice).
    auto load_b = [&](float (&dst)[P][W], int64_t k) {
      const int64_t left = k_end - k;
      const int rows = left >= P ? P : left > 0 ? int(left) : 0;
      const float* row = b_lane + k * p.b_rs;
#pragma unroll
      for (int u = 0; u < P; ++u, row += p.b_rs) {
        if (u < rows && lane_whole) {
          if constexpr (W == 4) load_stream4(dst[u], row);
          else dst[u][0] = load_stream(row);
        } else {
#pragma unroll
          for (int w = 0; w < W; ++w) dst[u][w] = u < rows && n0 + w < p.N ? load_stream(row + w * p.b_cs) : 0.0f;
        }
      }
    };
    float an[kPer];
    load_b(bv[0], k_begin);
    skinny_split_load_a<MT>(an, p, v, lane, k_begin, k_end);
    for (int64_t k0 = k_begin; k0 < k_end; k0 += KC) {
      skinny_split_stage_a<MT>(As, an, lane);
      if (k0 + KC < k_end) skinny_split_load_a<MT>(an, p, v, lane, k0 + KC, k_end);
#pragma unroll
      for (int g = 0; g < KC / P; ++g) {
        // Groups past the slice's end hold only zeros: the chunk (the slice's last) ends.
        if (k0 + g * P >= k_end) break;
        load_b(bv[(g + 1) % 2], k0 + (g + 1) * P);
        // A's four rows of k at once (one shared load, a broadcast), for four rows of B.
#pragma unroll
        for (int u = 0; u < P; u += 4)
#pragma unroll
          for (int m = 0; m < MT; ++m) {
            const float4 a4 = *reinterpret_cast<const float4*>(&As[m * KC + g * P + u]);
            const float av[4] = {a4.x, a4.y, a4.z, a4.w};
#pragma unroll
            for (int q = 0; q < 4; ++q)
#pragma unroll
              for (int w = 0; w < W; ++w) acc[m][w] += av[q] * bv[g % 2][u + q][w];
          }
      }
    }
  }
  skinny_split_sums<MT, W, kWarps>(p, v, s, smem, acc, n_block);
}

// Float4s of B (its rows 16-byte aligned lines): the same blocks, slices of K, staging of A
// and sums, with B's rows copied into shared memory (cp.async) instead of registers. Each warp
// keeps S groups of P rows in flight in its own ring of stages; a lane copies its float4 of
// each row and later reads back only that float4, so no barrier or shuffle orders the ring (the
// lane's own cp.async.wait_group does), and no registers hold rows in flight. What bounds the
// bytes in flight is then shared memory, not registers: on products of up to 16 rows drawn at
// random it ran faster than the register kernel on each, most on those of few blocks, where
// one launch with K whole keeps enough rows in flight (scripts/skinny_rows.cu, docs/auto.md).
// A float4 cut by N is copied in part (cp.async fills the rest of its 16 bytes with zeros).
// kSingles: the same ring for rows that are not 16-byte aligned (N not a multiple of 4 gives
// three products in four such rows), filled by four 4-byte copies a lane and row, lane l's
// j-th of column 32 j + l: a warp's copy is 128 consecutive bytes into 32 banks, and a lane
// still reads back only what it copied (its four columns, 32 apart), so the ring needs no
// barrier either; skinny_split_sums puts the columns back in order. Its edge is a copy of 0
// bytes, chosen per lane once: no branch a row, which is what made the ring slower than single
// floats when each row was realigned with branches (docs/auto.md). Four times the copies of
// float4s for the bytes, it runs longer than they do, most on small products (its price:
// kSkinnySinglesRingSteps in auto/plan.h).
// The register kernel above stays for single floats (blocks of 32 columns, where float4 blocks
// of 128 leave SMs idle) and for GPUs whose SMs hold less shared memory.
// Dynamic shared memory skinny_async_smem<MT, S>: the warps' chunks of A, then their rings
// (at least the warps' sums, which take the same memory at the end).
inline constexpr int kSkinnyAsyncRows = 4;  // P: rows of B a group
template <int MT, int S>
constexpr size_t skinny_async_smem() {
  return sizeof(float) * 8 * (MT * kSkinnyChunk + S * kSkinnyAsyncRows * 128);
}
// Stages a warp keeps: six, five for 8 rows (the builds timed: scripts/skinny_rows.cu); two
// blocks fit in the 228 KB of an sm_90 SM (16 rows: one block, skinny_split_blocks_per_sm in
// auto/plan.h).
template <int MT>
constexpr int skinny_async_stages() { return MT == 8 ? 5 : 6; }

template <int MT, int S, bool kSingles = false>
__global__ void __launch_bounds__(256, skinny_split_blocks_per_sm(MT, 4))
    skinny_nmajor_async_kernel(GemmProblem p, SkinnySplit s) {
  constexpr int KC = kSkinnyChunk, P = kSkinnyAsyncRows, kPer = MT * KC / 32, kCols = 128;
  static_assert(KC % P == 0 && P % 4 == 0 && S >= 2, "a chunk is whole groups of rows, of float4s of A");
  static_assert(MT * kCols <= MT * KC + S * P * kCols, "the warps' sums fit where A and B were");
  extern __shared__ __align__(16) float smem[];
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t n_block = int64_t(blockIdx.x) * kCols, n0 = n_block + lane * 4;
  const int64_t k_begin = (int64_t(blockIdx.y) * 8 + warp) * s.k_slice;
  const int64_t k_end = k_begin + s.k_slice < p.K ? k_begin + s.k_slice : p.K;
  float* As = smem + warp * MT * KC;
  // Stage st's row u, this lane's columns: Bs[(st * P + u) * kCols + lane * 4] (a float4), or,
  // kSingles, column 32 j + lane at Bs[(st * P + u) * kCols + 32 j + lane] (no two lanes of a
  // copy or a read in one bank).
  float* const Bs = smem + 8 * MT * KC + warp * S * P * kCols + (kSingles ? lane : lane * 4);
  float acc[MT][4] = {};
  if (k_begin < k_end) {
    // The bytes of each of the lane's copies inside N, and where they start in a row (column 0
    // for those past N, which read nothing): float4s, the lane's columns n0 .. n0 + 3, cut by
    // N; single floats, columns n_block + 32 j + lane.
    constexpr int kCopies = kSingles ? 4 : 1;
    int bytes[kCopies];
    int64_t col[kCopies];
#pragma unroll
    for (int j = 0; j < kCopies; ++j) {
      const int64_t c = kSingles ? n_block + 32 * j + lane : n0;
      const int64_t left = c < p.N ? p.N - c : 0;
      bytes[j] = kSingles ? (left > 0 ? 4 : 0) : (left >= 4 ? 16 : int(left) * 4);
      col[j] = left > 0 ? c : 0;
    }
    // Copies group g's rows (k_begin + g P ...) into stage g % S, zeros past the slice and N
    // (nothing read); one commit, so that each group is one of the lane's groups of copies.
    auto copy_b = [&](int64_t g) {
      const int64_t k = k_begin + g * P;
      float* dst = Bs + int(g % S) * P * kCols;
#pragma unroll
      for (int u = 0; u < P; ++u) {
        const bool in = k + u < k_end;
        const float* const row = v.b + (in ? (k + u) * p.b_rs : 0);
#pragma unroll
        for (int j = 0; j < kCopies; ++j) {
          if constexpr (kSingles) cp_async4(dst + u * kCols + 32 * j, row + col[j], in ? bytes[j] : 0);
          else cp_async16(dst + u * kCols, row + col[j], in ? bytes[j] : 0);
        }
      }
      cp_async_commit();
    };
    float an[kPer];
#pragma unroll
    for (int g = 0; g < S; ++g) copy_b(g);
    skinny_split_load_a<MT>(an, p, v, lane, k_begin, k_end);
    int64_t g0 = 0;  // the chunk's first group
    for (int64_t k0 = k_begin; k0 < k_end; k0 += KC, g0 += KC / P) {
      skinny_split_stage_a<MT>(As, an, lane);
      if (k0 + KC < k_end) skinny_split_load_a<MT>(an, p, v, lane, k0 + KC, k_end);
#pragma unroll
      for (int g = 0; g < KC / P; ++g) {
        if (k0 + g * P >= k_end) break;
        cp_async_wait<S - 1>();  // this group's copies (the lane's own) have landed
        const float* b = Bs + int((g0 + g) % S) * P * kCols;
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          const float4 a4 = *reinterpret_cast<const float4*>(&As[m * KC + g * P]);
          const float av[4] = {a4.x, a4.y, a4.z, a4.w};
#pragma unroll
          for (int q = 0; q < P; ++q) {
            const float4 b4 = kSingles ? make_float4(b[q * kCols], b[q * kCols + 32], b[q * kCols + 64], b[q * kCols + 96])
                                       : *reinterpret_cast<const float4*>(b + q * kCols);
            acc[m][0] += av[q] * b4.x;
            acc[m][1] += av[q] * b4.y;
            acc[m][2] += av[q] * b4.z;
            acc[m][3] += av[q] * b4.w;
          }
        }
        // The stage just read takes group g + S (its reads come first in the lane's order, and
        // the compiler keeps them there).
        asm volatile("" ::: "memory");
        copy_b(g0 + g + S);
      }
    }
    cp_async_wait<0>();  // copies past the slice (zeros) land before the memory is reused
  }
  skinny_split_sums<MT, 4, 8, kSingles>(p, v, s, smem, acc, n_block);
}

// The reduction's block: 256 threads in split_k_reduce_groups(splits) groups, each thread on
// kReduceOutputs outputs (256 / groups apart, so that a group's loads are coalesced).
inline constexpr int kReduceThreads = 256, kReduceOutputs = 4;
// Groups of a reduction block: each adds every groups-th split, so that many splits are read
// by many threads at once (one thread adding hundreds of splits in a row would wait on each
// load in turn), and few splits leave the block's threads on more outputs.
__host__ __device__ inline int split_k_reduce_groups(int64_t splits) {
  return splits >= 32 ? 8 : splits >= 16 ? 4 : splits >= 8 ? 2 : 1;
}
// Outputs one reduction block adds up.
inline int64_t split_k_reduce_span(int64_t splits) {
  return int64_t(kReduceThreads / split_k_reduce_groups(splits)) * kReduceOutputs;
}

// out = alpha * (sum of the splits) + beta * c, for the outputs ws[split][z][m][n]. Group g of
// the block adds splits g, g + G, g + 2 G, ... in order (kReduceOutputs loads in flight a
// thread, two splits at a time); the groups' sums are then added in group order in shared
// memory: a fixed order, so every run gives the same bits.
__global__ void __launch_bounds__(kReduceThreads) split_k_reduce_kernel(GemmProblem p, int64_t splits,
                                                                        const float* ws) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Launched as a programmatic dependent of the splits' kernel (launch_reduce): its blocks
  // may start while that kernel drains; wait here until its writes are visible.
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float red[kReduceThreads * kReduceOutputs];
  const int groups = split_k_reduce_groups(splits), per = kReduceThreads / groups;
  const int g = threadIdx.x / per, t = threadIdx.x % per;
  const int64_t mn = p.M * p.N, total = p.batch * mn, span = int64_t(per) * kReduceOutputs;
  const int64_t base = int64_t(blockIdx.x) * span;
  float acc[kReduceOutputs] = {};
  int64_t sp = g;
  for (; sp + groups < splits; sp += 2 * groups) {
    float x[2][kReduceOutputs];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < kReduceOutputs; ++j) {
        const int64_t e = base + j * per + t;
        x[h][j] = e < total ? __ldcs(ws + (sp + h * groups) * total + e) : 0.0f;
      }
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < kReduceOutputs; ++j) acc[j] += x[h][j];
  }
  if (sp < splits) {
#pragma unroll
    for (int j = 0; j < kReduceOutputs; ++j) {
      const int64_t e = base + j * per + t;
      acc[j] += e < total ? __ldcs(ws + sp * total + e) : 0.0f;
    }
  }
#pragma unroll
  for (int j = 0; j < kReduceOutputs; ++j) red[g * span + j * per + t] = acc[j];
  __syncthreads();
  for (int i = threadIdx.x; i < span; i += kReduceThreads) {
    const int64_t e = base + i;
    if (e >= total) break;
    float x = red[i];
    for (int q = 1; q < groups; ++q) x += red[q * span + i];
    const int64_t z = e / mn, m = (e % mn) / p.N, n = e % p.N;
    const float* c = p.c ? p.c + z * p.c_bs : nullptr;
    p.out[z * p.out_bs + m * p.out_rs + n * p.out_cs] = epilogue(p, c, m, n, x);
  }
}

}  // namespace gemmtiles
