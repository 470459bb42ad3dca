// A GEMV kernel whose B lines reach shared memory by the copy engine (cp.async.bulk, sm_90),
// tried against the GEMV kernel's builds (csrc/auto/gemv.cuh) and cuBLAS (fp32 and TF32) on
// x @ W^T of few rows, W's lines 16-byte aligned: docs/auto.md ("Tried and not kept") quotes
// its figures. Each result is checked against cuBLAS fp32's; the GPU's time alone (the stream
// held before each start event, as gemmtiles.bench times), median of 31.
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icsrc scripts/gemv_bulk.cu -lcublas -o gemv_bulk
//   ./gemv_bulk M N K [M N K ...]    (CSV: m,n,k,variant,us,err)
//
// The kernel: gemv.cuh's lanes load B into registers, so the bytes a block has in flight are
// bounded by the registers its accumulators and A leave free, which shrink as rows grow. Here
// one thread hands the copy engine whole runs of a block's kCols lines of B, kStages chunks
// of K ahead, each landing in shared memory behind an mbarrier; the block's threads run along
// k, a float4 each of a chunk, on every column, and add their sums by warp shuffles, then in
// shared memory in a fixed order. A is read in place, through L1 and L2.
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../csrc/auto/gemv.cuh"
#include "../scripts/harness.cuh"
using namespace gemmtiles;

namespace {

// kChunk floats of each column a stage (four per thread), kStages stages in flight.
template <int kCols, int kWarps>
struct GemvBulkShape {
  static constexpr int kThreads = 32 * kWarps, kChunk = 4 * kThreads;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <int MT, int kCols, int kWarps, int kStages, int BPS>
__global__ void __launch_bounds__(32 * kWarps, BPS) gemv_bulk_kernel(GemmProblem p) {
  using Shape = GemvBulkShape<kCols, kWarps>;
  constexpr int kChunk = Shape::kChunk;
  extern __shared__ __align__(128) float stage[];  // [kStages][kCols][kChunk]
  __shared__ __align__(8) uint64_t full[kStages];
  __shared__ float sums[kWarps][MT * kCols];
  const BatchView v = batch_view(p);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int64_t first = int64_t(blockIdx.x) * kCols;
  const int cols = static_cast<int>(p.N - first < kCols ? p.N - first : kCols);
  const int64_t chunks = (p.K + kChunk - 1) / kChunk;
  float acc[MT][kCols] = {};
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  // Chunk c of every column into stage c % kStages, its barrier told the bytes to expect.
  const auto issue = [&](int64_t c) {
    const int s = static_cast<int>(c % kStages);
    const int64_t k0 = c * kChunk;
    const uint32_t bytes = static_cast<uint32_t>((p.K - k0 < kChunk ? p.K - k0 : kChunk) * 4);
    const uint32_t bar = smem_addr(&full[s]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes * cols) : "memory");
    for (int j = 0; j < cols; ++j) {
      const float* src = v.b + (first + j) * p.b_cs + k0;
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
              smem_addr(stage + (s * kCols + j) * kChunk)),
          "l"(src), "r"(bytes), "r"(bar)
          : "memory");
    }
  };
  if (tid == 0)
    for (int64_t c = 0; c < chunks && c < kStages; ++c) issue(c);
  const bool a_vec = p.a_cs == 1 && (p.a_rs % 4 == 0 || p.M == 1) && (reinterpret_cast<uintptr_t>(v.a) & 15) == 0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int s = static_cast<int>(c % kStages);
    const uint32_t parity = static_cast<uint32_t>((c / kStages) & 1);
    const uint32_t bar = smem_addr(&full[s]);
    asm volatile(
        "{\n.reg .pred done;\nwait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait;\n}" ::"r"(bar),
        "r"(parity)
        : "memory");
    const int64_t k = c * kChunk + 4 * tid;
    if (k < p.K) {
      float a[MT][4];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const float* row = v.a + m * p.a_rs;
        if (m >= p.M) {
#pragma unroll
          for (int w = 0; w < 4; ++w) a[m][w] = 0.0f;
        } else if (a_vec) {
          load4(a[m], row + k);
        } else {
#pragma unroll
          for (int w = 0; w < 4; ++w) a[m][w] = row[(k + w) * p.a_cs];
        }
      }
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        if (j >= cols) break;
        const float4 b = *reinterpret_cast<const float4*>(stage + (s * kCols + j) * kChunk + 4 * tid);
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          acc[m][j] = fmaf(a[m][0], b.x, acc[m][j]);
          acc[m][j] = fmaf(a[m][1], b.y, acc[m][j]);
          acc[m][j] = fmaf(a[m][2], b.z, acc[m][j]);
          acc[m][j] = fmaf(a[m][3], b.w, acc[m][j]);
        }
      }
    }
    // Every thread has read stage s: its next chunk may land there.
    __syncthreads();
    if (tid == 0 && c + kStages < chunks) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      issue(c + kStages);
    }
  }
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      float s = acc[m][j];
#pragma unroll
      for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);
      if (lane == 0) sums[warp][m * kCols + j] = s;
    }
  __syncthreads();
  for (int t = tid; t < MT * kCols; t += blockDim.x) {
    const int m = t / kCols, j = t % kCols;
    if (m >= p.M || j >= cols) continue;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += sums[w][t];
    v.out[m * p.out_rs + first + j] = epilogue(p, v.c, m, first + j, s);
  }
}

