// Standalone timing of the column-major-B skinny kernels of 8 and 16 rows (csrc/auto/skinny.cuh)
// on x @ W^T with W's lines 16-byte aligned (float4s): the register kernel (in auto's
// configuration, 16 rows on 256-column chunks of A) and the async kernel (B through shared memory) in auto's and in the
// other configurations tried, each at its best count of K slices (K whole to 32 slices),
// with the reduction pass where K is split; against cuBLAS fp32 and TF32, the result checked
// against cuBLAS fp32's. Products: 8, 12 and 16 rows of five transformer weights, and twelve
// drawn at random (seed 7: M in [5, 16], N and K log-uniform in [128, 16384], K a multiple of 4).
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/skinny_kmajor.cu \
//     -o skinny_kmajor -lcublas && ./skinny_kmajor
// Columns: the best time, its splits, B's bytes over it, cuBLAS TF32's time over it, the error.
#include <cmath>
#include <cstdio>
#include <random>
#include <cublas_v2.h>
#include "../csrc/auto/skinny.cuh"
#include "harness.cuh"
using namespace gemmtiles;
__global__ void fill(float* x, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = float(h >> 8) / float(1 << 23) - 1.0f;
  }
}
int sms;
float *ref;
// Cfg on S steps of B in flight per warp through shared memory (the async kernel), or S = 0:
// the register kernel.
template <class Cfg, int S>
void run(const char* name, GemmProblem p, float* ws, double tf32_us) {
  void (*k)(GemmProblem, SkinnySplit);
  size_t smem;
  if constexpr (S == 0) k = skinny_kmajor_kernel<Cfg, 4, true>, smem = skinny_kmajor_smem<Cfg>(true);
  else k = skinny_kmajor_async_kernel<Cfg, S>, smem = skinny_kmajor_async_smem<Cfg, S>();
  const int cols = 8 * Cfg::kGroups * Cfg::NW;
  const int64_t blocks = (p.N + cols - 1) / cols;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int occ = 0; CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, 256, smem));
  if (occ < Cfg::kMinBlocks) printf("  %s: %d blocks per SM, not %d\n", name, occ, Cfg::kMinBlocks);
  double best = 1e30; int best_s = 0; double err = 0;
  for (int s : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
    if (s > 1 && blocks * s > 4 * Cfg::kMinBlocks * sms) break;
    int64_t k_slice = ((p.K + s - 1) / s + 31) / 32 * 32;
    int64_t splits = (p.K + k_slice - 1) / k_slice;
    SkinnySplit sp{k_slice, splits > 1 ? ws : nullptr};
    dim3 grid(blocks, splits, 1);
    auto go = [&] {
      k<<<grid, 256, smem>>>(p, sp);
      if (splits > 1) split_k_reduce_kernel<<<(p.M * p.N + split_k_reduce_span(splits) - 1) / split_k_reduce_span(splits), kReduceThreads>>>(p, splits, ws);
    };
    const float us = median_ms(go, 20, 100000) * 1000;
    CHECK(cudaGetLastError());
    CHECK(cudaMemset(p.out, 0, 4 * p.M * p.N)); go(); CHECK(cudaDeviceSynchronize());
    double e = relative_error(p.out, ref, p.M * p.N);
    if (e > err) err = e;
    if (us < best) best = us, best_s = int(splits);
  }
  printf("  %-24s %7.1f us (splits %2d) GB/s %5.0f  tf32/this %.2f  err %.1e%s\n", name, best, best_s,
         4.0 * p.N * p.K / best / 1e3, tf32_us / best, err, err > 1e-5 ? "  WRONG" : "");
}
int main() {
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cublasHandle_t h; cublasCreate(&h);
  struct S { int m, n, k; };
  std::vector<S> shapes;
  for (int m : {8, 12, 16}) for (S s : {S{0, 5504, 2048}, S{0, 2048, 5504}, S{0, 32000, 2048}, S{0, 4096, 4096}, S{0, 11008, 4096}}) shapes.push_back({m, s.n, s.k});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> lu(std::log(128.0), std::log(16384.0));
  for (int i = 0; i < 12; ++i) shapes.push_back({5 + int(rng() % 12), int(std::exp(lu(rng))), int(std::exp(lu(rng))) / 4 * 4});
  for (auto sh : shapes) {
    int M = sh.m, N = sh.n, K = sh.k;
    float *a, *b, *c, *ws;
    CHECK(cudaMalloc(&a, 4l * M * K)); CHECK(cudaMalloc(&b, 4l * N * K));
    CHECK(cudaMalloc(&c, 4l * M * N)); CHECK(cudaMalloc(&ref, 4l * M * N)); CHECK(cudaMalloc(&ws, 4l * M * N * 64));
    fill<<<1024, 256>>>(a, int64_t(M) * K, 1); fill<<<1024, 256>>>(b, int64_t(N) * K, 2);
    float one = 1, zero = 0;
    double cub = median_ms([&] { cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, ref, N); }, 20, 100000) * 1000;
    double tf = median_ms([&] { cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_32F, K, a, CUDA_R_32F, K, &zero, c, CUDA_R_32F, N, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT); }, 20, 100000) * 1000;
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, ref, N);
    printf("%d x %d x %d NT  cublas %.1f us  cublas-tf32 %.1f us (GB/s %.0f)\n", M, N, K, cub, tf, 4.0 * N * K / tf / 1e3);
    GemmProblem p{};
    p.batch = 1; p.M = M; p.N = N; p.K = K; p.a = a; p.a_rs = K; p.a_cs = 1; p.b = b; p.b_rs = 1; p.b_cs = K;
    p.out = c; p.out_rs = N; p.alpha = 1; p.beta = 0;
    if (M <= 8) {
      run<SkinnyConfig<8, 4, 2, 256, 32>, 0>("registers 8,4,2,256,32", p, ws, tf);
      run<SkinnyConfig<8, 2, 2, 256, 8>, 8>("async 8,2,2,256,8 S8", p, ws, tf);  // auto's
      run<SkinnyConfig<8, 4, 2, 256, 8>, 4>("async 8,4,2,256,8 S4", p, ws, tf);
      run<SkinnyConfig<8, 4, 2, 256, 8>, 5>("async 8,4,2,256,8 S5", p, ws, tf);
      run<SkinnyConfig<8, 2, 3, 256, 8>, 4>("async 8,2,3,256,8 S4", p, ws, tf);
      run<SkinnyConfig<8, 4, 2, 512, 16>, 6>("async 8,4,2,512,16 S6", p, ws, tf);
    } else {
      // (auto's register kernel stages A 1024 columns at a time where a block may have 128 KB)
      run<SkinnyConfig<16, 4, 1, 256, 8>, 0>("registers 16,4,1,256,8", p, ws, tf);
      run<SkinnyConfig<16, 4, 2, 256, 8>, 4>("async 16,4,2,256,8 S4", p, ws, tf);  // auto's
      run<SkinnyConfig<16, 2, 2, 256, 8>, 8>("async 16,2,2,256,8 S8", p, ws, tf);
      run<SkinnyConfig<16, 2, 3, 256, 8>, 4>("async 16,2,3,256,8 S4", p, ws, tf);
      run<SkinnyConfig<16, 4, 1, 256, 8>, 8>("async 16,4,1,256,8 S8", p, ws, tf);
      run<SkinnyConfig<16, 2, 2, 128, 8>, 4>("async 16,2,2,128,8 S4", p, ws, tf);
    }
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(ws); cudaFree(ref);
  }
}
