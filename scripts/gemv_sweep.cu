// The GEMV kernel's (csrc/auto/gemv.cuh) parameters swept on x @ W^T of few rows: rows built
// for (MT), columns a group of lanes takes (NB), lanes along k (KL) and blocks an SM (BPS),
// each variant on the same inputs, its result checked against cuBLAS's; the GPU's time alone
// (the stream held before each start event, as gemmtiles.bench times), median of 31. It
// weighs builds that kGemvBuilds (auto/plan.h) might list; docs/auto.md quotes its figures.
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icsrc scripts/gemv_sweep.cu -lcublas -o gemv_sweep
//   ./gemv_sweep BATCH M N K [BATCH M N K ...]    (CSV: batch,m,n,k,variant,columns,us,err)
//   ./gemv_sweep shallow BATCH M N K ...     (the 1- and 2-4-row builds' kernels on a shallow K,
//                                             2-4 rows on an aligned K alone, and cuBLAS's time)
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "../csrc/auto/gemv.cuh"
#include "../scripts/harness.cuh"
using namespace gemmtiles;

template <int MT, int NB, int KL, int BPS>
void time_variant(const GemmProblem& p, float* out, const float* ref, bool float4_rows_alone = false) {
  if (p.M > MT || (float4_rows_alone && MT > kGemvRealignedMaxRows && p.K % 4 != 0)) return;
  constexpr int kColumns = kGemvBlockColumns<NB, KL>;
  // W^T's lines 16-byte aligned where K is a multiple of 4; else realigned, as auto launches it
  // (launch_gemv_kernel in auto/launch.cuh).
  const int period = gemv_realign_period(p.b_cs);
  const dim3 grid(static_cast<unsigned>(gemv_realigned_blocks(p.N, kColumns, period)), 1,
                  static_cast<unsigned>(p.batch));
  auto run = [&] {
    if (p.K % 4 == 0) gemv_kmajor_kernel<MT, NB, 4, KL, BPS, false><<<grid, 32 * kGemvWarps>>>(p, 1);
    else gemv_kmajor_kernel<MT, NB, 4, KL, BPS, true><<<grid, 32 * kGemvWarps>>>(p, period);
  };
  CHECK(cudaMemset(out, 0, p.batch * p.M * p.N * 4));
  run();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double err = relative_error(out, ref, p.batch * p.M * p.N);
  const float us = median_ms(run, 31, 40000) * 1000;
  std::printf("%lld,%lld,%lld,%lld,m%dn%dk%db%d,%d,%.3f,%.3e\n", (long long)p.batch, (long long)p.M, (long long)p.N,
              (long long)p.K, MT, NB, KL, BPS, kColumns, us, err);
}

int main(int argc, char** argv) {
  cublasHandle_t h;
  cublasCreate(&h);
  const bool shallow = argc > 1 && std::strcmp(argv[1], "shallow") == 0;
  for (int i = shallow ? 2 : 1; i + 3 < argc; i += 4) {
    const int64_t B = atoll(argv[i]), M = atoll(argv[i + 1]), N = atoll(argv[i + 2]), K = atoll(argv[i + 3]);
    float *a, *b, *out, *ref;
    CHECK(cudaMalloc(&a, B * M * K * 4));
    CHECK(cudaMalloc(&b, B * K * N * 4));
    CHECK(cudaMalloc(&out, B * M * N * 4));
    CHECK(cudaMalloc(&ref, B * M * N * 4));
    std::vector<float> host(std::max(B * M * K, B * K * N));
    for (float& x : host) x = rand() / float(RAND_MAX) - 0.5f;
    CHECK(cudaMemcpy(a, host.data(), B * M * K * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, host.data(), B * K * N * 4, cudaMemcpyHostToDevice));
    const float one = 1, zero = 0;
    auto cublas = [&] {
      cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, N * K, a, K, M * K, &zero, ref, N,
                                M * N, B);
    };
    cublas();
    CHECK(cudaDeviceSynchronize());
    GemmProblem p{};
    p.batch = B; p.M = M; p.N = N; p.K = K;
    p.a = a; p.a_bs = M * K; p.a_rs = K; p.a_cs = 1;
    p.b = b; p.b_bs = N * K; p.b_rs = 1; p.b_cs = K;  // W^T: column-major B, W's rows along k
    p.out = out; p.out_bs = M * N; p.out_rs = N; p.alpha = 1; p.beta = 0;
    if (shallow) {
      // The 1- and 2-4-row float4 builds (32 lanes along k) and groups of 16, 8 and 4 lanes on
      // 1-4 columns each (gemv_shallow in auto/plan.h); 2-4 rows where their lines are aligned,
      // as auto runs them (kGemvRealignedMaxRows).
      time_variant<1, 8, 32, 4>(p, out, ref, true);
      time_variant<1, 2, 32, 4>(p, out, ref, true);
      time_variant<1, 4, 16, 4>(p, out, ref, true);
      time_variant<1, 2, 8, 4>(p, out, ref, true);
      time_variant<1, 4, 8, 4>(p, out, ref, true);
      time_variant<1, 1, 4, 4>(p, out, ref, true);
      time_variant<1, 2, 4, 4>(p, out, ref, true);
      time_variant<1, 4, 4, 4>(p, out, ref, true);
      time_variant<4, 4, 32, 4>(p, out, ref, true);
      time_variant<4, 2, 32, 4>(p, out, ref, true);
      time_variant<4, 2, 16, 4>(p, out, ref, true);
      time_variant<4, 2, 8, 4>(p, out, ref, true);
      time_variant<4, 1, 4, 4>(p, out, ref, true);
      time_variant<4, 2, 4, 4>(p, out, ref, true);
      std::printf("%lld,%lld,%lld,%lld,cublas,0,%.3f,0\n", (long long)B, (long long)M, (long long)N, (long long)K,
                  median_ms(cublas, 31, 40000) * 1000);
    } else {
      // Up to 8 rows: the shipped build (8 lanes along k, 2 columns each, two blocks an SM) and
      // the others that fit its registers; past 8, a 16-row build (kGemvMaxRows is 8).
      // The 1- and 2-4-row builds (their widest blocks).
      time_variant<1, 8, 32, 4>(p, out, ref);
      time_variant<4, 4, 32, 4>(p, out, ref);
      time_variant<8, 2, 8, 2>(p, out, ref);
      time_variant<8, 4, 8, 2>(p, out, ref);
      time_variant<8, 8, 8, 1>(p, out, ref);
      time_variant<8, 4, 16, 2>(p, out, ref);
      time_variant<8, 4, 16, 1>(p, out, ref);
      time_variant<8, 8, 16, 1>(p, out, ref);
      time_variant<8, 8, 32, 1>(p, out, ref);
      // Blocks of 4 columns and 32 lanes along k (docs/auto.md: the 8-row build's widths).
      time_variant<8, 2, 16, 1>(p, out, ref);
      time_variant<8, 2, 16, 2>(p, out, ref);
      time_variant<8, 1, 8, 2>(p, out, ref);
      time_variant<8, 1, 8, 4>(p, out, ref);
      time_variant<8, 2, 32, 2>(p, out, ref);
      time_variant<16, 2, 8, 2>(p, out, ref);
      time_variant<16, 4, 8, 1>(p, out, ref);
    }
    std::fflush(stdout);
    cudaFree(a); cudaFree(b); cudaFree(out); cudaFree(ref);
  }
  cublasDestroy(h);
  return 0;
}
