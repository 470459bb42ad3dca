// Up to 8 rows of A times a K-major B (nn.Linear's x @ W^T in decode, a batch of a few
// sequences): out[m][n] = sum_k A[m][k] W[n][k], bound by reading W once.
//
// A block of 8 warps takes its columns of B whole: its warps take K's chunks in turn (warp w:
// chunks w, w + 8, ...), so that at any moment the block's warps read neighbouring runs of
// the same lines of W, and a lane's sums need no workspace: the lanes' sums are added by warp
// shuffles, the warps' in shared memory in a fixed order, and the block writes its outputs
// through the epilogue. One launch, no second pass, the same bits every run.
// A warp is 32 / KL groups of KL lanes along k, each group on NB columns (a block: 32 / KL x NB
// of them): with all 32 lanes along k (up to 4 rows from a K of 512), a lane's A loads are its
// own; with groups of 8 (5-8 rows; 16 on few blocks), or of 4 (up to 4 rows on a
// shallower K; gemv_kernel in auto/plan.h), the groups of a warp load the same A(m, k..k+3),
// one line a row shared by the warp, so that A's loads, MT a step against NB of B, stay few in
// the load pipe. NB trades blocks for loads in flight: NB lines of W per lane and step, issued
// before the first is used (gemv_candidates in auto/plan.h).
// Against the skinny kernel (skinny.cuh), whose blocks hold different columns per warp and
// split K across blocks through a workspace and a second kernel, this needs no second launch
// and keeps each block's reads of a line of W together.
// A is read in place (float4s along k where its rows, or its realigned windows, are 16-byte
// aligned), once by each block, through L1 and L2; rows past M load nothing (zeros) in the
// checked loop and row M - 1 in the whole-step one, and are never stored.
// Torch-free, like the ladder's kernels.
#pragma once

#include "../ladder/common.cuh"
#include "skinny.cuh"

namespace gemmtiles {

inline constexpr int kGemvWarps = 8;

// MT rows of A (M <= MT); NB columns of B per group of KL lanes; W: 4 (float4 loads of B along
// a unit k stride, its lines 16-byte aligned or realigned: kRealign) or 1; BPS blocks per SM,
// whose registers the builds auto runs (kGemvBuilds in auto/plan.h) fit under.
// The columns of B a block takes: NB for each of a warp's 32 / KL groups of lanes.
template <int NB, int KL>
inline constexpr int kGemvBlockColumns = 32 / KL * NB;

// A's float4 at row + i, elements outside [0, limit) as zeros (never loaded).
__device__ __forceinline__ void gemv_load_window(float (&dst)[4], const float* row, int64_t i, int64_t limit) {
  if (i >= 0 && i + 3 < limit) {
    load4(dst, row + i);
  } else {
#pragma unroll
    for (int w = 0; w < 4; ++w) dst[w] = i + w >= 0 && i + w < limit ? row[i + w] : 0.0f;
  }
}

// A group's sums over K into acc. kRealign: lines of B from their element S on (S: the first
// element whose address is 16-byte aligned), so that their float4s are whole aligned loads, the
// S elements before taken by the first warp's lanes; A's rows along k (a_unit: unit k stride)
// then give A(m, k + S .. k + S + 3) from the two aligned float4s around it, shifted by the
// row's distance u from alignment, the same for every lane. Else S is 0, and a_unit says A's
// rows are 16-byte-aligned lines.
template <int S, bool kRealign, int MT, int NB, int W, int KL>
__device__ __forceinline__ void gemv_accumulate(float (&acc)[MT][NB], const GemmProblem& p, const BatchView& v,
                                                const float* const (&col)[NB], int warp, int kl, bool a_unit) {
  static_assert(kRealign || S == 0, "lines start aligned unless realigned");
  constexpr int kStep = KL * W;
  int u[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) u[m] = int(((reinterpret_cast<uintptr_t>(v.a + m * p.a_rs) >> 2) + S) & 3);
  if constexpr (S > 0) {
    if (warp == 0 && kl < S && kl < p.K) {
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const float a = m < p.M ? v.a[m * p.a_rs + kl * p.a_cs] : 0.0f;
#pragma unroll
        for (int j = 0; j < NB; ++j) acc[m][j] = fmaf(a, col[j][kl * p.b_rs], acc[m][j]);
      }
    }
  }
  // (Loading the next step's B before this step's sums, one step ahead, ran slower: the
  // registers it takes cost more loads in flight than it adds.)
  for (int64_t k = int64_t(warp) * kStep + kl * W; k + S < p.K; k += int64_t(kGemvWarps) * kStep) {
    float b[NB][W], a[MT][W];
#pragma unroll
    for (int j = 0; j < NB; ++j) load_line<W>(b[j], col[j], k + S, p.b_rs, p.K);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      const float* row = v.a + m * p.a_rs;
      if (m >= p.M) {
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = 0.0f;
      } else if (kRealign && a_unit) {
        float lo[4], hi[4] = {};
        gemv_load_window(lo, row, k + S - u[m], p.K);
        if (u[m] != 0) gemv_load_window(hi, row, k + S - u[m] + 4, p.K);
        // lo:hi from element u[m] on: shifted by 2, then by 1.
        const bool two = u[m] & 2, one = u[m] & 1;
        const float t[5] = {two ? lo[2] : lo[0], two ? lo[3] : lo[1], two ? hi[0] : lo[2], two ? hi[1] : lo[3],
                            two ? hi[2] : hi[0]};
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = one ? t[w + 1] : t[w];
      } else if (!kRealign && a_unit) {
        load_line<W, false>(a[m], row, k, 1, p.K);
      } else {
#pragma unroll
        for (int w = 0; w < W; ++w) a[m][w] = k + S + w < p.K ? row[(k + S + w) * p.a_cs] : 0.0f;
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int j = 0; j < NB; ++j)
#pragma unroll
        for (int w = 0; w < W; ++w) acc[m][j] = fmaf(a[m][w], b[j][w], acc[m][j]);
  }
}

