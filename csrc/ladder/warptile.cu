// Launch of the warptile tier: the configuration for the problem size, and the kernel for
// the operands' layouts.
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include "configs.h"
#include "../core/launch.h"

namespace gemmtiles {
namespace {

template <typename Cfg>
void launch_config(const GemmProblem& p) {
  // prepare_gemm gave each operand one unit stride: A is K-major (row-major) when its column
  // stride is 1, B is K-major (column-major) when its column stride is not.
  const bool a_kmajor = p.a_cs == 1, b_kmajor = p.b_cs != 1;
  Kernel kernel = a_kmajor ? (b_kmajor ? warptile_kernel<Cfg, true, true>
                                       : warptile_kernel<Cfg, true, false>)
                           : (b_kmajor ? warptile_kernel<Cfg, false, true>
                                       : warptile_kernel<Cfg, false, false>);
  launch_tiles(p, kernel, Cfg::BM, Cfg::BN, Cfg::block(), "warptile", Cfg::kSmemBytes);
}

}  // namespace

void launch_warptile(const GemmProblem& p) {
  // Waves of blocks each configuration needs, weighed by how long a wave takes, in units of
  // one small tile's work: a large block (one per SM) does two units about 9% faster than
  // two small blocks sharing an SM (measured at 4096^3: docs/ladder.md), and a small block
  // with an SM to itself takes about 1.2 units. Small tiles win when they fill SMs the large
  // ones leave idle.
  const int64_t sms = multiprocessors(c10::cuda::current_device());
  const int64_t large_tiles =
      ceil_div(p.M, WarptileLarge::BM) * ceil_div(p.N, WarptileLarge::BN) * p.batch;
  const int64_t small_tiles =
      ceil_div(p.M, WarptileSmall::BM) * ceil_div(p.N, WarptileSmall::BN) * p.batch;
  const double large_time = ceil_div(large_tiles, sms) * 2.0 / 1.09;
  const double small_time = small_tiles <= sms ? 1.2 : ceil_div(small_tiles, 2 * sms) * 2.0;
  if (large_time <= small_time) {
    launch_config<WarptileLarge>(p);
  } else {
    launch_config<WarptileSmall>(p);
  }
}
// Row- and column-major operands are read in place.
GEMMTILES_CUDA_TIER(warptile, Operands::kUnitStride, launch_warptile);

}  // namespace gemmtiles
