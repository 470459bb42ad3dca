// Barrier flags that stay zero between launches: one buffer per device and stream, its flags
// zeroed on the stream once, when it is made, and left zero by every launch that uses them (the
// block that finishes a shared tile resets the flag its peers counted up), so that the next
// launch on the stream needs no memset. A buffer may hold scratch before its flags, for
// launches whose workspace lays partial tiles just before the flags (CUTLASS's SM90 stream-K:
// tensor_core/stream_k_locks.cuh). auto's CUTLASS SIMT launches (zeroed_cutlass_flags) and
// tf32's stream-K launches each keep one of these.
//
// While a stream captures a graph, whose replays may run beside the stream's later launches,
// there is none: the caller zeroes a workspace of its own then. Buffers live as long as the
// process (at exit the caching allocator may be gone before static destructors run;
// torch.cuda.empty_cache leaves them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

namespace gemmtiles {

class KeptFlags {
 public:
  // A buffer grows to the bytes asked, and at least to twice what it held up to `cap` and to
  // `floor` (scratch and flags alike).
  KeptFlags(size_t floor, size_t cap) : floor_(floor), cap_(cap) {}

  // Where `flags` bytes of zero flags start on `stream`, with at least `scratch` bytes of
  // scratch before them in the same buffer; nullptr while the stream captures a graph.
  void* get(size_t flags, size_t scratch, cudaStream_t stream) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    if (capture != cudaStreamCaptureStatusNone) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    Buffer& b = buffers_[{c10::cuda::current_device(), stream}];
    if (b.flags < flags || b.scratch < scratch) {
      // The new buffer replaces the old only once its flags are zeroed, so that an allocation
      // or a memset that throws leaves the old one in place.
      Buffer grown{{}, grown_to(scratch, b.scratch), grown_to(flags, b.flags)};
      grown.data = c10::cuda::CUDACachingAllocator::get()->allocate(grown.scratch + grown.flags);
      C10_CUDA_CHECK(cudaMemsetAsync(grown.flags_start(), 0, grown.flags, stream));
      // The buffer replaced stays (its flags zero, as launches leave them): another host
      // thread on the same stream may have taken it and not yet queued its launch.
      if (b.data) retired_.push_back(std::move(b));
      b = std::move(grown);
    }
    return b.flags_start();
  }

  // The bytes of every buffer's flags that are not zero, once the devices finish their work:
  // 0 unless a launch failed to reset them. For the tests.
  int64_t left_set() {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t set = 0;
    const auto count = [&set](const Buffer& b) {
      std::vector<unsigned char> host(b.flags);
      C10_CUDA_CHECK(cudaMemcpy(host.data(), b.flags_start(), b.flags, cudaMemcpyDeviceToHost));
      set += std::count_if(host.begin(), host.end(), [](unsigned char x) { return x != 0; });
    };
    for (const auto& [key, b] : buffers_) {
      const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(key.first));
      C10_CUDA_CHECK(cudaDeviceSynchronize());
      if (b.data) count(b);
    }
    for (const Buffer& b : retired_) {
      const c10::cuda::CUDAGuard guard(b.data.device());
      C10_CUDA_CHECK(cudaDeviceSynchronize());
      count(b);
    }
    return set;
  }

 private:
  struct Buffer {
    c10::DataPtr data;
    size_t scratch = 0, flags = 0;  // bytes: the scratch, then the flags
    char* flags_start() const { return static_cast<char*>(data.get()) + scratch; }
  };
  size_t grown_to(size_t asked, size_t held) const {
    if (asked == 0 && held == 0) return 0;
    return std::max<size_t>({asked, std::min<size_t>(2 * held, cap_), floor_});
  }

  const size_t floor_, cap_;
  std::mutex mutex_;
  std::map<std::pair<int, cudaStream_t>, Buffer> buffers_;
  std::vector<Buffer> retired_;
};

}  // namespace gemmtiles
