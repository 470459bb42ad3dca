// The op body shared by the CUDA tiers (launch.h).
#include <mutex>
#include <string>
#include <vector>

#include <c10/cuda/CUDAFunctions.h>

#include "launch.h"

namespace gemmtiles {

namespace {

struct DeviceFacts {
  int cc, sms;
  std::string name;
  DeviceClocks clocks;
};

// 0 where the device does not say: auto's models then keep their fitted GPU's clocks.
int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, what, device) != cudaSuccess) {
    cudaGetLastError();
    value = 0;
  }
  return value;
}

const DeviceFacts& facts(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<DeviceFacts> all;
  std::call_once(once, [] {
    all.resize(c10::cuda::device_count());
    for (size_t d = 0; d < all.size(); ++d) {
      cudaDeviceProp prop;
      C10_CUDA_CHECK(cudaGetDeviceProperties(&prop, static_cast<int>(d)));
      const int device = static_cast<int>(d);
      all[d] = {prop.major * 10 + prop.minor, prop.multiProcessorCount, prop.name,
                {attribute(cudaDevAttrClockRate, device), attribute(cudaDevAttrMemoryClockRate, device),
                 attribute(cudaDevAttrGlobalMemoryBusWidth, device)}};
    }
  });
  return all.at(static_cast<size_t>(device));
}

}  // namespace

int compute_capability(c10::DeviceIndex device) { return facts(device).cc; }
int multiprocessors(c10::DeviceIndex device) { return facts(device).sms; }
const std::string& gpu_name(c10::DeviceIndex device) { return facts(device).name; }
const DeviceClocks& device_clocks(c10::DeviceIndex device) { return facts(device).clocks; }

at::Tensor run_cuda_tier(const char* name, Operands operands, int min_sm,
                         void (*launch)(const GemmProblem&), const at::Tensor& a,
                         const at::Tensor& b, const std::optional<at::Tensor>& c, double alpha,
                         double beta) {
  TORCH_CHECK(a.is_cuda(), "gemmtiles::", name, ": expected all tensors on one device, got a on ",
              a.device().str(), " and b on ", b.device().str());
  if (min_sm > 0) {
    const int cc = compute_capability(a.device().index());
    TORCH_CHECK(cc >= min_sm, "gemmtiles::", name, ": tier '", name,
                "' needs a GPU of compute capability ", std::to_string(min_sm / 10), ".",
                std::to_string(min_sm % 10), " or newer, got ", std::to_string(cc / 10), ".",
                std::to_string(cc % 10), " on ", a.device().str());
  }
  const c10::cuda::CUDAGuard guard(a.device());
  PreparedGemm g = prepare_gemm(name, a, b, c, alpha, beta, operands);
  if (g.needs_kernel) launch(g.p);
  return g.out;
}

}  // namespace gemmtiles
