// TT: A column-major, B column-major (csrc/auto/cutlass_simt.cuh).
#include "cutlass_simt.cuh"

namespace gemmtiles {
void launch_cutlass_simt_tt(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream) {
  cutlass_simt::launch<false, true>(p, rows, cols, warps, splits, stream);
}
int cutlass_simt_tt_blocks_per_sm(int rows, int cols, int warps) {
  return cutlass_simt::blocks_per_sm<false, true>(rows, cols, warps);
}
}  // namespace gemmtiles
