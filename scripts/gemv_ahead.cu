// The GEMV kernel (csrc/auto/gemv.cuh) on x @ W^T of 5-8 rows, against variants of it and
// cuBLAS (fp32 and TF32), each result checked against cuBLAS fp32's; x's and W's lines padded
// to 16 bytes where K is not a multiple of 4. The GPU's time alone (-DHELD=1: the stream held
// before each start event, as gemmtiles.bench times), median of 31. docs/auto.md quotes its
// figures. The variants:
//  - shipped: gemv.cuh's kernel on the 5-8-row build's lanes, columns and blocks an SM (the
//    build's own, kGemvFew's and the former deep-K kernel's), its steps checked (every row
//    and line at every step: gemv_accumulate) or whole (gemv_accumulate_whole: the steps
//    inside K unchecked, the one past them float by float);
//  - fast: gemv.cuh's whole-step loop in a kernel of its own on other lanes, columns and
//    blocks an SM;
//  - ahead: each lane's lines of W loaded AHEAD steps before the step that uses them, A's
//    float4 of a row loaded just before the row's FMAs (4 registers, not MT x 4).
//   nvcc -O3 -std=c++17 -arch=sm_90 -DHELD=1 -Icsrc -I<cublas include> scripts/gemv_ahead.cu -lcublas -o gemv_ahead
//   ./gemv_ahead M N K [M N K ...]        (CSV: m,n,k,variant,columns,us,err; 5-8 rows)
//     AHEAD=1 in the environment times the ahead variants too
//   ./gemv_ahead diagnose N K [N K ...]   (the shipped 8-row kernels on 8 rows and on one, the
//                                          one-row build, one ahead variant; ONCE=1: each
//                                          launched once, untimed, for a profiler)
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "../csrc/auto/gemv.cuh"
#include "../scripts/harness.cuh"
using namespace gemmtiles;

namespace {

// A thread's place: its product's operands, its warp, its lane along k and its group, the
// block's first column of kCols, and the group's NB lines of W (columns past N read the
// block's first).
template <int KL, int NB>
struct Place {
  BatchView v;
  int warp, kl, group;
  int64_t first;
  const float* col[NB];
  __device__ Place(const GemmProblem& p, int kCols)
      : v(batch_view(p)), warp(int(threadIdx.x) / 32), kl(int(threadIdx.x) % 32 % KL),
        group(int(threadIdx.x) % 32 / KL), first(int64_t(blockIdx.x) * kCols) {
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      const int64_t n = first + group * NB + j;
      col[j] = v.b + (n < p.N ? n : first) * p.b_cs;
    }
  }
};

// MT rows (M <= MT), NB columns of W per group of KL lanes along k, W's lines AHEAD steps
// ahead, BPS blocks an SM; 8 warps take K's chunks of KL float4s in turn, as gemv.cuh's kernel.
template <int MT, int NB, int KL, int AHEAD, int BPS>
__global__ void __launch_bounds__(32 * kGemvWarps, BPS) gemv_ahead_kernel(GemmProblem p) {
  constexpr int kCols = 32 / KL * NB, kStep = KL * 4, kRound = kGemvWarps * kStep, kSlots = AHEAD + 1;
  const Place<KL, NB> at(p, kCols);
  if (at.first >= p.N) return;
  const BatchView& v = at.v;
  const int warp = at.warp, kl = at.kl;
  const float* const(&col)[NB] = at.col;
  float acc[MT][NB] = {};
  float b[kSlots][NB][4];
  const int64_t k0 = int64_t(warp) * kStep + kl * 4;
#pragma unroll
  for (int t = 0; t < AHEAD; ++t)
#pragma unroll
    for (int j = 0; j < NB; ++j) load_line<4>(b[t][j], col[j], k0 + t * kRound, 1, p.K);
  for (int64_t base = k0; base < p.K; base += int64_t(kSlots) * kRound) {
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int64_t k = base + s * kRound;
      // The slot the step before used takes the lines AHEAD steps on.
      const int refill = (s + AHEAD) % kSlots;
#pragma unroll
      for (int j = 0; j < NB; ++j) load_line<4>(b[refill][j], col[j], k + AHEAD * kRound, 1, p.K);
      if (k < p.K) {
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          float a[4];
          if (m < p.M) load_line<4, false>(a, v.a + m * p.a_rs, k, 1, p.K);
          else a[0] = a[1] = a[2] = a[3] = 0.0f;
#pragma unroll
          for (int j = 0; j < NB; ++j)
#pragma unroll
            for (int w = 0; w < 4; ++w) acc[m][j] = fmaf(a[w], b[s][j][w], acc[m][j]);
        }
      }
    }
  }
  gemv_store_sums<MT, NB, KL>(acc, p, v, at.first, 1, warp, kl, at.group);
}


