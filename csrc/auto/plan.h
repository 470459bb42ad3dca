// The choice the `auto` tier makes for a problem: which kernel, with which configuration and
// how many splits of K. Plain C++ (no torch, no CUDA): the CUDA launcher follows it, and
// gemmtiles._C.auto_plan() reports it, so tests can check the choice without timing it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "../core/precision.h"
#include "exact_model.h"
#include "transpose.h"

namespace gemmtiles {

// kCutlassACopied, kCutlassBCopied, kCutlassABCopied: CUTLASS's kernel after a transposing
// copy of a K-major A (row-major: activations) into an M-major one, of a K-major B (x @ W^T)
// into an N-major one, or of both: a K-major operand is the SIMT kernels' slow side, since
// its copies into shared memory are transposed one float at a time (copies_a, copies_b).
enum class AutoKernel { kWarptile, kSkinnyKMajor, kSkinnyNMajor, kSplitTile, kCutlass, kCutlassStreamK, kTf32, kTf32x3,
                        kCutlassBCopied, kCutlassACopied, kCutlassABCopied, kGemv };

inline const char* auto_kernel_name(AutoKernel k) {
  switch (k) {
    case AutoKernel::kSkinnyKMajor: return "skinny_kmajor";
    case AutoKernel::kSkinnyNMajor: return "skinny_nmajor";
    case AutoKernel::kSplitTile: return "split_tile";
    case AutoKernel::kCutlass: return "cutlass";
    case AutoKernel::kCutlassStreamK: return "cutlass_streamk";
    case AutoKernel::kCutlassBCopied: return "cutlass_b_copied";
    case AutoKernel::kCutlassACopied: return "cutlass_a_copied";
    case AutoKernel::kCutlassABCopied: return "cutlass_ab_copied";
    case AutoKernel::kTf32: return "tf32";
    case AutoKernel::kTf32x3: return "tf32x3";
    case AutoKernel::kGemv: return "gemv";
    default: return "warptile";
  }
}

inline std::optional<AutoKernel> parse_auto_kernel(const std::string& name) {
  for (AutoKernel k : {AutoKernel::kWarptile, AutoKernel::kSkinnyKMajor, AutoKernel::kSkinnyNMajor, AutoKernel::kSplitTile,
                       AutoKernel::kCutlass, AutoKernel::kCutlassStreamK, AutoKernel::kTf32, AutoKernel::kTf32x3,
                       AutoKernel::kCutlassBCopied, AutoKernel::kCutlassACopied, AutoKernel::kCutlassABCopied,
                       AutoKernel::kGemv})
    if (name == auto_kernel_name(k)) return k;
  return std::nullopt;
}

// Which operands a CUTLASS plan copies, transposed, before its kernel runs.
inline constexpr bool copies_a(AutoKernel k) {
  return k == AutoKernel::kCutlassACopied || k == AutoKernel::kCutlassABCopied;
}
inline constexpr bool copies_b(AutoKernel k) {
  return k == AutoKernel::kCutlassBCopied || k == AutoKernel::kCutlassABCopied;
}
inline constexpr AutoKernel cutlass_kernel_copying(bool a, bool b) {
  return a ? (b ? AutoKernel::kCutlassABCopied : AutoKernel::kCutlassACopied)
           : (b ? AutoKernel::kCutlassBCopied : AutoKernel::kCutlass);
}
// Whether the transposing copy of a K-major operand of `batch` products takes it: `rows` x K,
// M for A, N for B; one launch per operand, a grid layer per entry (auto/transpose.h).
inline constexpr bool copy_fits(int64_t rows, int64_t K, int64_t batch) {
  return batch <= 65535 && transpose_fits(rows, K);
}

struct AutoPlan {
  AutoKernel kernel;
  int mt = 0;          // skinny: rows of A per pass (M rounded up to 4, 8 or 16); gemv: its
                       // build's rows (1, 4 or 8, GemvBuild);
                       // split_tile: rows of the block tile (32, 64 or 128; 64 rows: the
                       // pipelined kernel where it takes the operands, auto/launch.cuh)
  int nw = 0;          // skinny: columns of B per group of lanes (kmajor), or column groups
                       // per lane (nmajor); gemv: columns of B per block;
                       // split_tile: columns of the block tile (128 or 256; 128 rows
                       // and 128 columns: the pipelined tile);
                       // cutlass, cutlass_streamk: its tile's rows and columns (mt x nw)
  int w = 1;           // skinny, gemv: consecutive elements of B per lane load (4: float4)
  int64_t splits = 1;  // slices of K: blocks along K, or (skinny_split) warps, 8 to a block
  int64_t k_slice = 0; // K per split: a multiple of 16 (skinny_split), 32 (other skinny) or
                       // 8 (split_tile)
  bool swapped = false;  // the plan of out^T = B^T A^T (swapped_candidates): the fields above
                         // describe that N x M product's kernel, a skinny or the GEMV one
  // Written out: the CUDA units compile as C++17, which has no defaulted comparisons.
  bool operator==(const AutoPlan& o) const {
    return kernel == o.kernel && mt == o.mt && nw == o.nw && w == o.w && splits == o.splits && k_slice == o.k_slice &&
           swapped == o.swapped;
  }
};

// The row-major-B skinny kernel whose 8 warps split a block's K (skinny_nmajor_split_kernel in
// csrc/auto/skinny.cuh; plan.nw 1, plan.w 4 for float4 loads or 1 for single floats), the only
// kSkinnyNMajor kernel: plan.splits counts warps' slices; its blocks along K, each writing one
// partial product, are kSkinnySplitWarps fewer.
inline constexpr int64_t kSkinnySplitWarps = 8;
inline constexpr int64_t kSkinnySplitMinRows = 16;  // a warp's slice: a multiple of this
inline bool skinny_split(const AutoPlan& plan) {
  return plan.kernel == AutoKernel::kSkinnyNMajor;
}
// Columns of B one block of the split kernel takes: 32 lanes of w each.
inline int64_t skinny_split_cols(const AutoPlan& plan) { return 32 * int64_t(plan.w); }
// Partial products a plan writes to the workspace (1: none, K whole in each block).
inline int64_t plan_partials(const AutoPlan& plan) {
  return skinny_split(plan) ? (plan.splits + kSkinnySplitWarps - 1) / kSkinnySplitWarps : plan.splits;
}

// The most columns of a large output a peel runs apart (peeled_columns).
inline constexpr int64_t kPeelMaxColumns = 8;
inline constexpr int kSkinnyWarps = 8;
// Resident blocks per SM of the row-major-B split kernel for mt rows and loads w floats wide
// (its __launch_bounds__, csrc/auto/skinny.cuh): float4s past 8 rows hold 64 accumulators a
// thread and run one block per SM; else two.
inline constexpr int skinny_split_blocks_per_sm(int64_t mt, int w) { return mt > 8 && w != 1 ? 1 : 2; }
// Rows of B a lane of that kernel's register build keeps in flight (its P, csrc/auto/launch.cuh):
// as many as its registers hold beside the accumulators. Float4s: 8 up to 4 rows, 4 for 8, 8
// for 16 (one block per SM); single floats: 16, and 8 for 16 rows.
inline constexpr int skinny_split_rows_in_flight(int64_t mt, int w) {
  return w == 4 ? (mt == 8 ? 4 : 8) : (mt == 16 ? 8 : 16);
}
// For nn.Linear's W^T (column-major B) the skinny kernel takes up to 16 rows: there a warp's
// four groups of 8 lanes share each read of A (csrc/auto/launch.cuh), and 9-16 rows run
// faster than on the 32-row split tile, or as fast on the widest outputs (docs/auto.md).
inline constexpr int64_t kSkinnyKMajorMaxM = 16;
// Row-major B: the kernel whose warps split a block's K takes up to 16 rows (float4s: one
// block per SM past 8, 64 accumulators a thread).
inline constexpr int64_t kSkinnySplitMaxM = 16;
inline constexpr int64_t skinny_max_m(bool b_kmajor) {
  return b_kmajor ? kSkinnyKMajorMaxM : kSkinnySplitMaxM;
}

// The rows of A a skinny kernel for such a B is built for, M rounded up: 4, 8 or 16; the
// row-major-B kernel is built for one row too (a vector times a matrix), which then keeps a
// quarter of the accumulators and FMAs, and of A's staged chunks.
inline constexpr int skinny_rows(int64_t M, bool b_kmajor) {
  return M == 1 && !b_kmajor ? 1 : M <= 4 ? 4 : M <= 8 ? 8 : 16;
}

// The column-major-B skinny kernel's shape for mt rows and loads of w floats of B: columns per
// group of lanes, groups per warp, and resident blocks per SM (csrc/auto/skinny.cuh). Float4s
// for 8 and 16 rows go through shared memory (the async kernel: groups of 8 lanes, two blocks
// per SM), other loads through registers; a GPU whose SMs cannot hold two blocks of the async
// kernel runs the register kernel in its own shape (auto/launch.cuh).
struct SkinnyKMajorShape {
  int nw, groups, blocks_per_sm;
};
// Whether the column-major-B kernel of mt rows and loads of w floats is the async kernel,
// whose float4s stream through a ring of shared memory.
inline constexpr bool skinny_kmajor_ring(int mt, int w) { return w == 4 && mt >= 8; }
// Whether the column-major-B register kernel of mt rows stages A in shared memory a chunk at a
// time (8 and 16 rows) rather than reading it in place (up to 4): skinny_kmajor_kernel's kStaged.
inline constexpr bool skinny_kmajor_staged(int64_t mt) { return mt > 4; }
inline constexpr SkinnyKMajorShape skinny_kmajor_shape(int mt, int w) {
  if (skinny_kmajor_ring(mt, w)) return mt == 8 ? SkinnyKMajorShape{2, 4, 2} : SkinnyKMajorShape{4, 4, 2};
  return mt <= 8 ? SkinnyKMajorShape{4, 1, 2} : SkinnyKMajorShape{4, 4, 1};
}

// Columns of B one block of a skinny plan takes: the column-major-B kernel's 8 warps of groups
// of nw columns; the row-major-B kernel's 32 lanes of w each. What a table's skinny entry names
// (auto/table.cpp), as it tells the kernels' widths apart.
inline int64_t skinny_cols(const AutoPlan& plan) {
  if (plan.kernel == AutoKernel::kSkinnyKMajor) {
    const SkinnyKMajorShape shape = skinny_kmajor_shape(plan.mt, plan.w);
    return int64_t(kSkinnyWarps) * shape.nw * shape.groups;
  }
  return skinny_split_cols(plan);
}
// The blocks of a skinny plan's kernel that all SMs hold at once.
inline int64_t skinny_slots(const AutoPlan& plan, int64_t sms) {
  return (plan.kernel == AutoKernel::kSkinnyKMajor ? skinny_kmajor_shape(plan.mt, plan.w).blocks_per_sm
                                                    : skinny_split_blocks_per_sm(plan.mt, plan.w)) *
         sms;
}
// The skinny kernel for M rows and such a B with K whole, loading w floats of B at a time.
inline AutoPlan skinny_shape(int64_t M, bool b_kmajor, int w) {
  const int mt = skinny_rows(M, b_kmajor);
  return b_kmajor ? AutoPlan{AutoKernel::kSkinnyKMajor, mt, skinny_kmajor_shape(mt, w).nw, w}
                  : AutoPlan{AutoKernel::kSkinnyNMajor, mt, 1, w};
}
// Whether the skinny kernel for such a B has blocks of four columns a lane (plan.w 4): the
// column-major-B kernel's float4s, where B's lines are 16-byte aligned; the row-major-B kernel's
// ring of shared memory on any B (float4 copies where its rows are aligned, four single floats
// elsewhere: csrc/auto/skinny.cuh).
inline constexpr bool skinny_float4s(bool b_kmajor, bool b_vec) { return b_vec || !b_kmajor; }
// The widths (skinny_cols) a table's skinny entry may name for M rows and such a B: the
// column-major-B kernel's one; the row-major-B kernel's four columns a lane and single floats.
inline std::vector<int64_t> skinny_widths(int64_t M, bool b_kmajor, bool b_vec) {
  if (b_kmajor) return {skinny_cols(skinny_shape(M, true, b_vec ? 4 : 1))};
  return {skinny_cols(skinny_shape(M, false, 4)), skinny_cols(skinny_shape(M, false, 1))};
}
// Rows up to which a single problem (batch 1, row-major A) runs on the 32- and 64-row split-K
// tiles; past it the 128-row tile has waves enough.
inline constexpr int64_t kSplitTileMaxM = 2048;

// The split-K tile configurations (csrc/auto/launch.cuh): block tile rows and columns,
// resident blocks per SM, and the rate of useful work per SM relative to the 128-row tile's
// (below 1 for the small tiles, whose fewer FMAs per shared load cost them speed; measured with
// scripts/tune_auto.cu: docs/auto.md).
// The 128-row tile is the pipelined 128 x 128 one (two blocks per SM, auto/pipelined_tile.cuh) where
// the operands allow it (async_tile_ok), else warptile's 128 x 256 (one per SM).
struct SplitTileShape {
  int bm, bn, blocks_per_sm;
  double rate;
};
inline constexpr SplitTileShape kSplitTiles[] = {{32, 128, 6, 0.8}, {64, 128, 3, 0.85}, {128, 256, 1, 1.0}};
inline constexpr SplitTileShape kAsyncTile = {128, 128, 2, 1.0};
// The 64-row split tile runs on the pipelined kernel too where it takes the operands
// (auto/launch.cuh), else on warptile's (kSplitTiles[1]).
inline constexpr SplitTileShape kAsyncTile64 = {64, 128, 3, 0.85};
// Whether a plan runs on the pipelined 128 x 128 tile (auto/launch.cuh).
inline constexpr bool pipelined_tile(const AutoPlan& plan) {
  return plan.kernel == AutoKernel::kSplitTile && plan.mt == kAsyncTile.bm && plan.nw == kAsyncTile.bn;
}

// Whether the pipelined tile kernel takes the operands: it copies a K-major operand (A
// row-major, B column-major) 4 bytes at a time, any leading dimension, and an M-major one
// 16 bytes at a time, which needs its lines 16-byte aligned (a_vec, b_vec) and M or N a
// multiple of 4, so that its last tile, moved back to end at the matrix's edge (so that it
// copies no row or column outside it: M, N at least one tile), starts 16-byte aligned too.
inline constexpr bool async_tile_ok(int64_t M, int64_t N, bool a_kmajor, bool a_vec, bool b_kmajor, bool b_vec,
                                    const SplitTileShape& tile = kAsyncTile) {
  return M >= tile.bm && N >= tile.bn && (a_kmajor || (a_vec && M % 4 == 0)) && (b_kmajor || (b_vec && N % 4 == 0));
}

// Whether the 64-row split tile runs on the pipelined kernel (a row-major A's) rather than on
// warptile's: launch_auto_plan in auto/launch.cuh launches by it, and the cost model prices
// warptile's edge blocks by it (split_tile_edges).
inline constexpr bool split_tile64_pipelined(int64_t M, int64_t N, bool a_kmajor, bool b_kmajor, bool b_vec) {
  return a_kmajor && async_tile_ok(M, N, true, true, b_kmajor, b_vec, kAsyncTile64);
}

inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// CUTLASS's SIMT SGEMM (csrc/auto/cutlass_simt.h): exact fp32 on the CUDA cores, the kernel
// family cuBLAS runs for fp32 from Ampere on. Its large tile: 128 x 256 x 8, eight warps, one
// block per SM, on every layout (256 x 128, tried for a column-major A and row-major B, ran
// slower than it or level with it); cutlass_tile_at lists the smaller ones. A table's `cutlass`
// entry names the large tile, data-parallel (cutlass_plan). A CUTLASS plan's w is its tile's
// warps: the 32 x 32 tile is built on one warp and on two, the 64 x 64 tile on two and on four.
struct CutlassTile {
  int bm, bn, warps;
};
inline constexpr CutlassTile kCutlassLargeTile{128, 256, 8};
inline AutoPlan cutlass_plan() {
  return {AutoKernel::kCutlass, kCutlassLargeTile.bm, kCutlassLargeTile.bn, kCutlassLargeTile.warps};
}
// The CUTLASS SIMT tiles auto/cutlass_simt.cuh builds for every layout: the large one,
// 128 x 128, 64 x 64, 32 x 128, 128 x 32 (narrow outputs) and 32 x 32 (small products) on one
// warp and on two, and 64 x 64 again on four warps (more blocks an SM against more warps a
// block).
inline constexpr int kCutlassTileCount = 8;
inline constexpr CutlassTile cutlass_tile_at(int i) {
  return i == 0 ? kCutlassLargeTile
         : i == 1 ? CutlassTile{128, 128, 4}
         : i == 2 ? CutlassTile{64, 64, 2}
         : i == 3 ? CutlassTile{32, 128, 2}
         : i == 4 ? CutlassTile{128, 32, 2}
         : i == 5 ? CutlassTile{32, 32, 1}
         : i == 6 ? CutlassTile{32, 32, 2}
                  : CutlassTile{64, 64, 4};
}
// The index of the tile of rows x cols on `warps` warps in cutlass_tile_at, or -1.
inline constexpr int cutlass_tile_index(int rows, int cols, int warps) {
  for (int i = 0; i < kCutlassTileCount; ++i)
    if (cutlass_tile_at(i).bm == rows && cutlass_tile_at(i).bn == cols && cutlass_tile_at(i).warps == warps) return i;
  return -1;
}
inline constexpr bool cutlass_tile_built(int rows, int cols, int warps) {
  return cutlass_tile_index(rows, cols, warps) >= 0;
}

// A plan that replaces auto's own (gemmtiles._C.force_auto_plan: the tuner's and the tests'
// way to run one candidate through the auto op), or none. Process-wide, not thread-safe: set
// it around a measurement, never while other threads call auto. A problem the forced kernel
// does not take runs auto's own plan instead, and forced_plan_refused() is then set (until the
// next force_auto_plan), so that a measurement can tell.
inline std::optional<AutoPlan>& forced_auto_plan() {
  static std::optional<AutoPlan> plan;
  return plan;
}
inline bool& forced_plan_refused() {
  static bool refused = false;
  return refused;
}
// A table's `streamk` entry (x @ W^T, both operands K-major): CUTLASS's kernel on its large
// tile with its own stream-K schedule (splits 0: auto/cutlass_simt.h), which shares the k
// iterations of a last wave's tiles out between about one block per SM.
inline AutoPlan cutlass_streamk_plan() {
  AutoPlan plan{AutoKernel::kCutlassStreamK, kCutlassLargeTile.bm, kCutlassLargeTile.bn, kCutlassLargeTile.warps};
  plan.splits = 0;
  return plan;
}

// The split count for `tiles` output tiles of an M x N output on `slots` resident blocks:
// the fewest splits that minimise the modelled time, in units of one k step of a full wave
// of blocks (about the same time for every configuration): waves * (K per split + a
// block's fixed cost, kSplitBlockCost steps: its prologue and its partial tile's store), plus
// the reduction pass, which reads every split's partial product and writes the output
// (kSplitReduceOutputs: the outputs read or written in a step's time at ~2.5 TB/s; that
// time, measured: docs/auto.md). Fitted to scripts/tune_auto.cu's best split counts on 29
// shapes: it picks the best or one nearly as fast (docs/auto.md).
inline constexpr int64_t kSplitBlockCost = 64;
inline constexpr double kSplitReduceOutputs = 81000.0;

// The model's time of `tiles` output tiles of `outputs` outputs in all, each in `s` slices of
// `depth` k, on `slots` resident blocks: whole waves of blocks, and for s > 1 the reduction.
inline double split_cost(int64_t tiles, int64_t slots, int64_t s, int64_t depth, double outputs) {
  double cost = double(ceil_div64(tiles * s, slots)) * double(depth + kSplitBlockCost);
  if (s > 1) cost += double(s + 1) * outputs / kSplitReduceOutputs;
  return cost;
}

// The pipelined tile with K whole on an M x N output of more tiles than fill whole waves of
// `slots` blocks: the tile columns that fill the full waves run with K whole, the rest (at
// most a wave's worth, at least one whole tile wide) with K in `splits` slices, the count of
// 2-8 whose waves model fastest, instead of a last wave that takes as long as a full one
// (csrc/auto/launch.cuh): 80 tiles past 1024 x 5504's first wave on 3 slices take one
// wave of a third of K, 160 past 2048 x 5504's two waves on 3 two waves of a third. head 0:
// no such split. cost: the modelled time of both, in best_splits' units. The slice counts
// are those split_tile_plan makes, as the launch runs them.
struct TailSplit {
  int64_t head = 0, splits = 1;  // tile columns with K whole; slices of the rest
  double cost = 0;
};
inline constexpr int64_t kMaxTailSplits = 8;
inline AutoPlan split_tile_plan(int rows, int cols, int64_t K, int64_t splits);

inline TailSplit tail_split(int64_t M, int64_t N, int64_t slots, int64_t K) {
  const int64_t rows = ceil_div64(M, kAsyncTile.bm), cols = ceil_div64(N, kAsyncTile.bn);
  if (slots <= 0 || K <= 0 || rows * cols <= slots) return {};
  const int64_t head = (ceil_div64(rows * cols, slots) - 1) * slots / rows;
  if (head < 1 || N - head * kAsyncTile.bn < kAsyncTile.bn) return {};
  const int64_t tiles = rows * (cols - head);
  // Whole waves of K, the head's (full but for rows not dividing slots) and the rest's.
  const double plain = split_cost(rows * cols, slots, 1, K, 0);
  const double head_cost = split_cost(rows * head, slots, 1, K, 0);
  const double rest_outputs = double(tiles) * kAsyncTile.bm * kAsyncTile.bn;
  TailSplit best{head, 1, head_cost + split_cost(tiles, slots, 1, K, 0)};
  for (int64_t want = 2; want <= kMaxTailSplits; ++want) {
    const AutoPlan rest = split_tile_plan(kAsyncTile.bm, kAsyncTile.bn, K, want);
    const int64_t s = rest.splits;
    const double cost = head_cost + split_cost(tiles, slots, s, rest.k_slice, rest_outputs);
    if (s > 1 && cost < best.cost) best.splits = s, best.cost = cost;
  }
  return best.splits > 1 && best.cost < plain ? best : TailSplit{};
}

// tail: the tiles are the pipelined tile's, whose K whole on more than whole waves runs its
// last wave split (tail_split): for one split the model counts that.
inline int64_t best_splits(int64_t tiles, int64_t slots, int64_t M, int64_t N, int64_t K,
                           const TailSplit& tail = {}) {
  slots = std::max<int64_t>(1, slots);
  const int64_t max_splits = std::max<int64_t>(1, std::min<int64_t>(48, K / 128));
  int64_t best = 1;
  double best_cost = 0;
  for (int64_t s = 1; s <= max_splits; ++s) {
    const double cost = s == 1 && tail.head > 0 ? tail.cost
                                                : split_cost(tiles, slots, s, ceil_div64(K, s), double(M) * double(N));
    if (s == 1 || cost < best_cost) best = s, best_cost = cost;
  }
  return best;
}

// Whether the tensor-core tiers (csrc/tensor_core/) beat the exact fp32 kernels on a problem,
// where the precision settings allow them (core/precision.h). A model of both times:
//   tensor cores: a launch, the k steps of output tiles that the busiest SM runs, in those of
//     a 128 x 256 tile (tf32 on a stream-K schedule, on 128 x 256 or 128 x 128 tiles, whichever
//     has clearly the fewer; tf32x3 on 128 x 256 by waves of tiles, over three K: its operands are
//     split into hi and lo parts), and the bytes of the passes around the kernel: an operand
//     is packed (read once, written K-major) unless the kernel reads it in place (K-major,
//     16-byte aligned lines; tf32x3 splits both always, writing two parts), and
//     tf32x3 writes an output whose rows are not 16-byte aligned to a scratch and copies it;
//   exact kernels: a launch and the flops at an effective rate.
// The tensor cores run where their time, times the math's margin (tensor_core_margin), is the
// smaller: a product near the line stays exact, so a permitted setting never runs slower than
// "highest" does.
// That time is at least the kernel's read of its operands at the passes' bandwidth scaled by
// the GPU's DRAM rate (floor_bytes_per_us), after the launch and the passes
// (tensor_core_floor_us): few rows against a large weight are bound by reading it, which the k
// steps do not count (one row against a 32000 x 2048 W^T: its k steps take half the time of
// reading W); the margin hedges the k steps' estimate, not this floor.
// Parameters fitted on the H100 SXM (python -m gemmtiles.tune --fit-tensor-cores, on the random
// sample's training seed; docs/auto.md has the fit and the check on another seed). A GPU's tuned
// table may carry its own ('model tensor_cores ...'; tensor_core_model_for); without one,
// scaled_tensor_core_model.
struct TensorCoreModel {
  double launch_us;       // tensor-core tier: fixed cost of its launches
  double tf32x3_launch_us;
  double wave_k_us;       // one k step of a 128 x 256 tile on its SM
  double bytes_per_us;    // the pack and copy passes' bandwidth
  double exact_launch_us; // exact kernels: fixed cost
  double exact_flops_per_us;
  // The floor's bandwidth: the passes' on the H100, scaled by the GPU's DRAM rate. The GPU's,
  // not fitted: a table's model line leaves it as the GPU has it.
  double floor_bytes_per_us;
};
inline constexpr TensorCoreModel kTensorCoreModel{10.94, 13.08, 0.02179, 2.5e6, 9.818, 3.339e7, 2.5e6};
// tf32's margin, 1.1, with its output counted at twice its bytes (tensor_core_work), chosen on
// the H200 on the random sample's training seed and checked on two others (docs/auto.md);
// tf32x3's as the H100's rule was fitted and checked, 1.25.
inline constexpr double kTf32Margin = 1.1;
inline constexpr double kTf32x3Margin = 1.25;
// What kTensorCoreModel was fitted on: an H100 SXM, 132 SMs at 1980 MHz, and the DRAM of
// kExactModelDramKhz and kExactModelBusBits (exact_model.h).
inline constexpr int64_t kTensorCoreModelSms = 132;
inline constexpr double kTensorCoreModelClockKhz = 1980000.0;

// kTensorCoreModel for another GPU of the same architecture: its k steps and the exact kernels'
// rate scaled by the SM clock, the exact rate by the SMs too, the floor's bandwidth by the DRAM's
// rate (its clock times its bus width), as the exact kernels' model scales its bytes
// (scaled_exact_model). The passes' bandwidth is left at the H100's: their small passes run
// below the DRAM's rate, and a GPU of more bandwidth only makes their estimate cautious.
// sms or clock_khz <= 0 (unknown) leaves the k steps and the exact rate as fitted, dram_khz or
// bus_bits <= 0 the floor's bandwidth.
inline TensorCoreModel scaled_tensor_core_model(int64_t sms, double clock_khz, double dram_khz = 0,
                                                double bus_bits = 0) {
  TensorCoreModel m = kTensorCoreModel;
  if (dram_khz > 0 && bus_bits > 0)
    m.floor_bytes_per_us *= dram_khz * bus_bits / (kExactModelDramKhz * kExactModelBusBits);
  if (sms <= 0 || clock_khz <= 0) return m;
  m.wave_k_us *= kTensorCoreModelClockKhz / clock_khz;
  m.exact_flops_per_us *= double(sms) * clock_khz / (double(kTensorCoreModelSms) * kTensorCoreModelClockKhz);
  return m;
}
inline constexpr int kTensorCoreTileM = 128, kTensorCoreTileN = 256;
// tf32x3 runs on the tensor cores from K = 33: up to one K slice (32) its hi·hi products would
// all be summed in one truncating tensor-core pass, with no promotion between them, so it runs
// the exact fp32 thread_tile kernel there (launch_tf32x3_sm90a). From 33 the sum is promoted
// every slice; the depth rule holds there by measurement (test_tf32x3_error_at_every_depth at
// K = 33, 40, 64, 100 and deeper), not by a bound: K = 33's first slice is still 32 terms.
inline constexpr int64_t kTf32x3MinK = 33;

// An output tile of the tensor-core kernels: rows, columns, and the time of its k step (one
// column of K) relative to a 128 x 256 tile's. tf32 runs 128 x 256 tiles, or 128 x 128 where
// the busiest SM has clearly less to do on them (tf32_tiling); tf32x3 runs 128 x 256. A
// 128 x 128 tile does half the math of a k step at 0.64 of the time (its operands per
// multiply-add a third heavier): full waves of both on the H100, scripts/tf32_configs.cu
// (docs/tensor-cores.md).
struct TensorCoreTile {
  int64_t m, n;
  double step;
};
inline constexpr TensorCoreTile kTf32Tiles[] = {{kTensorCoreTileM, kTensorCoreTileN, 1.0}, {128, 128, 0.64}};

// Clusters of two blocks round a product's tiles t up to an even count along their direction:
// its tiles along M and along N, so rounded.
struct ClusterTiles {
  int64_t along_m, along_n;
};
inline ClusterTiles cluster_tiles(int64_t M, int64_t N, const TensorCoreTile& t) {
  const int64_t tm = ceil_div64(M, t.m), tn = ceil_div64(N, t.n);
  return {(tm + tm % 2) * tn, tm * (tn + tn % 2)};
}

// Whether tf32 runs its clusters of two blocks along N (run_tf32, wgmma_sm90a.cu): where that
// rounds fewer tiles up to the cluster than along M (a product of one row of tiles, along M,
// would leave half the blocks without rows). tf32x3's run along M.
inline bool tf32_clusters_along_n(int64_t M, int64_t N, const TensorCoreTile& t) {
  const ClusterTiles c = cluster_tiles(M, N, t);
  return c.along_n < c.along_m;
}

// A partial tile of t moved in and out of an SM (2 m n floats), in k steps of t (m + n floats
// of operands each): what adding one slice's partial tile into another costs.
inline double partial_tile_steps(const TensorCoreTile& t) { return 2.0 * double(t.m * t.n) / double(t.m + t.n); }

// tf32's schedule (CUTLASS's stream-K scheduler with its heuristic decomposition, on clusters
// of `cluster` blocks: two for tf32's own tiles, one for its narrow kernel below;
// csrc/tensor_core/wgmma_sm90a.cu): the k steps of the busiest SM, of tiles t.
// Whole waves run data-parallel; where the last wave is less than half full (a product of
// fewer tiles than half the SMs included) and tiles are deeper than 8 k iterations of 32, that
// wave and the one before it are shared out by k iteration between one wave of units, each
// running at least 8. The units that share a tile add their partial tiles into it one after
// another (in a fixed order, so every run gives the same bits): each addition moves a partial
// tile in and out of one SM, 2 x 128 KB for 128 x 256 against the 48 KB of operands of a k
// iteration, and the chain of them is counted as k steps at that ratio.
// fixup: the k steps (of t) that adding one partial tile costs, partial_tile_steps where not
// given.
inline double stream_k_steps(int64_t tiles, int64_t K, int64_t sms, const TensorCoreTile& t, int64_t cluster = 2,
                             double fixup = -1.0) {
  constexpr int64_t kSlice = 32, kMinSlices = 8;
  const double fixup_steps = fixup >= 0.0 ? fixup : partial_tile_steps(t);
  const int64_t wave = std::max<int64_t>(cluster, sms / cluster * cluster);
  const int64_t slices = ceil_div64(K, kSlice);
  const int64_t full = tiles / wave, total = ceil_div64(tiles, wave), tail = tiles - full * wave;
  const double data_parallel = double(total) * double(K);
  if (full == total || slices <= kMinSlices || 2 * tail >= wave) return data_parallel;
  const int64_t dp_waves = full > 1 ? full - 1 : 0;
  const int64_t sk_tiles = (tiles - dp_waves * wave) / cluster * cluster;
  const int64_t units = std::min(wave, sk_tiles * slices / kMinSlices / cluster * cluster);
  if (units == 0) return data_parallel;
  // Tiles that the cluster rounding leaves out of the stream-K share run data-parallel.
  const double dp = double(ceil_div64(tiles - sk_tiles, wave)) * double(K);
  // A tile's units: its share of them, and one more where the shares straddle tiles.
  const int64_t peers = ceil_div64(units, sk_tiles) + (units % sk_tiles != 0);
  return dp + double(ceil_div64(sk_tiles * slices, units) * kSlice) + double(peers - 1) * fixup_steps;
}

// tf32's k steps on tiles t, in 128 x 256 tiles' steps: batch products' tiles, rounded up to
// the clusters along their direction, on the stream-K schedule.
inline double tf32_k_steps(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t sms, const TensorCoreTile& t) {
  const ClusterTiles c = cluster_tiles(M, N, t);
  return t.step * stream_k_steps(batch * std::min(c.along_m, c.along_n), K, sms, t);
}

// The tile tf32 runs (wgmma_sm90a.cu) and its k steps: 128 x 128 where its busiest SM has
// fewer steps than kTf32TileMargin times those on 128 x 256, else 128 x 256. The margin:
// stream-K's share of a product runs longer than stream_k_steps counts (by up to a quarter on
// the products of docs/tensor-cores.md), so near a tie the larger tile, whose math is the
// more efficient, stays.
inline constexpr double kTf32TileMargin = 0.9;
struct Tf32Tiling {
  const TensorCoreTile* tile;
  double k_steps;
};
inline Tf32Tiling tf32_tiling(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t sms) {
  const double large = tf32_k_steps(M, N, K, batch, sms, kTf32Tiles[0]);
  const double small = tf32_k_steps(M, N, K, batch, sms, kTf32Tiles[1]);
  if (small < kTf32TileMargin * large) return {&kTf32Tiles[1], small};
  return {&kTf32Tiles[0], large};
}

// tf32 on an N-major B (NN: x @ W, W row-major) without packing it: the kernel that takes
// B^T as the MMA's A operand, transposed from shared memory into registers, and so computes
// C^T (M and N swapped) on 128 x 256 tiles, clusters of two along its M (our N), stream-K.
// Its k step costs kTf32TransposedStep of the K-major kernel's: the median, over 15 products
// of 468-8192 rows (six fixed, nine drawn with a training seed; H200; those whose x @ W^T runs
// tf32's own tiles), of the two kernels' time ratio, each over its own k steps, on the
// kernel's own mainloop (prefetched_a_mainloop.cuh; docs/tensor-cores.md). It runs where that
// costs less than packing B K-major first (a launch, and B read and written: 8 bytes an
// element, at the shipped model's bandwidth and k step): products of few rows against a large
// B, most of all, and small products, where the pack's launch is most of it; a tall product
// against a small B packs it, where the slower steps outweigh the pack's bytes.
inline constexpr double kTf32TransposedStep = 1.04;
// On batches of at most kTensorCoreTileM rows (one product of so few runs the narrow kernel,
// tf32_narrow) its k step costs kTf32TransposedFewRowsStep times that, and B's bytes weigh as
// much in the floor: fitted on the few-row batches of the random sample's tuning seeds, where
// the kernel ran well past its k steps at 1.04 (docs/tensor-cores.md). The rows' bound is a
// choice: no batch between those few rows and several hundred was timed.
inline constexpr double kTf32TransposedFewRowsStep = 1.5;
inline double tf32_transposed_step(int64_t M) {
  return kTf32TransposedStep * (M <= kTensorCoreTileM ? kTf32TransposedFewRowsStep : 1.0);
}
// The narrow kernel's N-major tiles (tf32_narrow) transpose a 128 x 32 slice of B^T into
// registers for as few as 64 columns of A^T: their k steps cost kTf32NarrowTransposedStep of
// the K-major tiles' (the mean over the configuration table's large products on CUTLASS's
// register-A mainloop, H100; these tiles gained little from the prefetched one). Weighed so
// against Ampere's kernel, x @ W of 1-127 rows ran on the faster of the two, or within 3% of
// it, on 27 of the training seed's 30 products (docs/tensor-cores.md).
inline constexpr double kTf32NarrowTransposedStep = 1.14;
// The pack pass's launch: about the GPU time of a pass over a few elements on the H100, and
// the fitted model's tf32x3 launch over tf32's (which it adds a pack launch to).
inline constexpr double kPackLaunchUs = 2.0;
inline double tf32_transposed_k_steps(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t sms) {
  const TensorCoreTile& t = kTf32Tiles[0];
  return tf32_transposed_step(M) * t.step * stream_k_steps(batch * cluster_tiles(N, M, t).along_m, K, sms, t);
}
// tf32 on an output of few rows (nn.Linear in decode and small serving batches), or on any
// x @ W^T where its model finds it faster: C^T = B^T A^T, so that the output's M rows are the
// kernel's narrow N and its N columns the kernel's 128-row tiles, on as many tiles as B has
// 128 columns times C's rows over the narrow width (tf32's own tiles would run one row of
// 128-row tiles, mostly empty below 128 rows, on clusters of two). B^T is the MMA's A:
// K-major as it is for x @ W^T; for an N-major B (x @ W) M-major, transposed from shared
// memory into registers. A^T is its B, K-major. Blocks of one tile each (no cluster),
// stream-K; the output C^T column-major is C's rows, written from the accumulators at any
// alignment. Their k steps, in 128 x 256 tiles' steps: a step's operand bytes against the
// large tile's (128 x 32: 160 / 384; 128 x 64: 192 / 384), and tf32's own 128 x 128 step.
// For a K-major B the tile of fewest k steps runs; for an N-major one, up to
// kTf32NarrowMaxRows, 128 x 64 up to 64 rows and 128 x 128 past them, where transposing a
// 128 x 32 slice of B^T into registers for fewer columns of A^T costs more than the narrower
// tile saves (scripts/tf32_narrow_rows.cu). One product (batch 1: auto folds a batch sharing B
// into its rows first).
inline constexpr int64_t kTf32NarrowMaxRows = kTensorCoreTileM;
// On the narrow kernel's stream-K schedule each partial tile added into a shared tile waits for
// the one before it: kTf32NarrowPartialTileUs apiece (the least-squares fit of the narrow
// kernel's times against its splits on 77 products of the training seed, most on 128 x 32
// tiles; docs/tensor-cores.md), in 128 x 256 tiles' k steps: past the bytes of a partial tile
// that partial_tile_steps counts for the 32- and 64-wide tiles, so each addition costs the
// larger of the two.
inline constexpr double kTf32NarrowPartialTileUs = 1.13;
inline constexpr double kTf32NarrowPartialTileSteps = kTf32NarrowPartialTileUs / kTensorCoreModel.wave_k_us;
inline constexpr TensorCoreTile kTf32NarrowTiles[] = {{128, 32, 160.0 / 384.0}, {128, 64, 0.5}, {128, 128, 0.64}};
struct Tf32Narrow {
  const TensorCoreTile* tile = nullptr;  // none: the narrow kernel does not take the product
  double k_steps = 0;
};
inline Tf32Narrow tf32_narrow(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor, int64_t sms) {
  if (batch != 1 || (!b_kmajor && M > kTf32NarrowMaxRows)) return {};
  const auto steps = [&](const TensorCoreTile& t) {
    return t.step * stream_k_steps(ceil_div64(N, t.m) * ceil_div64(M, t.n), K, sms, t, 1,
                                   std::max(partial_tile_steps(t), kTf32NarrowPartialTileSteps / t.step));
  };
  if (!b_kmajor) {
    const TensorCoreTile& t = M <= 64 ? kTf32NarrowTiles[1] : kTf32NarrowTiles[2];
    return {&t, kTf32NarrowTransposedStep * steps(t)};
  }
  Tf32Narrow best;
  for (const TensorCoreTile& t : kTf32NarrowTiles) {
    const double s = steps(t);
    if (!best.tile || s < best.k_steps) best = {&t, s};
  }
  return best;
}

// tf32 on Ampere's tensor-core instruction (mma.sync m16n8k8: CUTLASS's Sm80 TF32 GEMM,
// auto/cutlass_simt.cuh), for x @ W on a build with CUTLASS's kernels: its shared memory holds
// either layout, so it reads an N-major B as it lies, where TF32 wgmma transposes B^T into
// registers first. Its math runs slower than wgmma's, so it pays where reading B is the work:
// few rows against a large W. 64 x 128 tiles of four warps; K cut into the split (of
// kAmpereSplits, slices of at least one 32-deep iteration) whose busiest SM runs the fewest k
// steps, the first such (the fewest partial tiles). Blocks that share an SM share its rate, so
// the busiest SM's blocks count one after another: on x @ W of few rows, more blocks than SMs
// ran slower (docs/tensor-cores.md). Its k steps, in 128 x 256 tiles' steps: a block's takes
// `step` of one (fitted to the kernel's time on 4096^3, whole waves on every split:
// scripts/tf32_sm80.cu), and a block of a split tile moves a partial tile in and out besides
// (CUTLASS's turnstile, partial_tile_steps, as stream_k_steps counts it): deep splits of many
// tiles lose by it.
inline constexpr TensorCoreTile kTf32AmpereTile = {64, 128, 0.568};
inline constexpr int64_t kAmpereSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
struct Tf32Ampere {
  int64_t splits;
  double k_steps;
};
inline Tf32Ampere tf32_ampere(int64_t M, int64_t N, int64_t K, int64_t sms) {
  const int64_t tiles = ceil_div64(M, kTf32AmpereTile.m) * ceil_div64(N, kTf32AmpereTile.n);
  const int64_t slots = std::max<int64_t>(1, sms);
  const double fixup = partial_tile_steps(kTf32AmpereTile);
  Tf32Ampere best{0, 0.0};
  for (int64_t s : kAmpereSplits) {
    if (s > 1 && ceil_div64(K, s) < 32) break;
    const double per_block = double(ceil_div64(K, s)) + (s > 1 ? fixup : 0.0);
    const double steps = double(ceil_div64(tiles * s, slots)) * per_block * kTf32AmpereTile.step;
    if (best.splits == 0 || steps < best.k_steps) best = {s, steps};
  }
  return best;
}

// tf32 on few tiles over a deep K, as cuBLAS TF32 runs it: K cut into slices of slice_k (a
// multiple of 32), each slice of A and B packed K-major (the last filled with zeros past K),
// the narrow kernel running every slice's tiles at once (a batch, data-parallel) into partial
// outputs, and a pass adding them in order (the same bits every run). Where stream-K shares a
// few tiles' k iterations between the SMs, each tile's partial tiles are added one after
// another, waiting on each other (docs/tensor-cores.md); here they are added all at once. The
// slices, of kTf32SliceCounts, and the narrow tile are those of the least time: the k steps of
// the busiest SM (its waves of slice tiles, a slice each) and the partial outputs written and
// read. One product.
inline constexpr int64_t kTf32SliceCounts[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
struct Tf32Slices {
  int64_t slices = 0;  // none: K holds fewer than two slices of 32
  int64_t slice_k = 0;
  const TensorCoreTile* tile = nullptr;
  double k_steps = 0;
  double us = 0;  // the k steps and the partial outputs' bytes, at the model's rates
};
// K in about `count` slices (fewer where slices of 32 take all of K) on the narrow tile of the
// least time; none where that is one slice.
inline Tf32Slices tf32_slices_of(int64_t M, int64_t N, int64_t K, int64_t sms, int64_t count) {
  const TensorCoreModel& m = kTensorCoreModel;
  const int64_t slice_k = ceil_div64(ceil_div64(K, std::max<int64_t>(1, count)), 32) * 32;
  const int64_t slices = ceil_div64(K, slice_k);
  Tf32Slices best;
  if (slices < 2) return best;
  for (const TensorCoreTile& t : kTf32NarrowTiles) {
    const int64_t tiles = ceil_div64(N, t.m) * ceil_div64(M, t.n) * slices;
    const double k_steps = t.step * double(ceil_div64(tiles, std::max<int64_t>(1, sms))) * double(slice_k);
    const double us = k_steps * m.wave_k_us + 8.0 * double(slices) * double(M) * double(N) / m.bytes_per_us;
    if (!best.tile || us < best.us) best = {slices, slice_k, &t, k_steps, us};
  }
  return best;
}
inline Tf32Slices tf32_slices(int64_t M, int64_t N, int64_t K, int64_t sms) {
  Tf32Slices best;
  for (int64_t count : kTf32SliceCounts) {
    const Tf32Slices s = tf32_slices_of(M, N, K, sms, count);
    if (s.slices == 0) break;
    if (!best.tile || s.us < best.us) best = s;
  }
  return best;
}

// How tf32 runs B and the k steps of its busiest SM. B is read as it is where it can be (b_vec:
// 16-byte aligned lines, and N a multiple of 4 for an N-major B: CUTLASS's alignment; TMA
// needs the lines alone, and reads any K, filling the last slice past it with zeros) and a
// kernel takes it so; else packed K-major first. A K-major B runs on the
// narrow kernel above up to kTf32NarrowMaxRows, and past them where its k steps are no more
// than those of tf32_tiling's tiles (tf32's own kernel) with, on rows not 16-byte aligned, the
// own tiles' stores of them (tf32_own_output_bytes; on a tie of their 128 x 128 tiles the
// narrow kernel ran faster on most products measured, docs/tensor-cores.md). An N-major B runs as it is on the narrow
// kernel up to kTf32NarrowMaxRows; past them on the kernel that transposes it, where that
// costs less than the pack and the K-major route. launch_tf32_sm90a and tensor_core_work both
// ask this.
struct Tf32BRoute {
  bool transposes_b;
  double k_steps;
  const TensorCoreTile* narrow = nullptr;  // the narrow kernel's tile, where it runs
  bool b_as_it_is = false;                 // B read where it lies, not packed
  // Ampere's kernel (tf32_ampere) on this many splits, where it runs (k_steps then its); the
  // fields above are the route it stands in for, where its launch cannot take the operands.
  int64_t ampere_splits = 0;
  // K in slices summed apart (tf32_slices), where they run (one product; k_steps then
  // theirs); the fields above are the route they stand in for in a batch.
  Tf32Slices k_slices = {};
};
// tf32's own tiles write an output whose rows are not 16-byte aligned (N not a multiple of 4,
// as a new output's rows are laid out: no TMA) straight from their accumulators, a float at a
// time, each store of a warp spread over 8 of C's rows; the narrow kernel's and the
// transposing kernel's tiles of C^T store along C's rows. Those rows cost
// kTf32OwnUnalignedOutputBytes an element more than the narrow kernel's, at the model's
// bandwidth (the own kernel's output ran at about 0.7 TB/s, the narrow kernel's at about 2):
// chosen on the forced kernels' times of four random samples on the H200, within a flat
// range of 4-10 (docs/tensor-cores.md). They weigh in tf32's choice of kernel
// (tf32_wgmma_b_route), not in the tier's work (tensor_core_work): there they priced shallow
// batches of a B per entry (which the narrow kernel does not run) above their measured time,
// and moved them to the exact kernels, which cuBLAS fp32's times on them say run slower
// (docs/tensor-cores.md).
inline constexpr double kTf32OwnUnalignedOutputBytes = 8.0;
inline double tf32_own_output_bytes(int64_t M, int64_t N, int64_t batch) {
  return N % 4 == 0 ? 0.0 : kTf32OwnUnalignedOutputBytes * double(M) * double(N) * double(batch);
}
// What a byte of B weighs in the read of it on `r`, of M rows: where a wgmma kernel transposes
// an N-major B^T into registers, its kernel's transposition factor (its loads wait on the
// transposition as its k steps do); elsewhere 1.
inline double tf32_b_weight(const Tf32BRoute& r, bool b_kmajor, int64_t M) {
  if (b_kmajor || !r.b_as_it_is || r.ampere_splits > 0) return 1.0;
  return r.narrow ? kTf32NarrowTransposedStep : tf32_transposed_step(M);
}
// Whether tf32's wgmma kernels read B where it lies: 16-byte aligned lines (b_vec), and for an
// N-major B, N a multiple of 4 (CUTLASS's alignment).
inline bool tf32_reads_b_in_place(bool b_kmajor, bool b_vec, int64_t N) { return b_vec && (b_kmajor || N % 4 == 0); }
inline Tf32BRoute tf32_wgmma_b_route(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor, bool b_vec,
                                     int64_t sms) {
  const bool b_readable = tf32_reads_b_in_place(b_kmajor, b_vec, N);
  const auto kmajor = [&](bool as_it_is) {
    const Tf32Narrow n = tf32_narrow(M, N, K, batch, true, sms);
    if (n.tile && M <= kTf32NarrowMaxRows) return Tf32BRoute{false, n.k_steps, n.tile, as_it_is};
    // tf32's own kernel, past those rows: its k steps, and its unaligned rows' stores in k steps.
    const double own = tf32_tiling(M, N, K, batch, sms).k_steps;
    const double own_output = tf32_own_output_bytes(M, N, batch) / kTensorCoreModel.bytes_per_us /
                              kTensorCoreModel.wave_k_us;
    if (n.tile && n.k_steps <= own + own_output) return Tf32BRoute{false, n.k_steps, n.tile, as_it_is};
    return Tf32BRoute{false, own, nullptr, as_it_is};
  };
  if (b_kmajor || !b_readable) return kmajor(b_readable);
  if (const Tf32Narrow n = tf32_narrow(M, N, K, batch, false, sms); n.tile) return {false, n.k_steps, n.tile, true};
  const TensorCoreModel& m = kTensorCoreModel;
  const Tf32BRoute packed = kmajor(false);
  const Tf32BRoute transposed{true, tf32_transposed_k_steps(M, N, K, batch, sms), nullptr, true};
  const double pack_us = kPackLaunchUs + packed.k_steps * m.wave_k_us +
                         8.0 * double(K) * double(N) * double(batch) / m.bytes_per_us;
  return transposed.k_steps * m.wave_k_us < pack_us ? transposed : packed;
}
// The route above, or Ampere's kernel where B is N-major and the wgmma kernels read it as it
// lies (one product, K a multiple of 4: its 16-byte copies along K; `ampere`: the build has
// CUTLASS's kernels and they take the problem), and
// its time is under kTf32AmpereMargin of theirs: the larger of the k steps and the read of the
// operands, each at the model's rate (B's bytes weighed by the wgmma kernel's transposition,
// tf32_b_weight, as tensor_core_work does). The margin: Ampere's k steps are priced from whole
// waves of one large product, and near a tie the wgmma kernels, whose math is the faster, stay.
inline constexpr double kTf32AmpereMargin = 0.9;
inline Tf32BRoute tf32_b_route(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor, bool b_vec,
                               int64_t sms, bool ampere) {
  Tf32BRoute route = tf32_wgmma_b_route(M, N, K, batch, b_kmajor, b_vec, sms);
  if (batch != 1) return route;
  const TensorCoreModel& m = kTensorCoreModel;
  const auto time_us = [&](double k_steps, double b_weight) {
    return std::max(k_steps * m.wave_k_us, 4.0 * (double(M) + b_weight * double(N)) * double(K) / m.bytes_per_us);
  };
  if (ampere && !b_kmajor && K % 4 == 0 && route.b_as_it_is) {
    const Tf32Ampere a = tf32_ampere(M, N, K, sms);
    if (time_us(a.k_steps, 1.0) < kTf32AmpereMargin * time_us(route.k_steps, tf32_b_weight(route, false, M))) {
      route.ampere_splits = a.splits;
      route.k_steps = a.k_steps;
    }
  }
  // The slices where they take under kTf32AmpereMargin of the route's time with B's pack:
  // theirs with both operands' packs, the partial outputs' bytes and the launches of their
  // three passes (both packs and the sum; A's pack, which the route may run too, is counted
  // against the slices alone).
  if (const Tf32Slices sl = tf32_slices(M, N, K, sms); sl.slices > 0) {
    const double route_us = time_us(route.k_steps, tf32_b_weight(route, b_kmajor, M)) +
                            (route.b_as_it_is ? 0.0 : kPackLaunchUs + 8.0 * double(K) * double(N) / m.bytes_per_us);
    const double slices_us =
        sl.us + 3.0 * kPackLaunchUs + 8.0 * (double(M) + double(N)) * double(K) / m.bytes_per_us;
    if (slices_us < kTf32AmpereMargin * route_us) {
      route.k_slices = sl;
      route.k_steps = sl.k_steps;
    }
  }
  return route;
}

// The work of a tensor-core tier on auto's operands (its output: rows of N floats; a batch
// taken to have a B per entry): k steps of its busiest SM (tf32: tf32_tiling's; tf32x3: the
// waves of its tiles, data-parallel, over three K), and the bytes of the passes around the
// kernel. An operand is packed (read once, written K-major) unless tf32 reads it in place:
// K-major with 16-byte aligned lines (a_vec, b_vec), or an N-major B where
// tf32_b_route reads it so (then on that kernel's tiles and k steps), unless K runs in slices
// (both packed, and their partial outputs written and read); tf32x3 splits both
// always, writing two parts. The output is written once (what a shallow K makes the kernel's
// main cost): tf32 writes it in place, counted at twice its bytes (below), tf32x3 to a scratch
// and copies it where its rows are not 16-byte aligned (N not a multiple of 4). The floor
// (tensor_core_floor_us) counts these bytes as they are counted here.
// gemmtiles.tensor_core_model fits the model to these same features (_C.tensor_core_work).
struct TensorCoreWork {
  double k_steps, bytes;
  // The operands as the kernel reads them: A and B once (tf32x3: two parts), B's bytes weighed
  // by the wgmma kernel's transposition where it transposes B^T into registers (tf32_b_weight).
  double read_bytes;
};
inline TensorCoreWork tensor_core_work(int64_t M, int64_t N, int64_t K, int64_t batch, TensorCoreMath math,
                                       bool a_kmajor, bool a_vec, bool b_kmajor, bool b_vec, int64_t sms,
                                       bool ampere) {
  const bool x3 = math == TensorCoreMath::kTf32x3;
  // tf32x3's clusters run along M.
  const int64_t x3_tiles = batch * cluster_tiles(M, N, kTf32Tiles[0]).along_m;
  double k_steps = double(ceil_div64(x3_tiles, std::max<int64_t>(1, sms))) * double(3 * K);
  bool b_inplace = false;  // B read as it lies
  double b_weight = 1.0;
  int64_t slices = 0;  // K in slices summed apart
  if (!x3) {
    const Tf32BRoute route = tf32_b_route(M, N, K, batch, b_kmajor, b_vec, sms, ampere);
    k_steps = route.k_steps;
    slices = route.k_slices.slices;
    b_inplace = route.b_as_it_is && slices == 0;
    b_weight = slices ? 1.0 : tf32_b_weight(route, b_kmajor, M);
  }
  const bool a_inplace = a_kmajor && a_vec && slices == 0;
  const double pack = x3 ? 12.0 : 8.0;  // bytes per element: read 4, write one or two parts
  double bytes = 8.0 * double(slices) * double(M) * double(N);  // the slices' partial outputs, out and in
  if (x3 || !a_inplace) bytes += pack * double(M) * double(K) * double(batch);
  if (x3 || !b_inplace) bytes += pack * double(K) * double(N) * double(batch);
  if (x3 && N % 4 != 0) bytes += 8.0 * double(M) * double(N) * double(batch);
  // The output, written once; tf32's counted twice: its tiles write it after their k steps, a
  // shallow product's epilogue overlapped by little of the mainloop (docs/auto.md).
  bytes += (x3 ? 4.0 : 8.0) * double(M) * double(N) * double(batch);
  const double read_bytes = (x3 ? 8.0 : 4.0) * (double(M) + b_weight * double(N)) * double(K) * double(batch);
  return {k_steps, bytes, read_bytes};
}

inline double tensor_core_launch_us(TensorCoreMath math, const TensorCoreModel& m) {
  return math == TensorCoreMath::kTf32x3 ? m.tf32x3_launch_us : m.launch_us;
}

inline double tensor_core_time_us(const TensorCoreWork& w, TensorCoreMath math,
                                  const TensorCoreModel& m = kTensorCoreModel) {
  return tensor_core_launch_us(math, m) + w.k_steps * m.wave_k_us + w.bytes / m.bytes_per_us;
}

// A floor under the tier's time: its launch, and its read of the operands with the passes'
// bytes, at the floor's bandwidth (an estimate: the kernel's read runs near that bandwidth, a
// little faster or slower by the shape; docs/auto.md).
inline double tensor_core_floor_us(const TensorCoreWork& w, TensorCoreMath math,
                                   const TensorCoreModel& m = kTensorCoreModel) {
  return tensor_core_launch_us(math, m) + (w.read_bytes + w.bytes) / m.floor_bytes_per_us;
}

inline double exact_time_us(int64_t M, int64_t N, int64_t K, int64_t batch,
                            const TensorCoreModel& m = kTensorCoreModel) {
  return m.exact_launch_us + 2.0 * double(M) * double(N) * double(K) * double(batch) / m.exact_flops_per_us;
}

inline double tensor_core_margin(TensorCoreMath math) {
  return math == TensorCoreMath::kTf32x3 ? kTf32x3Margin : kTf32Margin;
}

// exact_us: the exact kernels' time as the exact-kernel model estimates it for the plan it
// would run (auto_plan, where CUTLASS's kernels run the problem); negative: the tensor-core
// model's own coarse estimate (exact_time_us). ampere: tf32 may run Ampere's kernel (the build
// has CUTLASS's kernels and they take the problem: tf32_b_route).
inline bool tensor_cores_pay(int64_t M, int64_t N, int64_t K, int64_t batch, TensorCoreMath math, bool a_kmajor,
                             bool a_vec, bool b_kmajor, bool b_vec, int64_t sms, bool ampere,
                             const TensorCoreModel& m = kTensorCoreModel, double exact_us = -1.0) {
  if (math == TensorCoreMath::kNone || M == 0 || N == 0 || K == 0) return false;
  if (math == TensorCoreMath::kTf32x3 && K < kTf32x3MinK) return false;  // tf32x3 runs an exact kernel there
  const TensorCoreWork w = tensor_core_work(M, N, K, batch, math, a_kmajor, a_vec, b_kmajor, b_vec, sms, ampere);
  return std::max(tensor_core_margin(math) * tensor_core_time_us(w, math, m), tensor_core_floor_us(w, math, m)) <
         (exact_us >= 0.0 ? exact_us : exact_time_us(M, N, K, batch, m));
}

// A tuned table (`python -m gemmtiles.tune` writes one per GPU): for a shape bucket and
// layout, the kernel measured fastest. Text, one entry per line, '#' starts a comment:
//   <NN|NT> <m> <n> <k> <skinny|split_tile|pipelined|warptile|transposed|cutlass> <tile rows> <splits>
//   <TN|TT> <m> <n> <k> cutlass 0 1
//   NT <m> <n> <k> streamk 0 1
// (m, n, k) are bucket keys (auto_bucket); tile rows is 32, 64 or 128 for split_tile (64: the
// pipelined kernel's 64 x 128 tile where it takes the operands; 128: warptile's 128 x 256 tile),
// 128 for pipelined (the pipelined 128 x 128 tile where the operands allow it, else warptile's
// 128 x 256), for skinny the columns of B a block takes (skinny_cols: 0 for the kernel's
// usual width, with float4 loads where B allows; NT 32 up to 8 rows, 128 past; NN 32 for
// single floats or 128 for float4s), else 0; splits 1-64. transposed (NN only,
// 0 rows, 1 split): A copied M-major first, where the operands allow it and no CUTLASS kernel
// runs the problem (transpose_a_first; where one does, the cost model plans instead).
// cutlass (0 rows, 1 split): CUTLASS's SIMT kernel (cutlass_plan), where the build has it and
// it takes the problem; TN and TT entries (A column-major) name it alone. streamk (NT only, 0
// rows, 1 split): the same kernel with stream-K scheduling (cutlass_streamk_plan), likewise.
// An entry applies to a batch-1 problem with A in its layout (NN, NT: row-major) whose
// dimensions fall in its bucket; anything else, and any bucket the table lacks, takes auto's
// own plan: the cost model's where CUTLASS's kernels run the problem, else the heuristic's.
inline int64_t auto_bucket(int64_t x) {
  // Quarter powers of two: 4096 -> 4096, 4097 -> 5120, 11008 -> 12288, 96 -> 96, 100 -> 112.
  if (x <= 8 || x >= (int64_t(1) << 40)) return x;
  int e = 0;
  while ((int64_t(1) << (e + 1)) <= x) ++e;
  const int64_t step = int64_t(1) << (e - 2);
  return (x + step - 1) / step * step;
}

// The most splits a table entry may ask for (tune measures up to 64): bounds the workspace,
// which holds one partial product per split.
inline constexpr int64_t kMaxTableSplits = 64;

struct AutoTableEntry {
  bool a_kmajor = true;  // NN, NT: A row-major; TN, TT: column-major
  bool b_kmajor;
  int64_t m, n, k;
  AutoKernel kernel;
  int rows;
  int64_t splits;
  bool pipelined;   // split_tile of 128 rows: the pipelined 128 x 128 tile
  bool transposed;  // NN: A copied M-major first, then the heuristic's plan of that product
                    // (where no CUTLASS kernel runs the problem)
};

struct AutoTable {
  std::vector<AutoTableEntry> entries;
  // A line 'model tensor_cores <launch_us> <tf32x3_launch_us> <wave_k_us> <bytes_per_us>
  // <exact_launch_us> <exact_flops_per_us>': this GPU's fit of TensorCoreModel's first six
  // (its floor's bandwidth a placeholder: tensor_core_model_for gives the model auto weighs).
  std::optional<TensorCoreModel> tensor_core_model;
  // A line 'model exact <layout> <p...>': this GPU's fit of the exact-kernel model
  // (exact_model_params' order; python -m gemmtiles.tune --fit-exact writes it).
  std::optional<ExactModel> exact_model;

  // Parses a table's text; throws std::invalid_argument naming the line that is not an entry.
  // Defined in auto/table.cpp (compiled by the host compiler alone).
  static AutoTable parse(const std::string& text);

  const AutoTableEntry* find(int64_t M, int64_t N, int64_t K, bool b_kmajor, bool a_kmajor = true) const {
    const int64_t m = auto_bucket(M), n = auto_bucket(N), k = auto_bucket(K);
    const AutoTableEntry* hit = nullptr;  // the last entry of a bucket wins
    for (const AutoTableEntry& e : entries)
      if (e.a_kmajor == a_kmajor && e.b_kmajor == b_kmajor && e.m == m && e.n == n && e.k == k) hit = &e;
    return hit;
  }
};

// The tensor-core model auto weighs on a GPU whose own (scaled_tensor_core_model) is `gpu`: the
// table's fit where it has one, its floor's bandwidth the GPU's, else the GPU's.
inline TensorCoreModel tensor_core_model_for(const AutoTable* table, const TensorCoreModel& gpu) {
  if (!table || !table->tensor_core_model) return gpu;
  TensorCoreModel m = *table->tensor_core_model;
  m.floor_bytes_per_us = gpu.floor_bytes_per_us;
  return m;
}

// The heuristic's plans (where no CUTLASS kernel runs the problem; the cost model's plans copy
// nothing outside their candidates) and the pre-passes at their launch (csrc/auto/auto.cu):
// NN on the pipelined tile with A transposed first. A row-major is K-major, which the tile
// copies 4 bytes at a time on 8-deep slices, while an M-major A takes 16-byte copies and whole
// 16-deep slices (auto/pipelined_tile.cuh). So for a row-major A and
// row-major B, auto copies A into an M-major K x M matrix (auto/transpose.cuh: one read and one
// write of A) and runs that product, where the product is large enough to repay the copy:
// the copy costs about 8 M K bytes against the product's 2 M N K flops, a share of about
// 80 / N (the copy's bandwidth against the tile's flop rate), less than the tile gains on an
// M-major A once the output reaches the bounds below (docs/auto.md, docs/ladder.md). M a
// multiple of 4 (the M-major tile's 16-byte copies: async_tile_ok), B's rows 16-byte aligned,
// and a copy (M x K) no larger than B (K x N) or the output (M x N).
inline constexpr int64_t kTransposeAMinM = 1024;
inline constexpr int64_t kTransposeAMinN = 2048;
// A tuned table's NN entry for the shape decides instead of the size bounds (kind
// `transposed`: transpose; any other kind: not), within the rest.
inline bool transpose_a_first(int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor, bool b_kmajor,
                              bool b_vec, const AutoTable* table = nullptr) {
  if (!(batch == 1 && a_kmajor && !b_kmajor && b_vec && M % 4 == 0 && N % 4 == 0 && M >= kAsyncTile.bm &&
        N >= kAsyncTile.bn && (M <= N || K <= N)))
    return false;
  // A `cutlass` entry plans CUTLASS's kernel where it runs (auto_plan); where it does not, the
  // size bounds decide, as without the entry.
  if (table)
    if (const AutoTableEntry* e = table->find(M, N, K, false); e && e->kernel != AutoKernel::kCutlass)
      return e->transposed;
  return M >= kTransposeAMinM && N >= kTransposeAMinN;
}

// b_kmajor: B is read down its columns (unit row stride), as nn.Linear's W^T is.
// float4s: four columns a lane (plan.w 4; skinny_float4s tells where the kernel has them).
inline AutoPlan skinny_plan(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor,
                            bool float4s, int64_t sms, int64_t splits = 0);

// The skinny kernels' candidates: K whole, and K cut into more slices (blocks along K, for the
// column-major-B kernel; for the row-major-B one, groups of its 8 warps' slices) up to those
// that fill the SMs' slots twice, at the counts of kSkinnySplits; for a row-major B, four
// columns a lane (skinny_float4s) and single floats. The kernel's own split (skinny_plan's) is
// among them. Which one runs is the model's choice (exact_plan).
inline constexpr int64_t kSkinnySplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
inline std::vector<AutoPlan> skinny_candidates(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor,
                                               bool b_vec, int64_t sms) {
  std::vector<AutoPlan> all;
  const auto add = [&](const AutoPlan& plan) {
    if (std::find(all.begin(), all.end(), plan) == all.end()) all.push_back(plan);
  };
  // The kernel's own split at its widest, and the heuristic's plan (skinny_plan on b_vec).
  const bool float4s = skinny_float4s(b_kmajor, b_vec);
  add(skinny_plan(M, N, K, batch, b_kmajor, float4s, sms));
  if (b_vec != float4s) add(skinny_plan(M, N, K, batch, b_kmajor, b_vec, sms));
  for (const bool vec : {float4s, false}) {
    const AutoPlan shape = skinny_shape(M, b_kmajor, vec ? 4 : 1);
    const int64_t blocks = ceil_div64(N, skinny_cols(shape)) * batch, slots = skinny_slots(shape, sms);
    for (const int64_t s : kSkinnySplits) {
      if (s > 1 && blocks * s > 2 * slots) break;
      const AutoPlan plan = skinny_plan(M, N, K, batch, b_kmajor, vec, sms, b_kmajor ? s : kSkinnySplitWarps * s);
      add(plan);
      if (plan.k_slice <= (b_kmajor ? 32 : kSkinnySplitMinRows)) break;  // the thinnest slices it cuts
    }
    if (b_kmajor || !float4s) break;  // the column-major-B kernel's w follows B's alignment alone
  }
  return all;
}

// The GEMV kernel (csrc/auto/gemv.cuh): up to kGemvMaxRows rows of A times a K-major B, a
// block of 8 warps on nw columns of B whole (its warps take K's chunks in turn and add their
// sums in shared memory), loading w floats of B at a time; one launch, no workspace. Its
// builds (GemvBuild) are each one number of rows and one load width, float4s where B's lines
// are 16-byte aligned, single floats elsewhere; one row's float4s also where they are not
// (kGemvRealignedMaxRows):
// - 1 and 4 rows on float4s, a warp's 32 lanes along k, four blocks an SM (64 registers a
//   thread: twice the loads of B in flight of two), on blocks of 2 columns (more blocks, for
//   outputs of few columns) and of the most columns whose accumulators, A and float4s of B
//   fit those registers without spilling: 8 for one row, 4 for 4 rows; on a shallow K, groups
//   of 4 lanes along k on blocks of 32 and 16 columns (gemv_kernel);
// - up to 4 rows on single floats, two blocks an SM on blocks of 8 or 2 columns, one row's
//   single floats too (in the one-row build at four blocks an SM, their columns' bounds
//   spilled; this build's widths fit four blocks an SM without spilling, untimed there);
// - 5-8 rows on float4s, groups of 8 lanes along k, four a warp, whose loads of A the groups
//   share, on blocks of 8 columns, two an SM (three where A's rows are aligned lines: the
//   whole-step kernel, gemv_accumulate_whole in gemv.cuh, whose 72 registers leave room for
//   three under the same bounds; the model does not price it apart);
//   on few blocks (kGemvFew), groups of 16 lanes, two a warp, on blocks of 4 columns
//   (gemv_kernel).
// (The 8-row build's blocks of 16 columns, its single-float loads and a 16-row build ran
// slower than the skinny kernel or than its 8 columns on most products, and the model, which
// prices a block's waves but not their length, would have picked the 16 columns where they
// lose: docs/auto.md.) Which one runs, against the skinny kernels and the tiles, is the
// model's choice.
struct GemvBuild {
  int rows;           // M up to this (the kernel's MT)
  int lanes_along_k;  // a group's lanes (KL): 32, the whole warp, or 8
  int widths;         // block widths built: columns[0 .. widths - 1], columns of B a block
  int columns[2];
  int w;              // floats of B a load takes: 4 (float4s) or 1
  int blocks_per_sm;  // blocks an SM runs at once (its __launch_bounds__' minimum)
};
inline constexpr GemvBuild kGemvBuilds[] = {{1, 32, 2, {8, 2}, 4, 4},
                                            {4, 32, 2, {4, 2}, 4, 4},
                                            {4, 32, 2, {8, 2}, 1, 2},
                                            {8, 8, 1, {8, 0}, 4, 2}};
inline constexpr int64_t kGemvMaxRows = 8;
// The most rows whose float4 build takes B's lines not 16-byte aligned (gemv.cuh's kRealign: a
// block's columns start alike, read from their first aligned float4 on, A's float4s made from
// the two aligned ones around them). On x @ W^T of odd K (scripts/gemv_sweep.cu, H200), one
// row ran 1.02-1.05x the time of an aligned K; 2-4 rows, twice the loads of A a row, 1.5-1.8x,
// and through auto 0.69-0.97x the speed of the plans before (the single-float build or the
// skinny kernel) on 7 of the 9 such products of the random samples (seeds 1 and 2); taking the
// second float4 from the next lane by shuffles instead ran 1.05-1.09x the time of the load.
inline constexpr int64_t kGemvRealignedMaxRows = 1;
// Whether float4s of B take M rows of such a B: its lines aligned, or realigned.
inline constexpr bool gemv_float4s_take(int64_t M, bool b_vec) { return b_vec || M <= kGemvRealignedMaxRows; }
// The loads a table's gemv entry of M rows runs on such a B: float4s where they take it,
// single floats elsewhere.
inline constexpr int gemv_entry_loads(int64_t M, bool b_vec) { return gemv_float4s_take(M, b_vec) ? 4 : 1; }
// The 5-8-row build's kernels, chosen at launch (the planner prices them all as the 8-lane
// kernel, whose estimate errs slow on the others, so the plan is as before and only the kernel
// follows the problem), on x @ W^T of 5-8 rows drawn at random (H200, scripts/gemv_sweep.cu):
// - where its blocks of 8 columns number fewer than the SMs, blocks of 4 columns (groups of 16
//   lanes along k on 2 columns each, two blocks an SM), twice the blocks on the idle SMs:
//   1.19x the other kernels' speed (geomean) on the 16 such products it was chosen on, 1.20x on
//   35 held out, 0.97x the slowest;
// - elsewhere, the 8-lane kernel. (A deep-K kernel, groups of 16 lanes on 4 columns each at one
//   block an SM, runs 1.08x the 8-lane kernel's speed on K >= 1024 where both check every
//   load's bounds, and 0.72x its speed with the steps inside K unchecked in both
//   (gemv_accumulate_whole in gemv.cuh) on the 16 products of 5-8 rows drawn with seed 31, all
//   of K >= 1024; not built: scripts/gemv_ahead.cu, docs/auto.md.)
// The 1- and 2-4-row float4 builds' kernel on a shallow K, chosen at launch too, and priced as
// the kernel that runs (its own blocks and steps: gemv_priced): their 8 warps take chunks of 32
// lanes' float4s, 1024 elements of K a round, so that below K = 512 at least half of a block's
// warps hold no chunk and the rest read their lines alone; groups of 4 lanes along k (128
// elements a round) on 4 columns each for one row (blocks of 32), 2 for 2-4 rows (blocks of
// 16: the registers of four blocks an SM). On x @ W^T of shallow K drawn at random (H200, K
// 16-1500, N from 341, the kernels of groups of 2-32 lanes on 1-8 columns each swept), the
// products of K < 512 ran 1.41x the builds' speed on one row (36 products) and 1.73x on 2-4
// rows (20), geomean, against the faster of each build's two widths, 0.91x the slowest; 1.36x
// (34) and 1.86x (24) held out, 0.87x the slowest. (Fewer columns, where the build's blocks of
// 2 columns would spread over more SMs, were not timed.) Groups of 2 lanes cannot take the
// realigned lines (their first S elements, up to 3, go to a group's lanes).
struct GemvVariant {
  int columns;  // columns of B a block takes
  int lanes_along_k;
  int blocks_per_sm;
};
inline constexpr GemvVariant kGemvFew{4, 16, 2};
inline constexpr int64_t kGemvShallowMaxK = 511;
inline constexpr GemvVariant gemv_shallow(const GemvBuild& b) { return {b.rows == 1 ? 32 : 16, 4, b.blocks_per_sm}; }
enum class GemvKernel { kBuild, kFew, kShallow };
// The kernel a plan on build b runs, for N columns and K of `batch` products on `sms` SMs.
inline GemvKernel gemv_kernel(const GemvBuild& b, int64_t N, int64_t K, int64_t batch, int64_t sms) {
  if (b.w != 4) return GemvKernel::kBuild;
  if (b.rows != kGemvMaxRows) return K <= kGemvShallowMaxK ? GemvKernel::kShallow : GemvKernel::kBuild;
  return ceil_div64(N, b.columns[0]) * batch < sms ? GemvKernel::kFew : GemvKernel::kBuild;
}
// Kernel k of build b as it runs (launch_gemv_blocks in auto/launch.cuh): the build's own on
// blocks of `columns`, or another kernel's columns, lanes along k and blocks an SM.
inline GemvVariant gemv_variant(const GemvBuild& b, GemvKernel k, int columns) {
  switch (k) {
    case GemvKernel::kFew: return kGemvFew;
    case GemvKernel::kShallow: return gemv_shallow(b);
    case GemvKernel::kBuild: break;
  }
  return {columns, b.lanes_along_k, b.blocks_per_sm};
}
inline constexpr bool gemv_has_loads(const GemvBuild& b, int w) { return b.w == w; }
// The build that takes M rows (M <= kGemvMaxRows) with loads of w floats: the one of fewest rows
// that has them (the last, without them, where none does: gemv_has_loads tells).
inline constexpr int gemv_build_index(int64_t M, int w) {
  for (int i = 0; i < int(std::size(kGemvBuilds)); ++i)
    if (M <= kGemvBuilds[i].rows && gemv_has_loads(kGemvBuilds[i], w)) return i;
  return int(std::size(kGemvBuilds)) - 1;
}
inline const GemvBuild& gemv_build(int64_t M, int w) { return kGemvBuilds[gemv_build_index(M, w)]; }
// The build of a plan (its rows and loads).
inline const GemvBuild& gemv_build(const AutoPlan& plan) { return gemv_build(plan.mt, int(plan.w)); }
inline constexpr bool gemv_has_width(const GemvBuild& b, int64_t columns) {
  for (int i = 0; i < b.widths; ++i)
    if (b.columns[i] == columns) return true;
  return false;
}
// Whether the kernel takes M rows of A times such a B; whether a build of `rows` rows has
// blocks of `columns` and loads of w floats; whether some build has blocks of `columns` (what
// a table's gemv entry may name).
inline bool gemv_takes(int64_t M, bool b_kmajor) { return M <= kGemvMaxRows && b_kmajor; }
inline bool gemv_built(int rows, int64_t columns, int w) {
  for (const GemvBuild& b : kGemvBuilds)
    if (b.rows == rows && gemv_has_loads(b, w) && gemv_has_width(b, columns)) return true;
  return false;
}
// The build a table's gemv entry of M rows runs on such a B (its loads: gemv_entry_loads);
// none where no build takes the problem with them.
inline const GemvBuild* gemv_entry_build(int64_t M, bool b_kmajor, bool b_vec) {
  if (!gemv_takes(M, b_kmajor)) return nullptr;
  const int w = gemv_entry_loads(M, b_vec);
  const GemvBuild& b = gemv_build(M, w);
  return gemv_has_loads(b, w) ? &b : nullptr;
}
inline bool gemv_width(int64_t columns) {
  for (const GemvBuild& b : kGemvBuilds)
    if (gemv_has_width(b, columns)) return true;
  return false;
}
inline AutoPlan gemv_plan(int64_t M, int64_t K, int columns, int w) {
  AutoPlan plan{AutoKernel::kGemv, gemv_build(M, w).rows, columns, w};
  plan.k_slice = K;
  return plan;
}
inline std::vector<AutoPlan> gemv_candidates(int64_t M, int64_t K, bool b_kmajor, bool b_vec) {
  std::vector<AutoPlan> all;
  if (!gemv_takes(M, b_kmajor)) return all;
  for (const int w : {4, 1}) {
    const GemvBuild& build = gemv_build(M, w);
    if ((w == 4 && !gemv_float4s_take(M, b_vec)) || !gemv_has_loads(build, w)) continue;
    for (int i = 0; i < build.widths; ++i) all.push_back(gemv_plan(M, K, build.columns[i], w));
  }
  return all;
}
// The kernel a gemv plan is priced as: the shallow-K kernel where it runs, else the plan's own
// build and width (the 5-8-row build's other kernels too: above).
inline GemvVariant gemv_priced(const AutoPlan& plan, int64_t N, int64_t K, int64_t batch, int64_t sms) {
  const GemvBuild& b = gemv_build(plan);
  const GemvKernel k = gemv_kernel(b, N, K, batch, sms);
  return gemv_variant(b, k == GemvKernel::kShallow ? k : GemvKernel::kBuild, plan.nw);
}
// The blocks of a gemv kernel, its steps in series (a warp's chunks of lanes_along_k x w
// elements of K, 8 warps taking them in turn) and their waves over the SMs' slots.
inline int64_t gemv_blocks(const GemvVariant& v, int64_t N, int64_t batch) { return ceil_div64(N, v.columns) * batch; }
inline int64_t gemv_waves(const GemvVariant& v, int64_t N, int64_t batch, int64_t sms) {
  return ceil_div64(gemv_blocks(v, N, batch), std::max<int64_t>(1, sms) * v.blocks_per_sm);
}
inline int64_t gemv_steps(const GemvVariant& v, int w, int64_t K) {
  return ceil_div64(K, 8 * int64_t(v.lanes_along_k) * w);
}

// A table entry's skinny plan: `splits` as skinny_plan takes them, on the width of `cols`
// columns of B a block (skinny_cols; 0: the kernel's usual, skinny_float4s); none where the
// kernel has no such width for the problem (the column-major-B kernel's float4s on an
// unaligned B).
inline std::optional<AutoPlan> skinny_plan_of_cols(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor,
                                                   bool b_vec, int64_t sms, int64_t splits, int64_t cols) {
  if (cols == 0 || b_kmajor) {  // the column-major-B kernel's width follows B's alignment alone
    const AutoPlan plan = skinny_plan(M, N, K, batch, b_kmajor, skinny_float4s(b_kmajor, b_vec), sms, splits);
    return cols == 0 || skinny_cols(plan) == cols ? std::optional<AutoPlan>(plan) : std::nullopt;
  }
  for (const int w : {4, 1})  // the row-major-B kernel's width is its loads'
    if (skinny_cols(skinny_shape(M, false, w)) == cols) return skinny_plan(M, N, K, batch, false, w == 4, sms, splits);
  return std::nullopt;
}

// The blocks of a skinny plan, all its slices of K and products together.
inline int64_t skinny_blocks(const AutoPlan& plan, int64_t N, int64_t batch) {
  return ceil_div64(N, skinny_cols(plan)) * batch * plan_partials(plan);
}

// Whether a row-major-B skinny plan's blocks along K add up in their cluster, with no reduction
// and no partial products (csrc/auto/launch.cuh): 2 to kMaxClusterSplits of them, and its
// clusters all run at once on SMs of their own (cluster_blocks: ExactModel's, what the GPU
// runs), so that each block streams B through an SM of its own (the launch asks the clusters
// spread). Clusters of more blocks, or of blocks that shared SMs, ran slower than the
// workspace's reduction (on an H200, every plan of 2-8 blocks along K of the products of up to
// 16 rows of a row-major B drawn from random:4000:5: up to 1.48x at 250 blocks, 1.08-1.12x past
// 264; 1.2x with 21 clusters of 6 where 17 fit at once): they wait for the SMs of a whole
// cluster to come free.
inline bool skinny_cluster_sums(const AutoPlan& plan, int64_t N, int64_t batch, const ClusterBlocks& cluster_blocks) {
  const int64_t partials = plan_partials(plan);
  return skinny_split(plan) && partials > 1 && partials <= kMaxClusterSplits &&
         skinny_blocks(plan, N, batch) <= cluster_blocks[partials];
}

// The column-major-B kernel's 8- and 16-row builds on single floats (A staged in shared
// memory, every step reading each row of A there) run a step as slowly as twice the 4-row
// build's (A read in place): counted as 4-row steps, on the unaligned x @ W^T of 5-16 rows
// drawn from random:4000:5 (every candidate timed, H200) the 8-row build ran 1.25x its estimate
// and the 16-row 1.26x (geomeans), and on 5-16 rows against two large W (15992 x 6646 and
// 14011 x 7001) 1.35x and 1.39x; counted twice, 1.13x and 1.08x, 1.13x and 1.07x (docs/auto.md).
inline constexpr int64_t kSkinnyStagedSingleSteps = 2;
// The row-major-B ring's steps on rows of B that are not 16-byte aligned (four single-float
// copies a lane and row where aligned rows take one float4), counted this many times: the count
// of 1-4 whose picks among the skinny plans ran fastest on the 217 such products of 1-16 rows in
// random:4000:6 (H200, every plan timed; its B's bytes priced as the float4 ring's, which no
// excess share bettered), 1.099x cuBLAS fp32 against 1.084x for single floats alone and 1.053x
// counted once (docs/auto.md).
inline constexpr int64_t kSkinnySinglesRingSteps = 3;
// What a column-major-B block runs once besides its steps, counted as this many of its steps:
// its first loads of B and A's first chunk in flight before any step, the barrier, and its end
// (the butterfly and the stores). Chosen from 0-96 on x @ W^T of 2-16 rows, K 16-2048
// (random.Random(21), every candidate timed, H200), by the measured speed of the plans the
// model then picks; replayed on seed 22's products it moved those picks from 0.99x to 1.03x
// cuBLAS, on the few-column products of scripts/time_swapped_plans.py (seed 2) not at all
// (docs/auto.md).
inline constexpr int64_t kSkinnyKMajorBlockSteps = 16;
// The steps that one skinny block runs in series, times the waves of its blocks (thousands):
// the latency that a product of few blocks or long slices cannot hide. The column-major-B
// kernel: a lane's loads of B, NW columns of W consecutive k per step, KL lanes along k, the
// 8- and 16-row builds' single floats counted kSkinnyStagedSingleSteps times, plus a block's
// own kSkinnyKMajorBlockSteps (above); the row-major-B kernel: a warp's rows of its slice, a
// load of B each, on single floats counted in lanes holding 16 rows in flight: a lane that
// holds fewer waits on its loads as often for fewer rows (float4s are priced as the ring's
// steps, whose rows in flight are its own; on single floats, 16 rows' 8 in flight ran
// 1.35-2.05x their estimate as 16 where a block took K whole, against 1.10-1.25x for 4-8 rows'
// 16: docs/auto.md).
// b_vec: B's lines are 16-byte aligned (the row-major-B ring's copies: kSkinnySinglesRingSteps).
inline double skinny_serial_steps(const AutoPlan& plan, int64_t N, int64_t batch, int64_t sms, bool b_vec) {
  int64_t steps = plan.k_slice;
  if (plan.kernel == AutoKernel::kSkinnyKMajor) {
    const SkinnyKMajorShape shape = skinny_kmajor_shape(plan.mt, plan.w);
    steps = ceil_div64(plan.k_slice, int64_t(32 / shape.groups) * plan.w) * shape.nw;
    if (plan.w == 1 && skinny_kmajor_staged(plan.mt)) steps *= kSkinnyStagedSingleSteps;
    steps += kSkinnyKMajorBlockSteps;
  } else if (plan.w == 1) {
    steps = plan.k_slice * 16 / skinny_split_rows_in_flight(plan.mt, 1);
  } else if (!b_vec) {
    steps *= kSkinnySinglesRingSteps;
  }
  const int64_t slots = std::max<int64_t>(1, skinny_slots(plan, sms));
  return double(ceil_div64(skinny_blocks(plan, N, batch), slots) * steps) / 1e3;
}

// The share by which a build streams a large B slower than the DRAM-bound rate the model
// prices B's bytes at (the streaming excess, exact_model.h): its time on one large B, K whole
// (1-4 x 15992 x 6646 NT for single floats, 6648 for float4s; 8 rows for the 8-row builds),
// less the model's estimate without it, over the estimate's B-bytes term, the median over the
// rows, on an H200 (docs/measurements/2026-11-30/stream-rates-large-b-h200.csv). Single floats
// of B keep few bytes in flight a lane: the GEMV kernel's 4-row build 0.64 on blocks of 8
// columns (2.4 TB/s where its float4 builds ran 4.0-4.2) and 0.34 on 2 (whose steps in series
// the model counts already), the column-major-B skinny kernel's 0.16 for 4 rows. The skinny
// kernel's 4-row float4 build, whose registers hold fewer loads ahead than the GEMV's float4
// builds, 0.28 (0.09 at one row, 0.35 at four). Builds not listed ran at the
// DRAM-bound rate (within 0.92-1.06 of it: the GEMV kernel's float4 builds, the ring kernel's
// 8 rows), are priced by their steps instead (the column-major-B kernel's 8- and 16-row single
// floats, counted twice: kSkinnyStagedSingleSteps; on two large W, 5-16 x 15992 x 6646 and
// x 14011 x 7001 NT, they then ran 1.07-1.13x their estimates, an excess share of about -0.1:
// docs/measurements/2026-11-30/stream-rates-large-b-staged-single-h200.csv), or were not
// measured (the row-major-B kernel).
inline double stream_excess(const AutoPlan& plan) {
  if (plan.kernel == AutoKernel::kGemv && plan.w == 1 && plan.mt == 4) return plan.nw == 8 ? 0.64 : 0.34;
  if (plan.kernel == AutoKernel::kSkinnyKMajor && plan.mt == 4) return plan.w == 1 ? 0.16 : 0.28;
  return 0.0;
}

// The splits of K the CUTLASS candidates are estimated at (1: data-parallel); a slice keeps at
// least kMinSliceIters k iterations of 8. gemmtiles' own split tiles go on to 24, 32, 48 and
// 64 slices, so that a few deep tiles fill the SMs: their slices are added by a reduction pass
// over all outputs at once. CUTLASS's stream-K kernel adds a tile's slices in one block, one
// after another: at 24 and 32 slices several of its plans ran well behind their estimates
// (docs/auto.md), so its candidates go past 16 slices (kCutlassApartSplits) only where they
// run their slices apart (cutlass_slices_apart), added by a reduction pass as the split tiles'.
// (The model was fitted on up to 16 slices for both.)
inline constexpr int64_t kExactSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
inline constexpr int64_t kCutlassApartSplits[] = {24, 32};
// The most slices CUTLASS's stream-K kernel is planned to add in its grid (kExactSplits' last).
inline constexpr int64_t kCutlassInGridSplits = 16;
static_assert(kExactSplits[std::size(kExactSplits) - 1] == kCutlassInGridSplits);
inline constexpr int64_t kOwnTileSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
inline constexpr int64_t kMinSliceIters = 4;
// Whether a CUTLASS plan of one product's M x N x K on CUTLASS tile `tile`, K in `splits` slices,
// runs its slices apart: CUTLASS's data-parallel kernel writes each slice's partial product and
// a reduction adds them (run_slices in auto/cutlass_simt.cuh), where its stream-K kernel would
// add them in a wave of reduction blocks. That launch asks CUTLASS's own block mapping
// (ThreadblockSwizzleStreamK); this is its rule, the blocks an SM holds taken from the model
// (tile_blocks_per_sm, the device's own on sm_90): the split's tiles x slices in fewer waves
// over the SMs than an SM holds, and more than two blocks a tile (a tile's blocks capped at its
// k iterations of 8). Plans past 16 slices run apart whatever the device holds (run in
// auto/cutlass_simt.cuh): they are candidates only where this rule sends them apart. A batch
// with K split runs its products one launch each (cutlass_entry_launches): each launch is one
// product's.
inline bool cutlass_slices_apart(int64_t M, int64_t N, int64_t K, int tile, bool a_kmajor, bool b_kmajor,
                                 int64_t splits, int64_t sms) {
  if (splits < 2 || tile < 0 || tile >= kCutlassTileCount) return false;
  const CutlassTile t = cutlass_tile_at(tile);
  const int64_t tiles = ceil_div64(M, t.bm) * ceil_div64(N, t.bn), s = std::max<int64_t>(1, sms);
  const int64_t blocks = std::min(tiles * splits, tiles * ceil_div64(K, 8));
  return ceil_div64(tiles * splits, s) < tile_blocks_per_sm(tile, a_kmajor, b_kmajor) && blocks > 2 * tiles;
}

// A batch of up to this many products may also run them one launch after another, each with K
// split (CUTLASS's batched launch splits nothing): what fills the GPU where the batch's tiles
// are few and deep. The model prices each launch; past a few tens of them their host time
// would outlast the GPU's work on most such products.
inline constexpr int64_t kEntryLaunchMaxBatch = 32;
// Whether a CUTLASS plan runs the batch's products one launch each (K split in each).
inline bool cutlass_entry_launches(int64_t batch, int64_t splits) { return batch > 1 && splits > 1; }

// All of the model's features of a plan, in the order of exact_model_params (exact_model.h
// lists them), whose dot product with the parameters is the plan's estimate; none for a plan
// the model does not cover.
inline constexpr int kExactModelSize = kCutlassFeatures + kSkinnyFeatures + 2 + kGemvFeatures;
inline constexpr int kGemvFeature0 = kCutlassFeatures + kSkinnyFeatures + 2;
// Whether a split tile plan runs on warptile's kernel with edge blocks, which check their loads'
// bounds or load one float at a time (exact_model.h): the 32-row tile, and the 64-row one where
// the pipelined kernel does not take the operands (a column-major A, or launch_auto_plan's
// other conditions in auto/launch.cuh), with a row or column of tiles cut by M or N, or an
// operand's lines not 16-byte aligned (a_vec, b_vec).
inline bool split_tile_edges(const AutoPlan& plan, int64_t M, int64_t N, bool a_kmajor, bool b_kmajor, bool a_vec,
                             bool b_vec) {
  if (plan.mt != 32 && plan.mt != 64) return false;
  if (plan.mt == 64 && split_tile64_pipelined(M, N, a_kmajor, b_kmajor, b_vec)) return false;
  return !(a_vec && b_vec && M % plan.mt == 0 && N % plan.nw == 0);
}

// The share of the SMs through which a kernel's blocks stream B: fewer blocks than SMs leave
// SMs idle. The ring kernel (skinny_kmajor_ring) is counted on its busiest SM, blocks /
// (ceil(blocks / sms) sms): each of its blocks streams its slice through a ring of its own, at
// a rate of its own, so the SMs that run one block more than the rest set its time, and a cut
// of K into more slices that evens its blocks out runs faster for all the partial products it
// adds (docs/auto.md). The other skinny kernels and the GEMV kernel, whose picks gained
// nothing by it, are counted by their blocks alone.
inline double streaming_share(int64_t blocks, int64_t sms, bool busiest_sm) {
  const int64_t s = std::max<int64_t>(1, sms), b = std::max<int64_t>(1, blocks);
  return double(b) / double(busiest_sm ? ceil_div64(b, s) * s : std::max(b, s));
}

// cluster_blocks: the blocks of clusters the GPU runs at once (ExactModel::cluster_blocks): a
// row-major-B skinny plan whose blocks along K add up in them (skinny_cluster_sums) writes no
// partial products and needs no reduction, as with K whole in each block.
inline std::optional<std::array<double, kExactModelSize>> exact_plan_features(const AutoPlan& plan, int64_t M,
                                                                              int64_t N, int64_t K, int64_t batch,
                                                                              bool a_kmajor, bool b_kmajor,
                                                                              int64_t sms, bool a_vec, bool b_vec,
                                                                              const ClusterBlocks& cluster_blocks =
                                                                                  kExactModel.cluster_blocks) {
  if (plan.swapped) {  // the N x M product's features (swapped_candidates)
    if (plan.kernel != AutoKernel::kSkinnyKMajor && plan.kernel != AutoKernel::kSkinnyNMajor &&
        plan.kernel != AutoKernel::kGemv)
      return std::nullopt;
    AutoPlan q = plan;
    q.swapped = false;
    return exact_plan_features(q, N, M, K, batch, b_kmajor, a_kmajor, sms, b_vec, a_vec, cluster_blocks);
  }
  std::array<double, kExactModelSize> f{};
  const auto put = [&](const auto& part, int at) { std::copy(part.begin(), part.end(), f.begin() + at); };
  if (plan.kernel == AutoKernel::kSkinnyKMajor || plan.kernel == AutoKernel::kSkinnyNMajor) {
    const bool ring = plan.kernel == AutoKernel::kSkinnyKMajor && skinny_kmajor_ring(plan.mt, int(plan.w));
    const int64_t partials = plan_partials(plan);
    const bool in_cluster = skinny_cluster_sums(plan, N, batch, cluster_blocks);
    put(skinny_features(M, N, K, batch, in_cluster ? 1 : partials, plan.kernel == AutoKernel::kSkinnyKMajor, plan.w == 4,
                        skinny_serial_steps(plan, N, batch, sms, b_vec), streaming_share(skinny_blocks(plan, N, batch), sms, ring),
                        stream_excess(plan)),
        kCutlassFeatures);
    return f;
  }
  if (plan.kernel == AutoKernel::kGemv) {
    // Only the blocks and loads gemv_candidates names (and the kernel is built for).
    if (plan.mt != gemv_build(M, int(plan.w)).rows || !gemv_takes(M, b_kmajor) || plan.splits != 1 ||
        !gemv_built(plan.mt, plan.nw, plan.w))
      return std::nullopt;
    const GemvVariant v = gemv_priced(plan, N, K, batch, sms);
    const int64_t blocks = gemv_blocks(v, N, batch);
    put(gemv_features(M, N, K, batch, blocks, gemv_waves(v, N, batch, sms), gemv_steps(v, int(plan.w), K),
                      streaming_share(blocks, sms, false), gemv_build(plan).rows == kGemvMaxRows, stream_excess(plan)),
        kGemvFeature0);
    return f;
  }
  if (plan.kernel == AutoKernel::kSplitTile) {
    if (plan.nw != 128 || (plan.mt != 32 && plan.mt != 64 && plan.mt != 128)) return std::nullopt;
    const int tile = plan.mt == 32 ? kOwnTile0 : plan.mt == 64 ? kOwnTile0 + 1 : kOwnTile0 + 2;
    put(cutlass_features(M, N, K, batch, a_kmajor, b_kmajor, tile, plan.mt, plan.nw, plan.splits, sms,
                         split_tile_edges(plan, M, N, a_kmajor, b_kmajor, a_vec, b_vec)),
        0);
    return f;
  }
  const bool ca = copies_a(plan.kernel), cb = copies_b(plan.kernel);
  if (!(plan.kernel == AutoKernel::kCutlass || ca || cb) || (ca && !a_kmajor) || (cb && !b_kmajor)) return std::nullopt;
  if (const int i = cutlass_tile_index(plan.mt, plan.nw, plan.w); i >= 0) {
    const CutlassTile t = cutlass_tile_at(i);
    // A batch with K split runs its products one launch after another (cutlass_entry_launches):
    // batch times one product's features.
    const bool entries = cutlass_entry_launches(batch, plan.splits);
    put(cutlass_features(M, N, K, entries ? 1 : batch, a_kmajor && !ca, b_kmajor && !cb, i, t.bm, t.bn,
                         plan.splits, sms),
        0);
    if (entries)
      for (int j = 0; j < kCutlassFeatures; ++j) f[j] *= double(batch);
    // The copies: a launch each, and each operand copied read and written once.
    f[kCutlassFeatures + kSkinnyFeatures] = int(ca) + int(cb);
    f[kCutlassFeatures + kSkinnyFeatures + 1] = 8.0 * double(K) * (double(ca) * M + double(cb) * N) * batch / 1e6;
    return f;
  }
  return std::nullopt;
}
inline std::array<double, kExactModelSize> exact_model_params(const ExactModel& m = kExactModel) {
  std::array<double, kExactModelSize> p{};
  std::copy(m.cutlass.begin(), m.cutlass.end(), p.begin());
  std::copy(m.skinny.begin(), m.skinny.end(), p.begin() + kCutlassFeatures);
  std::copy(m.copy.begin(), m.copy.end(), p.begin() + kCutlassFeatures + kSkinnyFeatures);
  std::copy(m.gemv.begin(), m.gemv.end(), p.begin() + kGemvFeature0);
  return p;
}
// The model of a parameter vector in exact_model_params' order (a table's 'model exact' line).
inline ExactModel exact_model_of(const std::array<double, kExactModelSize>& p) {
  ExactModel m{};
  std::copy(p.begin(), p.begin() + kCutlassFeatures, m.cutlass.begin());
  std::copy(p.begin() + kCutlassFeatures, p.begin() + kCutlassFeatures + kSkinnyFeatures, m.skinny.begin());
  std::copy(p.begin() + kCutlassFeatures + kSkinnyFeatures, p.begin() + kGemvFeature0, m.copy.begin());
  std::copy(p.begin() + kGemvFeature0, p.end(), m.gemv.begin());
  return m;
}

// The estimate of a plan by the exact-kernel model, in microseconds; infinity for a plan the
// model does not cover.
inline double exact_plan_us(const AutoPlan& plan, int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor,
                            bool b_kmajor, int64_t sms, bool a_vec, bool b_vec,
                            const std::array<double, kExactModelSize>& params = exact_model_params(),
                            const ClusterBlocks& cluster_blocks = kExactModel.cluster_blocks) {
  const auto f = exact_plan_features(plan, M, N, K, batch, a_kmajor, b_kmajor, sms, a_vec, b_vec, cluster_blocks);
  return f ? exact_estimate_us(*f, params) : 1e300;
}

// A plan that copies an operand first ranks at its estimate times kCopyMargin: near a tie the
// operands stay as they lie, since a copy's cost (a launch, a workspace from the allocator, a
// pass over memory) varies more than the model's few features of it tell (fitted on the
// training seed's halves, each choosing for the other: docs/auto.md). The rank alone: the
// estimate that auto weighs against the tensor cores is the plan's own.
inline constexpr double kCopyMargin = 1.05;
// A swapped plan (swapped_candidates) ranks at its estimate times kSwapMargin plus kSwapUs:
// its few-row kernels run there on far more columns than the model was fitted on (N' = M up
// to tens of thousands, against at most 16384 columns) and on shallow K, where they ran past
// their estimates (on few-column products drawn at random with the training seed, H200: the
// first-ranked 1.22x as a median, the column-major-B kernel with K whole under 600 1.5-2.5x).
// Fitted on those products, so that near a tie the tiles keep the problem: docs/auto.md.
inline constexpr double kSwapMargin = 1.2, kSwapUs = 2.0;
inline double exact_rank_us(const AutoPlan& plan, double estimate_us) {
  if (plan.swapped) return estimate_us * kSwapMargin + kSwapUs;
  return estimate_us * (copies_a(plan.kernel) || copies_b(plan.kernel) ? kCopyMargin : 1.0);
}

// The swapped plans of a product of few columns: out^T = B^T A^T, the N x M product of A' = B^T
// and B' = A^T (swapped_problem in auto/auto.cu), whose few rows the skinny and GEMV kernels
// take, each row of A streamed once as a column of B' (K-major where A is row-major: B' is A's
// storage read in place), the output written through its column stride (GemmProblem::out_cs).
// The tiles spend most of their columns on nothing there (a 32-column tile on N = 1 computes
// 32 times the product). a_vec: A's contiguous lines are 16-byte aligned, B' lines'.
inline std::vector<AutoPlan> swapped_candidates(int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor,
                                                bool a_vec, int64_t sms) {
  if (N > skinny_max_m(a_kmajor)) return {};
  std::vector<AutoPlan> all = skinny_candidates(N, M, K, batch, a_kmajor, a_vec, sms);
  const std::vector<AutoPlan> gemv = gemv_candidates(N, K, a_kmajor, a_vec);
  all.insert(all.end(), gemv.begin(), gemv.end());
  for (AutoPlan& plan : all) plan.swapped = true;
  return all;
}

// The candidates that take the problem, where CUTLASS's kernels run it: the skinny kernel up to
// its rows, the GEMV kernel up to its rows of A times a K-major B, gemmtiles' own split tiles
// (one product), and CUTLASS's tiles, data-parallel or with K split (kExactSplits, and
// kCutlassApartSplits where the slices run apart; a batch of up to kEntryLaunchMaxBatch
// products: one launch each, cutlass_entry_launches), on the
// operands as they lie or with a K-major one copied transposed first (A, B or both: copies_a,
// copies_b); for few columns, the swapped plans (swapped_candidates). exact_plan: the one of
// least rank (exact_rank_us), the first of equals.
inline std::vector<AutoPlan> exact_candidates(int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor,
                                              bool b_kmajor, bool b_vec, int64_t sms, bool a_vec = true) {
  std::vector<AutoPlan> all;
  const auto consider = [&](const AutoPlan& plan) { all.push_back(plan); };
  const int64_t iters = ceil_div64(K, 8);
  // gemmtiles' own split tiles (one product): 32 x 128 and 64 x 128 for any layout, the
  // pipelined 128 x 128 tile where it takes the operands; one launch's grid holds 65535 rows
  // of tiles.
  if (batch == 1) {
    for (const int rows : {32, 64, 128}) {
      if (ceil_div64(M, rows) > 65535 || (rows == 128 && !async_tile_ok(M, N, a_kmajor, a_vec, b_kmajor, b_vec)))
        continue;
      for (int64_t s : kOwnTileSplits) {
        if (s > 1 && iters / s < kMinSliceIters) break;
        consider(split_tile_plan(rows, 128, K, s));
      }
    }
  }
  if (M <= skinny_max_m(b_kmajor))
    for (const AutoPlan& plan : skinny_candidates(M, N, K, batch, b_kmajor, b_vec, sms)) consider(plan);
  for (const AutoPlan& plan : gemv_candidates(M, K, b_kmajor, b_vec)) consider(plan);
  for (const bool copy_a : {false, true}) {
    if (copy_a && !(a_kmajor && copy_fits(M, K, batch))) break;
    for (const bool copy_b : {false, true}) {
      if (copy_b && !(b_kmajor && copy_fits(N, K, batch))) break;
      for (int i = 0; i < kCutlassTileCount; ++i) {
        const CutlassTile t = cutlass_tile_at(i);
        const auto split = [&](int64_t s) {
          AutoPlan plan{cutlass_kernel_copying(copy_a, copy_b), t.bm, t.bn, t.warps};
          plan.splits = s;
          plan.k_slice = ceil_div64(K, s);
          consider(plan);
        };
        for (int64_t s : kExactSplits) {
          if (s > 1 && (batch > kEntryLaunchMaxBatch || iters / s < kMinSliceIters)) break;
          split(s);
        }
        for (int64_t s : kCutlassApartSplits)
          if (batch <= kEntryLaunchMaxBatch && iters / s >= kMinSliceIters &&
              cutlass_slices_apart(M, N, K, i, a_kmajor && !copy_a, b_kmajor && !copy_b, s, sms))
            split(s);
      }
    }
  }
  for (const AutoPlan& plan : swapped_candidates(M, N, K, batch, a_kmajor, a_vec, sms)) consider(plan);
  return all;
}

// The candidate of least rank (exact_rank_us), the first of equals. estimate: where given, set
// to the plan's estimate (microseconds).
inline AutoPlan exact_plan(int64_t M, int64_t N, int64_t K, int64_t batch, bool a_kmajor, bool b_kmajor, bool b_vec,
                           int64_t sms, const ExactModel& exact = kExactModel, bool a_vec = true,
                           double* estimate = nullptr) {
  AutoPlan best{AutoKernel::kWarptile};
  double best_us = 1e300;
  const std::array<double, kExactModelSize> params = exact_model_params(exact);
  double best_rank = 1e300;
  for (const AutoPlan& plan : exact_candidates(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec)) {
    const double us = exact_plan_us(plan, M, N, K, batch, a_kmajor, b_kmajor, sms, a_vec, b_vec, params,
                                    exact.cluster_blocks);
    const double rank = exact_rank_us(plan, us);
    if (rank < best_rank) best = plan, best_us = us, best_rank = rank;
  }
  if (estimate) *estimate = best_us;
  return best;
}

// table: the tuned table for this GPU, or nullptr (the heuristic alone).
// a_vec: A's contiguous lines are 16-byte aligned (asked of a column-major A, and of any A by
// the swapped plans, which read it as B: swapped_candidates).
// cutlass: whether CUTLASS's SIMT kernel can run the problem (built, on this GPU, and
// cutlass_simt_takes in csrc/auto/cutlass_simt.h).
// tensor_cores: the tensor-core math the settings allow and the GPU runs (kNone: exact
// kernels alone); where the model says they pay (tensor_cores_pay: the table's model with
// `model`'s floor, else `model`: tensor_core_model_for), the plan is that tier. The output is
// auto's own (rows of N floats); a batch is taken to have a B per entry.
inline AutoPlan auto_plan(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor,
                          bool b_vec, int64_t sms, bool a_kmajor = true,
                          const AutoTable* table = nullptr, bool a_vec = true, bool cutlass = false,
                          TensorCoreMath tensor_cores = TensorCoreMath::kNone,
                          const TensorCoreModel& model = kTensorCoreModel,
                          const ExactModel& exact = kExactModel) {
  if (M == 0 || N == 0 || K == 0 || batch < 1 || batch > 65535) return {AutoKernel::kWarptile};
  // A table's fit, where it has one, with what this GPU runs (its clusters) as `exact` says.
  ExactModel exact_model = table && table->exact_model ? *table->exact_model : exact;
  exact_model.cluster_blocks = exact.cluster_blocks;
  std::optional<AutoPlan> exact_pick;  // the exact plan, where it was weighed against the tensor cores
  if (tensor_cores != TensorCoreMath::kNone) {
    // Against the exact plan's own estimate where the exact-kernel model covers the problem.
    double exact_us = -1.0;
    if (cutlass) exact_pick = exact_plan(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, exact_model, a_vec, &exact_us);
    if (tensor_cores_pay(M, N, K, batch, tensor_cores, a_kmajor, a_vec, b_kmajor, b_vec, sms, cutlass,
                         tensor_core_model_for(table, model), exact_us))
      return {tensor_cores == TensorCoreMath::kTf32x3 ? AutoKernel::kTf32x3 : AutoKernel::kTf32};
  }
  // One launch of the pipelined tile covers M in blocks of 128 rows along the grid's y
  // (at most 65535); warptile's own launch takes more rows in several.
  const bool async = async_tile_ok(M, N, a_kmajor, a_vec, b_kmajor, b_vec) &&
                     ceil_div64(M, kAsyncTile.bm) <= 65535;
  const AutoTableEntry* e = table && batch == 1 ? table->find(M, N, K, b_kmajor, a_kmajor) : nullptr;
  // The entry's plan, where the problem can take it. One it cannot take counts as none (auto's
  // own plan: the cost model's where CUTLASS's kernels run, else the heuristic's): a `cutlass`
  // one without the kernel, a `transposed` one whose copy is not made (transpose_a_first, and
  // never where CUTLASS's kernels run), tiles, skinny or gemv past the rows they take, skinny of
  // a width the problem cannot take. A `transposed` entry that applies is for the launch, which
  // then plans the product it makes: here the plan is the heuristic's own tiles, so that the
  // copy is made.
  if (e && e->kernel == AutoKernel::kCutlass) {
    if (cutlass) return cutlass_plan();
  } else if (e && e->kernel == AutoKernel::kCutlassStreamK) {
    if (cutlass && a_kmajor && b_kmajor) return cutlass_streamk_plan();
  } else if (e && e->transposed) {
    // No plan of its own: the heuristic's copy is the launch's (launch_a_transposed, where
    // CUTLASS's kernels do not run); where they run, the cost model plans (its candidates
    // price copies of their own), and the launch copies nothing before the plan.
  } else if (e && a_kmajor) {
    if (e->kernel == AutoKernel::kSplitTile && (e->rows == 128 || M <= kSplitTileMaxM))
      return split_tile_plan(e->rows, e->rows != 128 ? 128 : e->pipelined && async ? kAsyncTile.bn : kSplitTiles[2].bn,
                             K, e->splits);
    if (e->kernel == AutoKernel::kSkinnyNMajor && M <= skinny_max_m(b_kmajor)) {
      if (const std::optional<AutoPlan> plan = skinny_plan_of_cols(M, N, K, batch, b_kmajor, b_vec, sms, e->splits, e->rows))
        return *plan;
    }
    if (e->kernel == AutoKernel::kGemv) {
      const GemvBuild* b = gemv_entry_build(M, b_kmajor, b_vec);
      if (b && gemv_has_width(*b, e->rows)) return gemv_plan(M, K, e->rows, b->w);
    }
    if (e->kernel == AutoKernel::kWarptile) return {AutoKernel::kWarptile};
  }
  if (cutlass)
    return exact_pick ? *exact_pick : exact_plan(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, exact_model, a_vec);
  if (M > skinny_max_m(b_kmajor)) {
    // One problem on the split-K tiles: the 32- and 64-row ones for row-major A and up to
    // kSplitTileMaxM rows, the 128-row one for any (the pipelined 128 x 128 tile where the
    // operands allow it; else warptile's 128 x 256, for row-major A and up to kSplitTileMaxM
    // rows with its K split, and warptile's own launch otherwise).
    // Past kSplitTileMaxM rows every layout takes the pipelined tile where it can: against
    // warptile's 128 x 256 it ran NT clearly faster and NN as fast or a little faster
    // (docs/auto.md).
    if (batch != 1 || !(a_kmajor || async)) return {AutoKernel::kWarptile};
    const SplitTileShape& large = async ? kAsyncTile : kSplitTiles[2];
    // The tile shape that wastes least on rows past M, weighed by its rate; then the splits.
    const SplitTileShape* best = &large;
    double best_rows = double(ceil_div64(M, large.bm) * large.bm) / large.rate;
    for (int i = 0; i < 2 && a_kmajor && M <= kSplitTileMaxM; ++i) {
      const SplitTileShape& t = kSplitTiles[i];
      const double rows = double(ceil_div64(M, t.bm) * t.bm) / t.rate;
      if (rows < best_rows) best = &t, best_rows = rows;
    }
    const int64_t rows = ceil_div64(M, best->bm), cols = ceil_div64(N, best->bn), slots = best->blocks_per_sm * sms;
    const TailSplit tail = best == &kAsyncTile ? tail_split(M, N, slots, K) : TailSplit{};
    const int64_t splits = best_splits(rows * cols, slots, M, N, K, tail);
    if (best == &kSplitTiles[2] && (splits == 1 || !a_kmajor || M > kSplitTileMaxM))
      return {AutoKernel::kWarptile};
    return split_tile_plan(best->bm, best->bn, K, splits);
  }
  // Float4s where B's lines are aligned: unpriced, the ring's single-float copies lose on
  // small products (kSkinnySinglesRingSteps).
  return skinny_plan(M, N, K, batch, b_kmajor, b_vec, sms);
}

// In the heuristic's plans (as transpose_a_first): a column-major A (a weight gradient's
// grad^T) that no split-K tile takes (the pipelined tile needs at least 128 rows, a multiple of
// 4, and 16-byte aligned columns) leaves the plan on warptile with K whole: on few output tiles
// most SMs idle. Where that is the plan, auto copies A K-major first (one read and one write of
// A, M x K, which is small where few tiles are) and plans that product, which the split-K tiles
// take (csrc/auto/auto.cu: launch_a_kmajor).
inline bool copy_a_kmajor_first(const AutoPlan& plan, int64_t batch, bool a_kmajor) {
  return plan.kernel == AutoKernel::kWarptile && batch == 1 && !a_kmajor;
}

// The last columns of a large output that the heuristic's plans run apart (auto.cu:
// launch_peeled; the cost model's plans run the output whole): N a few columns past a multiple
// of 128 would cost a whole extra wave of tiles, so the last r <= 8 columns run as the
// transposed problem on the skinny kernel. r, or 0 where the output runs whole.
inline int64_t peeled_columns(int64_t M, int64_t N, int64_t batch) {
  const int64_t r = N % 128;
  return batch == 1 && M >= 1024 && N >= 1024 && r != 0 && r <= kPeelMaxColumns ? r : 0;
}

// K cut into about `splits` slices of a multiple of `multiple` (fewer when K is short): the
// plan's k_slice, and its splits, the whole slices that then cover K.
inline void cut_k(AutoPlan& plan, int64_t K, int64_t splits, int64_t multiple) {
  splits = std::max<int64_t>(1, std::min(splits, ceil_div64(K, multiple)));
  plan.k_slice = ceil_div64(ceil_div64(K, splits), multiple) * multiple;
  plan.splits = ceil_div64(K, plan.k_slice);
}

// The split tile of `rows` x `cols` (128 x 128: the pipelined tile) with K in `splits` slices
// of a multiple of 8 (fewer when K is short).
inline AutoPlan split_tile_plan(int rows, int cols, int64_t K, int64_t splits) {
  AutoPlan plan{AutoKernel::kSplitTile, rows, cols};
  cut_k(plan, K, splits, 8);
  return plan;
}

// The skinny kernel for M <= skinny_max_m(b_kmajor) rows; splits 0: the kernel's own
// (row-major B: its blocks along K fill the SMs' waves; column-major B: its blocks fill them
// at most once).
inline AutoPlan skinny_plan(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor,
                            bool float4s, int64_t sms, int64_t splits) {
  AutoPlan plan{b_kmajor ? AutoKernel::kSkinnyKMajor : AutoKernel::kSkinnyNMajor};
  plan.mt = skinny_rows(M, b_kmajor);
  plan.w = float4s ? 4 : 1;
  if (!b_kmajor) {
    plan.nw = 1;
    if (splits > 0) {  // the given slices and width
      cut_k(plan, K, splits, kSkinnySplitMinRows);
      return plan;
    }
    // Blocks of 32 w columns, 8 slices of K each (two blocks per SM, one for 16 rows of
    // float4s): the fewest blocks along K that leave no wave of blocks less than 90% full,
    // else the fullest last wave (a partial wave cost more than longer slices: docs/auto.md),
    // with slices of at least kSkinnySplitMinRows rows (a narrow B needs many blocks along K
    // to have enough of its rows in flight). Four columns a lane where asked, unless single
    // floats, four times the blocks across N, fill the GPU where those cannot.
    struct Fill {
      double full = 0.0;
      int64_t parts = 1;
    };
    const auto fill = [&](int w) {
      const AutoPlan shape = skinny_shape(M, false, w);
      const int64_t blocks = ceil_div64(N, skinny_cols(shape)) * batch, slots = skinny_slots(shape, sms);
      const int64_t most = std::max<int64_t>(1, K / (kSkinnySplitWarps * kSkinnySplitMinRows));
      Fill f;
      for (int64_t q = 1; q <= most; ++q) {
        const int64_t b = blocks * q;
        const double full = double(b) / double(ceil_div64(b, slots) * slots);
        if (full > f.full + 1e-9) f.full = full, f.parts = q;
        if (full >= 0.9) break;
      }
      return f;
    };
    Fill f = fill(plan.w);
    if (plan.w == 4 && f.full < 0.9) {
      const Fill single = fill(1);
      if (single.full > f.full + 1e-9) f = single, plan.w = 1;
    }
    cut_k(plan, K, kSkinnySplitWarps * f.parts, kSkinnySplitMinRows);
    return plan;
  }
  // Column-major B: splits no more than fill the SMs' blocks once, since a partial second
  // wave of its blocks cost more than fewer, longer slices (docs/auto.md).
  plan.nw = skinny_kmajor_shape(plan.mt, plan.w).nw;
  const int64_t slots = skinny_slots(plan, sms);
  const int64_t blocks = ceil_div64(N, skinny_cols(plan)) * batch;
  cut_k(plan, K, std::min<int64_t>(splits > 0 ? splits : slots / blocks, 65535), 32);
  return plan;
}

}  // namespace gemmtiles
