// Standalone timing of the column-major-B skinny kernel's staged path (csrc/auto/skinny.cuh)
// at 16-64 rows of x @ W^T, against cuBLAS fp32, with its FMA efficiency; and a copy of that
// path with its FMAs in another order (MP rows of A at a time, the 4 k of a float4 outer,
// columns inner: the same sums), to tell latency from throughput.
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/skinny_wide.cu \
//     -o skinny_wide -lcublas
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cublas_v2.h>
#include "../csrc/auto/skinny.cuh"
using namespace gemmtiles;

template <class Cfg, int W, int MP>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) wide_kernel(GemmProblem p, SkinnySplit s) {
  constexpr int MT = Cfg::MT, NW = Cfg::NW, KC = Cfg::KC, KL = Cfg::KL, kStep = KL * W;
  const BatchView v = batch_view(p);
  const int lane = threadIdx.x % KL, warp = threadIdx.x / 32, group = threadIdx.x % 32 / KL;
  const int64_t n0 = ((int64_t(blockIdx.x) * Cfg::kWarps + warp) * Cfg::kGroups + group) * NW;
  const int64_t k_begin = int64_t(blockIdx.y) * s.k_slice;
  const int64_t k_end = k_begin + s.k_slice < p.K ? k_begin + s.k_slice : p.K;
  float acc[MT][NW] = {};
  constexpr int kAhead = Cfg::kAhead, kRound = kAhead * kStep;
  extern __shared__ __align__(16) float As[];
  const bool a_vec = p.a_cs == 1 && operand_vec_ok(v.a, p.a_rs);
  float bv[kAhead][NW][W];
  auto load_b = [&](float (&dst)[NW][W], int64_t k) {
#pragma unroll
    for (int j = 0; j < NW; ++j)
      load_line<W>(dst[j], v.b + (n0 + j < p.N ? n0 + j : p.N - 1) * p.b_cs, k, p.b_rs, k_end);
  };
  auto chunk_span = [&](int64_t k0) {
    const int64_t cols = k_end - k0 < KC ? k_end - k0 : KC;
    return int((cols + kRound - 1) / kRound) * kRound;
  };
  auto stage = [&](float* dst, int64_t k0) {
    const int span = chunk_span(k0);
    for (int e = threadIdx.x; e < MT * span / 4; e += Cfg::kThreads) {
      const int m = e / (span / 4), kk = e % (span / 4) * 4;
      const int64_t k = k0 + kk;
      const float* row = v.a + m * p.a_rs;
      if (a_vec && (m >= p.M || k + 3 < k_end || k >= k_end)) {
        const bool in = m < p.M && k < k_end;
        cp_async16(&dst[m * KC + kk], in ? row + k : v.a, in ? 16 : 0);
      } else {
        float x[4];
#pragma unroll
        for (int w = 0; w < 4; ++w) x[w] = m < p.M && k + w < k_end ? row[(k + w) * p.a_cs] : 0.0f;
        *reinterpret_cast<float4*>(&dst[m * KC + kk]) = make_float4(x[0], x[1], x[2], x[3]);
      }
    }
    cp_async_commit();
  };
#pragma unroll
  for (int u = 0; u < kAhead; ++u) load_b(bv[u], k_begin + lane * W + u * kStep);
  stage(As, k_begin);
  int buf = 0;
  for (int64_t k0 = k_begin; k0 < k_end; k0 += KC, buf ^= 1) {
    const int rounds = chunk_span(k0) / kRound;
    cp_async_wait<0>();
    __syncthreads();
    if (k0 + KC < k_end) stage(As + (buf ^ 1) * MT * KC, k0 + KC);
    const float* const Ac = As + buf * MT * KC;
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const int kk = lane * W + (r * kAhead + u) * kStep;
        float cur[NW][W];
#pragma unroll
        for (int j = 0; j < NW; ++j)
#pragma unroll
          for (int w = 0; w < W; ++w) cur[j][w] = bv[u][j][w];
        load_b(bv[u], k0 + kk + kRound);
#pragma unroll
        for (int m0 = 0; m0 < MT; m0 += MP) {
          float av[MP][W];
#pragma unroll
          for (int mm = 0; mm < MP; ++mm)
#pragma unroll
            for (int w = 0; w < W; ++w) av[mm][w] = Ac[(m0 + mm) * KC + kk + w];
#pragma unroll
          for (int w = 0; w < W; ++w)
#pragma unroll
            for (int mm = 0; mm < MP; ++mm)
#pragma unroll
              for (int j = 0; j < NW; ++j) acc[m0 + mm][j] += av[mm][w] * cur[j][w];
        }
      }
    }
  }
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      float x = acc[m][j];
#pragma unroll
      for (int off = KL / 2; off > 0; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
      acc[m][j] = x;
    }
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < NW; ++j)
      if ((m * NW + j) % KL == lane && m < p.M && n0 + j < p.N) skinny_store(p, v, s, m, n0 + j, acc[m][j]);
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <class K>
float time_it(K launch, int reps = 20) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  launch(); launch(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) { cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end()); return t[reps / 2];
}

