// The cost model behind auto's choice of exact fp32 kernel: for each candidate that takes a
// problem, an estimate of its time from the work it does on the GPU; the plan is the candidate
// of least estimate (auto_plan in auto/plan.h). Plain C++: gemmtiles._C.exact_features exposes
// the same features to the fit (python -m gemmtiles.tune --fit-exact), which sets the
// parameters.
//
// The candidates:
//  - CUTLASS's SIMT kernels (auto/cutlass_simt.h) on each of their tiles, data-parallel or with
//    K split s ways (a batch with K split: one launch per product, priced as batch times one
//    product's features). Their time is linear in parameters over these features:
//      a launch; a split's extra work (its workspace and fix-up), and its partial tiles' bytes;
//      the operands' compulsory bytes;
//      per tile: the serial k iterations a block runs (waves x iterations per block: the
//      latency a lone block cannot hide), the FMAs an SM runs (the same, times the blocks an
//      SM holds at once, times the tile's FMAs per iteration), the elements of a K-major A
//      and of a K-major B an SM copies into shared memory in that time (each transposed on
//      its way, one float at a time: a cost per element of its own for each operand and
//      tile, which tells NN from TT on a tile of more rows than columns), and its waves.
//  - The same after a transposing copy of a K-major A, B or both into an M-major A and an
//    N-major B: a launch and the bytes of each copy, plus the estimate of the product that
//    then runs (TN, CUTLASS's fastest layout, where no K-major operand is left).
//  - gemmtiles' own split tiles and pipelined tile (auto/launch.cuh): the same features as
//    CUTLASS's tiles, with parameters of their own, and a split's fix-up of their own (the
//    reduction's launch). The 32- and 64-row split tiles on warptile's kernel load their
//    slices as float4s without bounds checks only in blocks inside the matrix with 16-byte
//    aligned operands; a block cut by M or N checks each load's bounds, and an unaligned
//    operand is loaded one float at a time in every block: where any block is such an edge
//    block, their serial iterations cost again (the 64-row tile on the pipelined kernel, which
//    moves its edge tiles back inside the matrix, has none; so the 64-row tile's edge cost is
//    that of warptile's kernel, which it runs only on products of fewer than 64 rows or 128
//    columns, of an unaligned row-major B, or of a column-major A). Both take any layout; a
//    column-major A is copied into shared memory as it lies (no K-major cost).
//  - The skinny kernels (up to 16 rows, auto/skinny.cuh), K whole or in slices: a launch, B's
//    bytes over the share of SMs its blocks occupy (fewer blocks than SMs stream B through
//    fewer SMs; the ring kernel's counted on its busiest SM: streaming_share in auto/plan.h),
//    A's bytes, where K is split the reduction's launch and the partial products' bytes,
//    and for each of the kernels (the row-major-B one apart on float4s through shared memory
//    and on single floats through registers) the steps a block runs in series times its
//    blocks' waves (skinny_serial_steps in auto/plan.h: the latency of few blocks or long slices),
//    and B's bytes again at the build's streaming excess (below).
//  - The GEMV kernel (up to 8 rows, a K-major B, auto/gemv.cuh): a launch, B's bytes over the
//    share of SMs its blocks occupy, A's bytes as every block reads them (through L2), its
//    blocks' waves (each ends in a reduction across its warps), and its steps in series times
//    those waves; the 5-8-row build's B bytes and steps in series at rates of their own; and
//    B's bytes again at the build's streaming excess.
//  Streaming excess: a build whose loads in flight cannot keep DRAM busy (single floats of B,
//  a lane's few loads ahead) streams a large B slower than the DRAM-bound rate the B-bytes
//  feature is priced at, by a share of its own (stream_excess in auto/plan.h, measured on one
//  large B per build). That share is a feature's multiplier, and its rate (the last skinny and
//  GEMV parameters) a cost inside the SM: the loads in flight an SM holds, scaled by the SM
//  clock, so that a GPU of faster DRAM than the one measured on counts the excess as larger
//  against its DRAM rate and one of slower DRAM as smaller.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace gemmtiles {

