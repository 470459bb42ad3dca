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
    {4.45895, 3.76768, 0, 0.148181, 0.0137511, 0.0112518,
     0.166141, 4.23875, 4.71869, 5.38494, 5.87477,
     0.153926, 4.4831, 4.8053, 6.13421, 1.91471,
     0.224855, 4.52257, 6.09558, 8.96171, 0,
     0.25668, 4.58168, 5.11207, 11.1873, 0.302132,
     0.234154, 4.72717, 7.69212, 8.99132, 0.551604,
     0.169906, 5.84866, 11.3431, 19.1876, 0,
     0.662562, 4.53235, 4.45786, 4.61345, 4.53565,
     0.256715, 5.31575, 5.15406, 4.36341, 5.23551,
     0.434491, 3.94571, 3.94571, 4.01114, 9.41139},
    {8.37478, 0.409274, 26.2355, 0.901997, 1.53323},
    {2.96846, 0.312794}};

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