template <int MT, int NW, int KC, int MP>
void run(const char* name, GemmProblem p, float* ws, int sms, double cublas_us, bool prod) {
  using Cfg = SkinnyConfig<MT, NW, 1, KC, 8>;
  const int cols = 8 * 4 * NW;
  const int64_t blocks = (p.N + cols - 1) / cols;
  double best = 1e30; int best_s = 0;
  for (int s : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
    if (s > 1 && blocks * s > 2 * sms) break;
    int64_t k_slice = ((p.K + s - 1) / s + 31) / 32 * 32;
    int splits = (p.K + k_slice - 1) / k_slice;
    SkinnySplit sp{k_slice, splits > 1 ? ws : nullptr};
    dim3 grid(blocks, splits, 1);
    size_t smem = 2 * sizeof(float) * MT * KC;
    float us;
    if (prod) {
      auto k = skinny_kmajor_kernel<Cfg, 4, true>;
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      us = time_it([&] { k<<<grid, 256, smem>>>(p, sp); });
    } else {
      auto k = wide_kernel<Cfg, 4, MP>;
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      us = time_it([&] { k<<<grid, 256, smem>>>(p, sp); });
    }
    CK(cudaGetLastError());
    if (us < best) best = us, best_s = splits;
  }
  double ideal = double(MT) * blocks * cols * p.K / (sms * 128.0 * 1.755e3);  // us at peak FMA
  printf("  %-18s %8.1f us (splits %2d)  vs cublas %.2f  FMA eff %.2f\n", name, best, best_s, cublas_us / best, ideal / best);
}

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cublasHandle_t h; cublasCreate(&h);
  struct S { int m, n, k; } shapes[] = {{26, 1885, 12306}, {62, 5673, 738}, {17, 7804, 9772}, {33, 191, 6760},
                                        {50, 794, 532}, {56, 5263, 4639}, {33, 1062, 14196}, {16, 4096, 4096},
                                        {32, 4096, 4096}, {64, 4096, 4096}, {64, 11008, 4096}};
  for (auto sh : shapes) {
    int M = sh.m, N = sh.n, K = sh.k / 4 * 4;
    float *a, *b, *c, *ws;
    CK(cudaMalloc(&a, sizeof(float) * M * K)); CK(cudaMalloc(&b, sizeof(float) * N * K));
    CK(cudaMalloc(&c, sizeof(float) * M * N)); CK(cudaMalloc(&ws, sizeof(float) * M * N * 64));
    cudaMemset(a, 0, sizeof(float) * M * K); cudaMemset(b, 0, sizeof(float) * N * K);
    // C = A (M x K row-major) @ W^T (W: N x K row-major): column-major cuBLAS C^T = W A^T.
    float one = 1, zero = 0;
    double cub = time_it([&] { cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, K, a, K, &zero, c, N); });
    printf("%d x %d x %d NT  cublas %.1f us\n", M, N, K, cub);
    GemmProblem p{};
    p.batch = 1; p.M = M; p.N = N; p.K = K; p.a = a; p.a_rs = K; p.a_cs = 1; p.b = b; p.b_rs = 1; p.b_cs = K;
    p.out = c; p.out_rs = N; p.alpha = 1; p.beta = 0;
    if (M <= 16) { run<16, 4, 1024, 1>("prod 16x4", p, ws, sms, cub, true); }
    else if (M <= 32) {
      run<32, 4, 512, 1>("prod 32x4", p, ws, sms, cub, true);
      run<32, 4, 512, 1>("w-outer mp1 32x4", p, ws, sms, cub, false);
      run<32, 4, 512, 2>("w-outer mp2 32x4", p, ws, sms, cub, false);
      run<32, 2, 512, 2>("w-outer mp2 32x2", p, ws, sms, cub, false);
    } else {
      run<64, 2, 256, 1>("prod 64x2", p, ws, sms, cub, true);
      run<64, 2, 256, 2>("w-outer mp2 64x2", p, ws, sms, cub, false);
      run<64, 2, 256, 4>("w-outer mp4 64x2", p, ws, sms, cub, false);
    }
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(ws);
  }
}
