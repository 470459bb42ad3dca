// The `auto` tier: per call, the kernel that suits the problem (auto_plan.h): the
// bandwidth-bound skinny kernels for up to 32 rows, warptile otherwise.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>

#include "../auto_plan.h"
#include "kernels/10_skinny.cuh"
#include "launch.h"

namespace gemmtiles {
namespace {

template <class Cfg>
void launch_skinny(const GemmProblem& p, const AutoPlan& plan, bool b_kmajor) {
  TORCH_INTERNAL_ASSERT(plan.nw == Cfg::NW && plan.mt == Cfg::MT, "auto_plan and the skinny configuration disagree");
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const int64_t cols = int64_t(Cfg::kWarps) * Cfg::NW * (b_kmajor ? 1 : 32);
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
  if (b_kmajor) {
    skinny_kmajor_kernel<Cfg><<<grid, Cfg::kThreads, 0, stream>>>(p, s);
  } else {
    skinny_nmajor_kernel<Cfg><<<grid, Cfg::kThreads, 0, stream>>>(p, s);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (plan.splits > 1) {
    const int64_t outputs = p.batch * p.M * p.N;
    split_k_reduce_kernel<<<static_cast<unsigned>(ceil_div(outputs, 256)), 256, 0, stream>>>(
        p, plan.splits, s.ws);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

void launch_auto(const GemmProblem& p) {
  // prepare_gemm gave B one unit stride; it is K-major when its column stride is not 1.
  const bool b_kmajor = p.b_cs != 1;
  const AutoPlan plan =
      auto_plan(p.M, p.N, p.K, p.batch, b_kmajor, multiprocessors(c10::cuda::current_device()));
  switch (plan.mt) {
    case 4: return launch_skinny<SkinnyConfig<4, 4>>(p, plan, b_kmajor);
    case 8: return launch_skinny<SkinnyConfig<8, 4>>(p, plan, b_kmajor);
    case 16: return launch_skinny<SkinnyConfig<16, 2>>(p, plan, b_kmajor);
    case 32: return launch_skinny<SkinnyConfig<32, 2, /*MIN_BLOCKS=*/1>>(p, plan, b_kmajor);
    default: return launch_warptile(p);
  }
}
GEMMTILES_CUDA_TIER(auto, Operands::kUnitStride, launch_auto);

}  // namespace
}  // namespace gemmtiles