// gemv.cuh's whole-step loop (gemv_accumulate_whole; A's and W's lines 16-byte aligned) in a
// kernel of its own on NB columns a group of KL lanes, BPS blocks an SM.
template <int MT, int NB, int KL, int BPS>
__global__ void __launch_bounds__(32 * kGemvWarps, BPS) gemv_fast_kernel(GemmProblem p) {
  const Place<KL, NB> at(p, kGemvBlockColumns<NB, KL>);
  if (at.first >= p.N) return;
  float acc[MT][NB] = {};
  gemv_accumulate_whole<MT, NB, KL>(acc, p, at.v, at.col, at.warp, at.kl);
  gemv_store_sums<MT, NB, KL>(acc, p, at.v, at.first, 1, at.warp, at.kl, at.group);
}

template <class Run>
void report(const GemmProblem& p, const char* name, int cols, Run run, float* out, const float* ref) {
  CHECK(cudaMemset(out, 0, p.M * p.N * 4));
  run();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double err = relative_error(out, ref, p.M * p.N);
  // ONCE=1 (for a profiler): each variant launched once, not timed.
  if (std::getenv("ONCE")) return;
  const float us = median_ms(run, 31, kHeldCycles) * 1000;
  std::printf("%lld,%lld,%lld,%s,%d,%.3f,%.3e\n", (long long)p.M, (long long)p.N, (long long)p.K, name, cols, us, err);
}

// The shipped kernel (gemv.cuh) on NB columns a group of KL lanes, BPS blocks an SM, its steps
// checked or (kWhole) those inside K unchecked.
template <int NB, int KL, int BPS, bool kWhole = false>
void shipped(const GemmProblem& p, float* out, const float* ref, const char* name) {
  constexpr int kCols = kGemvBlockColumns<NB, KL>;
  const dim3 grid(static_cast<unsigned>((p.N + kCols - 1) / kCols));
  report(p, name, kCols,
         [&] { gemv_kmajor_kernel<8, NB, 4, KL, BPS, false, kWhole><<<grid, 32 * kGemvWarps>>>(p, 1); }, out, ref);
}

template <int NB, int KL, int AHEAD, int BPS>
void ahead(const GemmProblem& p, float* out, const float* ref) {
  constexpr int kCols = 32 / KL * NB;
  const dim3 grid(static_cast<unsigned>((p.N + kCols - 1) / kCols));
  char name[64];
  std::snprintf(name, sizeof name, "ahead_nb%d_kl%d_a%d_b%d", NB, KL, AHEAD, BPS);
  report(p, name, kCols, [&] { gemv_ahead_kernel<8, NB, KL, AHEAD, BPS><<<grid, 32 * kGemvWarps>>>(p); }, out, ref);
}

template <int MT, int NB, int KL, int BPS>
void fast(const GemmProblem& p, float* out, const float* ref, const char* name) {
  constexpr int kCols = kGemvBlockColumns<NB, KL>;
  const dim3 grid(static_cast<unsigned>((p.N + kCols - 1) / kCols));
  report(p, name, kCols, [&] { gemv_fast_kernel<MT, NB, KL, BPS><<<grid, 32 * kGemvWarps>>>(p); }, out, ref);
}

// x (M x K) and W (N x K) drawn uniform, their lines padded to 16 bytes where K is not a
// multiple of 4, an output, and the problem x @ W^T on them (W^T: column-major B, W's rows
// along k).
struct Operands {
  int64_t ld;
  float *a, *b, *out;
  GemmProblem p{};
  Operands(const Operands&) = delete;
  Operands(int64_t M, int64_t N, int64_t K) : ld((K + 3) / 4 * 4) {
    CHECK(cudaMalloc(&a, M * ld * 4));
    CHECK(cudaMalloc(&b, ld * N * 4));
    CHECK(cudaMalloc(&out, M * N * 4));
    upload_uniform(a, M * ld);
    upload_uniform(b, ld * N);
    p.batch = 1; p.M = M; p.N = N; p.K = K;
    p.a = a; p.a_bs = M * ld; p.a_rs = ld; p.a_cs = 1;
    p.b = b; p.b_bs = N * ld; p.b_rs = 1; p.b_cs = ld;
    p.out = out; p.out_bs = M * N; p.out_rs = N; p.out_cs = 1; p.alpha = 1; p.beta = 0;
  }
  ~Operands() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(out);
  }
  // cuBLAS's x @ W^T of the first m rows into dst, compute type t.
  void cublas(cublasHandle_t h, cublasComputeType_t t, float* dst, int64_t m) const {
    cublas_x_wt(h, t, a, b, dst, int(m), int(p.N), int(p.K), int(ld));
  }
};

}  // namespace

// What holds the shipped 8-row kernels back: each timed on 8 rows, then with the same 8-row
// build on one row (rows past M load no A: zeros), against the one-row build.
void diagnose(const GemmProblem& p8, float* out, const float* ref1, const float* ref8) {
  GemmProblem p1 = p8;
  p1.M = 1;
  shipped<2, 8, 2>(p8, out, ref8, "build_nb2_kl8_b2_m8");
  shipped<2, 8, 2>(p1, out, ref1, "build_nb2_kl8_b2_m1");
  shipped<4, 16, 1>(p8, out, ref8, "deep_nb4_kl16_b1_m8");
  shipped<4, 16, 1>(p1, out, ref1, "deep_nb4_kl16_b1_m1");
  constexpr int kCols = kGemvBlockColumns<8, 32>;
  const dim3 grid(static_cast<unsigned>((p1.N + kCols - 1) / kCols));
  report(p1, "one_row_build_m1", kCols, [&] { gemv_kmajor_kernel<1, 8, 4, 32, 4, false><<<grid, 32 * kGemvWarps>>>(p1, 1); },
         out, ref1);
  ahead<2, 8, 1, 3>(p8, out, ref8);
}

