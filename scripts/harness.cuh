// What the standalone CUDA harnesses (scripts/tune_warptile.cu, scripts/tune_auto.cu) share:
// a check that stops on a CUDA error, the median time of a launch, random operands, cuBLAS's
// x @ W^T, and the error of a result against cuBLAS's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

// A kernel that keeps the stream busy for about `cycles` clocks.
static __global__ void hold_stream(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Median milliseconds of f() over `reps` runs timed with CUDA events, after 3 warm-up runs.
// hold_cycles > 0: the stream is held busy that long (hold_stream; 100000 is about 50 us)
// before each start event, so that the host has queued the start event, f's launches and the
// end event before the GPU reaches them: the events then time the GPU's work alone, as
// gemmtiles.bench's timer does, not the host's launch too.
// -DHELD=1 on a script's build: the hold its median_ms calls pass (kHeldCycles), so that both
// sides of its comparisons are timed without the host's launch; without it, with the launch.
#ifndef HELD
#define HELD 0
#endif
inline constexpr long long kHeldCycles = HELD ? 100000 : 0;

template <typename F>
float median_ms(F f, int reps, long long hold_cycles = 0) {
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    if (hold_cycles > 0) hold_stream<<<1, 1>>>(hold_cycles);
    cudaEventRecord(s);
    f();
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    t.push_back(ms);
  }
  cudaEventDestroy(s);
  cudaEventDestroy(e);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// n floats uniform in [-0.5, 0.5) (rand()) into device memory.
inline void upload_uniform(float* dst, size_t n) {
  std::vector<float> host(n);
  for (float& v : host) v = rand() / float(RAND_MAX) - 0.5f;
  CHECK(cudaMemcpy(dst, host.data(), n * 4, cudaMemcpyHostToDevice));
}

// out (M x N, row-major) = x (M x K) @ W^T (W: N x K), both row-major with lines ld floats apart
// (0: K), on cuBLAS with compute type t (CUBLAS_COMPUTE_32F, or _FAST_TF32 for cuBLAS TF32).
inline void cublas_x_wt(cublasHandle_t h, cublasComputeType_t t, const float* x, const float* w, float* out, int M,
                        int N, int K, int ld = 0) {
  const float one = 1, zero = 0;
  if (ld == 0) ld = K;
  cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, CUDA_R_32F, ld, x, CUDA_R_32F, ld, &zero, out,
               CUDA_R_32F, N, t, CUBLAS_GEMM_DEFAULT);
}

// ||out - ref|| / ||ref|| over n floats of device memory.
inline double relative_error(const float* out, const float* ref, size_t n) {
  std::vector<float> h(n), r(n);
  CHECK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(r.data(), ref, n * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    num += (h[i] - r[i]) * double(h[i] - r[i]);
    den += double(r[i]) * r[i];
  }
  return std::sqrt(num / den);
}
