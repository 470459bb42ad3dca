// The cost model behind auto's choice of exact fp32 kernel: for each candidate that takes a
// problem, an estimate of its time from the work it does on the GPU; the plan is the candidate
// of least estimate (auto_plan in auto/plan.h). Plain C++: gemmtiles._C.exact_features exposes
// the same features to the fit (python -m gemmtiles.tune --fit-exact), which sets the
// parameters.
//
// The candidates:
//  - CUTLASS's SIMT kernels (auto/cutlass_simt.h) on each of their tiles, data-parallel or with
//    K split s ways. Their time is linear in parameters over these features:
//      a launch; a split's extra work (its workspace and fix-up), and its partial tiles' bytes;
//      the operands' compulsory bytes;
//      per tile: the serial k iterations a block runs (waves x iterations per block: the
//      latency a lone block cannot hide), and the FMAs an SM runs (the same, times the blocks
//      an SM holds at once, times the tile's FMAs per iteration; one rate per layout class,
//      since a K-major operand is transposed on its way to shared memory), and its waves.
//  - The same after a copy of a column-major B (x @ W^T) into a row-major one: a launch and
//    the copy's bytes, plus the NN product's estimate.
//  - gemmtiles' own split tiles and pipelined tile (auto/launch.cuh): the same features as
//    CUTLASS's tiles, with parameters of their own, and a split's fix-up of their own (the
//    reduction's launch).
//  - The skinny kernels (up to 16 rows, auto/skinny.cuh): a launch, B's bytes, A's bytes, and
//    where K is split, the reduction's launch and the partial products' bytes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace gemmtiles {

// The tiles: CUTLASS's (cutlass_tile_at(0..5) in auto/plan.h), then gemmtiles' own split tiles
// of 32 x 128 and 64 x 128 and the pipelined 128 x 128 tile (auto/launch.cuh).
inline constexpr int kExactTiles = 9, kOwnTile0 = 6;
// Blocks of each tile an SM holds at once (registers and shared memory).
inline constexpr int kTileBlocksPerSm[kExactTiles] = {1, 2, 8, 8, 8, 16, 6, 3, 2};
// Features: a launch, a split's fix-up (CUTLASS's; gemmtiles' own: a second launch, the
// reduction), partial tiles' MB, operands' MB, split blocks per SM; then per tile its serial
// iterations, its FMAs per SM in three layout classes, and its waves.
inline constexpr int kGlobalFeatures = 6, kPerTileFeatures = 5;
inline constexpr int kCutlassFeatures = kGlobalFeatures + kPerTileFeatures * kExactTiles, kSkinnyFeatures = 5;

struct ExactModel {
  std::array<double, kCutlassFeatures> cutlass;  // microseconds per unit of each feature
  std::array<double, kSkinnyFeatures> skinny;
  // B copied row-major first (kCutlassBCopied): a launch, and microseconds per MB read and
  // written.
  std::array<double, 2> copy;
};

// Fitted on the H100 SXM (132 SMs) to every candidate of random:200:1 timed through the op
// (python -m gemmtiles.exact_fit; docs/auto.md): the global parameters, then five per tile in
// kTileBlocksPerSm's order (CUTLASS's six, gemmtiles' 32 x 128, 64 x 128 and pipelined
// 128 x 128); the skinny kernels'; the copy's.
inline constexpr ExactModel kExactModel{
    {4.53171, 3.82551, 0, 0.141606, 0.0263591, 0.0279785,
     0.108133, 4.49928, 4.92223, 5.60481, 6.14276,
     0.159415, 4.34158, 4.84644, 5.91862, 1.73315,
     0.223139, 4.54394, 6.10509, 8.96838, 0,
     0.253376, 4.62393, 5.14453, 11.2285, 0.207195,
     0.233389, 4.76217, 7.68105, 9.00623, 0.570822,
     0.169153, 5.84515, 11.2956, 19.2283, 0,
     0.661629, 4.53235, 4.46241, 4.62612, 4.41143,
     0.256952, 5.31575, 5.15908, 4.38003, 5.21112,
     0.43502, 3.94571, 3.94571, 4.02347, 9.55466},
    {5.67659, 0.408451, 12.5199, 1.91171, 6.69281},
    {3.09065, 0.314189}};

inline int64_t exact_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The layout class of the CUTLASS features: 0 with no K-major operand (TN), 1 with one (NN,
// TT), 2 with both (NT).
inline int layout_class(bool a_kmajor, bool b_kmajor) { return int(a_kmajor) + int(b_kmajor); }

// The features of tile `tile` (rows bm x cols bn) on an M x N x K product, `batch` of them
// (each data-parallel: splits 1), K in `splits` slices, on `sms` SMs.
inline std::array<double, kCutlassFeatures> cutlass_features(int64_t M, int64_t N, int64_t K, int64_t batch,
                                                             bool a_kmajor, bool b_kmajor, int tile, int bm, int bn,
                                                             int64_t splits, int64_t sms) {
  std::array<double, kCutlassFeatures> f{};
  sms = std::max<int64_t>(1, sms);
  splits = std::max<int64_t>(1, splits);
  const int64_t r = kTileBlocksPerSm[tile];
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
  t[1 + layout_class(a_kmajor, b_kmajor)] = waves * per_block * held * bm * bn * 8 / 1e6;
  t[4] = waves;
  return f;
}

// The features of the skinny kernel on M x N x K, `batch` products, writing `partials` partial
// products (1: none).
inline std::array<double, kSkinnyFeatures> skinny_features(int64_t M, int64_t N, int64_t K, int64_t batch,
                                                           int64_t partials) {
  return {1.0, 4.0 * double(K) * N * batch / 1e6, 4.0 * double(M) * K * batch / 1e6, partials > 1 ? 1.0 : 0.0,
          partials > 1 ? double(partials) * M * N * 4 * batch / 1e6 : 0.0};
}

template <size_t F>
inline double exact_estimate_us(const std::array<double, F>& features, const std::array<double, F>& params) {
  double t = 0;
  for (size_t i = 0; i < F; ++i) t += features[i] * params[i];
  return t;
}

}  // namespace gemmtiles
