// Standalone timing of the row-major-B skinny kernels (csrc/auto/skinny.cuh) for each build of
// rows of A: float4s of B through registers (skinny_nmajor_split_kernel) and through shared
// memory (skinny_nmajor_async_kernel); single floats through registers, one row built for 1
// and for 4. Each at its best count of K slices (auto's candidates'), as a ratio to cuBLAS
// fp32 (above 1: faster), with its error against cuBLAS's result checked, on products of up to
// 16 rows drawn at random (M log-uniform in [1, 16], N and K in [128, 16384], A row-major or
// transposed, B row-major: NN and TN), timed on the GPU alone (hold_stream). Beside them, the
// register kernel built on 16 and 32 warps a block (up to 8 rows) with K whole in each block:
// one launch, no workspace, more slices of K a block than auto's 8 ("w16", "w32", where built).
// max_b_mb: only products whose B has at most that many MB (the small ones, where a second
// launch is a large share; the draws past it are skipped, so a seed's products and their
// numbers differ from a run without it).
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/skinny_rows.cu \
//     -o skinny_rows -lcublas && ./skinny_rows [shapes] [seed] [max_b_mb]
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <random>
#include <cublas_v2.h>
#include "../csrc/auto/launch.cuh"
#include "harness.cuh"
using namespace gemmtiles;

// Deterministic values in [-1, 1): a hash of the index.
__global__ void fill(float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ uint32_t(i >> 32);
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = float(h >> 8) / float(1 << 23) - 1.0f;
  }
}

struct Variant {
  const char* name;
  int mt, w;  // rows of A it takes (M <= mt), floats of B a lane loads
  void (*kernel)(GemmProblem, SkinnySplit);
  size_t smem;
  int blocks_per_sm;
  int warps = 8;  // a block's (wide_variant: more, K whole in each block)
};
template <int MT, int P, int W>
Variant variant(const char* name) {
  auto k = skinny_nmajor_split_kernel<MT, P, W>;
  const size_t smem = skinny_split_smem<MT, W>();
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return {name, MT, W, k, smem, skinny_split_blocks_per_sm(MT, W)};
}
// Float4s of B through shared memory: S stages of 4 rows a warp.
template <int MT, int S>
Variant async_variant(const char* name) {
  auto k = skinny_nmajor_async_kernel<MT, S>;
  const size_t smem = skinny_async_smem<MT, S>();
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return {name, MT, 4, k, smem, skinny_split_blocks_per_sm(MT, 4)};
}

// The register kernel on kWarps warps a block, K whole in each block (one block per SM).
template <int MT, int P, int W, int kWarps>
Variant wide_variant(const char* name) {
  auto k = skinny_nmajor_split_kernel<MT, P, W, kWarps>;
  const size_t smem = skinny_split_smem<MT, W, kWarps>();
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return {name, MT, W, k, smem, 1, kWarps};
}
// Microseconds of a wide variant with K whole in each block: each of its warps a slice of
// ceil(K / warps) rows, rounded up to 16.
double whole_k_time(const Variant& v, const GemmProblem& p, double* err, const float* ref) {
  const int64_t cols = 32 * v.w;
  const int64_t k_slice = ((p.K + v.warps - 1) / v.warps + 15) / 16 * 16;
  const dim3 grid(unsigned((p.N + cols - 1) / cols), 1, unsigned(p.batch));
  const SkinnySplit sp{k_slice, nullptr};
  CHECK(cudaMemset(p.out, 0, sizeof(float) * p.M * p.N));  // a kernel that writes nothing shows as WRONG
  const double us = 1000 * median_ms([&] { v.kernel<<<grid, 32 * v.warps, v.smem>>>(p, sp); }, 15, 100000);
  CHECK(cudaGetLastError());
  *err = std::max(*err, relative_error(p.out, ref, p.M * p.N));
  return us;
}

