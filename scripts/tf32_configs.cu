// CUTLASS SM90 TF32 GEMM configurations against cuBLAS TF32, one configuration per binary
// (CFG below): tile, cluster, kernel schedule, epilogue, tile scheduler and the operands'
// layouts (K-major B: x @ W^T, "NT"; N-major B: "NN", which CUTLASS runs by swapping A and B
// and transposing B^T in registers; an M-major A: "TN" with an N-major B, "TT" with a K-major
// one, A transposed in registers).
// docs/tensor-cores.md's configuration table. Build one binary per configuration:
//   for c in 0 1 2 ...; do nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG \
//     -I<cutlass>/include -DCFG=$c scripts/tf32_configs.cu -lcublas -o tf32_cfg$c & done
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.) Run:
//   [TF32_SPLITS=s] [TF32_NONDETERMINISTIC=1] ./tf32_cfg<c> [M N K ...]
#include <cublas_v2.h>
#include <array>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "cutlass_config.cuh"
#include "harness.cuh"

using Ping = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using TmaPing = cutlass::epilogue::TmaWarpSpecialized;
using DP = cutlass::gemm::PersistentScheduler;

#ifndef CFG
#define CFG 0
#endif
// clang-format off
#if CFG == 0
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, NoSmem, SK, 1, Col>; const char* kName = "128x256 2x1 coop nosmem-a1 sk";
#elif CFG == 1
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, NoSmem, SK, 4, Col>; const char* kName = "128x256 2x1 coop nosmem-a4 sk";
#elif CFG == 2
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, SK, 4, Col>; const char* kName = "128x256 2x1 coop tma sk";
#elif CFG == 3
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, DP, 4, Col>; const char* kName = "128x256 2x1 coop tma dp";
#elif CFG == 4
using Cfg = Config<Shape<_256, _128, _32>, Shape<_1, _2, _1>, Coop, TmaCoop, SK, 4, Col>; const char* kName = "256x128 1x2 coop tma sk";
#elif CFG == 5
using Cfg = Config<Shape<_128, _128, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, SK, 4, Col>; const char* kName = "128x128 2x1 coop tma sk";
#elif CFG == 6
using Cfg = Config<Shape<_64, _256, _32>, Shape<_2, _1, _1>, Ping, TmaPing, DP, 4, Col>; const char* kName = "64x256 2x1 ping tma dp";
#elif CFG == 7
using Cfg = Config<Shape<_128, _128, _32>, Shape<_2, _1, _1>, Ping, TmaPing, DP, 4, Col>; const char* kName = "128x128 2x1 ping tma dp";
#elif CFG == 8
using Cfg = Config<Shape<_128, _256, _32>, Shape<_1, _2, _1>, Coop, TmaCoop, SK, 4, Col>; const char* kName = "128x256 1x2 coop tma sk";
#elif CFG == 9
using Cfg = Config<Shape<_128, _128, _32>, Shape<_1, _1, _1>, Coop, NoSmem, DP, 4, Row>; const char* kName = "NN 128x128 1x1 coop nosmem dp";
#elif CFG == 10
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, NoSmem, SK, 4, Row>; const char* kName = "NN 128x256 2x1 coop nosmem sk";
#elif CFG == 11
using Cfg = Config<Shape<_64, _128, _32>, Shape<_1, _1, _1>, Ping, NoSmem, DP, 4, Row>; const char* kName = "NN 64x128 1x1 ping nosmem dp";
#elif CFG == 12
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, SK, 4, Row, Col>; const char* kName = "NN 128x256 2x1 coop tma sk swap";
#elif CFG == 13
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, NoSmem, SK, 4, Row, Col>; const char* kName = "NN 128x256 2x1 coop nosmem sk swap";
#elif CFG == 14
using Cfg = Config<Shape<_128, _128, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, SK, 4, Row, Col>; const char* kName = "NN 128x128 2x1 coop tma sk swap";
#elif CFG == 15
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, SK, 4, Row, Col, cutlass::tfloat32_t>; const char* kName = "NN 128x256 2x1 coop tma sk swap tf32";
#elif CFG == 16
using Cfg = Config<Shape<_128, _256, _32>, Shape<_1, _2, _1>, Coop, TmaCoop, SK, 4, Row, Col>; const char* kName = "NN 128x256 1x2 coop tma sk swap";
#elif CFG == 17
using Cfg = Config<Shape<_128, _128, _32>, Shape<_1, _1, _1>, Coop, TmaCoop, DP, 4, Row, Col>; const char* kName = "NN 128x128 1x1 coop tma dp swap";
#elif CFG == 18
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, TmaCoop, SK, 4, Col, Row, float, Col>; const char* kName = "TT 128x256 2x1 coop tma sk";
#elif CFG == 19
using Cfg = Config<Shape<_128, _256, _32>, Shape<_2, _1, _1>, Coop, NoSmem, SK, 4, Row, Row, float, Col>; const char* kName = "TN 128x256 2x1 coop nosmem sk";
#endif
// clang-format on

// TF32_SPLITS=s (s > 1): CUTLASS's split-K decomposition into s slices of K instead of its
// stream-K heuristic; TF32_NONDETERMINISTIC=1: partial tiles added in any order. Stream-K
// schedulers only: the others' arguments have neither.
template <class S, class = void>
struct HasSplits : std::false_type {};
template <class S>
struct HasSplits<S, std::void_t<decltype(std::declval<S&>().splits)>> : std::true_type {};
template <class S>
void set_schedule(S& s) {
  if constexpr (HasSplits<S>::value) {
    if (const char* e = getenv("TF32_SPLITS")) s.splits = atoi(e);
    if (const char* e = getenv("TF32_NONDETERMINISTIC"); e && atoi(e))
      s.reduction_mode = decltype(s.reduction_mode)::Nondeterministic;
  }
}

