// What differs between the GPUs the ladder kernels compile for: NVIDIA (CUDA) and AMD CDNA
// (HIP, e.g. the MI100, gfx908). The kernels use these names instead of the vendor's.
//  * kWarpSize: threads that run in lockstep, 32 on NVIDIA, 64 on CDNA (a wavefront); the
//    warp-tiling math of warptile and the column count of coalesced derive from it.
//  * GEMMTILES_LAUNCH_BOUNDS(threads, min_blocks): CUDA's __launch_bounds__; HIP reads the
//    second argument as waves per execution unit, not blocks per SM, so it gets the first
//    only. min_blocks 0 leaves the register budget to the compiler.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif

namespace gemmtiles {

#if defined(__HIPCC__) && defined(__HIP_PLATFORM_AMD__)
inline constexpr int kWarpSize = 64;
#define GEMMTILES_LAUNCH_BOUNDS(threads, min_blocks) __launch_bounds__(threads)
#else
inline constexpr int kWarpSize = 32;
#define GEMMTILES_LAUNCH_BOUNDS(threads, min_blocks) __launch_bounds__(threads, min_blocks)
#endif

}  // namespace gemmtiles
