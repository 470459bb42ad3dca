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
//  - The skinny kernels (up to 16 rows, auto/skinny.cuh): a launch, B's bytes, A's bytes, and
//    where K is split, the reduction's launch and the partial products' bytes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace gemmtiles {

inline constexpr int kExactTiles = 4;  // cutlass_tile_at(0..3) in auto/plan.h
// Blocks of each tile an SM holds at once (registers and shared memory: auto/cutlass_simt.cuh).
inline constexpr int kCutlassTileBlocksPerSm[kExactTiles] = {1, 2, 8, 8};
inline constexpr int kCutlassFeatures = 25, kSkinnyFeatures = 5;

struct ExactModel {
  std::array<double, kCutlassFeatures> cutlass;  // microseconds per unit of each feature
  std::array<double, kSkinnyFeatures> skinny;
  // B copied row-major first (kCutlassBCopied): a launch, and microseconds per MB read and
  // written.
  std::array<double, 2> copy;
};

// Fitted on an H100-class GPU (Hopper, 132 SMs) from the random sample's training seed.
inline constexpr ExactModel kExactModel{
    {6.4381, 2.3615, 0.0688, 0.0397, 1.273, 0.0611, 0.2042, 0.2338, 0.0, 0.4182, 1.0841, 4.9278, 5.165,
     6.5571, 4.5535, 5.7453, 8.9431, 4.5808, 4.9959, 10.7073, 6.5135, 3.3548, 0.0, 0.0, 0.4386},
    {8.9301, 0.3643, 23.4376, 1.8525, 3.8123},
    {3.0, 0.4}};

inline int64_t exact_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The layout class of the CUTLASS features: 0 with no K-major operand (TN), 1 with one (NN,
// TT), 2 with both (NT).
inline int layout_class(bool a_kmajor, bool b_kmajor) { return int(a_kmajor) + int(b_kmajor); }

// The features of CUTLASS's tile `tile` (rows bm x cols bn) on an M x N x K product, `batch`
// of them (each data-parallel: splits 1), K in `splits` slices, on `sms` SMs.
inline std::array<double, kCutlassFeatures> cutlass_features(int64_t M, int64_t N, int64_t K, int64_t batch,
                                                             bool a_kmajor, bool b_kmajor, int tile, int bm, int bn,
                                                             int64_t splits, int64_t sms) {
  std::array<double, kCutlassFeatures> f{};
  sms = std::max<int64_t>(1, sms);
  splits = std::max<int64_t>(1, splits);
  const int64_t r = kCutlassTileBlocksPerSm[tile];
  const int64_t tiles = exact_ceil_div(M, bm) * exact_ceil_div(N, bn) * batch;
  const int64_t iters = exact_ceil_div(K, 8);
  const int64_t blocks = tiles * splits;
  const double per_block = double(exact_ceil_div(iters, splits));
  const double waves = double(exact_ceil_div(blocks, r * sms));
  const double held = double(std::min<int64_t>(r, exact_ceil_div(blocks, sms)));
  const bool split = splits > 1;
  f[0] = 1;
  f[1] = split ? 1 : 0;
  f[2] = split ? double(blocks) * bm * bn * 8 / 1e6 : 0;
  f[3] = 4.0 * (double(M) * K + double(K) * N) * batch / 1e6;
  f[4 + tile] = waves * per_block;
  f[8 + 3 * tile + layout_class(a_kmajor, b_kmajor)] = waves * per_block * held * bm * bn * 8 / 1e6;
  f[20 + tile] = waves;
  f[24] = split ? double(blocks) / double(sms) : 0;
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
