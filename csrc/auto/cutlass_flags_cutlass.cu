// The barrier flags of auto's CUTLASS launches (zeroed_cutlass_flags in auto/cutlass_simt.h):
// one buffer per device and stream, zeroed once, left zero by every launch (core/kept_flags.h).
#include <cstdint>

#include "../core/kept_flags.h"
#include "cutlass_simt.h"

namespace gemmtiles {
namespace {

// Never destroyed: at exit the caching allocator may be gone before static destructors run.
KeptFlags& cutlass_flags() {
  static auto* flags = new KeptFlags(4096, SIZE_MAX);
  return *flags;
}

}  // namespace

void* zeroed_cutlass_flags(size_t bytes, cudaStream_t stream) { return cutlass_flags().get(bytes, 0, stream); }

int64_t cutlass_flags_left_set() { return cutlass_flags().left_set(); }

}  // namespace gemmtiles
