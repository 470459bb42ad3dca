// Standalone tuning harness for the `auto` tier's own kernels (csrc/auto/launch.cuh):
// for each shape and layout, times auto's plan (auto/plan.h), every split-K tile
// configuration at every split count and, up to skinny_max_m rows, the skinny plan, against
// cuBLAS's fp32 SGEMM on the same inputs (CUDA events, median of repeats); checks each result
// against cuBLAS's and prints the best choices per shape. The measurements behind
// auto/plan.h's rule.
//   nvcc -O3 -std=c++17 -arch=sm_90 scripts/tune_auto.cu -lcublas -o tune_auto
//   ./tune_auto                    # the bench's small-M shapes, NN and NT
//   ./tune_auto M N K [M N K ...]  # chosen shapes
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../csrc/auto/launch.cuh"
#include "harness.cuh"

using namespace gemmtiles;

// Median microseconds of f() over 25 runs.
template <typename F>
float median_us(F f) {
  return 1000.0f * median_ms(f, 25);
}

struct Result {
  std::string name;
  int64_t splits;
  float us;
};

struct Case {
  GemmProblem p;
  float* ref;
  bool b_kmajor;
};

void try_plan(const std::string& name, const Case& c, const AutoPlan& plan, std::vector<Result>& out) {
  float* ws = nullptr;
  if (const int64_t floats = auto_workspace(c.p, plan)) CHECK(cudaMalloc(&ws, floats * 4));
  auto run = [&] { launch_auto_plan(c.p, plan, ws, 0); };
  CHECK(cudaMemset(c.p.out, 0, c.p.M * c.p.N * 4));
  run();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double err = relative_error(c.p.out, c.ref, c.p.M * c.p.N);
  if (!(err < 1e-4)) {
    std::printf("  WRONG %s splits %lld: rel err %.2e\n", name.c_str(), (long long)plan.splits, err);
  } else {
    out.push_back({name, plan.splits, median_us(run)});
  }
  cudaFree(ws);
}

void try_tiles(const char* name, int bm, int bn, const Case& c, std::vector<Result>& out) {
  const int64_t K = c.p.K;
  int64_t last = 0;
  for (int64_t want : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48}) {
    AutoPlan plan{AutoKernel::kSplitTile, bm, bn};
    plan.k_slice = ((K + want - 1) / want + 7) / 8 * 8;
    plan.splits = (K + plan.k_slice - 1) / plan.k_slice;
    if (plan.splits == last) continue;
    last = plan.splits;
    try_plan(name, c, plan, out);
  }
}

void run_shape(cublasHandle_t handle, int64_t M, int64_t N, int64_t K, bool b_kmajor) {
  float *a, *b, *o, *ref;
  CHECK(cudaMalloc(&a, M * K * 4));
  CHECK(cudaMalloc(&b, K * N * 4));
  CHECK(cudaMalloc(&o, M * N * 4));
  CHECK(cudaMalloc(&ref, M * N * 4));
  std::vector<float> h(std::max(M * K, K * N));
  for (auto& x : h) x = rand() / float(RAND_MAX) - 0.5f;
  CHECK(cudaMemcpy(a, h.data(), M * K * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, h.data(), K * N * 4, cudaMemcpyHostToDevice));
  const float one = 1.0f, zero = 0.0f;
  // Row-major out = A B is column-major out^T = B^T A^T; B K-major is W (N, K) row-major.
  auto cublas = [&] {
    if (b_kmajor) {
      cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, ref, N);
    } else {
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, N, a, K, &zero, ref, N);
    }
  };
  const float cublas_us = median_us(cublas);
  GemmProblem p{};
  p.batch = 1;
  p.M = M;
  p.N = N;
  p.K = K;
  p.a = a;
  p.a_rs = K;
  p.a_cs = 1;
  p.b = b;
  p.b_rs = b_kmajor ? 1 : N;
  p.b_cs = b_kmajor ? K : 1;
  p.out = o;
  p.out_rs = N;
  p.out_bs = M * N;
  p.alpha = 1.0f;
  p.beta = 0.0f;
  const Case c{p, ref, b_kmajor};
  std::vector<Result> r;
  // B's contiguous lines (length K for W^T, N otherwise) as float4s where they are whole ones.
  const bool b_vec = (b_kmajor ? K : N) % 4 == 0;
  const AutoPlan plan = auto_plan(M, N, K, 1, b_kmajor, b_vec, 132);
  std::vector<Result> chosen;
  // auto's warptile plan is warptile's own launch (torch side), which picks 128 x 256 or
  // 128 x 128 tiles: the 128x256 line with 1 split is the first of them.
  if (plan.kernel != AutoKernel::kWarptile) try_plan("auto", c, plan, chosen);
  // The skinny kernel on the heuristic's split count, against the tiles.
  if (M <= skinny_max_m(b_kmajor))
    try_plan("skinny", c, skinny_plan(M, N, K, 1, b_kmajor, b_vec, 132), r);
  try_tiles("32x128", 32, 128, c, r);
  try_tiles("64x128", 64, 128, c, r);  // the pipelined kernel where it takes the operands
  try_tiles("128x256", 128, 256, c, r);
  // The pipelined tile, where it takes the operands (A row-major here; B row-major: N % 4).
  if (async_tile_ok(M, N, true, true, b_kmajor, b_vec)) try_tiles("128x128", 128, 128, c, r);
  std::sort(r.begin(), r.end(), [](const Result& x, const Result& y) { return x.us < y.us; });
  std::printf("%5lld x %5lld x %5lld %s  cuBLAS %8.1f us  auto %s %d/%lld %.1f us %.2fx  best",
              (long long)M, (long long)N, (long long)K, b_kmajor ? "NT" : "NN", cublas_us,
              auto_kernel_name(plan.kernel), plan.mt, (long long)plan.splits,
              chosen.empty() ? 0.0f : chosen[0].us, chosen.empty() ? 0.0f : cublas_us / chosen[0].us);
  for (size_t i = 0; i < std::min<size_t>(4, r.size()); ++i)
    std::printf("  %s/%lld %.1f us %.2fx", r[i].name.c_str(), (long long)r[i].splits, r[i].us,
                cublas_us / r[i].us);
  std::printf("\n");
  // The best split count of each configuration.
  for (const char* cfg : {"skinny", "32x128", "64x128", "128x256", "128x128"}) {
    for (const Result& x : r) {
      if (x.name == cfg) {
        std::printf("      %-8s splits %2lld %8.1f us %.2fx\n", cfg, (long long)x.splits, x.us,
                    cublas_us / x.us);
        break;
      }
    }
  }
  std::fflush(stdout);
  cudaFree(a);
  cudaFree(b);
  cudaFree(o);
  cudaFree(ref);
}

int main(int argc, char** argv) {
  cublasHandle_t handle;
  cublasCreate(&handle);
  srand(1);
  std::vector<int64_t> shapes;
  if (argc > 3) {
    for (int i = 1; i + 2 < argc; i += 3)
      shapes.insert(shapes.end(), {atoll(argv[i]), atoll(argv[i + 1]), atoll(argv[i + 2])});
  } else {
    for (int64_t m : {1, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048})
      for (auto kn : {std::pair<int64_t, int64_t>{4096, 4096}, {4096, 11008}, {11008, 4096}})
        shapes.insert(shapes.end(), {m, kn.second, kn.first});
  }
  for (size_t i = 0; i < shapes.size(); i += 3)
    for (bool kmajor : {false, true}) run_shape(handle, shapes[i], shapes[i + 1], shapes[i + 2], kmajor);
  return 0;
}