int main(int argc, char** argv) {
  cublasHandle_t h;
  cublasCreate(&h);
  std::printf("m,n,k,variant,columns,us,err\n");
  if (argc > 1 && std::string(argv[1]) == "diagnose") {
    for (int i = 2; i + 1 < argc; i += 2) {
      const Operands x(8, atoll(argv[i]), atoll(argv[i + 1]));
      float *ref1, *ref8;
      CHECK(cudaMalloc(&ref1, x.p.N * 4));
      CHECK(cudaMalloc(&ref8, x.p.M * x.p.N * 4));
      x.cublas(h, CUBLAS_COMPUTE_32F, ref8, x.p.M);
      x.cublas(h, CUBLAS_COMPUTE_32F, ref1, 1);
      CHECK(cudaDeviceSynchronize());
      diagnose(x.p, x.out, ref1, ref8);
      std::fflush(stdout);
      cudaFree(ref1); cudaFree(ref8);
    }
    cublasDestroy(h);
    return 0;
  }
  for (int i = 1; i + 2 < argc; i += 3) {
    const int64_t M = atoll(argv[i]);
    if (M < 5 || M > 8) continue;
    const Operands x(M, atoll(argv[i + 1]), atoll(argv[i + 2]));
    const GemmProblem& p = x.p;
    float* const out = x.out;
    float* ref;
    CHECK(cudaMalloc(&ref, p.M * p.N * 4));
    x.cublas(h, CUBLAS_COMPUTE_32F, ref, p.M);
    CHECK(cudaDeviceSynchronize());
    // The 5-8-row kernels: checked (kGemvBuilds' 8-lane build, kGemvFew in auto/plan.h, and the
    // former deep-K kernel), and gemv.cuh's whole-step kernels that aligned rows of A run, under
    // bounds of three blocks an SM and under the builds' own two.
    shipped<2, 8, 2>(p, out, ref, "build_nb2_kl8_b2");
    shipped<2, 16, 2>(p, out, ref, "few_nb2_kl16_b2");
    shipped<4, 16, 1>(p, out, ref, "deep_nb4_kl16_b1");
    shipped<2, 8, 3, true>(p, out, ref, "whole_nb2_kl8_b3");
    shipped<2, 16, 3, true>(p, out, ref, "whole_few_nb2_kl16_b3");
    shipped<2, 8, 2, true>(p, out, ref, "whole_nb2_kl8_b2");
    shipped<2, 16, 2, true>(p, out, ref, "whole_few_nb2_kl16_b2");
    fast<8, 2, 8, 2>(p, out, ref, "fast_build_nb2_kl8_b2");
    fast<8, 2, 16, 2>(p, out, ref, "fast_few_nb2_kl16_b2");
    fast<8, 4, 16, 1>(p, out, ref, "fast_deep_nb4_kl16_b1");
    fast<8, 2, 8, 3>(p, out, ref, "fast_nb2_kl8_b3");
    fast<8, 4, 16, 2>(p, out, ref, "fast_nb4_kl16_b2");
    fast<8, 4, 8, 2>(p, out, ref, "fast_nb4_kl8_b2");
    fast<8, 2, 16, 3>(p, out, ref, "fast_nb2_kl16_b3");
    if (std::getenv("AHEAD")) {
      ahead<2, 8, 1, 2>(p, out, ref);
      ahead<2, 8, 1, 3>(p, out, ref);
      ahead<2, 8, 1, 4>(p, out, ref);
      ahead<2, 8, 2, 3>(p, out, ref);
      ahead<2, 8, 3, 2>(p, out, ref);
      ahead<4, 8, 1, 2>(p, out, ref);
      ahead<4, 8, 1, 3>(p, out, ref);
      ahead<1, 8, 3, 4>(p, out, ref);
      ahead<2, 16, 1, 3>(p, out, ref);
      ahead<2, 16, 2, 2>(p, out, ref);
      ahead<4, 16, 1, 2>(p, out, ref);
      ahead<2, 4, 1, 4>(p, out, ref);
    }
    report(p, "cublas_fp32", 0, [&] { x.cublas(h, CUBLAS_COMPUTE_32F, out, p.M); }, out, ref);
    report(p, "cublas_tf32", 0, [&] { x.cublas(h, CUBLAS_COMPUTE_32F_FAST_TF32, out, p.M); }, out, ref);
    std::fflush(stdout);
    cudaFree(ref);
  }
  cublasDestroy(h);
  return 0;
}
