// tf32 on outputs of few rows (the narrow kernel of csrc/tensor_core/wgmma_sm90a.cu) against
// cuBLAS TF32: C (M x N, M small) as C^T = B^T A^T, so that C's rows are the kernel's narrow
// N and its columns the kernel's M. NT: the MMA's A is W (N x K row-major, K-major), its B
// x^T (K-major); NN: its A is W^T (M-major, transposed into registers), its B x^T. Each
// configuration below (tile of C^T, cluster) on each shape, stream-K, output from the
// accumulators. Build (docs/measurements/2026-11-27/tf32-narrow-standalone-h100.txt):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG -I<cutlass>/include \
//     scripts/tf32_narrow.cu -lcublas -o tf32_narrow
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
#include <cublas_v2.h>
#include <cstring>
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include "harness.cuh"
using namespace cute;
using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;
using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using NoSmem = cutlass::epilogue::NoSmemWarpSpecialized;
using SK = cutlass::gemm::StreamKScheduler;

template <class Tile, class Cluster, class Sched, class LayoutA>
struct Config {
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float, float, Col, 1, float, Col, 1, NoSmem>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, LayoutA, 4, float, Col, 4, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      Sched>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, SK>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static constexpr bool kNN = std::is_same_v<LayoutA, Col>;
};

template <class S>
S stride3(int64_t s0, int64_t s1, int64_t s2) {
  S s{};
  auto set = [](auto&& slot, int64_t v) {
    if constexpr (std::is_integral_v<std::remove_reference_t<decltype(slot)>>) slot = v;
  };
  set(get<0>(s), s0); set(get<1>(s), s1); set(get<2>(s), s2);
  return s;
}

float *a, *b, *d, *ref;
cublasHandle_t hd, hf;
void* ws = nullptr; size_t ws_size = 0;

template <class Cfg>
void time_cfg(const char* name, int M, int N, int K, float tcub) {
  using Gemm = typename Cfg::Gemm;
  using K_ = typename Cfg::Kernel;
  cutlass::KernelHardwareInfo hw; hw.device_id = 0;
  CHECK(cudaDeviceGetAttribute(&hw.sm_count, cudaDevAttrMultiProcessorCount, 0));
  // kernel problem: M' = N, N' = M. A'(n, k): NT W row-major N x K: n*K + k; NN W K x N row-major: k*N + n.
  const int64_t a0 = Cfg::kNN ? 1 : K, a1 = Cfg::kNN ? N : 1;
  // B'(k, m) = x(m, k) at m*K + k: StrideB is (n', k) order: (K, 1).
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {N, M, K, 1},
      {a, stride3<typename K_::StrideA>(a0, a1, int64_t(N) * K), b, stride3<typename K_::StrideB>(K, 1, int64_t(M) * K)},
      {{1.0f, 0.0f}, nullptr, stride3<typename K_::StrideC>(1, N, int64_t(M) * N), d,
       stride3<typename K_::StrideD>(1, N, int64_t(M) * N)}, hw};
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) { printf("%s cannot\n", name); return; }
  size_t need = Gemm::get_workspace_size(args);
  if (need > ws_size) { if (ws) cudaFree(ws); CHECK(cudaMalloc(&ws, need)); ws_size = need; }
  auto run = [&] { gemm.initialize(args, ws); gemm.run(); };
  CHECK(cudaMemset(d, 0, size_t(M) * N * 4));
  run(); CHECK(cudaDeviceSynchronize());
  double err = relative_error(d, ref, size_t(M) * N);
  float t = median_ms(run, 30) * 1000;
  printf("  %-28s %8.1f us  vs cublas-tf32 %.3f  err %.1e\n", name, t, tcub / t, err);
  fflush(stdout);
}

template <class LayoutA>
void all(int M, int N, int K, float tcub) {
  using C1 = Shape<_1, _1, _1>;
  using C2 = Shape<_2, _1, _1>;
  time_cfg<Config<Shape<_128, _32, _32>, C1, Coop, LayoutA>>("128x32 1x1 coop", M, N, K, tcub);
  time_cfg<Config<Shape<_128, _64, _32>, C1, Coop, LayoutA>>("128x64 1x1 coop", M, N, K, tcub);
  time_cfg<Config<Shape<_128, _128, _32>, C1, Coop, LayoutA>>("128x128 1x1 coop", M, N, K, tcub);
  time_cfg<Config<Shape<_256, _64, _32>, C1, Coop, LayoutA>>("256x64 1x1 coop", M, N, K, tcub);
  time_cfg<Config<Shape<_128, _64, _32>, C2, Coop, LayoutA>>("128x64 2x1 coop", M, N, K, tcub);
}

int main() {
  const int Ms[] = {16, 32, 64, 128, 256, 384};
  const int NKs[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {2048, 2048}, {5504, 2048}};
  const size_t maxe = size_t(11008) * 4096 + 64;
  CHECK(cudaMalloc(&a, maxe * 4)); CHECK(cudaMalloc(&b, size_t(384) * 11008 * 4 + 64));
  CHECK(cudaMalloc(&d, size_t(384) * 11008 * 4)); CHECK(cudaMalloc(&ref, size_t(384) * 11008 * 4));
  std::vector<float> h(maxe);
  srand(1);
  for (auto& v : h) v = float(rand()) / RAND_MAX - 0.5f;
  CHECK(cudaMemcpy(a, h.data(), maxe * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, h.data() + 7, size_t(384) * 11008 * 4, cudaMemcpyHostToDevice));
  cublasCreate(&hd); cublasSetMathMode(hd, CUBLAS_TF32_TENSOR_OP_MATH);
  cublasCreate(&hf);
  for (int nn = 0; nn < 2; ++nn)
    for (auto& nk : NKs)
      for (int M : Ms) {
        const int N = nk[0], K = nk[1];
        const float one = 1, zero = 0;
        // C row-major (M x N) = column-major C^T (N x M) = W' x^T. x: b (M x K row-major) = col-major K x M (ld K).
        auto cub = [&](cublasHandle_t h) {
          if (nn) cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, a, N, b, K, &zero, ref, N);
          else cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, a, K, b, K, &zero, ref, N);
        };
        float tf = median_ms([&] { cub(hf); }, 20) * 1000;
        float tc = median_ms([&] { cub(hd); }, 30) * 1000;
        printf("%s %4d x %5d x %5d  cublas fp32 %8.1f  tf32 %8.1f\n", nn ? "NN" : "NT", M, N, K, tf, tc);
        if (nn) all<Col>(M, N, K, tc); else all<Row>(M, N, K, tc);
      }
  return 0;
}
