// The barrier flags of auto's CUTLASS launches (zeroed_cutlass_flags in auto/cutlass_simt.h):
// one buffer per device and stream, zeroed once, left zero by every launch.
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "cutlass_simt.h"

namespace gemmtiles {
namespace {

struct StreamFlags {
  c10::DataPtr data;
  size_t bytes = 0;
  // Buffers a larger one replaced, kept (zero, as launches leave them) for the life of the
  // process: another host thread on the same stream may have taken one and not yet queued
  // its launch. Each is at most half the next, so they add at most the current size.
  std::vector<c10::DataPtr> retired;
};
using FlagsKey = std::pair<int, cudaStream_t>;

std::mutex& flags_mutex() {
  static std::mutex m;
  return m;
}
// Never destroyed: at exit the caching allocator may be gone before static destructors run.
std::map<FlagsKey, StreamFlags>& all_flags() {
  static auto* flags = new std::map<FlagsKey, StreamFlags>();
  return *flags;
}

}  // namespace

void* zeroed_cutlass_flags(size_t bytes, cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) return nullptr;
  const int device = c10::cuda::current_device();
  std::lock_guard<std::mutex> lock(flags_mutex());
  StreamFlags& f = all_flags()[{device, stream}];
  if (f.bytes < bytes) {
    const size_t grown = std::max<size_t>({bytes, 2 * f.bytes, 4096});
    if (f.data) f.retired.push_back(std::move(f.data));
    f.data = c10::cuda::CUDACachingAllocator::get()->allocate(grown);
    C10_CUDA_CHECK(cudaMemsetAsync(f.data.get(), 0, grown, stream));
    f.bytes = grown;
  }
  return f.data.get();
}

int64_t cutlass_flags_left_set() {
  std::lock_guard<std::mutex> lock(flags_mutex());
  int64_t set = 0;
  for (const auto& [key, f] : all_flags()) {
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(key.first));
    C10_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> host(f.bytes);
    C10_CUDA_CHECK(cudaMemcpy(host.data(), f.data.get(), f.bytes, cudaMemcpyDeviceToHost));
    set += std::count_if(host.begin(), host.end(), [](unsigned char b) { return b != 0; });
  }
  return set;
}

}  // namespace gemmtiles