// The tiles: CUTLASS's (cutlass_tile_at(0..7) in auto/plan.h), then gemmtiles' own split tiles
// of 32 x 128 and 64 x 128 and the pipelined 128 x 128 tile (auto/launch.cuh).
inline constexpr int kExactTiles = 11, kOwnTile0 = 8;
// Blocks of each tile an SM holds at once (registers, then shared memory), for each layout of
// the operands it loads: [tile][2 * a_kmajor + b_kmajor], so TN, TT, NN, NT. CUTLASS's kernels
// take registers by layout, and an SM's four register files each hold whole warps: 168 registers
// a thread (the 64 x 64 tile on two warps, NN and TT) leave room for three warps a file, six
// blocks of two an SM, 128 (NT and TN) for four, eight blocks; on four warps of 32 x 32 the
// same tile holds six blocks NN and TT and five NT and TN. Hopper's counts (sm_90: 64K
// registers, 228 KB of shared memory and 32 blocks an SM), the GPU the parameters were fitted
// on; another GPU's limits may hold other counts. gemmtiles._C.cutlass_blocks_per_sm asks the
// GPU what a build's kernels hold, and the tests check on sm_90 that it is this table.
inline constexpr int kTileBlocksPerSm[kExactTiles][4] = {
    {1, 1, 1, 1},     {2, 2, 2, 2},     {8, 6, 6, 8}, {6, 8, 6, 6}, {6, 8, 6, 6},
    {20, 20, 16, 20}, {16, 16, 16, 16}, {5, 6, 6, 5}, {6, 6, 6, 6}, {3, 3, 3, 3}, {2, 2, 2, 2}};
inline constexpr int tile_blocks_per_sm(int tile, bool a_kmajor, bool b_kmajor) {
  return kTileBlocksPerSm[tile][2 * int(a_kmajor) + int(b_kmajor)];
}
// Features: a launch, a split's fix-up (CUTLASS's; gemmtiles' own: a second launch, the
// reduction), partial tiles' MB, operands' MB, split blocks per SM, the serial iterations of
// the 32-row and of the 64-row split tile on warptile's kernel where it runs edge blocks; then
// per tile its serial iterations, its FMAs per SM, its K-major A's and B's elements copied per
// SM, and its waves.
inline constexpr int kGlobalFeatures = 8, kPerTileFeatures = 5;
inline constexpr int kCutlassFeatures = kGlobalFeatures + kPerTileFeatures * kExactTiles, kSkinnyFeatures = 9;
inline constexpr int kGemvFeatures = 8;
// The name of these features' layout, which a table's 'model exact' line carries (auto/table.cpp):
// a line fitted to other features is refused rather than read with another meaning.
inline constexpr const char* kExactModelLayout = "per-operand-skinny-ring-steps-in-flight-gemv-rows8-tile32w2-edges-stream-excess-staged-single-tile64w4";

// The most blocks along K whose partial sums their thread-block cluster adds up in shared
// memory: the portable cluster size (sm_90+).
inline constexpr int64_t kMaxClusterSplits = 8;
// Per cluster size n (index n, 2 .. kMaxClusterSplits): blocks of such clusters (ExactModel).
using ClusterBlocks = std::array<int64_t, kMaxClusterSplits + 1>;

struct ExactModel {
  std::array<double, kCutlassFeatures> cutlass;  // microseconds per unit of each feature
  std::array<double, kSkinnyFeatures> skinny;
  // The transposing copies of a K-major operand before CUTLASS's kernel (copies_a, copies_b in
  // auto/plan.h): microseconds per launch, and per MB read and written.
  std::array<double, 2> copy;
  std::array<double, kGemvFeatures> gemv;
  // Not fitted, what the GPU runs: cluster_blocks[n], the blocks in clusters of n (2 ..
  // kMaxClusterSplits) that it runs at once, one block an SM (a GPC's SMs hold whole clusters
  // alone): where a row-major-B skinny plan's n blocks along K fit them, its clusters add them
  // up, with no reduction and no partial products (skinny_cluster_sums in auto/plan.h). Zeros
  // where the GPU runs no clusters (before sm_90, or a build's code for older GPUs). What the
  // GPU reports is read once per device (skinny_cluster_blocks in auto/launch.cuh); these are
  // an H200's, whose 132 SMs are the H100 SXM's.
  ClusterBlocks cluster_blocks = {0, 0, 132, 117, 120, 110, 102, 105, 120};
};

