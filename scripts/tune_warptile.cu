// Standalone tuning harness for the warptile tier: times candidate tile configurations of
// warptile_kernel against cuBLAS's fp32 SGEMM on the same inputs (CUDA events, median of
// repeats) and checks each result against cuBLAS.
//   nvcc -O3 -std=c++17 -arch=sm_90 -lcublas scripts/tune_warptile.cu -o tune && ./tune [M N K]
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// -DKERNEL_HEADER='"file.cuh"' times a candidate version of the kernel file instead.
#ifdef KERNEL_HEADER
#include KERNEL_HEADER
#else
#include "../csrc/ladder/09_warptile.cuh"
#endif
#include "harness.cuh"

using namespace gemmtiles;

struct Bufs {
  int64_t M, N, K;
  float *a, *b, *out, *ref;
};

// Times one configuration on row-major A and B held as the layout flags say (the data is the
// same random matrix read either way, so only the result check needs cuBLAS on NN).
template <typename Cfg, bool A_KMAJOR = true, bool B_KMAJOR = false>
void try_config(const char* name, const Bufs& d, float cublas_ms) {
  GemmProblem p{};
  p.batch = 1;
  p.M = d.M;
  p.N = d.N;
  p.K = d.K;
  p.a = d.a;
  p.a_rs = A_KMAJOR ? d.K : 1;
  p.a_cs = A_KMAJOR ? 1 : d.M;
  p.b = d.b;
  p.b_rs = B_KMAJOR ? 1 : d.N;
  p.b_cs = B_KMAJOR ? d.K : 1;
  p.out = d.out;
  p.out_rs = d.N;
  p.out_bs = d.M * d.N;
  p.alpha = 1.0f;
  p.beta = 0.0f;
  dim3 grid((d.N + Cfg::BN - 1) / Cfg::BN, (d.M + Cfg::BM - 1) / Cfg::BM, 1);
  auto kernel = warptile_kernel<Cfg, A_KMAJOR, B_KMAJOR>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  auto run = [&] { kernel<<<grid, Cfg::block(), Cfg::kSmemBytes>>>(p); };
  run();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  const double err = A_KMAJOR && !B_KMAJOR ? relative_error(d.out, d.ref, d.M * d.N) : 0.0;
  const float ms = median_ms(run, 15);
  const double tf = 2.0 * d.M * d.N * d.K / ms / 1e9;
  std::printf("%-34s regs %3d  spill %4zu B  smem %6zu B  %8.3f ms  %6.2f TFLOP/s  %.3fx cuBLAS  rel err %.1e\n",
              name, attr.numRegs, attr.localSizeBytes, Cfg::kSmemBytes, ms, tf,
              cublas_ms / ms, err);
}

int main(int argc, char** argv) {
  const int64_t M = argc > 3 ? atoll(argv[1]) : 4096, N = argc > 3 ? atoll(argv[2]) : 4096,
                K = argc > 3 ? atoll(argv[3]) : 4096;
  Bufs d{M, N, K};
  CHECK(cudaMalloc(&d.a, M * K * 4));
  CHECK(cudaMalloc(&d.b, K * N * 4));
  CHECK(cudaMalloc(&d.out, M * N * 4));
  CHECK(cudaMalloc(&d.ref, M * N * 4));
  std::vector<float> h(std::max(M * K, K * N));
  srand(1);
  for (auto& x : h) x = rand() / float(RAND_MAX) - 0.5f;
  CHECK(cudaMemcpy(d.a, h.data(), M * K * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.b, h.data(), K * N * 4, cudaMemcpyHostToDevice));
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  auto cublas = [&] {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, d.b, N, d.a, K, &zero, d.ref, N);
  };
  const float cublas_ms = median_ms(cublas, 15);
  std::printf("%lld x %lld x %lld: cuBLAS %.3f ms, %.2f TFLOP/s\n", (long long)M, (long long)N,
              (long long)K, cublas_ms, 2.0 * M * N * K / cublas_ms / 1e9);
  using W8 = WarptileConfig<Shape<128, 256, 8>, Shape<64, 64>, Shape<8, 4>, 2>;
  try_config<W8>("128x256x8 w64x64 t8x4 NN", d, cublas_ms);
  try_config<W8, true, true>("128x256x8 w64x64 t8x4 NT", d, cublas_ms);
  try_config<WarptileConfig<Shape<256, 128, 8>, Shape<64, 64>, Shape<8, 4>, 2>>("256x128x8 w64x64 t8x4 NN", d, cublas_ms);
  return 0;
}
