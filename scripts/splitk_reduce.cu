// How auto's CUTLASS SIMT kernel adds the slices of a split K, timed alone against cuBLAS fp32
// on deep-K products of few output tiles (the products split-K serves), one layout and tile
// per binary (the tile auto runs most there, 64 x 64, on two or four warps):
//   mixed      CUTLASS's stream-K scheduler with K split s ways, as auto launches it
//              (auto/cutlass_simt.cuh): where 3 or more slices share a tile and the blocks
//              fit the SMs at once, a wave of reduction blocks in the same grid adds the
//              slices; elsewhere the slices add up in turn (turnstile);
//   turnstile  the same kernel with no reduction blocks: each tile's slices add into the
//              workspace in order, the last one adds them to its own and writes the tile;
//   parallel   CUTLASS's data-parallel kernel in kGemmSplitKParallel: each slice writes its
//              partial tile to a workspace of s outputs, and a second kernel of this script's
//              (add_slices, a loop over the slices; auto runs split_k_reduce_kernel) adds the
//              slices written (and applies alpha and beta), as cuBLAS's split-K does. CUTLASS
//              rounds a slice's K up to a multiple of 4, and of a cache line where it can:
//              perhaps fewer slices than s.
// Shapes: rows and columns log-uniform in [16, 2048], K in [1024, 16384], kept where 64 x 64
// tiles number at most the SMs (std::mt19937 of SEED). Prints CSV: layout, warps, M, N, K,
// mode, splits, microseconds (median, GPU alone: HELD), relative error against cuBLAS, the
// reduction blocks CUTLASS planned, and cuBLAS's microseconds.
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DNDEBUG -DHELD=1 -DNT=0 -DWARPS=2 \
//     -I<cutlass>/include -Icsrc scripts/splitk_reduce.cu -lcublas -o splitk_nn2
//   ./splitk_nn2 [SEED [SHAPES]]
// (<cutlass>: CUTLASS_PATH, or the nvidia-cutlass package's cutlass_library/source.)
#include <cublas_v2.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "auto/cutlass_padded_core.cuh"
#include "harness.cuh"

#ifndef NT
#define NT 0  // 1: B K-major (x @ W^T), 0: B row-major (x @ W)
#endif
#ifndef WARPS
#define WARPS 2  // 64 x 64 on two warps of 32 x 64 or four of 32 x 32
#endif

using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;
using LayoutB = std::conditional_t<NT, Col, Row>;
using Epi = cutlass::epilogue::thread::LinearCombination<float, 1, float, float>;
constexpr int kWarpN = WARPS == 2 ? 64 : 32;
constexpr int kStages = 5;
template <class Swizzle>
using Gemm = cutlass::gemm::device::GemmUniversal<
    float, Row, float, LayoutB, float, Row, float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<64, 64, 8>, cutlass::gemm::GemmShape<32, kWarpN, 8>, cutlass::gemm::GemmShape<1, 1, 1>,
    Epi, Swizzle, kStages, 1, 1, gemmtiles::cutlass_simt::PaddedSimtMultiplyAdd>;
using StreamK = Gemm<cutlass::gemm::threadblock::ThreadblockSwizzleStreamK>;
using DataParallel = Gemm<cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>>;

// The stream-K kernel's parameters within reach: its block mapping and workspace.
struct SplitK : StreamK {
  cutlass::Status set_up(const Arguments& args) { return this->init_params(args, nullptr); }
  auto& mapping() { return this->params_.block_mapping; }
  size_t workspace_bytes() const { return this->params_.get_workspace_size(); }
  cutlass::Status use_workspace(void* w) { return this->params_.init_workspace(w); }
};

// out = alpha * sum of `splits` partial M x N outputs (mn floats apart) + beta * out.
__global__ void add_slices(const float* partials, float* out, long long mn, int splits, float alpha, float beta) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < mn; i += (long long)gridDim.x * blockDim.x) {
    float sum = 0;
    for (int s = 0; s < splits; ++s) sum += partials[s * mn + i];
    out[i] = beta == 0 ? alpha * sum : alpha * sum + beta * out[i];
  }
}

