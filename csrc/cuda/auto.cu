// The `auto` tier: per call, the kernel that suits the problem (auto_plan.h): the
// bandwidth-bound skinny kernels for up to 32 rows, warptile otherwise — or, where
// torch.set_float32_matmul_precision allows it, the tensor-core tiers on Hopper.
#include <cstdint>
#include <string>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>

#include <ATen/Context.h>

#include "../auto_plan.h"
#include "tensor_core.h"
#include "kernels/10_skinny.cuh"
#include "launch.h"

namespace gemmtiles {
namespace {

using SkinnyKernel = void (*)(GemmProblem, SkinnySplit);

template <class Cfg>
void launch_skinny(const GemmProblem& p, const AutoPlan& plan, SkinnyKernel kernel) {
  TORCH_INTERNAL_ASSERT(plan.nw == Cfg::NW && plan.mt == Cfg::MT,
                        "auto_plan and the skinny configuration disagree");
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const bool kmajor = plan.kernel == AutoKernel::kSkinnyKMajor;
  const int64_t cols = int64_t(Cfg::kWarps) * Cfg::NW * (kmajor ? 1 : 32 * plan.w);
  const dim3 grid(static_cast<unsigned>(ceil_div(p.N, cols)), static_cast<unsigned>(plan.splits),
                  static_cast<unsigned>(p.batch));
  at::Tensor ws;
  SkinnySplit s{plan.k_slice, nullptr};
  if (plan.splits > 1) {
    // From the caching allocator, on this stream: freed when this call returns, reused only
    // by work queued after the reduction.
    ws = at::empty({plan.splits * p.batch * p.M * p.N},
                   at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, c10::cuda::current_device()));
    s.ws = ws.data_ptr<float>();
  }
  kernel<<<grid, Cfg::kThreads, 0, stream>>>(p, s);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (plan.splits > 1) {
    const int64_t outputs = p.batch * p.M * p.N;
    split_k_reduce_kernel<<<static_cast<unsigned>(ceil_div(outputs, 256)), 256, 0, stream>>>(
        p, plan.splits, s.ws);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

// The skinny configurations for MT rows (auto_plan.h chooses NW the same way): column-major
// B, NW columns per warp; row-major B, one float4 group per lane, or NW single columns.
template <int MT>
void launch_rows(const GemmProblem& p, const AutoPlan& plan) {
  constexpr int kMinBlocks = MT == 32 ? 1 : 2;
  if (plan.kernel == AutoKernel::kSkinnyKMajor) {
    // Longer staged slices of A for fewer rows: fewer barriers between a warp's loads.
    using Cfg = SkinnyConfig<MT, (MT <= 8 ? 4 : 2), kMinBlocks, (MT <= 4 ? 1024 : 256)>;
    launch_skinny<Cfg>(p, plan, plan.w == 4 ? skinny_kmajor_kernel<Cfg, 4> : skinny_kmajor_kernel<Cfg, 1>);
  } else if (plan.w == 4) {
    using Cfg = SkinnyConfig<MT, 1, kMinBlocks>;
    launch_skinny<Cfg>(p, plan, skinny_nmajor_kernel<Cfg, 4>);
  } else {
    using Cfg = SkinnyConfig<MT, (MT <= 8 ? 4 : 1), kMinBlocks>;
    launch_skinny<Cfg>(p, plan, skinny_nmajor_kernel<Cfg, 1>);
  }
}

// The precision PyTorch allows for fp32 matmuls (torch.set_float32_matmul_precision):
// "highest", its default, keeps auto on the exact fp32 kernels; "high" lets large problems
// run on tf32x3 (fp32-class error on the tensor cores), "medium" on tf32. Small M stays on
// the skinny kernels, exact and bandwidth-bound either way.
bool launch_tensor_core(const GemmProblem& p) {
#if GEMMTILES_SM90A
  const at::Float32MatmulPrecision precision = at::globalContext().float32MatmulPrecision();
  if (precision == at::Float32MatmulPrecision::HIGHEST) return false;
  if (p.M * p.N * p.K * p.batch < (int64_t(1) << 27)) return false;
  if (compute_capability(c10::cuda::current_device()) != 90) return false;
  if (precision == at::Float32MatmulPrecision::MEDIUM) {
    launch_tf32_sm90a(p);
  } else {
    launch_tf32x3_sm90a(p);
  }
  return true;
#else
  (void)p;
  return false;
#endif
}

void launch_auto(const GemmProblem& p) {
  // prepare_gemm gave B one unit stride; it is K-major when its column stride is not 1.
  const bool b_kmajor = p.b_cs != 1;
  const int64_t ld = b_kmajor ? p.b_cs : p.b_rs;
  const bool b_vec = (reinterpret_cast<uintptr_t>(p.b) & 15) == 0 && ld % 4 == 0 && p.b_bs % 4 == 0;
  const AutoPlan plan = auto_plan(p.M, p.N, p.K, p.batch, b_kmajor, b_vec,
                                  multiprocessors(c10::cuda::current_device()));
  switch (plan.mt) {
    case 4: return launch_rows<4>(p, plan);
    case 8: return launch_rows<8>(p, plan);
    case 16: return launch_rows<16>(p, plan);
    case 32: return launch_rows<32>(p, plan);
    default:
      if (!launch_tensor_core(p)) launch_warptile(p);
      return;
  }
}
GEMMTILES_CUDA_TIER(auto, Operands::kUnitStride, launch_auto);

}  // namespace
}  // namespace gemmtiles
