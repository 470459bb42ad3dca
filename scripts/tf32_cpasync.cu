// tf32 on x @ W^T whose lines are not 16-byte aligned (K off a multiple of 4), read in place
// by CUTLASS's SM90 cp.async mainloop (4-byte copies by a producer warpgroup into the
// shared-memory layout wgmma reads, KernelCpAsyncWarpSpecializedCooperative) instead of
// packed K-major for TMA first; against cuBLAS TF32 on the same product, and the same kernel
// on 16-byte copies and on TMA where the lines are aligned. The kernel computes C^T = W x^T on
// tiles of 128 columns of C by the narrow width (as the narrow kernel, csrc/tensor_core), on
// CUTLASS's stream-K scheduler; the GPU's time alone (HELD), the stream-K workspace zeroed
// in each run as gemmtiles does. One configuration per binary (CFG):
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG -DHELD=1 \
//     -I<cutlass>/include -DCFG=0 scripts/tf32_cpasync.cu -lcublas -o tf32_cpasync0
//   ./tf32_cpasync0 M N K [M N K ...]
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cutlass_config.cuh"
#include "harness.cuh"

using CpCoop = cutlass::gemm::KernelCpAsyncWarpSpecializedCooperative;

#ifndef CFG
#define CFG 0
#endif
// Tile (128 columns of C, the narrow width of its rows, 32 of K), schedule, copies' floats.
#if CFG == 0
using TileMNK = Shape<_128, _64, _32>; using Sched = CpCoop; constexpr int kAlign = 1; const char* kName = "cp.async a1 128x64";
#elif CFG == 1
using TileMNK = Shape<_128, _32, _32>; using Sched = CpCoop; constexpr int kAlign = 1; const char* kName = "cp.async a1 128x32";
#elif CFG == 2
using TileMNK = Shape<_128, _128, _32>; using Sched = CpCoop; constexpr int kAlign = 1; const char* kName = "cp.async a1 128x128";
#elif CFG == 3
using TileMNK = Shape<_128, _64, _32>; using Sched = CpCoop; constexpr int kAlign = 4; const char* kName = "cp.async a4 128x64";
#elif CFG == 4
using TileMNK = Shape<_128, _64, _32>; using Sched = Coop; constexpr int kAlign = 4; const char* kName = "tma 128x64";
#endif

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileMNK, Shape<_1, _1, _1>,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, float, Col, 1, float, Col, 1, NoSmem>::CollectiveOp;
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, Row, kAlign, float, Col, kAlign, float, TileMNK,
    Shape<_1, _1, _1>,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
    Sched>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, SK>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

int main(int argc, char** argv) {
  cublasHandle_t h;
  cublasCreate(&h);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int i = 1; i + 2 < argc; i += 3) {
    const int M = atoi(argv[i]), N = atoi(argv[i + 1]), K = atoi(argv[i + 2]);
    if (kAlign == 4 && K % 4 != 0) continue;
    float *x, *w, *d, *ref;
    CHECK(cudaMalloc(&x, size_t(M) * K * 4));
    CHECK(cudaMalloc(&w, size_t(N) * K * 4));
    CHECK(cudaMalloc(&d, size_t(M) * N * 4));
    CHECK(cudaMalloc(&ref, size_t(M) * N * 4));
    upload_uniform(x, size_t(M) * K);
    upload_uniform(w, size_t(N) * K);
    auto cublas = [&](cublasComputeType_t t, float* dst) { cublas_x_wt(h, t, x, w, dst, M, N, K); };
    cublas(CUBLAS_COMPUTE_32F_FAST_TF32, ref);
    CHECK(cudaDeviceSynchronize());
    const float t_cublas = median_ms([&] { cublas(CUBLAS_COMPUTE_32F_FAST_TF32, ref); }, 21, kHeldCycles) * 1000;
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;
    hw.sm_count = sms;
    // C^T (N x M, column-major: C's rows) = W (N x K, K-major) x^T (K x M, K-major).
    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {N, M, K, 1},
                                  {w, stride3<typename Kernel::StrideA>(K, 1, 0), x,
                                   stride3<typename Kernel::StrideB>(K, 1, 0)},
                                  {{1.0f, 0.0f}, nullptr, stride3<typename Kernel::StrideC>(1, N, 0), d,
                                   stride3<typename Kernel::StrideD>(1, N, 0)},
                                  hw};
    Gemm gemm;
    if (gemm.can_implement(args) != cutlass::Status::kSuccess) {
      std::printf("%-22s %5d x %5d x %5d  cannot implement\n", kName, M, N, K);
      continue;
    }
    void* ws = nullptr;
    const size_t need = Gemm::get_workspace_size(args);
    if (need) CHECK(cudaMalloc(&ws, need));
    auto run = [&] {
      gemm.initialize(args, ws);
      gemm.run();
    };
    CHECK(cudaMemset(d, 0, size_t(M) * N * 4));
    run();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const double err = relative_error(d, ref, size_t(M) * N);
    const float t = median_ms(run, 21, kHeldCycles) * 1000;
    std::printf("%-22s %5d x %5d x %5d NT  %8.1f us  cublas-tf32 %8.1f us  speed %.3f  err %.1e\n", kName, M, N, K, t,
                t_cublas, t_cublas / t, err);
    std::fflush(stdout);
    if (ws) cudaFree(ws);
    cudaFree(x); cudaFree(w); cudaFree(d); cudaFree(ref);
  }
  cublasDestroy(h);
  return 0;
}
