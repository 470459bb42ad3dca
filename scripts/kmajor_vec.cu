// Standalone timing of the pipelined tile (csrc/auto/pipelined_tile.cuh) with its K-major
// operands copied 4 bytes at a time (cp.async) against staged through registers 16 bytes at a
// time (KVEC), on x @ W^T (NT) and x @ W (NN, A K-major), each at the split of K that suits it
// best, against cuBLAS fp32; with each result's error against cuBLAS's.
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/kmajor_vec.cu \
//     -o kmajor_vec -lcublas
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cublas_v2.h>
#include "../csrc/auto/launch.cuh"
#include "harness.cuh"
using namespace gemmtiles;

// One launch of Cfg's kernel on p, K in `splits` slices written to ws (not added up: the
// reduction is the same for both copies).
template <class Cfg, bool BK_, bool KVEC>
void launch(const GemmProblem& p, int splits, float* ws) {
  constexpr bool B_KMAJOR = BK_;
  const auto kernel = async_tile_kernel<Cfg, true, B_KMAJOR, true, KVEC>;
  const size_t smem = Cfg::template smem_bytes<true, B_KMAJOR>();
  static bool set = false;
  if (!set) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    set = true;
  }
  AutoPlan plan = split_tile_plan(Cfg::BM, Cfg::BN, p.K, splits);
  GemmProblem q = p;
  q.k_split = plan.k_slice;
  q.batch = plan.splits;
  q.a_bs = plan.k_slice * p.a_cs;
  q.b_bs = plan.k_slice * p.b_rs;
  if (plan.splits > 1) q.out = ws, q.out_rs = p.N, q.out_bs = p.M * p.N;
  const dim3 grid(unsigned((p.N + Cfg::BN - 1) / Cfg::BN), unsigned((p.M + Cfg::BM - 1) / Cfg::BM), unsigned(plan.splits));
  kernel<<<grid, Cfg::block(), smem>>>(q);
}

template <class Cfg, bool B_KMAJOR>
void compare(const char* tile, GemmProblem p, float* ws, const float* ref, double cublas_us) {
  for (const int splits : {1, 2, 3, 4, 6, 8, 12, 16}) {
    if (splits > 1 && (p.M / Cfg::BM) * (p.N / Cfg::BN) * splits > 8 * 132) break;
    const float plain = median_ms([&] { launch<Cfg, B_KMAJOR, false>(p, splits, ws); }, 20) * 1000;
    double err_plain = splits == 1 ? relative_error(p.out, ref, p.M * p.N) : 0;
    const float vec = median_ms([&] { launch<Cfg, B_KMAJOR, true>(p, splits, ws); }, 20) * 1000;
    double err_vec = splits == 1 ? relative_error(p.out, ref, p.M * p.N) : 0;
    std::printf("  %s split %2d: cp.async %8.1f us (%.2fx cuBLAS)  kvec %8.1f us (%.2fx)  %.2fx faster  err %.1e %.1e\n",
                tile, splits, plain, cublas_us / plain, vec, cublas_us / vec, plain / vec, err_plain, err_vec);
  }
}

int main() {
  const int shapes[][3] = {{4096, 4096, 4096}, {2048, 2048, 2048}, {1024, 768, 3072}, {512, 4096, 4096},
                           {5096, 400, 8912},  {3800, 184, 6988},  {256, 5256, 3752}, {200, 10816, 2928},
                           {128, 4096, 4096},  {96, 1028, 2948}};
  cublasHandle_t h;
  cublasCreate(&h);
  for (const bool nt : {true, false}) {
    for (const auto& s : shapes) {
      const int M = s[0], N = s[1], K = s[2];
      float *a, *b, *c, *ref, *ws;
      CHECK(cudaMalloc(&a, sizeof(float) * M * K));
      CHECK(cudaMalloc(&b, sizeof(float) * K * N));
      CHECK(cudaMalloc(&c, sizeof(float) * M * N));
      CHECK(cudaMalloc(&ref, sizeof(float) * M * N));
      CHECK(cudaMalloc(&ws, sizeof(float) * M * N * 16));
      std::vector<float> host(size_t(std::max(M, N)) * K);
      for (size_t i = 0; i < host.size(); ++i) host[i] = float((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
      CHECK(cudaMemcpy(a, host.data(), sizeof(float) * M * K, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(b, host.data(), sizeof(float) * K * N, cudaMemcpyHostToDevice));
      const float one = 1, zero = 0;
      // Row-major C = A @ B: column-major C^T = B^T A^T; B is N x K row-major (NT) or K x N.
      auto cub = [&] {
        cublasSgemm(h, nt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, nt ? K : N, a, K, &zero, ref, N);
      };
      const double cublas_us = median_ms(cub, 20) * 1000;
      std::printf("%s %d x %d x %d: cuBLAS %.1f us\n", nt ? "NT" : "NN", M, N, K, cublas_us);
      GemmProblem p{1, M, N, K, a, 0, K, 1, b, 0, nt ? 1 : N, nt ? K : 1, nullptr, 0, 0, 0, c, 0, N, 1.0f, 0.0f};
      if (nt) {
        compare<AsyncTileFor<true, true>, true>("128", p, ws, ref, cublas_us);
        compare<AsyncTile64For<true>, true>(" 64", p, ws, ref, cublas_us);
      } else {
        compare<AsyncTileFor<true, false>, false>("128", p, ws, ref, cublas_us);
        compare<AsyncTile64For<false>, false>(" 64", p, ws, ref, cublas_us);
      }
      cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref), cudaFree(ws);
    }
  }
  return 0;
}