// Fitted on the H100 SXM (132 SMs) to every candidate of random:200:1 timed through the op
// (python -m gemmtiles.exact_fit; docs/auto.md; the shapes of up to 16 rows timed again with
// the skinny kernels' slices): the global parameters, then five per tile in
// kTileBlocksPerSm's order (CUTLASS's eight, gemmtiles' 32 x 128, 64 x 128 and pipelined
// 128 x 128); the skinny kernels' (the row-major-B kernel's steps on float4s, which it runs
// through shared memory, at its steps' cost on single floats, through registers as when
// fitted; those on single floats counted since by the rows a lane keeps in flight, which
// doubles the 16-row build's at the fitted rate, and the column-major-B kernel's 8- and 16-row
// builds' on single floats counted twice: skinny_serial_steps in auto/plan.h); the
// copies'; the GEMV kernel's, fitted apart to its own
// candidates on the 64 products of up to 4 rows of x @ W^T in random:1000:1, the others held
// and its rate per byte of B the skinny kernels' (python -m gemmtiles.exact_fit --gemv:
// exact_fit.fit_gemv). Its 8-row build (5-8 rows; its steps are 8 lanes' chunks of K, a quarter
// of the 4-row build's) shares the launch, A's bytes and the waves; its rates per byte of B and
// per step in series are its own (the last two), fitted apart, the others held (fit_gemv), to
// its candidates on the aligned x @ W^T products of 5-16 rows of random:800:1 on an H200 (the
// H100's rates priced them at 0.71x their time, most below on deep K, where the steps in series
// of its two blocks an SM wait on their loads). They price the checked kernel: the whole-step
// kernel that aligned rows of A run (gemv.cuh) runs below their estimates, and refitted on it
// they picked worse (docs/auto.md): they ship as fitted on the checked kernel. The 2-4-row
// float4 build at four blocks an SM is priced by the shared parameters on its own waves, not
// refitted. The streaming excess's rate (the skinny kernels' last parameter, and the GEMV
// kernel's, the same) is the H200's DRAM-bound rate per MB of B (the B-bytes rate scaled to the
// H200's DRAM), which the builds' shares were measured against (stream_excess in auto/plan.h);
// the partial fits hold it.
// gemmtiles' own tiles' five parameters each and the split tiles' edge costs (globals 6 and 7) are fitted
// apart, the others held (python -m gemmtiles.exact_fit --own: exact_fit.fit_own), to their
// candidates over the products of 9-2048 rows of random:200:1 and random:200:1:aligned (whose
// operands the models' sizes align), on an H200 (costs inside the SM). CUTLASS's tiles' costs per
// K-major element of A and of B (the third and fourth of each tile's five) are fitted apart,
// the others held at the shipped fit scaled to the H200 (python -m gemmtiles.exact_fit
// --kmajor: exact_fit.fit_kmajor), to CUTLASS's kernel on the NN and NT products of
// random:200:1 (its products of 9-2048 rows, of 257-8192 rows, and its draws rounded to
// models' sizes, random:200:1:aligned) with the padded shared-memory tiles of
// auto/cutlass_simt.cuh, on an H200 (the H100's SMs and clocks; a cost inside the SM). The
// 32 x 32 tile on two warps had its five fitted apart before that, the others held (python -m
// gemmtiles.exact_fit --tile 32x32x2: exact_fit.fit_tile), to CUTLASS's kernel on that tile
// over every product of random:200:1, on the same H200; its K-major costs are the refit's.
// The 64 x 64 tile on four warps, added last, had its five fitted apart the same way (--tile
// 64x64x4), the others held at the shipped fit scaled to the H200, to that tile's candidates on
// the products of 17 rows and more of random:200:3 and random:200:4, on an H200.
inline constexpr ExactModel kExactModel{
    {4.47908, 3.73818, 0, 0.130287, 0.0694399, 0.0313561, 0.191736, 0.18934,
     0.138073, 4.36313, 54.0306, 0, 6.44217,
     0.171855, 4.20158, 14.9483, 0, 1.82696,
     0.236593, 4.35952, 2.40733, 0, 0.0813068,
     0.242447, 4.5983, 0, 0, 0.268079,
     0.256641, 4.56295, 0, 6.30508, 0.464444,
     0.181453, 5.57626, 4.74626, 49.6438, 0,
     0.0840502, 7.59166, 19.4672, 33.9931, 0,
     0.107171, 4.76221, 32.1964, 3.04077, 0,
     0.429049, 3.94571, 0, 0.291266, 4.81288,
     0.121161, 4.81365, 0.0882021, 0, 5.21978,
     0.391996, 3.94571, 0, 41.0293, 8.26077},
    {4.69138, 0.333391, 16.068, 2.33254, 8.785, 14.884, 24.6156, 24.6156, 0.232148},
    {3.10046, 0.351452},
    {3.87418, 0.333391, 0, 0.522322, 38.4474, 0.2347, 437.497, 0.232148}};

