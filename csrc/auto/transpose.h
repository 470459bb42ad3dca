// The shape of auto's transposing copy (csrc/auto/transpose.cuh), for the planner and the
// launch alike: which matrices one launch of it takes.
#pragma once

#include <cstdint>

namespace gemmtiles {

// A block moves a kTransposeTile x kTransposeTile tile: 32 x 8 threads, each 16 elements (8
// rows of a, two columns 32 apart) in flight at once.
inline constexpr int kTransposeTile = 64;
inline constexpr int kTransposeRows = 8;

// Grid rows (blockIdx.y) a launch can have: transpose_fits says which matrices one launch takes.
inline constexpr bool transpose_fits(int64_t rows, int64_t cols) {
  return (rows + kTransposeTile - 1) / kTransposeTile <= 65535 &&
         (cols + kTransposeTile - 1) / kTransposeTile <= 0x7fffffff;
}

}  // namespace gemmtiles
