// Standalone timing of auto's GEMV kernel (csrc/auto/gemv.cuh) for x @ W^T of few rows:
// each of its candidates (build, block width and load width) against cuBLAS fp32 and TF32 and
// the best of auto's skinny candidates (skinny_candidates in auto/plan.h) on the same inputs;
// CUDA events around each call after a short spin kernel holds the stream (so the host's
// launch is not timed), median of 41; each result checked against cuBLAS's. docs/auto.md
// quotes its figures.
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icsrc scripts/gemv_bench.cu -lcublas -o gemv_bench
//   ./gemv_bench M N K [M N K ...]
#include <cublas_v2.h>
#include <array>
#include <cstdio>
#include <string>
#include <vector>
#include "../csrc/auto/launch.cuh"
#include "../csrc/auto/gemv.cuh"
#include "../scripts/harness.cuh"
using namespace gemmtiles;

__global__ void spin(long long cycles) { long long t0 = clock64(); while (clock64() - t0 < cycles) {} }

template <typename F> float held_us(F f, int reps = 41) {
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    spin<<<1, 1>>>(40000);
    cudaEventRecord(s); f(); cudaEventRecord(e); cudaEventSynchronize(e);
    float ms; cudaEventElapsedTime(&ms, s, e); t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  cublasHandle_t h; cublasCreate(&h);
  std::vector<std::array<int64_t,3>> shapes;
  for (int i = 1; i + 2 < argc; i += 3) shapes.push_back({atoll(argv[i]), atoll(argv[i+1]), atoll(argv[i+2])});
  float* flush; CHECK(cudaMalloc(&flush, 256 << 20));
  for (const auto& shape : shapes) {
    const int64_t M = shape[0], N = shape[1], K = shape[2];
    float *a, *b, *o, *ref;
    CHECK(cudaMalloc(&a, M * K * 4)); CHECK(cudaMalloc(&b, K * N * 4));
    CHECK(cudaMalloc(&o, M * N * 4)); CHECK(cudaMalloc(&ref, M * N * 4));
    std::vector<float> hv(std::max(M * K, K * N));
    for (auto& x : hv) x = rand() / float(RAND_MAX) - 0.5f;
    CHECK(cudaMemcpy(a, hv.data(), M * K * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hv.data(), K * N * 4, cudaMemcpyHostToDevice));
    const float one = 1, zero = 0;
    auto cub = [&] { cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, ref, N); };
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    const float t_cub = held_us(cub);
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    const float t_tf32 = held_us(cub);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    cub(); CHECK(cudaDeviceSynchronize());
    GemmProblem p{};
    p.batch = 1; p.M = M; p.N = N; p.K = K; p.a = a; p.a_rs = K; p.a_cs = 1; p.b = b; p.b_rs = 1; p.b_cs = K;
    p.out = o; p.out_rs = N; p.out_bs = M * N; p.alpha = 1; p.beta = 0;
    const bool vec = K % 4 == 0;
        // auto's skinny candidates: the best
    float best = 1e9; std::string bname;
    for (const AutoPlan& plan : skinny_candidates(M, N, K, 1, true, vec, 132)) {
      float* ws = nullptr;
      if (int64_t f = auto_workspace(p, plan)) CHECK(cudaMalloc(&ws, f * 4));
      auto run = [&] { launch_auto_plan(p, plan, ws, 0); };
      const float t = held_us(run);
      const double err = relative_error(o, ref, M * N);
      if (err > 1e-4) std::printf("  WRONG skinny s%lld %.2e\n", (long long)plan.splits, err);
      if (t < best) { best = t; bname = "s" + std::to_string(plan.splits); }
      cudaFree(ws);
    }
    std::printf("%4lld x %6lld x %6lld NT  cublas %7.1f  tf32 %7.1f  skinny(best %s) %7.1f", (long long)M,
                (long long)N, (long long)K, t_cub, t_tf32, bname.c_str(), best);
    // The GEMV kernel: each candidate auto weighs (gemv_candidates in auto/plan.h), by its
    // build's rows, block width (columns of B) and load width (x4: float4s).
    for (const AutoPlan& plan : gemv_candidates(M, K, true, vec)) {
      CHECK(cudaMemset(o, 0, M * N * 4));
      auto run = [&] { launch_gemv(p, plan, 0); };
      run(); CHECK(cudaGetLastError()); CHECK(cudaDeviceSynchronize());
      const double err = relative_error(o, ref, M * N);
      const float t = held_us(run);
      std::printf("  m%dg%dx%d %7.1f%s", plan.mt, plan.nw, plan.w, t, err > 1e-4 ? " WRONG" : "");
    }
    std::printf("\n");
    std::fflush(stdout);
    cudaFree(a); cudaFree(b); cudaFree(o); cudaFree(ref);
  }
  return 0;
}
