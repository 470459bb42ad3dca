// CUTLASS SIMT SGEMM configurations (auto's exact kernels, csrc/auto/cutlass_simt.cuh) against
// cuBLAS fp32 on every layout of A and B: tile, warp tile, tile depth and stages, one
// configuration per binary (CFG below), data-parallel (one block per output tile) so that the
// tile's own speed shows, timed on the GPU alone (hold_stream). Build one binary per configuration:
//   for c in 0 1 2 ...; do nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DNDEBUG \
//     -I<cutlass>/include -DCFG=$c scripts/simt_configs.cu -lcublas -o simt_cfg$c & done
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
#include <cublas_v2.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>

#include <array>
#include <string>
#include <type_traits>

#include "harness.cuh"

using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;

#ifndef CFG
#define CFG 0
#endif
// BM x BN x BK tile, WM x WN warp tile, stages.
// clang-format off
#if CFG == 0
constexpr int BM = 128, BN = 256, BK = 8, WM = 64, WN = 64, ST = 4;
#elif CFG == 1
constexpr int BM = 128, BN = 256, BK = 8, WM = 64, WN = 64, ST = 3;
#elif CFG == 2
constexpr int BM = 128, BN = 256, BK = 16, WM = 64, WN = 64, ST = 3;
#elif CFG == 3
constexpr int BM = 128, BN = 128, BK = 8, WM = 32, WN = 64, ST = 5;
#elif CFG == 4
constexpr int BM = 128, BN = 128, BK = 16, WM = 32, WN = 64, ST = 4;
#elif CFG == 5
constexpr int BM = 128, BN = 128, BK = 8, WM = 64, WN = 32, ST = 5;
#elif CFG == 6
constexpr int BM = 256, BN = 128, BK = 8, WM = 64, WN = 64, ST = 4;
#elif CFG == 7
constexpr int BM = 128, BN = 128, BK = 8, WM = 64, WN = 64, ST = 5;
#elif CFG == 8
constexpr int BM = 128, BN = 256, BK = 16, WM = 64, WN = 64, ST = 4;
#elif CFG == 9
constexpr int BM = 64, BN = 64, BK = 8, WM = 32, WN = 64, ST = 5;
#elif CFG == 10
constexpr int BM = 64, BN = 64, BK = 16, WM = 32, WN = 32, ST = 4;
#elif CFG == 11
constexpr int BM = 64, BN = 128, BK = 8, WM = 32, WN = 64, ST = 5;
#elif CFG == 12
constexpr int BM = 64, BN = 64, BK = 8, WM = 32, WN = 32, ST = 5;
#elif CFG == 13
constexpr int BM = 32, BN = 128, BK = 8, WM = 32, WN = 32, ST = 5;
#elif CFG == 14
constexpr int BM = 32, BN = 128, BK = 8, WM = 32, WN = 64, ST = 5;
#elif CFG == 15
constexpr int BM = 64, BN = 128, BK = 8, WM = 64, WN = 32, ST = 5;
#elif CFG == 16
constexpr int BM = 32, BN = 32, BK = 8, WM = 32, WN = 32, ST = 3;
#elif CFG == 17
constexpr int BM = 32, BN = 64, BK = 8, WM = 32, WN = 32, ST = 4;
#elif CFG == 18  // the 32 x 32 tile on two warps: half of each k step's FMAs a warp
constexpr int BM = 32, BN = 32, BK = 8, WM = 32, WN = 16, ST = 3;
#elif CFG == 19
constexpr int BM = 32, BN = 32, BK = 8, WM = 16, WN = 32, ST = 3;
#elif CFG == 20  // on four warps
constexpr int BM = 32, BN = 32, BK = 8, WM = 16, WN = 16, ST = 3;
#endif
// clang-format on

template <bool AK, bool BK_>
using Gemm = cutlass::gemm::device::GemmUniversal<
    float, std::conditional_t<AK, Row, Col>, float, std::conditional_t<BK_, Col, Row>, float, Row, float,
    cutlass::arch::OpClassSimt, cutlass::arch::Sm80, cutlass::gemm::GemmShape<BM, BN, BK>,
    cutlass::gemm::GemmShape<WM, WN, BK>, cutlass::gemm::GemmShape<1, 1, 1>,
    cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
    cutlass::gemm::threadblock::ThreadblockSwizzleStreamK, ST, 1, 1>;

struct Bufs {
  float *a, *b, *d, *ref;
  void* ws;
  size_t ws_size;
};

