// Host side of the CUDA tiers: grid construction and the launch of one tier's kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "gemm_problem.h"
#include "prepare.h"
#include "register.h"

namespace gemmtiles {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

using Kernel = void (*)(GemmProblem);

// Launches `kernel` over BM x BN tiles of C on the current stream: blockIdx.x walks the N
// tiles, blockIdx.y the M tiles, blockIdx.z the batch. gridDim.y and gridDim.z stop at
// 65535, so larger M and batches go out in several launches, each with its pointers moved
// to its first row and batch entry (row offsets are multiples of BM, which keeps the float4
// paths aligned).
inline void launch_tiles(const GemmProblem& p, Kernel kernel, int BM, int BN, dim3 block,
                         const char* op, size_t smem_bytes = 0) {
  constexpr int64_t kMaxGridYZ = 65535;
  const int64_t n_tiles = ceil_div(p.N, BN);
  TORCH_CHECK(n_tiles <= INT32_MAX, "gemmtiles::", op, ": N = ", std::to_string(p.N),
              " is too large");
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  if (smem_bytes > 48 * 1024) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem_bytes)));
  }
  for (int64_t z0 = 0; z0 < p.batch; z0 += kMaxGridYZ) {
    for (int64_t m0 = 0; m0 < p.M; m0 += kMaxGridYZ * BM) {
      GemmProblem q = p;
      q.batch = std::min(kMaxGridYZ, p.batch - z0);
      q.M = std::min(kMaxGridYZ * BM, p.M - m0);
      q.a += z0 * p.a_bs + m0 * p.a_rs;
      q.b += z0 * p.b_bs;
      if (q.c) q.c += z0 * p.c_bs + m0 * p.c_rs;
      q.out += z0 * p.out_bs + m0 * p.out_rs;
      const dim3 grid(static_cast<unsigned>(n_tiles), static_cast<unsigned>(ceil_div(q.M, BM)),
                      static_cast<unsigned>(q.batch));
      kernel<<<grid, block, smem_bytes, stream>>>(q);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  }
}

template <typename Tier>
void launch_tier(const GemmProblem& p, Kernel kernel, const char* op) {
  launch_tiles(p, kernel, Tier::BM, Tier::BN, Tier::block(), op);
}

// Compute capability of `device` as major * 10 + minor, its number of SMs, its name and its
// clocks, read once per device.
struct DeviceClocks {
  int sm_khz, dram_khz, dram_bus_bits;  // the SM clock; DRAM's clock and bus width
};
int compute_capability(c10::DeviceIndex device);
int multiprocessors(c10::DeviceIndex device);
const std::string& gpu_name(c10::DeviceIndex device);
const DeviceClocks& device_clocks(c10::DeviceIndex device);

// warptile.cu: the warptile tier, also one of auto's kernels.
void launch_warptile(const GemmProblem& p);
// ladder/dispatch.cu: the thread_tile tier (any strides), also tf32x3's kernel at shallow K.
void launch_thread_tile(const GemmProblem& p);

// The op body of every CUDA tier: checks and problem first (they raise before any work),
// then the launch under a guard of the inputs' device.
at::Tensor run_cuda_tier(const char* name, Operands operands, int min_sm,
                         void (*launch)(const GemmProblem&), const at::Tensor& a,
                         const at::Tensor& b, const std::optional<at::Tensor>& c, double alpha,
                         double beta);

}  // namespace gemmtiles

// Registers a CUDA tier (core/register.h) whose kernel `launch` runs on GPUs of compute
// capability min_sm and up, reading the operand layouts `operands` in place.
#define GEMMTILES_CUDA_TIER_MIN_SM(name, operands, min_sm, launch)                        \
  GEMMTILES_TIER_MIN_SM(name, CUDA, operands, min_sm,                                    \
                        ([](const at::Tensor& a, const at::Tensor& b,                    \
                            const std::optional<at::Tensor>& c, double alpha,            \
                            double beta) {                                               \
                          return ::gemmtiles::run_cuda_tier(#name, ::gemmtiles::operands, \
                                                            min_sm, launch, a, b, c,     \
                                                            alpha, beta);                \
                        }))

#define GEMMTILES_CUDA_TIER(name, operands, launch) \
  GEMMTILES_CUDA_TIER_MIN_SM(name, operands, 0, launch)
