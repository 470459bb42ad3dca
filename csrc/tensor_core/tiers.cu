// Registration of the tensor-core tiers. The kernels (wgmma_sm90a.cu) exist only in
// builds whose arch list holds Hopper; elsewhere the ops are still defined (their schemas,
// fakes and autograd work on every build) and say what they need.
#include <string>

#include <c10/cuda/CUDAFunctions.h>

#include "../core/launch.h"
#include "tensor_core.h"

#ifndef GEMMTILES_SM90A
#define GEMMTILES_SM90A 0
#endif

namespace gemmtiles {
namespace {

// sm_90a code (wgmma, setmaxnreg, TMA multicast) runs on compute capability 9.0 only:
// the "a" features are not carried forward to later architectures.
void check_sm90a(const char* tier) {
  const int cc = compute_capability(c10::cuda::current_device());
  TORCH_CHECK(GEMMTILES_SM90A, "gemmtiles::", tier, ": this build of gemmtiles has no sm_90a kernels; ",
              "rebuild with TORCH_CUDA_ARCH_LIST including 9.0 or 9.0a and CUTLASS's headers installed ",
              "(python -m pip install --no-deps nvidia-cutlass)");
  TORCH_CHECK(cc == 90, "gemmtiles::", tier, ": tier '", tier,
              "' runs on Hopper GPUs (compute capability 9.0: wgmma, TMA), got ",
              std::to_string(cc / 10), ".", std::to_string(cc % 10));
}

void launch_tf32(const GemmProblem& p) {
  check_sm90a("tf32");
#if GEMMTILES_SM90A
  launch_tf32_sm90a(p);
#endif
}

void launch_tf32x3(const GemmProblem& p) {
  check_sm90a("tf32x3");
#if GEMMTILES_SM90A
  launch_tf32x3_sm90a(p);
#endif
}

}  // namespace

// tf32 reads K-major operands in place (TF32 wgmma reads K-major shared memory only) and
// repacks the others; tf32x3's split pass reads any strides.
GEMMTILES_CUDA_TIER_MIN_SM(tf32, Operands::kKMajor, 90, launch_tf32);
GEMMTILES_CUDA_TIER_MIN_SM(tf32x3, Operands::kStrided, 90, launch_tf32x3);

}  // namespace gemmtiles
