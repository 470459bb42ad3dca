#include "prepare.h"

#include <algorithm>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace gemmtiles {
namespace {

// Error messages are assembled here as std::string (std::to_string for numbers) and handed
// to TORCH_CHECK as strings: on the GPU machine (torch 2.11, extension built there) formatting
// an integer through an ostream inside TORCH_CHECK crashed the process, strings never did.
std::string join(at::IntArrayRef sizes, const char* sep) {
  std::string s;
  for (size_t d = 0; d < sizes.size(); ++d) s += (d ? sep : "") + std::to_string(sizes[d]);
  return s;
}

std::string shape_str(const at::Tensor& t) { return join(t.sizes(), "x"); }

std::string shape_list(at::IntArrayRef sizes) { return "[" + join(sizes, ", ") + "]"; }

// torch's Python name of a dtype ("float16", not c10's "Half"), as the Python checks print it.
std::string dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    case at::kShort: return "int16";
    case at::kChar: return "int8";
    case at::kByte: return "uint8";
    case at::kBool: return "bool";
    default: return c10::toString(t);
  }
}

void check_operand(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.dim() == 2 || t.dim() == 3, "gemmtiles::", op, ": expected ", name,
                    " to be 2-D or 3-D, got ", std::to_string(t.dim()), "-D (shape ", shape_list(t.sizes()), ")");
  TORCH_CHECK_TYPE(t.scalar_type() == at::kFloat, "gemmtiles::", op, ": expected ", name,
                   " to be float32, got ", dtype_name(t.scalar_type()));
}

int64_t round_up4(int64_t x) { return (x + 3) / 4 * 4; }

// d (rows x cols, row-major) = s (column-major, column stride cs), in 16 x 16 tiles that stay
// in L1; compiled for the widest vector unit the running CPU has, as the CPU tiers are
// (64 x 64: 1.3 us against 2.7 for the baseline x86-64 build, on this project's CI CPU).
__attribute__((target_clones("avx512f", "arch=haswell", "default"))) void transpose_tiles(
    const float* s, float* d, int64_t rows, int64_t cols, int64_t cs) {
  constexpr int64_t kTile = 16;
  for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
      const int64_t i1 = std::min(i0 + kTile, rows), j1 = std::min(j0 + kTile, cols);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) d[i * cols + j] = s[i + j * cs];
    }
  }
}

// t (2-D or 3-D float) as a contiguous row-major copy. A CPU matrix stored column-major
// (nn.Linear's W^T, a transposed A) is copied by 16 x 16 tiles (transpose_tiles): about 1.3 us
// for 64 x 64 on a 2-core machine, against 4 us through Tensor.contiguous(); anything else
// goes through that.
at::Tensor row_major(const at::Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1), cs = t.stride(-1);
  const bool column_major = t.device().is_cpu() && t.stride(-2) == 1 && cols > 1 && cs >= rows &&
                            (t.dim() == 2 || t.stride(0) >= cols * cs);
  if (!column_major) return t.contiguous();
  at::Tensor out = at::empty(t.sizes(), t.options());
  const int64_t batch = t.dim() == 3 ? t.size(0) : 1, bs = t.dim() == 3 ? t.stride(0) : 0;
  const float* src = t.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t z = 0; z < batch; ++z) transpose_tiles(src + z * bs, dst + z * rows * cols, rows, cols, cs);
  return out;
}

struct Slice {
  at::Tensor t;
  int64_t bs, rs, cs;
};

// Strides of one operand as the kernels read it. A stride of a size-1 dimension is never
// multiplied by a non-zero index, so it is chosen freely: as a leading dimension that keeps
// the float4 paths aligned.
Slice slice_of(at::Tensor t, Operands operands) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  int64_t rs = t.stride(-2), cs = t.stride(-1);
  if (operands == Operands::kRowMajor) {
    if (cols == 1) {
      cs = 1;
      if (rows == 1) rs = 4;
    } else if (rows == 1 && cs == 1) {
      rs = round_up4(cols);
    } else if (cs != 1) {
      t = row_major(t);
      rs = cols;
      cs = 1;
    }
  } else if (operands == Operands::kUnitStride) {
    if (rows == 1 && cs == 1) {
      rs = round_up4(cols);
    } else if (rows == 1) {
      rs = 1;
    } else if (cols == 1 && rs == 1) {
      cs = round_up4(rows);
    } else if (cols == 1) {
      cs = 1;
    } else if (cs != 1 && rs != 1) {
      t = t.contiguous();
      rs = cols;
      cs = 1;
    }
  }
  const int64_t bs = (t.dim() == 3 && t.size(0) != 1) ? t.stride(0) : 0;
  return {t, bs, rs, cs};
}

}  // namespace