// A group's sums over K on the 5-8-row build (more rows than kGemvCheckedMaxRows), A's rows and
// B's lines 16-byte aligned and not realigned: while a step's float4s lie inside K (k + 3 < K),
// every row's and line's load runs unchecked from a pointer set once (rows past M read row
// M - 1, whose sums for them are never stored); the one step past that, if any, float by float
// with bounds. gemv_accumulate tests every row and line at every step: on 8 rows those tests and
// their addresses were most of a step's instructions, and the kernel ran on fewer bytes of W
// in flight for them (scripts/gemv_ahead.cu, docs/auto.md). Under the build's bounds of two
// blocks an SM this loop takes 72 registers, room for three blocks of 8 warps where the checked
// kernel's 128 leave two; its rows as offsets, or the last step as a loop over k, take 96-122.
// The most rows whose float4 builds run the checked loop alone.
inline constexpr int kGemvCheckedMaxRows = 4;
template <int MT, int NB, int KL>
__device__ __forceinline__ void gemv_accumulate_whole(float (&acc)[MT][NB], const GemmProblem& p, const BatchView& v,
                                                      const float* const (&col)[NB], int warp, int kl) {
  constexpr int kStep = KL * 4;
  const float* row[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) row[m] = v.a + (m < p.M ? m : p.M - 1) * p.a_rs;
  int64_t k = int64_t(warp) * kStep + kl * 4;
  for (; k + 3 < p.K; k += int64_t(kGemvWarps) * kStep) {
    float b[NB][4], a[MT][4];
#pragma unroll
    for (int j = 0; j < NB; ++j) load_stream4(b[j], col[j] + k);
#pragma unroll
    for (int m = 0; m < MT; ++m) load4(a[m], row[m] + k);
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int j = 0; j < NB; ++j)
#pragma unroll
        for (int w = 0; w < 4; ++w) acc[m][j] = fmaf(a[m][w], b[j][w], acc[m][j]);
  }
  if (k < p.K) {  // the last step's 1-3 elements inside K (none where its float4 was whole)
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      if (k + w >= p.K) break;
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const float a = row[m][k + w];
#pragma unroll
        for (int j = 0; j < NB; ++j) acc[m][j] = fmaf(a, load_stream(col[j] + k + w), acc[m][j]);
      }
    }
  }
}

// The realigned kernel's period for B's pitch (in floats): 4 / gcd(pitch, 4), the columns apart
// whose lines start alike; and its grid's blocks along N (a period's residues, each in blocks of
// kCols columns, up to period - 1 blocks more than aligned lines take).
inline int gemv_realign_period(int64_t pitch) { return pitch % 2 != 0 ? 4 : pitch % 4 != 0 ? 2 : 1; }
inline int64_t gemv_realigned_blocks(int64_t N, int kCols, int period) {
  return period * (((N + period - 1) / period + kCols - 1) / kCols);
}

