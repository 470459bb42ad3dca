// Every ladder tier's kernels, instantiated with the configurations the extension launches
// (csrc/ladder/configs.h), for a HIP compile check: scripts/hip_check.sh builds this for AMD
// CDNA GPUs and reports each kernel's registers, LDS and occupancy. Nothing here runs.
#include "../csrc/ladder/configs.h"

namespace gemmtiles {

template __global__ void naive_kernel<Naive>(GemmProblem);
template __global__ void coalesced_kernel<Coalesced>(GemmProblem);
template __global__ void smem_kernel<Smem>(GemmProblem);
template __global__ void unroll_kernel<Unroll>(GemmProblem);
template __global__ void thread_tile_kernel<Tiles128>(GemmProblem);
template __global__ void vectorized_kernel<Tiles128>(GemmProblem);
template __global__ void bank_free_kernel<Tiles128>(GemmProblem);
template __global__ void double_buffer_kernel<Tiles128TwoBlocks>(GemmProblem);
// warptile: both configurations, every operand layout (A, B row- or column-major).
template __global__ void warptile_kernel<WarptileLarge, true, true>(GemmProblem);
template __global__ void warptile_kernel<WarptileLarge, true, false>(GemmProblem);
template __global__ void warptile_kernel<WarptileLarge, false, true>(GemmProblem);
template __global__ void warptile_kernel<WarptileLarge, false, false>(GemmProblem);
template __global__ void warptile_kernel<WarptileSmall, true, true>(GemmProblem);
template __global__ void warptile_kernel<WarptileSmall, true, false>(GemmProblem);
template __global__ void warptile_kernel<WarptileSmall, false, true>(GemmProblem);
template __global__ void warptile_kernel<WarptileSmall, false, false>(GemmProblem);

}  // namespace gemmtiles
