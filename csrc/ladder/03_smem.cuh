// Tier `smem`: coalesced, with TILE x TILE tiles of A and B staged in shared memory.
//
// A block of TILE x TILE threads computes a TILE x TILE tile of C. For each TILE-deep slice
// of K, every thread loads one element of A and one of B into shared memory, the block
// synchronises, and each thread runs its TILE-long dot product out of shared memory. Each
// element fetched from global memory now serves TILE outputs instead of one: global traffic
// drops by TILE (16x), and the kernel becomes bound by shared-memory loads (two per FMA).
// Costs: 2 * TILE^2 floats of shared memory (2 KB), two barriers per K slice. Partial tiles
// are zero-filled, so any M, N, K works; any strides are read in place.
#pragma once

#include "common.cuh"

namespace gemmtiles {

// Configuration: the tile side; a TILE x TILE block of threads per TILE x TILE tile of C.
template <int TILE_>
struct SmemConfig {
  static constexpr int TILE = TILE_, BM = TILE, BN = TILE, kThreads = TILE * TILE;
  static dim3 block() { return dim3(TILE, TILE); }
};

template <class Cfg>
__global__ void GEMMTILES_LAUNCH_BOUNDS(Cfg::kThreads, 0) smem_kernel(GemmProblem p) {
  constexpr int TILE = Cfg::TILE;
  __shared__ float As[TILE][TILE];  // As[m][k]
  __shared__ float Bs[TILE][TILE];  // Bs[k][n]
  const BatchView v = batch_view(p);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t m = int64_t(blockIdx.y) * TILE + ty;
  const int64_t n = int64_t(blockIdx.x) * TILE + tx;
  // This thread stages A(m, k0 + tx) and B(k0 + ty, n).
  const float* a = v.a + m * p.a_rs + tx * p.a_cs;
  const float* b = v.b + ty * p.b_rs + n * p.b_cs;
  const int64_t a_step = TILE * p.a_cs, b_step = TILE * p.b_rs;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < p.K; k0 += TILE, a += a_step, b += b_step) {
    As[ty][tx] = m < p.M && k0 + tx < p.K ? *a : 0.0f;
    Bs[ty][tx] = k0 + ty < p.K && n < p.N ? *b : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (m < p.M && n < p.N) v.out[m * p.out_rs + n] = epilogue(p, v.c, m, n, acc);
}

}  // namespace gemmtiles
