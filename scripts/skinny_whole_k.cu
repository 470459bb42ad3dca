// The row-major-B skinny kernel's builds launched alone, K whole in one block along K (its 8
// warps' slices), for ncu or a plain timing: the 16-row build on single floats (registers) and
// on float4s (the ring, where N is a multiple of 4), and the 8-row single floats where M <= 8.
// docs/auto.md ("A skinny block's end") profiles 16 x 2984 x 1338 with it.
//   nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG scripts/skinny_whole_k.cu \
//     -o skinny_whole_k -lcublas && ./skinny_whole_k M N K
//   ncu --kernel-name regex:skinny_nmajor_async --launch-skip 3 --launch-count 1 ./skinny_whole_k 16 2984 1338
#include <cstdio>
#include <cstdlib>
#include "../csrc/auto/launch.cuh"
#include "harness.cuh"
using namespace gemmtiles;
template <class K>
void run(const char* name, K kernel, size_t smem, int w, const GemmProblem& p) {
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int64_t cols = 32 * w, k_slice = ((p.K + 7) / 8 + 15) / 16 * 16;
  const dim3 grid(unsigned((p.N + cols - 1) / cols), 1, 1);
  const SkinnySplit sp{k_slice, nullptr};
  const double us = 1000 * median_ms([&] { kernel<<<grid, 256, smem>>>(p, sp); }, 15, 100000);
  CHECK(cudaGetLastError());
  std::printf("%s %ldx%ldx%ld grid %u: %.2f us\n", name, p.M, p.N, p.K, grid.x, us);
}
int main(int argc, char** argv) {
  const int64_t M = std::atoll(argv[1]), N = std::atoll(argv[2]), K = std::atoll(argv[3]);
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, sizeof(float) * M * K)); CHECK(cudaMalloc(&b, sizeof(float) * K * N));
  CHECK(cudaMalloc(&c, sizeof(float) * M * N));
  upload_uniform(a, M * K);
  upload_uniform(b, K * N);
  GemmProblem p{};
  p.batch = 1; p.M = M; p.N = N; p.K = K; p.a = a; p.a_rs = K; p.a_cs = 1;
  p.b = b; p.b_rs = N; p.b_cs = 1; p.out = c; p.out_rs = N; p.out_cs = 1; p.alpha = 1; p.beta = 0;
  run("single16", skinny_nmajor_split_kernel<16, 8, 1>, skinny_split_smem<16, 1>(), 1, p);
  if (N % 4 == 0)
    run("ring16", skinny_nmajor_async_kernel<16, skinny_async_stages<16>()>,
        skinny_async_smem<16, skinny_async_stages<16>()>(), 4, p);
  if (M <= 8) run("single8", skinny_nmajor_split_kernel<8, 16, 1>, skinny_split_smem<8, 1>(), 1, p);
}
