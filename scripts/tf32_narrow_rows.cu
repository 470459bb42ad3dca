// tf32's narrow kernel (csrc/tensor_core/wgmma_sm90a.cu, tf32_narrow in csrc/auto/plan.h) on
// each of its tiles against tf32's own kernels and cuBLAS TF32, on products read from stdin,
// one "NT M N K" or "NN M N K" a line (N and K multiples of 4; M, N up to 16384, M x K and
// M x N up to 2048 x 16384). C (M x N) as C^T = B^T A^T, so that C's rows are the kernel's
// narrow N and its columns the kernel's M. NT: the MMA's A is W (N x K row-major, K-major),
// its B x^T (K-major); NN: its A is W^T (M-major, transposed into registers), its B x^T.
// Stream-K, output from the accumulators; tf32's own: 128 x 256 and 128 x 128 tiles in
// clusters of two (NN: the kernel transposing B); and the narrow kernel on one warpgroup,
// data-parallel. Build:
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG -I<cutlass>/include \
//     scripts/tf32_narrow_rows.cu -lcublas -o tf32_narrow_rows
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
// -DHELD=1 times both sides with the stream held (the GPU's time alone, as the bench times);
// without it a time includes the host's launch.
#include <cublas_v2.h>
#include <cstring>
#include "cutlass_config.cuh"
#include "harness.cuh"

// The narrow kernel: C^T on tile Tile of one block (no cluster), A' = B^T K-major (LayoutA
// Row: x @ W^T) or M-major (Col: x @ W), B' = x^T K-major, the output C^T column-major from
// the accumulators.
template <class Tile, class LayoutA>
using Narrow = Config<Tile, Shape<_1, _1, _1>, Coop, NoSmem, SK, 1, Col, Col, float, LayoutA>;
// The same on one consumer warpgroup (CUTLASS's KernelTmaWarpSpecialized, tiles of 64 rows of
// C^T), one block a tile, data-parallel (no stream-K): cuBLAS TF32's arrangement for NN at
// 128 rows (sm90_xmma_gemm_..._nn_n_tilesize64x128x32_warpgroupsize1x1x1).
// kStages 0: as many stages as shared memory holds (one block an SM); fewer: two blocks an SM.
template <class Tile, class LayoutA, int kStages = 0>
using NarrowOneGroup = Config<Tile, Shape<_1, _1, _1>, cutlass::gemm::KernelTmaWarpSpecialized, NoSmem, void, 1, Col,
                              Col, float, LayoutA, kStages>;
// tf32's own kernels on clusters of two: NT unswapped (TMA epilogue, row-major output); NN
// the one CUTLASS swaps (B^T transposed into registers, column-major output).
using C2 = Shape<_2, _1, _1>;
template <class Tile>
using OwnNT = Config<Tile, C2, Coop, TmaCoop, SK, 4, Col>;
template <class Tile>
using OwnNN = Config<Tile, C2, Coop, NoSmem, SK, 1, Row, Col>;

float *a, *b, *d, *ref;
cublasHandle_t hd;
void* ws = nullptr; size_t ws_size = 0;

// Times one configuration on args (its output d, M x N, checked against cuBLAS's ref).
template <class Cfg>
void time_args(const char* name, const typename Cfg::Gemm::Arguments& args, int M, int N, float tcub) {
  using Gemm = typename Cfg::Gemm;
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) { printf("%s cannot\n", name); return; }
  // Twice CUTLASS's stream-K workspace: the kernel that CUTLASS swaps (NN's transposing one)
  // sizes it for the problem as given, not the grid it runs.
  size_t need = Gemm::get_workspace_size(args) * 2 + 1024;
  if (need > ws_size) { if (ws) cudaFree(ws); CHECK(cudaMalloc(&ws, need)); ws_size = need; }
  auto run = [&] { gemm.initialize(args, ws); gemm.run(); };
  CHECK(cudaMemset(d, 0, size_t(M) * N * 4));
  run(); CHECK(cudaDeviceSynchronize());
  double err = relative_error(d, ref, size_t(M) * N);
  float t = median_ms(run, 30, kHeldCycles) * 1000;
  printf("  %-28s %8.1f us  vs cublas-tf32 %.3f  err %.1e\n", name, t, tcub / t, err);
  fflush(stdout);
}

cutlass::KernelHardwareInfo hardware() {
  cutlass::KernelHardwareInfo hw; hw.device_id = 0;
  CHECK(cudaDeviceGetAttribute(&hw.sm_count, cudaDevAttrMultiProcessorCount, 0));
  return hw;
}

// The narrow kernel: problem M' = N, N' = M. A'(n, k): NT W row-major N x K at n*K + k; NN W
// K x N row-major at k*N + n. B'(k, m) = x(m, k) at m*K + k: StrideB in (n', k) order, (K, 1).
template <class Cfg>
void time_cfg(const char* name, int M, int N, int K, float tcub) {
  using K_ = typename Cfg::Kernel;
  const int64_t a0 = Cfg::kTN ? 1 : K, a1 = Cfg::kTN ? N : 1;  // kTN: A' M-major (NN's W^T)
  typename Cfg::Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {N, M, K, 1},
      {a, stride3<typename K_::StrideA>(a0, a1, int64_t(N) * K), b, stride3<typename K_::StrideB>(K, 1, int64_t(M) * K)},
      {{1.0f, 0.0f}, nullptr, stride3<typename K_::StrideC>(1, N, int64_t(M) * N), d,
       stride3<typename K_::StrideD>(1, N, int64_t(M) * N)}, hardware()};
  time_args<Cfg>(name, args, M, N, tcub);
}

