// Stream-K scheduling of CUTLASS's SIMT SGEMM against cuBLAS and its data-parallel kernel on
// row-major x @ W^T (NT): docs/ladder.md's stream-K table. Builds with CUTLASS's headers:
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -I<cutlass>/include scripts/streamk_nt.cu
//        -lcublas -o streamk_nt && ./streamk_nt
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
#include <cublas_v2.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>
#include <cstring>
#include "harness.cuh"

using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;
using Epi = cutlass::epilogue::thread::LinearCombination<float, 1, float, float>;

template <int BM, int BN, int WM, int WN, int S>
using DP = cutlass::gemm::device::Gemm<float, Row, float, Col, float, Row, float, cutlass::arch::OpClassSimt,
    cutlass::arch::Sm80, cutlass::gemm::GemmShape<BM, BN, 8>, cutlass::gemm::GemmShape<WM, WN, 8>,
    cutlass::gemm::GemmShape<1, 1, 1>, Epi, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, S, 1, 1>;

template <int BM, int BN, int WM, int WN, int S>
using SK = cutlass::gemm::device::GemmUniversal<float, Row, float, Col, float, Row, float, cutlass::arch::OpClassSimt,
    cutlass::arch::Sm80, cutlass::gemm::GemmShape<BM, BN, 8>, cutlass::gemm::GemmShape<WM, WN, 8>,
    cutlass::gemm::GemmShape<1, 1, 1>, Epi, cutlass::gemm::threadblock::ThreadblockSwizzleStreamK, S, 1, 1>;

struct Bufs { float *a, *b, *c, *ref; void* ws; size_t ws_size; };

template <class G>
float time_dp(int M, int N, int K, Bufs& x, int reps) {
  typename G::Arguments args({M, N, K}, {x.a, K}, {x.b, K}, {x.c, N}, {x.c, N}, {1.0f, 0.0f});
  G g;
  auto f = [&] { if (g(args, nullptr, 0) != cutlass::Status::kSuccess) { printf("dp fail\n"); exit(1); } };
  return median_ms(f, reps) * 1000;
}

template <class G>
float time_sk(int M, int N, int K, Bufs& x, int reps, int avail, double* err, bool* same) {
  typename G::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K}, 1, {1.0f, 0.0f}, x.a, x.b, x.c, x.c,
                             0, 0, 0, 0, K, K, N, N, avail);
  size_t ws = G::get_workspace_size(args);
  if (ws > x.ws_size) { printf("ws %zu too big\n", ws); exit(1); }
  G g;
  if (g.can_implement(args) != cutlass::Status::kSuccess) { printf("cannot\n"); exit(1); }
  auto f = [&] {
    if (g.initialize(args, x.ws, 0) != cutlass::Status::kSuccess) { printf("init fail\n"); exit(1); }
    if (g.run(0) != cutlass::Status::kSuccess) { printf("run fail\n"); exit(1); }
  };
  float t = median_ms(f, reps) * 1000;
  f(); CHECK(cudaDeviceSynchronize());
  *err = relative_error(x.c, x.ref, size_t(M) * N);
  std::vector<float> h1(size_t(M) * N), h2(size_t(M) * N);
  CHECK(cudaMemcpy(h1.data(), x.c, h1.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemset(x.c, 0, h1.size() * 4));
  f(); CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(h2.data(), x.c, h2.size() * 4, cudaMemcpyDeviceToHost));
  *same = std::memcmp(h1.data(), h2.data(), h1.size() * 4) == 0;
  return t;
}

int main(int argc, char** argv) {
  int shapes[][3] = {{1024, 2048, 2048}, {1024, 5504, 2048}, {1024, 2048, 5504}, {1024, 32000, 2048},
                     {2048, 2048, 2048}, {2048, 5504, 2048}, {2048, 2048, 5504}, {2048, 32000, 2048},
                     {1000, 3001, 999}, {4096, 4096, 4096}};
  size_t maxe = size_t(2048) * 32000;
  Bufs x;
  CHECK(cudaMalloc(&x.a, maxe * 4)); CHECK(cudaMalloc(&x.b, maxe * 4)); CHECK(cudaMalloc(&x.c, maxe * 4));
  CHECK(cudaMalloc(&x.ref, maxe * 4));
  x.ws_size = size_t(512) << 20; CHECK(cudaMalloc(&x.ws, x.ws_size));
  std::vector<float> h(maxe);
  srand(1); for (auto& v : h) v = float(rand()) / RAND_MAX - 0.5f;
  CHECK(cudaMemcpy(x.a, h.data(), maxe * 4, cudaMemcpyHostToDevice));
  for (auto& v : h) v = float(rand()) / RAND_MAX - 0.5f;
  CHECK(cudaMemcpy(x.b, h.data(), maxe * 4, cudaMemcpyHostToDevice));
  cublasHandle_t hd; cublasCreate(&hd);
  for (auto& s : shapes) {
    int M = s[0], N = s[1], K = s[2];
    int reps = (double(M) * N * K > 1e10) ? 7 : 15;
    float one = 1, zero = 0;
    auto cub = [&] { cublasSgemm(hd, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, x.b, K, x.a, K, &zero, x.ref, N); };
    float tc = median_ms(cub, reps) * 1000;
    cub(); CHECK(cudaDeviceSynchronize());
    float tdp = time_dp<DP<128, 256, 64, 64, 4>>(M, N, K, x, reps);
    double edp = relative_error(x.c, x.ref, size_t(M) * N);
    printf("%5d x %5d x %5d NT  cuBLAS %8.1f  dp128x256 %8.1f (err %.1e)\n", M, N, K, tc, tdp, edp);
    double e; bool same;
#define SKV(BM, BN, WM, WN, S, AV) { float t = time_sk<SK<BM, BN, WM, WN, S>>(M, N, K, x, reps, AV, &e, &same); \
    printf("    sk %dx%d w%dx%d s%d avail%d %8.1f  ratio %.3f err %.1e same %d\n", BM, BN, WM, WN, S, AV, t, tc / t, e, same); }
    SKV(128, 256, 64, 64, 4, -1)
    SKV(128, 256, 64, 64, 3, -1)
    SKV(256, 128, 64, 64, 4, -1)
    SKV(128, 128, 64, 32, 4, -1)
    SKV(128, 128, 32, 64, 3, -1)
    SKV(128, 128, 64, 64, 4, -1)
    cub(); cub(); CHECK(cudaDeviceSynchronize());
    printf("    cuBLAS again %8.1f\n", median_ms(cub, reps) * 1000);
  }
  return 0;
}