int main(int argc, char** argv) {
  const unsigned seed = argc > 1 ? atoi(argv[1]) : 59;
  const int count = argc > 2 ? atoi(argv[2]) : 20;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::mt19937 rng(seed);
  const auto log_uniform = [&](double lo, double hi) {
    return (int)std::lround(std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng)));
  };
  const size_t cap = 2048ull * 2048, operand_cap = 2048ull * 16384;  // floats of the output, of an operand
  float *a, *b, *c, *ref, *ws;
  CHECK(cudaMalloc(&a, operand_cap * 4));
  CHECK(cudaMalloc(&b, operand_cap * 4));
  CHECK(cudaMalloc(&c, cap * 4));
  CHECK(cudaMalloc(&ref, cap * 4));
  const size_t ws_bytes = 64ull << 20;
  CHECK(cudaMalloc(&ws, ws_bytes));
  CHECK(cudaMemset(ws, 0, ws_bytes));
  upload_uniform(a, operand_cap);
  upload_uniform(b, operand_cap);
  cublasHandle_t h;
  cublasCreate(&h);
  const int reps = 21;
  printf("layout,warps,m,n,k,mode,splits,us,err,reduction_blocks,cublas_us\n");
  for (int done = 0; done < count;) {
    const int M = log_uniform(16, 2048), N = log_uniform(16, 2048), K = log_uniform(1024, 16384);
    if (((M + 63) / 64) * ((N + 63) / 64) > sms) continue;
    ++done;
    const float one = 1, zero = 0;
    // Row-major out = A @ B: cuBLAS's column-major out^T = B^T A^T.
    const auto cublas = [&] {
      if (NT) cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, ref, N);
      else cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, N, a, K, &zero, ref, N);
    };
    const float cublas_us = median_ms(cublas, reps, kHeldCycles) * 1000;
    const int ldb = NT ? K : N;
    for (const int s : {2, 3, 4, 6, 8, 12, 16, 24, 32}) {
      if ((K + 7) / 8 < 2 * s) break;
      // mixed and turnstile: the stream-K kernel with batch_split s.
      for (const bool turnstile : {false, true}) {
        typename StreamK::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K}, s, {1.0f, 0.0f}, a, b, c,
                                         c, 0, 0, 0, 0, K, ldb, N, N, -1);
        SplitK g;
        if (g.can_implement(args) != cutlass::Status::kSuccess || g.set_up(args) != cutlass::Status::kSuccess) {
          printf("# %dx%dx%d s%d: stream-K refused\n", M, N, K, s);
          continue;
        }
        const int reduction_blocks = g.mapping().reduction_blocks;
        if (turnstile) g.mapping().reduction_blocks = 0;
        if (g.workspace_bytes() > ws_bytes) {
          printf("# %dx%dx%d s%d: workspace %zu\n", M, N, K, s, g.workspace_bytes());
          continue;
        }
        if (g.use_workspace(ws) != cutlass::Status::kSuccess) { printf("workspace refused\n"); exit(1); }
        const auto run = [&] {
          if (g.run(nullptr) != cutlass::Status::kSuccess) { printf("run failed\n"); exit(1); }
        };
        CHECK(cudaMemset(c, 0, (size_t)M * N * 4));
        const float us = median_ms(run, reps, kHeldCycles) * 1000;
        CHECK(cudaDeviceSynchronize());
        cublas();
        printf("%s,%d,%d,%d,%d,%s,%d,%.2f,%.2e,%d,%.2f\n", NT ? "NT" : "NN", WARPS, M, N, K,
               turnstile ? "turnstile" : "mixed", s, us, relative_error(c, ref, (size_t)M * N), reduction_blocks,
               cublas_us);
      }
      // parallel: each slice's partial output apart, then add_slices.
      if ((size_t)s * M * N * 4 <= ws_bytes) {
        typename DataParallel::Arguments args(cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel, {M, N, K}, s,
                                              {1.0f, 0.0f}, a, b, ws, ws, 0, 0, (int64_t)M * N, (int64_t)M * N, K, ldb,
                                              N, N);
        struct Sliced : DataParallel {  // the slices CUTLASS cut K into: `s`, or fewer of whole cache lines
          int slices() const { return this->params_.grid_tiled_shape.k(); }
        } g;
        if (g.can_implement(args) != cutlass::Status::kSuccess ||
            g.initialize(args, nullptr) != cutlass::Status::kSuccess) {
          printf("# %dx%dx%d s%d: split-K parallel refused\n", M, N, K, s);
          continue;
        }
        const long long mn = (long long)M * N;
        const int grid = (int)std::min<long long>((mn + 255) / 256, 4 * sms);
        const auto run = [&] {
          if (g.run(nullptr) != cutlass::Status::kSuccess) { printf("run failed\n"); exit(1); }
          add_slices<<<grid, 256>>>(ws, c, mn, g.slices(), 1.0f, 0.0f);
        };
        const float us = median_ms(run, reps, kHeldCycles) * 1000;
        CHECK(cudaDeviceSynchronize());
        printf("%s,%d,%d,%d,%d,parallel,%d,%.2f,%.2e,0,%.2f\n", NT ? "NT" : "NN", WARPS, M, N, K, s, us,
               relative_error(c, ref, (size_t)M * N), cublas_us);
      }
      CHECK(cudaMemset(ws, 0, ws_bytes));  // the flags the stream-K kernels wait on, zero again
    }
    fflush(stdout);
  }
  return 0;
}