// Dynamic shared memory of a build: its stages of kCols lines of kChunk floats.
template <int kCols, int kWarps, int kStages>
inline constexpr int kGemvBulkSmem = kStages * kCols * GemvBulkShape<kCols, kWarps>::kChunk * 4;

}  // namespace


static void report(const GemmProblem& p, const char* name, float us, double err) {
  std::printf("%lld,%lld,%lld,%s,%.2f,%.2e\n", (long long)p.M, (long long)p.N, (long long)p.K, name, us, err);
}

template <int MT, int NB, int KL, int BPS>
void time_gemv(const GemmProblem& p, float* out, const float* ref) {
  if (p.M > MT) return;
  constexpr int kColumns = kGemvBlockColumns<NB, KL>;
  const dim3 grid(static_cast<unsigned>((p.N + kColumns - 1) / kColumns));
  auto run = [&] { gemv_kmajor_kernel<MT, NB, 4, KL, BPS, false><<<grid, 32 * kGemvWarps>>>(p, 1); };
  CHECK(cudaMemset(out, 0, p.M * p.N * 4));
  run();
  CHECK(cudaDeviceSynchronize());
  char name[64];
  std::snprintf(name, sizeof name, "gemv m%dn%dk%db%d", MT, NB, KL, BPS);
  report(p, name, median_ms(run, 31, 40000) * 1000, relative_error(out, ref, p.M * p.N));
}

template <int MT, int kCols, int kWarps, int kStages, int BPS>
void time_bulk(const GemmProblem& p, float* out, const float* ref) {
  if (p.M > MT) return;
  constexpr int smem = kGemvBulkSmem<kCols, kWarps, kStages>;
  auto kernel = gemv_bulk_kernel<MT, kCols, kWarps, kStages, BPS>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>((p.N + kCols - 1) / kCols));
  auto run = [&] { kernel<<<grid, 32 * kWarps, smem>>>(p); };
  CHECK(cudaMemset(out, 0, p.M * p.N * 4));
  run();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  int blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, 32 * kWarps, smem));
  char name[64];
  std::snprintf(name, sizeof name, "bulk m%dc%dw%ds%d(%d/sm)", MT, kCols, kWarps, kStages, blocks);
  report(p, name, median_ms(run, 31, 40000) * 1000, relative_error(out, ref, p.M * p.N));
}

int main(int argc, char** argv) {
  cublasHandle_t h;
  cublasCreate(&h);
  for (int i = 1; i + 2 < argc; i += 3) {
    const int64_t M = atoll(argv[i]), N = atoll(argv[i + 1]), K = atoll(argv[i + 2]);
    float *a, *b, *out, *ref;
    CHECK(cudaMalloc(&a, M * K * 4));
    CHECK(cudaMalloc(&b, K * N * 4));
    CHECK(cudaMalloc(&out, M * N * 4));
    CHECK(cudaMalloc(&ref, M * N * 4));
    upload_uniform(a, M * K);
    upload_uniform(b, K * N);
    auto cublas = [&](cublasComputeType_t t, float* dst) { cublas_x_wt(h, t, a, b, dst, M, N, K); };
    cublas(CUBLAS_COMPUTE_32F, ref);
    CHECK(cudaDeviceSynchronize());
    GemmProblem p{};
    p.batch = 1; p.M = M; p.N = N; p.K = K;
    p.a = a; p.a_rs = K; p.a_cs = 1;
    p.b = b; p.b_rs = 1; p.b_cs = K;  // W^T: column-major B, W's rows along k
    p.out = out; p.out_rs = N; p.alpha = 1; p.beta = 0;
    report(p, "cublas", median_ms([&] { cublas(CUBLAS_COMPUTE_32F, out); }, 31, 40000) * 1000, 0.0);
    report(p, "cublas-tf32", median_ms([&] { cublas(CUBLAS_COMPUTE_32F_FAST_TF32, out); }, 31, 40000) * 1000,
           relative_error(out, ref, M * N));
    // The GEMV builds auto runs (kGemvBuilds, their checked loop), and the former deep-K kernel
    // (16 lanes on 4 columns, one block an SM).
    time_gemv<1, 8, 32, 4>(p, out, ref);
    time_gemv<4, 4, 32, 4>(p, out, ref);
    time_gemv<8, 2, 8, 2>(p, out, ref);
    time_gemv<8, 4, 16, 1>(p, out, ref);
    time_bulk<1, 8, 4, 4, 4>(p, out, ref);
    time_bulk<1, 16, 4, 3, 2>(p, out, ref);
    time_bulk<4, 8, 4, 3, 4>(p, out, ref);
    time_bulk<8, 8, 4, 3, 4>(p, out, ref);
    time_bulk<8, 8, 4, 4, 3>(p, out, ref);
    time_bulk<8, 4, 4, 6, 4>(p, out, ref);
    time_bulk<8, 8, 2, 6, 6>(p, out, ref);
    time_bulk<8, 16, 4, 2, 2>(p, out, ref);
    time_bulk<16, 4, 4, 4, 3>(p, out, ref);
    time_bulk<16, 8, 4, 3, 2>(p, out, ref);
    std::fflush(stdout);
    cudaFree(a); cudaFree(b); cudaFree(out); cudaFree(ref);
  }
  cublasDestroy(h);
  return 0;
}
