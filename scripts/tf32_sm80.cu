// CUTLASS's Ampere TF32 GEMM (mma.sync m16n8k8, cp.async copies; GemmUniversal with its
// stream-K scheduler) on one tile, every schedule (s0 stream-K, s-1 data-parallel, sN K in N
// slices), against cuBLAS TF32, on products read from stdin, one "NN M N K" a line: NN (A
// row-major, B row-major), NT (B column-major), TN (A column-major), TT (both). This is the
// kernel family that takes an N-major B as it lies (its shared memory holds either layout),
// where Hopper's TF32 wgmma reads only K-major operands. ALIGN: the floats a copy moves, 4
// (16-byte copies: N and K multiples of 4, the default) or 1 (single floats: any N and K, every
// layout read where it lies, where tf32's wgmma kernels pack an operand first). TILE picks the
// tile (0-9, below); HELD=1 times both sides with the stream held (median_ms's hold: the GPU's
// time alone, as the bench's timer), else with the host's launch inside the events. Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DNDEBUG -DTILE=0 \
//     -I<cutlass>/include scripts/tf32_sm80.cu -lcublas -o tf32_sm80_0
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
#include <cublas_v2.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>

#include <cstring>
#include <iostream>
#include <string>
#include <type_traits>

#include "harness.cuh"

#ifndef TILE
#define TILE 0
#endif
#ifndef ALIGN
#define ALIGN 4
#endif
template <typename F>
float time_ms(F f, int reps) {
  return median_ms(f, reps, kHeldCycles);
}
// Each TILE's BM x BN x 32 tile of warps WM x WN, STAGES stages.
constexpr int kTiles[][5] = {
    {64, 256, 64, 64, 3}, {32, 256, 32, 64, 3}, {64, 128, 32, 64, 4}, {128, 128, 64, 64, 3}, {128, 256, 64, 64, 3},
    {32, 128, 32, 32, 4}, {128, 64, 64, 32, 4}, {64, 256, 64, 64, 4}, {128, 128, 64, 64, 4}, {64, 64, 32, 32, 4}};
static_assert(TILE >= 0 && TILE < int(sizeof(kTiles) / sizeof(kTiles[0])), "TILE: 0-9");
constexpr int BM = kTiles[TILE][0], BN = kTiles[TILE][1], WM = kTiles[TILE][2], WN = kTiles[TILE][3],
              STAGES = kTiles[TILE][4];

using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;
template <class LayoutA, class LayoutB>
using Gemm = cutlass::gemm::device::GemmUniversal<
    float, LayoutA, float, LayoutB, float, Row, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, 32>, cutlass::gemm::GemmShape<WM, WN, 32>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, ALIGN, float, float>,
    cutlass::gemm::threadblock::ThreadblockSwizzleStreamK, STAGES, ALIGN, ALIGN>;

float *a, *b, *d, *ref;
void* ws = nullptr;
size_t ws_size = 0;

// splits 0: stream-K; -1: data-parallel; s >= 1: K in s slices.
template <class LayoutA, class LayoutB>
void time_one(int M, int N, int K, int splits, float tcub) {
  using G = Gemm<LayoutA, LayoutB>;
  const int lda = std::is_same<LayoutA, Row>::value ? K : M;
  const int ldb = std::is_same<LayoutB, Row>::value ? N : K;
  typename G::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K}, splits > 0 ? splits : 1,
                             {1.0f, 0.0f}, a, b, d, d, 0, 0, 0, 0, lda, ldb, N, N, splits == -1 ? 1 : -1);
  G gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) {
    printf("  s%-3d cannot\n", splits);
    return;
  }
  size_t need = G::get_workspace_size(args) + 1024;
  if (need > ws_size) {
    if (ws) cudaFree(ws);
    CHECK(cudaMalloc(&ws, need));
    ws_size = need;
  }
  CHECK(cudaMemset(d, 0, size_t(M) * N * 4));
  if (gemm.initialize(args, ws) != cutlass::Status::kSuccess) {
    printf("  s%-3d no init\n", splits);
    return;
  }
  auto run = [&] { gemm.run(); };
  run();
  CHECK(cudaDeviceSynchronize());
  const float t = time_ms(run, 20) * 1000;
  const double err = relative_error(d, ref, size_t(M) * N);  // after the timed runs: flags left usable
  printf("  %dx%d s%-3d %8.1f us  vs cublas-tf32 %.3f  err %.1e\n", BM, BN, splits, t, tcub / t, err);
  fflush(stdout);
}

int main() {
  const size_t cap = size_t(128) << 20;  // floats per operand
  CHECK(cudaMalloc(&a, cap * 4));
  CHECK(cudaMalloc(&b, cap * 4));
  CHECK(cudaMalloc(&d, cap * 4));
  CHECK(cudaMalloc(&ref, cap * 4));
  {
    std::vector<float> h(cap);
    unsigned s = 1;
    for (auto& x : h) x = ((s = s * 1664525u + 1013904223u) >> 9) * (1.0f / (1 << 23)) - 0.5f;
    CHECK(cudaMemcpy(a, h.data(), cap * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, h.data(), cap * 4, cudaMemcpyHostToDevice));
  }
  cublasHandle_t hd;
  cublasCreate(&hd);
  cublasSetMathMode(hd, CUBLAS_TF32_TENSOR_OP_MATH);
  std::string layout;
  int M, N, K;
  while (std::cin >> layout >> M >> N >> K) {
    if (layout != "NN" && layout != "NT" && layout != "TN" && layout != "TT") {
      printf("%s: expected NN, NT, TN or TT\n", layout.c_str());
      return 1;
    }
    const bool tn = layout[0] == 'T', nt = layout[1] == 'T';  // A column-major; B column-major
    if (size_t(M) * K > cap || size_t(K) * N > cap || size_t(M) * N > cap) continue;
    // Row-major C = A B as column-major C^T = B^T A^T.
    const float one = 1, zero = 0;
    auto cub = [&] {
      cublasSgemm(hd, nt ? CUBLAS_OP_T : CUBLAS_OP_N, tn ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, b, nt ? K : N, a,
                  tn ? M : K, &zero, ref, N);
    };
    const float tcub = time_ms(cub, 20) * 1000;
    printf("%s %5d x %5d x %5d  cublas-tf32 %8.1f us\n", layout.c_str(), M, N, K, tcub);
    for (int s : {0, -1, 2, 3, 4, 6, 8, 12, 16}) {
      if (tn && nt) time_one<Col, Col>(M, N, K, s, tcub);
      else if (nt) time_one<Row, Col>(M, N, K, s, tcub);
      else if (tn) time_one<Col, Row>(M, N, K, s, tcub);
      else time_one<Row, Row>(M, N, K, s, tcub);
    }
  }
  return 0;
}
