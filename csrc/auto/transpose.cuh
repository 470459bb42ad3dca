// The `auto` tier's transposing copy: t = a^T for a rows x cols matrix, through a shared-memory
// tile so that both the reads (along a's rows) and the writes (along t's rows) are coalesced.
// auto.cu runs it to copy a K-major operand into the layout a kernel reads fastest: A
// M-major and B N-major for CUTLASS's SIMT kernels (whose copies of a K-major operand into
// shared memory transpose it a float at a time), A M-major for the pipelined tile (16-byte
// copies; auto/pipelined_tile.cuh), and a column-major A K-major for the split-K tiles.
// Torch-free, like the other kernels.
#pragma once

#include <cstdint>

#include "transpose.h"

namespace gemmtiles {

// t[z * t_bs + c * ldt + r] = a[z * a_bs + r * lda + c] for r < rows, c < cols; blockIdx.x
// runs along cols, blockIdx.y along rows, blockIdx.z along the batch; kTransposeTile x
// kTransposeTile tiles (transpose.h). The shared tile's rows are padded by one float, so that
// the column reads hit 32 distinct banks.
__global__ void __launch_bounds__(32 * kTransposeRows) transpose_kernel(const float* __restrict__ a, int64_t rows,
                                                                        int64_t cols, int64_t lda, int64_t a_bs,
                                                                        float* __restrict__ t, int64_t ldt,
                                                                        int64_t t_bs) {
  constexpr int T = kTransposeTile, R = kTransposeRows;
  __shared__ float tile[T][T + 1];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  a += int64_t(blockIdx.z) * a_bs;
  t += int64_t(blockIdx.z) * t_bs;
  const int64_t r0 = int64_t(blockIdx.y) * T, c0 = int64_t(blockIdx.x) * T;
#pragma unroll
  for (int i = 0; i < T; i += R)
#pragma unroll
    for (int j = 0; j < T; j += 32) {
      const int64_t r = r0 + ty + i, c = c0 + tx + j;
      if (r < rows && c < cols) tile[ty + i][tx + j] = a[r * lda + c];
    }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < T; i += R)
#pragma unroll
    for (int j = 0; j < T; j += 32) {
      const int64_t c = c0 + ty + i, r = r0 + tx + j;
      if (r < rows && c < cols) t[c * ldt + r] = tile[tx + j][ty + i];
    }
}

// batch (at most 65535) matrices, a_bs and t_bs floats apart.
inline void launch_transpose(const float* a, int64_t rows, int64_t cols, int64_t lda, float* t, int64_t ldt,
                             cudaStream_t stream, int64_t batch = 1, int64_t a_bs = 0, int64_t t_bs = 0) {
  const dim3 grid(static_cast<unsigned>((cols + kTransposeTile - 1) / kTransposeTile),
                  static_cast<unsigned>((rows + kTransposeTile - 1) / kTransposeTile), static_cast<unsigned>(batch));
  transpose_kernel<<<grid, 32 * kTransposeRows, 0, stream>>>(a, rows, cols, lda, a_bs, t, ldt, t_bs);
}

}  // namespace gemmtiles
