// Standalone timing of the column-major-B skinny kernel's staged path (csrc/auto/skinny.cuh)
// built for 16, 32 and 64 rows of x @ W^T, against cuBLAS fp32, with its FMA efficiency. (The
// 32- and 64-row builds were tried as auto's candidates and not kept: docs/auto.md.)
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/skinny_wide.cu \
//     -o skinny_wide -lcublas
#include <cstdio>
#include <cublas_v2.h>
#include "../csrc/auto/skinny.cuh"
#include "harness.cuh"
using namespace gemmtiles;

// Median microseconds of launch() over 20 runs (harness.cuh).
template <class K>
float time_it(K launch) {
  return median_ms(launch, 20) * 1000;
}

template <int MT, int NW, int KC>
void run(const char* name, GemmProblem p, float* ws, int sms, double cublas_us) {
  using Cfg = SkinnyConfig<MT, NW, 1, KC, 8>;
  const int cols = 8 * 4 * NW;
  const int64_t blocks = (p.N + cols - 1) / cols;
  double best = 1e30; int best_s = 0;
  for (int s : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
    if (s > 1 && blocks * s > 2 * sms) break;
    int64_t k_slice = ((p.K + s - 1) / s + 31) / 32 * 32;
    int splits = (p.K + k_slice - 1) / k_slice;
    SkinnySplit sp{k_slice, splits > 1 ? ws : nullptr};
    dim3 grid(blocks, splits, 1);
    size_t smem = 2 * sizeof(float) * MT * KC;
    auto k = skinny_kmajor_kernel<Cfg, 4, true>;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const float us = time_it([&] { k<<<grid, 256, smem>>>(p, sp); });
    CHECK(cudaGetLastError());
    if (us < best) best = us, best_s = splits;
  }
  double ideal = double(MT) * blocks * cols * p.K / (sms * 128.0 * 1.755e3);  // us at peak FMA
  printf("  %-18s %8.1f us (splits %2d)  vs cublas %.2f  FMA eff %.2f\n", name, best, best_s, cublas_us / best, ideal / best);
}

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cublasHandle_t h; cublasCreate(&h);
  struct S { int m, n, k; } shapes[] = {{26, 1885, 12306}, {62, 5673, 738}, {17, 7804, 9772}, {33, 191, 6760},
                                        {50, 794, 532}, {56, 5263, 4639}, {33, 1062, 14196}, {16, 4096, 4096},
                                        {32, 4096, 4096}, {64, 4096, 4096}, {64, 11008, 4096}};
  for (auto sh : shapes) {
    int M = sh.m, N = sh.n, K = sh.k / 4 * 4;
    float *a, *b, *c, *ws;
    CHECK(cudaMalloc(&a, sizeof(float) * M * K)); CHECK(cudaMalloc(&b, sizeof(float) * N * K));
    CHECK(cudaMalloc(&c, sizeof(float) * M * N)); CHECK(cudaMalloc(&ws, sizeof(float) * M * N * 64));
    cudaMemset(a, 0, sizeof(float) * M * K); cudaMemset(b, 0, sizeof(float) * N * K);
    // C = A (M x K row-major) @ W^T (W: N x K row-major): column-major cuBLAS C^T = W A^T.
    float one = 1, zero = 0;
    double cub = time_it([&] { cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, c, N); });
    printf("%d x %d x %d NT  cublas %.1f us\n", M, N, K, cub);
    GemmProblem p{};
    p.batch = 1; p.M = M; p.N = N; p.K = K; p.a = a; p.a_rs = K; p.a_cs = 1; p.b = b; p.b_rs = 1; p.b_cs = K;
    p.out = c; p.out_rs = N; p.alpha = 1; p.beta = 0;
    if (M <= 16) run<16, 4, 1024>("16 rows, 4 columns", p, ws, sms, cub);
    else if (M <= 32) run<32, 4, 512>("32 rows, 4 columns", p, ws, sms, cub);
    else run<64, 2, 256>("64 rows, 2 columns", p, ws, sms, cub);
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(ws);
  }
}