// What kExactModel's rates were fitted on: the H100 SXM's SM clock (1980 MHz) and its DRAM
// (HBM3 at 2619 MHz on a 5120-bit bus: 3.35 TB/s).
inline constexpr double kExactModelClockKhz = 1980000.0;
inline constexpr double kExactModelDramKhz = 2619000.0, kExactModelBusBits = 5120.0;

// kExactModel for a GPU whose tuned table carries no fit of its own: the microseconds of DRAM
// traffic (the operands' compulsory bytes, B as the skinny and GEMV kernels stream it, the
// copies' bytes) scaled by the DRAM's rate (its clock times its bus width), those of the SMs'
// work (k iterations, FMAs, shared-memory copies, waves, a split's blocks per SM, the skinny
// and GEMV kernels' steps and streaming excess, A's reads that L2 serves) by the SM clock. As
// fitted: launches, a split's fixed fix-up, and its partial products, CUTLASS's and the skinny
// kernels' alike (written and read back at a rate past DRAM's: mostly through L2). The SM count
// is a feature already. A value <= 0 (unknown) leaves its part as fitted. CUTLASS's costs per K-major
// element were fitted on an H200, whose SMs and SM clock are the H100's, with the other
// parameters as fitted (before this scaling): costs inside the SM, which its DRAM leaves be.
// The GEMV 5-8-row build's two were fitted on an H200 with the others scaled to it; its rate
// per MB of B is stored unscaled (times the H200's DRAM rate over the H100's: 3201 MHz on
// 6016 bits against 2619 on 5120), so that this scaling gives back the fit there.
inline ExactModel scaled_exact_model(double clock_khz, double dram_khz, double bus_bits) {
  ExactModel m = kExactModel;
  const double sm = clock_khz > 0 ? kExactModelClockKhz / clock_khz : 1.0;
  const double dram = dram_khz > 0 && bus_bits > 0 ? kExactModelDramKhz * kExactModelBusBits / (dram_khz * bus_bits) : 1.0;
  m.cutlass[4] *= dram;  // operands' MB
  for (int i = 5; i < kCutlassFeatures; ++i) m.cutlass[i] *= sm;  // split blocks per SM, edges, tiles
  m.skinny[1] *= dram;  // B's MB over the SMs it streams through
  for (const int i : {2, 5, 6, 7, 8}) m.skinny[i] *= sm;
  m.copy[1] *= dram;
  for (const int i : {1, 5}) m.gemv[i] *= dram;
  for (const int i : {2, 3, 4, 6, 7}) m.gemv[i] *= sm;
  return m;
}

inline int64_t exact_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The features of tile `tile` (rows bm x cols bn) on an M x N x K product, `batch` of them
// (each data-parallel: splits 1), K in `splits` slices, on `sms` SMs; edges: a split tile on
// warptile's kernel that runs edge blocks (split_tile_edges in auto/plan.h).
inline std::array<double, kCutlassFeatures> cutlass_features(int64_t M, int64_t N, int64_t K, int64_t batch,
                                                             bool a_kmajor, bool b_kmajor, int tile, int bm, int bn,
                                                             int64_t splits, int64_t sms, bool edges = false) {
  std::array<double, kCutlassFeatures> f{};
  sms = std::max<int64_t>(1, sms);
  splits = std::max<int64_t>(1, splits);
  const int64_t r = tile_blocks_per_sm(tile, a_kmajor, b_kmajor);
  const int64_t tiles = exact_ceil_div(M, bm) * exact_ceil_div(N, bn) * batch;
  const int64_t iters = exact_ceil_div(K, 8);
  const int64_t blocks = tiles * splits;
  const double per_block = double(exact_ceil_div(iters, splits));
  const double waves = double(exact_ceil_div(blocks, r * sms));
  const double held = double(std::min<int64_t>(r, exact_ceil_div(blocks, sms)));
  const bool split = splits > 1;
  const bool own = tile >= kOwnTile0;
  f[0] = 1;
  f[1] = split && !own ? 1 : 0;
  f[2] = split && own ? 1 : 0;
  f[3] = split ? double(blocks) * bm * bn * 8 / 1e6 : 0;
  f[4] = 4.0 * (double(M) * K + double(K) * N) * batch / 1e6;
  f[5] = split ? double(blocks) / double(sms) : 0;
  double* t = f.data() + kGlobalFeatures + kPerTileFeatures * tile;
  t[0] = waves * per_block;
  if (edges && (tile == kOwnTile0 || tile == kOwnTile0 + 1)) f[kGlobalFeatures - 2 + tile - kOwnTile0] = t[0];
  const double per_sm = waves * per_block * held * 8 / 1e6;  // k steps an SM runs, in millions
  t[1] = per_sm * bm * bn;
  t[2] = a_kmajor ? per_sm * bm : 0;
  t[3] = b_kmajor ? per_sm * bn : 0;
  t[4] = waves;
  return f;
}

