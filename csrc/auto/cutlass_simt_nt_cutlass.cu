// NT: A row-major, B column-major (csrc/auto/cutlass_simt.cuh).
#include "cutlass_simt.cuh"

namespace gemmtiles {
void launch_cutlass_simt_nt(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream) {
  cutlass_simt::launch<true, true>(p, rows, cols, warps, splits, stream);
}
int cutlass_simt_nt_blocks_per_sm(int rows, int cols, int warps) {
  return cutlass_simt::blocks_per_sm<true, true>(rows, cols, warps);
}
}  // namespace gemmtiles
