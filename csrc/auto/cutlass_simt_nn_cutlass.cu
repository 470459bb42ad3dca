// NN: A row-major, B row-major (csrc/auto/cutlass_simt.cuh).
#include "cutlass_simt.cuh"

namespace gemmtiles {
void launch_cutlass_simt_nn(const GemmProblem& p, int rows, int cols, int warps, int64_t splits,
                            cudaStream_t stream) {
  cutlass_simt::launch<true, false>(p, rows, cols, warps, splits, stream);
}
int cutlass_simt_nn_blocks_per_sm(int rows, int cols, int warps) {
  return cutlass_simt::blocks_per_sm<true, false>(rows, cols, warps);
}
void launch_cutlass_tf32_nn(const GemmProblem& p, int64_t splits, cudaStream_t stream) {
  cutlass_simt::launch_tf32<true, false>(p, splits, stream);
}
}  // namespace gemmtiles