// The share of the reduction's fixed cost (skinny feature 3) that a row-major-B skinny plan's
// reduction is priced at. One parameter prices both skinny kernels' reductions; on the
// row-major-B kernel's own candidates (every plan of products of 1-16 rows and a row-major B
// timed) its plans whose blocks along K write partial products ran faster than the whole cost
// priced them, and the picks among them ran faster at a share of a quarter to a half
// (docs/auto.md): a half, which moves the fewer plans.
inline constexpr double kSkinnyNMajorReduceShare = 0.5;

// The features of a skinny kernel on M x N x K, `batch` products, writing `partials` partial
// products (1: none), whose blocks run `serial` steps in series (skinny_serial_steps in
// auto/plan.h) and occupy a `used` share of the SMs (at most 1): the column-major-B kernel's
// (b_kmajor), the row-major-B one's on single floats, or on float4s through its warps' rings of
// shared memory (ring), whose steps wait on their loads less. excess: the build's streaming
// excess (stream_excess in auto/plan.h), B's MB over the SMs used counted again at that share.
inline std::array<double, kSkinnyFeatures> skinny_features(int64_t M, int64_t N, int64_t K, int64_t batch,
                                                           int64_t partials, bool b_kmajor, bool ring, double serial,
                                                           double used, double excess) {
  const double b_bytes = 4.0 * double(K) * N * batch / 1e6 / used;
  return {1.0,
          b_bytes,
          4.0 * double(M) * K * batch / 1e6,
          partials > 1 ? (b_kmajor ? 1.0 : kSkinnyNMajorReduceShare) : 0.0,
          partials > 1 ? double(partials) * M * N * 4 * batch / 1e6 : 0.0,
          b_kmajor ? serial : 0.0,
          b_kmajor || ring ? 0.0 : serial,
          !b_kmajor && ring ? serial : 0.0,
          b_bytes * excess};
}

// The features of the GEMV kernel on M x N x K, `batch` products: `blocks` blocks whose
// `waves` over the SMs' slots each run `steps` steps in series, on `used` share of the SMs.
// rows8: the 5-8-row build, whose B's bytes and steps in series have parameters of their own.
// excess: the build's streaming excess (stream_excess in auto/plan.h), as the skinny kernels'.
inline std::array<double, kGemvFeatures> gemv_features(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t blocks,
                                                       int64_t waves, int64_t steps, double used, bool rows8,
                                                       double excess) {
  const double b_bytes = 4.0 * double(K) * N * batch / 1e6 / used, serial = double(waves) * double(steps) / 1e3;
  return {1.0,
          rows8 ? 0.0 : b_bytes,
          4.0 * double(M) * K * double(blocks) / 1e6,
          double(waves),
          rows8 ? 0.0 : serial,
          rows8 ? b_bytes : 0.0,
          rows8 ? serial : 0.0,
          b_bytes * excess};
}

template <size_t F>
inline double exact_estimate_us(const std::array<double, F>& features, const std::array<double, F>& params) {
  double t = 0;
  for (size_t i = 0; i < F; ++i) t += features[i] * params[i];
  return t;
}

}  // namespace gemmtiles
