// Argument checks and problem construction shared by every tier on every device.
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>

#include "gemm_problem.h"

namespace gemmtiles {

// How a tier reads its operands.
enum class Operands {
  kStrided,     // any row and column strides, read in place
  kUnitStride,  // each (rows, cols) slice needs one unit stride (row- or column-major);
                // a slice with none is copied to row-major
  kRowMajor,    // each slice needs a unit column stride; others are copied to row-major
  kKMajor,      // K-major A (row-major) and B (column-major) read in place; the tier's own
                // pass repacks other layouts (no copy here)
};

struct PreparedGemm {
  at::Tensor out;       // (M, N) or (batch, M, N), contiguous
  at::Tensor a, b;      // what the problem points into (copies, where made, live here)
  GemmProblem p;
  bool needs_kernel;    // false when out is already final (empty, or K == 0)
};

// Checks the arguments of gemmtiles::<op> as torch.matmul / torch.addmm would, allocates
// the output, and fills the problem. Errors name the op, the argument and what was expected.
PreparedGemm prepare_gemm(const char* op, const at::Tensor& a, const at::Tensor& b,
                          const std::optional<at::Tensor>& c, double alpha, double beta,
                          Operands operands);

}  // namespace gemmtiles