// tf32's own kernels: A = x (the b buffer, M x K row-major); B (K x N): NT W row-major N x K
// (column-major B, ld K), NN W K x N row-major; the output C^T column-major where swapped.
template <class Cfg>
void time_regular(const char* name, int M, int N, int K, float tcub) {
  using K_ = typename Cfg::Kernel;
  const int64_t b_rs = Cfg::kNN ? N : 1, b_cs = Cfg::kNN ? 1 : K;
  const int64_t out_s0 = Cfg::kSwapped ? 1 : N, out_s1 = Cfg::kSwapped ? N : 1;
  typename Cfg::Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1},
      {b, stride3<typename K_::StrideA>(K, 1, int64_t(M) * K), a, stride3<typename K_::StrideB>(b_cs, b_rs, int64_t(N) * K)},
      {{1.0f, 0.0f}, nullptr, stride3<typename K_::StrideC>(out_s0, out_s1, int64_t(M) * N), d,
       stride3<typename K_::StrideD>(out_s0, out_s1, int64_t(M) * N)}, hardware()};
  time_args<Cfg>(name, args, M, N, tcub);
}

template <class LayoutA>
void all(int M, int N, int K, float tcub) {
  time_cfg<Narrow<Shape<_128, _32, _32>, LayoutA>>("narrow 128x32", M, N, K, tcub);
  time_cfg<Narrow<Shape<_128, _64, _32>, LayoutA>>("narrow 128x64", M, N, K, tcub);
  time_cfg<Narrow<Shape<_128, _128, _32>, LayoutA>>("narrow 128x128", M, N, K, tcub);
  time_cfg<Narrow<Shape<_128, _256, _32>, LayoutA>>("narrow 128x256", M, N, K, tcub);
  time_cfg<NarrowOneGroup<Shape<_64, _64, _32>, LayoutA>>("narrow one-group 64x64", M, N, K, tcub);
  time_cfg<NarrowOneGroup<Shape<_64, _128, _32>, LayoutA>>("narrow one-group 64x128", M, N, K, tcub);
  time_cfg<NarrowOneGroup<Shape<_64, _64, _32>, LayoutA, 6>>("narrow one-group 64x64 s6", M, N, K, tcub);
  time_cfg<NarrowOneGroup<Shape<_64, _128, _32>, LayoutA, 4>>("narrow one-group 64x128 s4", M, N, K, tcub);
  time_cfg<NarrowOneGroup<Shape<_64, _128, _32>, LayoutA, 3>>("narrow one-group 64x128 s3", M, N, K, tcub);
  time_cfg<NarrowOneGroup<Shape<_64, _256, _32>, LayoutA, 2>>("narrow one-group 64x256 s2", M, N, K, tcub);
  if constexpr (std::is_same_v<LayoutA, Row>) {
    time_regular<OwnNT<Shape<_128, _256, _32>>>("tf32 128x256 2x1 tma", M, N, K, tcub);
    time_regular<OwnNT<Shape<_128, _128, _32>>>("tf32 128x128 2x1 tma", M, N, K, tcub);
  } else {
    time_regular<OwnNN<Shape<_128, _256, _32>>>("tf32 transposed-b 128x256", M, N, K, tcub);
  }
}

__global__ void fill(float* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned x = unsigned(i) * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    p[i] = float(x & 0xffffff) / float(0x1000000) - 0.5f;
  }
}
int main() {
  const size_t maxa = size_t(16384) * 16384 + 64, maxb = size_t(2048) * 16384 + 64;
  CHECK(cudaMalloc(&a, maxa * 4)); CHECK(cudaMalloc(&b, maxb * 4));
  CHECK(cudaMalloc(&d, maxb * 4)); CHECK(cudaMalloc(&ref, maxb * 4));
  fill<<<1024, 256>>>(a, maxa, 1); fill<<<1024, 256>>>(b, maxb, 2); CHECK(cudaDeviceSynchronize());
  cublasCreate(&hd); cublasSetMathMode(hd, CUBLAS_TF32_TENSOR_OP_MATH);
  char layout[4];
  int M, N, K;
  while (scanf("%3s %d %d %d", layout, &M, &N, &K) == 4) {
    const bool nn = layout[1] == 'N';
    const float one = 1, zero = 0;
    // C row-major (M x N) = column-major C^T (N x M) = W' x^T; x: b (M x K row-major), column-major K x M.
    auto cub = [&] {
      if (nn) cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, a, N, b, K, &zero, ref, N);
      else cublasSgemm(hd, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, a, K, b, K, &zero, ref, N);
    };
    const float tc = median_ms(cub, 30, kHeldCycles) * 1000;
    printf("%s %4d x %5d x %5d  cublas-tf32 %8.1f\n", nn ? "NN" : "NT", M, N, K, tc);
    if (nn) all<Col>(M, N, K, tc); else all<Row>(M, N, K, tc);
  }
  return 0;
}
