// TN: A column-major, B row-major (csrc/auto/cutlass_simt.cuh).
#include "cutlass_simt.cuh"

namespace gemmtiles {
void launch_cutlass_simt_tn(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream) {
  cutlass_simt::launch<false, false>(p, rows, cols, warps, splits, stream);
}
int cutlass_simt_tn_blocks_per_sm(int rows, int cols, int warps) {
  return cutlass_simt::blocks_per_sm<false, false>(rows, cols, warps);
}
}  // namespace gemmtiles