// A block's sums: a group's over its KL lanes by shuffles, then the warps' in shared memory in
// a fixed order (the same bits every run), through the epilogue into its kCols columns first,
// first + step, ... (the lanes' columns as gemv_kmajor_kernel places them).
template <int MT, int NB, int KL>
__device__ __forceinline__ void gemv_store_sums(const float (&acc)[MT][NB], const GemmProblem& p, const BatchView& v,
                                                int64_t first, int64_t step, int warp, int kl, int group) {
  constexpr int kCols = kGemvBlockColumns<NB, KL>;
  __shared__ float sums[kGemvWarps][MT * kCols];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      float s = acc[m][j];
#pragma unroll
      for (int d = KL / 2; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);  // within the group
      if (kl == 0) sums[warp][m * kCols + group * NB + j] = s;
    }
  __syncthreads();
  for (int t = threadIdx.x; t < MT * kCols; t += blockDim.x) {
    const int m = t / kCols;
    const int64_t n = first + step * (t % kCols);
    if (m >= p.M || n >= p.N) continue;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kGemvWarps; ++w) s += sums[w][t];
    v.out[m * p.out_rs + n * p.out_cs] = epilogue(p, v.c, m, n, s);
  }
}

// kRealign (float4s, B's lines not all 16-byte aligned): a block takes columns `period` apart
// (period: 4 / the largest power of two, up to 4, dividing B's pitch), whose lines all start
// the same distance S from a 16-byte boundary, and its groups run their lines from element S
// on (gemv_accumulate). Without it, period is 1 and S 0.
// kWhole (the 5-8-row build on float4s, A's rows 16-byte aligned lines: launch_gemv_kernel in
// auto/launch.cuh checks): its steps inside K unchecked (gemv_accumulate_whole), a kernel of its
// own, whose registers are allotted to that loop alone (the same loop beside the checked one in
// one kernel ran 1.20x as long on 16 products of 5-8 rows: docs/auto.md).
template <int MT, int NB, int W, int KL, int BPS, bool kRealign, bool kWhole = false>
__global__ void __launch_bounds__(32 * kGemvWarps, BPS) gemv_kmajor_kernel(GemmProblem p, int period) {
  static_assert(!kWhole || (W == 4 && !kRealign && MT > kGemvCheckedMaxRows), "whole steps: the 5-8-row float4s");
  static_assert(KL >= 1 && KL <= 32 && 32 % KL == 0, "a warp holds whole groups of lanes along k");
  static_assert(!kRealign || W == 4, "lines are realigned for float4 loads");
  static_assert(!kRealign || KL >= 4, "a realigned line's first S elements (up to 3) go to a group's lanes");
  constexpr int kCols = kGemvBlockColumns<NB, KL>;
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int kl = lane % KL, group = lane / KL;
  const int64_t step = kRealign ? period : 1;
  // The block's columns: first, first + step, ... (kCols of them).
  const int64_t first = kRealign ? blockIdx.x % period + step * (blockIdx.x / period) * kCols
                                 : int64_t(blockIdx.x) * kCols;
  if (first >= p.N) return;  // a residue's last blocks (kRealign) may hold no column
  const float* col[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    const int64_t n = first + step * (group * NB + j);
    col[j] = v.b + (n < p.N ? n : first) * p.b_cs;
  }
  float acc[MT][NB] = {};
  if constexpr (kRealign) {
    const bool a_unit = p.a_cs == 1;
    switch (int(-(reinterpret_cast<uintptr_t>(col[0]) >> 2) & 3)) {
      case 0: gemv_accumulate<0, true, MT, NB, W, KL>(acc, p, v, col, warp, kl, a_unit); break;
      case 1: gemv_accumulate<1, true, MT, NB, W, KL>(acc, p, v, col, warp, kl, a_unit); break;
      case 2: gemv_accumulate<2, true, MT, NB, W, KL>(acc, p, v, col, warp, kl, a_unit); break;
      default: gemv_accumulate<3, true, MT, NB, W, KL>(acc, p, v, col, warp, kl, a_unit); break;
    }
  } else {
    if constexpr (kWhole) {
      gemv_accumulate_whole<MT, NB, KL>(acc, p, v, col, warp, kl);
    } else {
      const bool a_vec = W == 4 && p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
      gemv_accumulate<0, false, MT, NB, W, KL>(acc, p, v, col, warp, kl, a_vec);
    }
  }
  gemv_store_sums<MT, NB, KL>(acc, p, v, first, step, warp, kl, group);
}

}  // namespace gemmtiles