// The best microseconds of v over the counts of warps' slices auto's candidates try.
double best_time(const Variant& v, const GemmProblem& p, float* ws, int sms, int* best_splits, double* err,
                 const float* ref) {
  const int64_t cols = 32 * v.w, blocks = (p.N + cols - 1) / cols * p.batch;
  const int slots = v.blocks_per_sm * sms;
  double best = 1e30;
  for (int64_t s : kSkinnySplits) {
    if (s > 1 && blocks * s > 2 * slots) break;
    const int64_t splits = std::max<int64_t>(1, std::min<int64_t>(8 * s, (p.K + 15) / 16));
    const int64_t k_slice = ((p.K + splits - 1) / splits + 15) / 16 * 16;
    const int64_t partials = ((p.K + k_slice - 1) / k_slice + 7) / 8;
    const dim3 grid(unsigned((p.N + cols - 1) / cols), unsigned(partials), unsigned(p.batch));
    const SkinnySplit sp{k_slice, partials > 1 ? ws : nullptr};
    const double us = 1000 * median_ms([&] {
      v.kernel<<<grid, 256, v.smem>>>(p, sp);
      if (partials > 1) launch_reduce(p, partials, ws, nullptr);
    }, 15, 100000);
    CHECK(cudaGetLastError());
    *err = std::max(*err, relative_error(p.out, ref, p.M * p.N));
    if (us < best) best = us, *best_splits = int(s);
    if (k_slice <= 16) break;
  }
  return best;
}

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 40, seed = argc > 2 ? std::atoi(argv[2]) : 1;
  const double max_b_mb = argc > 3 ? std::atof(argv[3]) : 1e9;
  if (!(max_b_mb >= 0.1)) {  // the smallest B drawn: 128 x 128 floats
    std::printf("max_b_mb must be at least 0.1 (MB), got '%s'\n", argv[3]);
    return 1;
  }
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cublasHandle_t h;
  cublasCreate(&h);
  // Per rows of A (1, 4, 8, 16): float4s through registers and through shared memory; single
  // floats (rows of B not aligned) through registers, for 1 row also built for 4.
  const Variant vec_variants[4][2] = {
      {variant<1, 8, 4>("registers"), async_variant<1, skinny_async_stages<1>()>("shared")},
      {variant<4, 8, 4>("registers"), async_variant<4, skinny_async_stages<4>()>("shared")},
      {variant<8, 4, 4>("registers"), async_variant<8, skinny_async_stages<8>()>("shared")},
      {variant<16, 8, 4>("registers"), async_variant<16, skinny_async_stages<16>()>("shared")}};
  const Variant single_variants[4][2] = {
      {variant<1, 16, 1>("1 row"), variant<4, 16, 1>("4 rows")}, {variant<4, 16, 1>("registers")},
      {variant<8, 16, 1>("registers")}, {variant<16, 8, 1>("registers")}};
  // The register kernel on 16 and 32 warps (K whole), where the 64 registers a thread of 1024
  // threads hold it without spilling much (ptxas -v): single floats up to 4 rows on both, 8
  // rows on 16; float4s one row on both (4 rows of B a group in flight on 32 warps), 4 and 8
  // rows on 16; none for 16 rows.
  const Variant vec_wide[4][2] = {{wide_variant<1, 8, 4, 16>("w16"), wide_variant<1, 4, 4, 32>("w32")},
                                  {wide_variant<4, 8, 4, 16>("w16")},
                                  {wide_variant<8, 4, 4, 16>("w16")},
                                  {}};
  const Variant single_wide[4][2] = {{wide_variant<1, 16, 1, 16>("w16"), wide_variant<1, 16, 1, 32>("w32")},
                                     {wide_variant<4, 16, 1, 16>("w16"), wide_variant<4, 16, 1, 32>("w32")},
                                     {wide_variant<8, 16, 1, 16>("w16")},
                                     {}};
  std::mt19937_64 rng(seed);
  auto logu = [&](double lo, double hi) {
    return int64_t(std::floor(std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi + 1))(rng))));
  };
  float *a, *b, *c, *ws;
  CHECK(cudaMalloc(&a, 64 << 20)); CHECK(cudaMalloc(&b, 1 << 30)); CHECK(cudaMalloc(&c, 64 << 20));
  CHECK(cudaMalloc(&ws, 256 << 20));
  float* ref;
  CHECK(cudaMalloc(&ref, 64 << 20));
  fill<<<1024, 256>>>(a, (64 << 20) / 4);
  fill<<<1024, 256>>>(b, (1 << 30) / 4);
  for (int i = 0; i < count; ++i) {
    const int64_t M = std::min<int64_t>(16, logu(1, 16)), N = logu(128, 16384), K = logu(128, 16384);
    const bool ta = rng() % 2;
    if (N * K * 4 > (1ll << 30) || N * K * 4 > max_b_mb * 1e6) { --i; continue; }
    GemmProblem p{};
    p.batch = 1; p.M = M; p.N = N; p.K = K; p.a = a; p.a_rs = ta ? 1 : K; p.a_cs = ta ? M : 1;
    p.b = b; p.b_rs = N; p.b_cs = 1; p.out = c; p.out_rs = N; p.alpha = 1; p.beta = 0;
    float one = 1, zero = 0;
    // Column-major cuBLAS: C^T (N x M) = B^T (N x K, ld N) A^T (K x M: ld K, or A^T's ld M).
    const double cub = 1000 * median_ms([&] {
      cublasSgemm(h, CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, b, N, a, ta ? M : K, &zero, ref, N);
    }, 15, 100000);
    printf("%3d %2ldx%5ldx%5ld %s cublas %7.1f |", i, M, N, K, ta ? "TN" : "NN", cub);
    const bool vec = N % 4 == 0;
    const int rows = M == 1 ? 0 : M <= 4 ? 1 : M <= 8 ? 2 : 3;
    const Variant* vs = vec ? vec_variants[rows] : single_variants[rows];
    for (int j = 0; j < 2 && vs[j].kernel; ++j) {
      int s = 0;
      double err = 0;
      const double t = best_time(vs[j], p, ws, sms, &s, &err, ref);
      printf(" %s %.2f(s%d)%s", vs[j].name, cub / t, s, err > 1e-5 ? " WRONG" : "");
    }
    const Variant* wide = vec ? vec_wide[rows] : single_wide[rows];
    for (int j = 0; j < 2 && wide[j].kernel; ++j) {
      double err = 0;
      const double t = whole_k_time(wide[j], p, &err, ref);
      printf(" %s %.2f%s", wide[j].name, cub / t, err > 1e-5 ? " WRONG" : "");
    }
    printf("\n");
    fflush(stdout);
  }
}
