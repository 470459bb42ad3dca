#include "prepare.h"

#include <algorithm>
#include <string>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>

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

// Eight floats as one vector (GCC / clang vector extensions; the compiler picks the
// instructions per target_clones clone: one AVX register, or two SSE ones), and a shuffle of
// two of them (indices 0-7 from x, 8-15 from y).
typedef float Vec8 __attribute__((vector_size(32)));
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define GEMMTILES_SHUFFLE8(x, y, ...) __builtin_shufflevector(x, y, __VA_ARGS__)
#endif
#endif
#ifndef GEMMTILES_SHUFFLE8
typedef int Index8 __attribute__((vector_size(32)));
#define GEMMTILES_SHUFFLE8(x, y, ...) __builtin_shuffle(x, y, Index8{__VA_ARGS__})
#endif

// d (rows x cols, row-major) = s (column-major, column stride cs), 8 x 8 blocks at a time
// transposed in registers (three rounds of shuffles), the edges element by element: much
// faster than a loop over 16 x 16 tiles, element by element.
__attribute__((target_clones("avx512f", "arch=haswell", "default"))) void transpose_tiles(
    const float* s, float* d, int64_t rows, int64_t cols, int64_t cs) {
  int64_t j0 = 0;
  for (; j0 + 8 <= cols; j0 += 8) {
    int64_t i0 = 0;
    for (; i0 + 8 <= rows; i0 += 8) {
      Vec8 c[8], t[8], u[8];  // c[j]: column j0 + j of the block, rows i0 .. i0 + 7
      for (int j = 0; j < 8; ++j) __builtin_memcpy(&c[j], s + i0 + (j0 + j) * cs, sizeof(Vec8));
      for (int j = 0; j < 8; j += 2) {
        t[j] = GEMMTILES_SHUFFLE8(c[j], c[j + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[j + 1] = GEMMTILES_SHUFFLE8(c[j], c[j + 1], 2, 10, 3, 11, 6, 14, 7, 15);
      }
      for (int j = 0; j < 8; j += 4) {
        for (int h = 0; h < 2; ++h) {
          u[j + 2 * h] = GEMMTILES_SHUFFLE8(t[j + h], t[j + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
          u[j + 2 * h + 1] = GEMMTILES_SHUFFLE8(t[j + h], t[j + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
      }
      float* o = d + i0 * cols + j0;
      for (int i = 0; i < 4; ++i) {
        const Vec8 lo = GEMMTILES_SHUFFLE8(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        const Vec8 hi = GEMMTILES_SHUFFLE8(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
        __builtin_memcpy(o + i * cols, &lo, sizeof(Vec8));
        __builtin_memcpy(o + (i + 4) * cols, &hi, sizeof(Vec8));
      }
    }
    for (int64_t i = i0; i < rows; ++i)
      for (int64_t j = j0; j < j0 + 8; ++j) d[i * cols + j] = s[i + j * cs];
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = j0; j < cols; ++j) d[i * cols + j] = s[i + j * cs];
}
#undef GEMMTILES_SHUFFLE8

// t (2-D or 3-D float) as a contiguous row-major copy. A CPU matrix stored column-major
// (nn.Linear's W^T, a transposed A) is copied by transpose_tiles; anything else goes
// through Tensor.contiguous(), much slower for a small transpose.
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
  // Broadcast as torch broadcasts: a batch of 1 takes the other's size, 0 included.
  const int64_t batch = a_batch == 1 ? b_batch : a_batch;
  const bool batched = a.dim() == 3 || b.dim() == 3;
  const int64_t out_sizes[3] = {batch, M, N};
  const at::IntArrayRef out_shape(batched ? out_sizes : out_sizes + 1, batched ? 3 : 2);

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
    // c's strides as broadcast to the output (checked above), as c.expand(out_shape) gives
    // them, without making that view.
    const at::Tensor& ct = *c;
    const auto geometry = at::inferExpandGeometry_dimvector(ct.sizes(), ct.strides(), out_shape);
    p.c = ct.data_ptr<float>();
    p.c_bs = batched ? geometry.strides[0] : 0;
    p.c_rs = geometry.strides[geometry.strides.size() - 2];
    p.c_cs = geometry.strides[geometry.strides.size() - 1];
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
