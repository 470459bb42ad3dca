// CUTLASS's Ampere TF32 GEMM (mma.sync m16n8k8; GemmUniversal with its stream-K scheduler)
// with ALIGN-float copies (1: cp.async of single floats, so any leading dimension, offset, N
// and K), on operands as they lie: NN (A row-major, B row-major), NT (B column-major), TN (A
// column-major), every schedule, against cuBLAS TF32, on products read from stdin, one
// "NN M N K" a line. Where tf32's wgmma kernels need 16-byte aligned lines (TMA) and pack the
// operands that are not, this kernel family reads them in place. BM, BN, WM, WN pick the tile
// and its warps (default 64 x 128 of 32 x 64), STAGES its stages (4); HELD=1 times both sides
// with the stream held (the GPU's time alone, as the bench's timer). Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DNDEBUG -DHELD=1 -DALIGN=1 \
//     -DBM=64 -DBN=64 -DWM=32 -DWN=32 -I<cutlass>/include scripts/tf32_sm80_any.cu -lcublas
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
// Each schedule's line: s0 stream-K, s-1 data-parallel, sN K in N slices.
#include <cublas_v2.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>
#include <iostream>
#include <string>
#include <type_traits>
#include "harness.cuh"
#ifndef ALIGN
#define ALIGN 1
#endif
#ifndef BM
#define BM 64
#define BN 128
#define WM 32
#define WN 64
#endif
#ifndef STAGES
#define STAGES 4
#endif
template <typename F>
float time_ms(F f, int reps) { return median_ms(f, reps, kHeldCycles); }
using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;
template <class LA, class LB>
using Gemm = cutlass::gemm::device::GemmUniversal<
    float, LA, float, LB, float, Row, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, 32>, cutlass::gemm::GemmShape<WM, WN, 32>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, ALIGN, float, float>,
    cutlass::gemm::threadblock::ThreadblockSwizzleStreamK, STAGES, ALIGN, ALIGN>;
float *a, *b, *d, *ref;
void* ws = nullptr;
size_t ws_size = 0;
template <class LA, class LB>
void time_one(int M, int N, int K, int splits, float tcub) {
  using G = Gemm<LA, LB>;
  const int lda = std::is_same<LA, Row>::value ? K : M;
  const int ldb = std::is_same<LB, Row>::value ? N : K;
  typename G::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K}, splits > 0 ? splits : 1,
                             {1.0f, 0.0f}, a, b, d, d, 0, 0, 0, 0, lda, ldb, N, N, splits == -1 ? 1 : -1);
  G gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) { printf("  s%-3d cannot\n", splits); return; }
  size_t need = G::get_workspace_size(args) + 1024;
  if (need > ws_size) { if (ws) cudaFree(ws); CHECK(cudaMalloc(&ws, need)); ws_size = need; }
  CHECK(cudaMemset(d, 0, size_t(M) * N * 4));
  if (gemm.initialize(args, ws) != cutlass::Status::kSuccess) { printf("  s%-3d no init\n", splits); return; }
  auto run = [&] { gemm.run(); };
  run();
  CHECK(cudaDeviceSynchronize());
  const float t = time_ms(run, 20) * 1000;
  const double err = relative_error(d, ref, size_t(M) * N);
  printf("  s%-3d %8.1f us  vs cublas-tf32 %.3f  err %.1e\n", splits, t, tcub / t, err);
  fflush(stdout);
}
int main() {
  const size_t cap = size_t(128) << 20;
  CHECK(cudaMalloc(&a, cap * 4)); CHECK(cudaMalloc(&b, cap * 4)); CHECK(cudaMalloc(&d, cap * 4)); CHECK(cudaMalloc(&ref, cap * 4));
  upload_uniform(a, cap);
  upload_uniform(b, cap);
  cublasHandle_t hd = cublas_tf32_handle();
  std::string layout;
  int M, N, K;
  while (std::cin >> layout >> M >> N >> K) {
    if (layout != "NN" && layout != "NT" && layout != "TN" && layout != "TT") {
      printf("%s: expected NN, NT, TN or TT\n", layout.c_str());
      return 1;
    }
    const bool tn = layout[0] == 'T', nt = layout[1] == 'T';  // A column-major; B column-major
    if (size_t(M) * K > cap || size_t(K) * N > cap || size_t(M) * N > cap) continue;
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