PreparedGemm prepare_gemm(const char* op, const at::Tensor& a, const at::Tensor& b,
                          const std::optional<at::Tensor>& c, double alpha, double beta,
                          Operands operands) {
  check_operand(op, "a", a);
  check_operand(op, "b", b);
  TORCH_CHECK(a.device() == b.device(), "gemmtiles::", op,
              ": expected all tensors on one device, got a on ", a.device().str(),
              " and b on ", b.device().str());
  TORCH_CHECK_VALUE(a.size(-1) == b.size(-2), "gemmtiles::", op,
                    ": shapes cannot be multiplied (", shape_str(a), " and ", shape_str(b),
                    ")");
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  const int64_t a_batch = a.dim() == 3 ? a.size(0) : 1;
  const int64_t b_batch = b.dim() == 3 ? b.size(0) : 1;
  TORCH_CHECK_VALUE(a_batch == b_batch || a_batch == 1 || b_batch == 1, "gemmtiles::", op,
                    ": batch sizes of a and b cannot be broadcast (", shape_str(a), " and ",
                    shape_str(b), ")");
  const int64_t batch = std::max(a_batch, b_batch);
  const bool batched = a.dim() == 3 || b.dim() == 3;
  std::vector<int64_t> out_shape = batched ? std::vector<int64_t>{batch, M, N}
                                           : std::vector<int64_t>{M, N};

  if (c.has_value()) {
    const at::Tensor& ct = *c;
    TORCH_CHECK_TYPE(ct.scalar_type() == at::kFloat, "gemmtiles::", op,
                     ": expected c to be float32, got ", dtype_name(ct.scalar_type()));
    TORCH_CHECK(ct.device() == a.device(), "gemmtiles::", op,
                ": expected all tensors on one device, got a on ", a.device().str(),
                " and c on ", ct.device().str());
    bool ok = ct.dim() <= static_cast<int64_t>(out_shape.size());
    for (int64_t d = 1; ok && d <= ct.dim(); ++d) {
      const int64_t cs = ct.size(-d), os = out_shape[out_shape.size() - d];
      ok = cs == os || cs == 1;
    }
    TORCH_CHECK_VALUE(ok, "gemmtiles::", op, ": c of shape ", shape_list(ct.sizes()),
                      " cannot be broadcast to the output shape ", shape_list(out_shape));
  }

  PreparedGemm r;
  r.out = at::empty(out_shape, a.options());
  const bool use_c = c.has_value() && beta != 0.0;
  if (r.out.numel() == 0) {
    r.needs_kernel = false;
    return r;
  }
  if (K == 0) {
    // An empty sum: the product is zero, so out = beta * c (zeros without c).
    if (use_c) {
      r.out.copy_(c->expand(out_shape)).mul_(beta);
    } else {
      r.out.zero_();
    }
    r.needs_kernel = false;
    return r;
  }

  Slice sa = slice_of(a, operands);
  Slice sb = slice_of(b, operands);
  r.a = sa.t;
  r.b = sb.t;
  GemmProblem& p = r.p;
  p.batch = batch;
  p.M = M;
  p.N = N;
  p.K = K;
  p.a = sa.t.data_ptr<float>();
  p.a_bs = sa.bs;
  p.a_rs = sa.rs;
  p.a_cs = sa.cs;
  p.b = sb.t.data_ptr<float>();
  p.b_bs = sb.bs;
  p.b_rs = sb.rs;
  p.b_cs = sb.cs;
  if (use_c) {
    r.c = c->expand(out_shape);
    p.c = r.c.data_ptr<float>();
    p.c_bs = batched ? r.c.stride(0) : 0;
    p.c_rs = r.c.stride(-2);
    p.c_cs = r.c.stride(-1);
  } else {
    p.c = nullptr;
    p.c_bs = p.c_rs = p.c_cs = 0;
  }
  p.out = r.out.data_ptr<float>();
  p.out_bs = M * N;
  p.out_rs = N;
  p.alpha = static_cast<float>(alpha);
  p.beta = use_c ? static_cast<float>(beta) : 0.0f;
  r.needs_kernel = true;
  return r;
}

}  // namespace gemmtiles