// Layout names as the bench's: first letter A (N: row-major, K-major), second B (N: row-major,
// N-major; T: column-major, K-major).
template <bool AK, bool BK_>
void run_layout(cublasHandle_t hd, Bufs& x, int M, int N, int K, int avail) {
  const int reps = double(M) * N * K > 2e10 ? 7 : 20;
  const float one = 1, zero = 0;
  const int lda = AK ? K : M, ldb = BK_ ? K : N;
  // Row-major C = A B: column-major C^T = B^T A^T.
  auto cub = [&] {
    cublasSgemm(hd, BK_ ? CUBLAS_OP_T : CUBLAS_OP_N, AK ? CUBLAS_OP_N : CUBLAS_OP_T, N, M, K, &one, x.b, ldb, x.a,
                lda, &zero, x.ref, N);
  };
  const float tc = median_ms(cub, reps, 100000) * 1000;
  using G = Gemm<AK, BK_>;
  typename G::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K}, 1, {1.0f, 0.0f}, x.a, x.b, x.d, x.d, 0,
                             0, 0, 0, lda, ldb, N, N, avail);
  G g;
  if (g.can_implement(args) != cutlass::Status::kSuccess || G::get_workspace_size(args) > x.ws_size) {
    printf("cannot implement\n");
    return;
  }
  auto f = [&] {
    g.initialize(args, x.ws, 0);
    g.run(0);
  };
  CHECK(cudaMemset(x.d, 0, size_t(M) * N * 4));
  f();
  cub();
  CHECK(cudaDeviceSynchronize());
  const double err = relative_error(x.d, x.ref, size_t(M) * N);
  const float t = median_ms(f, reps, 100000) * 1000;
  const float tcub = std::min(tc, median_ms(cub, reps, 100000) * 1000);
  printf("%3dx%3dx%2d w%2dx%2d s%d %s  %5d x %5d x %5d %c%c  cutlass %8.1f us  cublas %8.1f us  ratio %.3f  err %.1e\n",
         BM, BN, BK, WM, WN, ST, avail == 1 ? "dp" : "sk", M, N, K, AK ? 'N' : 'T', BK_ ? 'T' : 'N', t, tcub,
         tcub / t, err);
  fflush(stdout);
}

int main(int argc, char** argv) {
  // argv[2] "small": products of a few to a few hundred microseconds, for the small tiles;
  // "tiny": products cuBLAS finishes in about 10 microseconds, which auto runs on the 32 x 32 tile.
  const std::vector<std::array<int, 3>> large = {{4096, 4096, 4096}, {2048, 2048, 2048}, {3531, 5185, 5907},
                                                 {4165, 11235, 1188}, {2830, 5752, 671}, {1051, 3699, 5807},
                                                 {955, 1063, 1781},  {1032, 1024, 409},  {584, 898, 1555},
                                                 {6140, 212, 287}};
  const std::vector<std::array<int, 3>> small = {{955, 1063, 1781}, {1032, 1024, 409}, {584, 898, 1555},
                                                 {6140, 212, 287},  {413, 373, 144},   {194, 861, 1556},
                                                 {874, 358, 855},   {235, 2431, 2147}, {65, 575, 2881},
                                                 {1827, 139, 2132}, {100, 2146, 164},  {258, 5257, 3750}};
  const std::vector<std::array<int, 3>> tiny = {{156, 402, 143}, {152, 253, 168}, {413, 373, 144}, {559, 1626, 399},
                                                {112, 220, 1766}, {44, 249, 1819}, {119, 134, 397},  {150, 400, 32}};
  const std::string set = argc > 2 ? argv[2] : "";
  const auto& shapes = set == "small" ? small : set == "tiny" ? tiny : large;
  const size_t maxe = size_t(1) << 26;
  Bufs x{};
  CHECK(cudaMalloc(&x.a, maxe * 4));
  CHECK(cudaMalloc(&x.b, maxe * 4));
  CHECK(cudaMalloc(&x.d, maxe * 4));
  CHECK(cudaMalloc(&x.ref, maxe * 4));
  x.ws_size = size_t(1) << 28;
  CHECK(cudaMalloc(&x.ws, x.ws_size));
  std::vector<float> h(maxe);
  srand(1);
  for (auto& v : h) v = float(rand()) / RAND_MAX - 0.5f;
  CHECK(cudaMemcpy(x.a, h.data(), maxe * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x.b, h.data() + 7, (maxe - 7) * 4, cudaMemcpyHostToDevice));
  cublasHandle_t hd;
  cublasCreate(&hd);
  // argv[1]: "sk" for CUTLASS's stream-K schedule (every SM available); data-parallel otherwise.
  const int avail = argc > 1 && std::string(argv[1]) == "sk" ? -1 : 1;
  for (auto& s : shapes) {
    run_layout<true, false>(hd, x, s[0], s[1], s[2], avail);
    run_layout<true, true>(hd, x, s[0], s[1], s[2], avail);
    run_layout<false, false>(hd, x, s[0], s[1], s[2], avail);
    run_layout<false, true>(hd, x, s[0], s[1], s[2], avail);
  }
  return 0;
}