int main(int argc, char** argv) {
  // Shapes M N K from the command line, three numbers each; none: docs/tensor-cores.md's.
  std::vector<std::array<int, 3>> shapes = {
      {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {2048, 4096, 4096}, {2048, 11008, 4096},
      {2048, 4096, 11008}, {512, 4096, 4096},   {128, 4096, 4096},  {1024, 5504, 2048}, {1024, 2048, 5504},
      {1024, 2048, 2048}, {2048, 5504, 2048},  {2048, 32000, 2048}, {1000, 3001, 999},  {300, 700, 5000}};
  if (argc > 1) {
    shapes.clear();
    for (int i = 1; i + 2 < argc; i += 3) shapes.push_back({atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2])});
  }
  const size_t maxe = size_t(8192) * 32000;
  float *a, *b, *d, *ref;
  CHECK(cudaMalloc(&a, size_t(8192) * 11008 * 4));
  CHECK(cudaMalloc(&b, maxe * 4));
  CHECK(cudaMalloc(&d, maxe * 4));
  CHECK(cudaMalloc(&ref, maxe * 4));
  std::vector<float> h(maxe);
  srand(1);
  for (auto& v : h) v = float(rand()) / RAND_MAX - 0.5f;
  CHECK(cudaMemcpy(a, h.data(), size_t(8192) * 11008 * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, h.data() + 7, maxe * 4 - 28, cudaMemcpyHostToDevice));
  cublasHandle_t hd;
  cublasCreate(&hd);
  cublasSetMathMode(hd, CUBLAS_TF32_TENSOR_OP_MATH);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  void* ws = nullptr;
  size_t ws_size = 0;
  for (auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2];
    const int reps = double(M) * N * K > 1e11 ? 7 : 20;
    const float one = 1, zero = 0;
    // Row-major C = A (M x K, row-major) B: column-major C^T = B^T A^T.
    // An M-major A (column-major, ld M) is A^T's transpose: op T.
    const cublasOperation_t op_a = Cfg::kTN ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = Cfg::kTN ? M : K;
    auto cub = [&] {
      if (Cfg::kNN)
        cublasSgemm(hd, CUBLAS_OP_N, op_a, N, M, K, &one, b, N, a, lda, &zero, ref, N);
      else
        cublasSgemm(hd, CUBLAS_OP_T, op_a, N, M, K, &one, b, K, a, lda, &zero, ref, N);
    };
    const float tc = median_ms(cub, reps) * 1000;
    using Gemm = Cfg::Gemm;
    using K_ = Cfg::Kernel;
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;
    hw.sm_count = sms;
    const int64_t b_rs = Cfg::kNN ? N : 1, b_cs = Cfg::kNN ? 1 : K;  // B (K x N): element (k, n) at k*b_rs + n*b_cs
    const int64_t a_rs = Cfg::kTN ? 1 : K, a_cs = Cfg::kTN ? M : 1;  // A (M x K): element (m, k) at m*a_rs + k*a_cs
    // The output's strides along the kernel's first and second dimension: (m, n) row-major, or
    // for a swapped kernel (n, m), which is the same memory seen column-major.
    const int64_t out_s0 = Cfg::kSwapped ? 1 : N, out_s1 = Cfg::kSwapped ? N : 1;
    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {M, N, K, 1},
                                  {reinterpret_cast<const typename Cfg::Mainloop::ElementA*>(a),
                                   stride3<typename K_::StrideA>(a_rs, a_cs, int64_t(M) * K),
                                   reinterpret_cast<const typename Cfg::Mainloop::ElementB*>(b),
                                   stride3<typename K_::StrideB>(b_cs, b_rs, int64_t(N) * K)},
                                  {{1.0f, 0.0f}, nullptr, stride3<typename K_::StrideC>(out_s0, out_s1, int64_t(M) * N),
                                   d, stride3<typename K_::StrideD>(out_s0, out_s1, int64_t(M) * N)},
                                  hw};
    set_schedule(args.scheduler);
    Gemm gemm;
    if (gemm.can_implement(args) != cutlass::Status::kSuccess) {
      printf("%-32s %5d x %5d x %5d  cannot implement\n", kName, M, N, K);
      continue;
    }
    const size_t need = Gemm::get_workspace_size(args);
    if (need > ws_size) {
      if (ws) CHECK(cudaFree(ws));
      CHECK(cudaMalloc(&ws, need));
      ws_size = need;
    }
    auto run = [&] {
      gemm.initialize(args, ws);
      gemm.run();
    };
    CHECK(cudaMemset(d, 0, size_t(M) * N * 4));
    run();
    CHECK(cudaDeviceSynchronize());
    cub();
    CHECK(cudaDeviceSynchronize());
    const double err = relative_error(d, ref, size_t(M) * N);
    const float t = median_ms(run, reps) * 1000;
    const float tc2 = median_ms(cub, reps) * 1000;
    const float tcub = std::min(tc, tc2);
    printf("%-32s %5d x %5d x %5d %s  cutlass %8.1f us  cublas %8.1f us  ratio %.3f  err %.1e\n", kName, M, N, K,
           Cfg::kTN ? (Cfg::kNN ? "TN" : "TT") : Cfg::kNN ? "NN" : "NT", t, tcub, tcub / t, err);
    fflush(stdout);
  }
  return 0;
}
