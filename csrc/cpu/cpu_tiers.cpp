// CPU tiers: the two loop orders of the ladder's first step.
#include <algorithm>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include "../core/prepare.h"
#include "../core/register.h"

namespace gemmtiles {
namespace {

inline float epilogue(const GemmProblem& p, int64_t z, int64_t m, int64_t n, float acc) {
  float v = p.alpha * acc;
  if (p.beta != 0.0f) v += p.beta * p.c[z * p.c_bs + m * p.c_rs + n * p.c_cs];
  return v;
}

// out(m, :) = alpha * out(m, :) + beta * c(m, :), a whole row at once (vectorisable).
void epilogue_row(const GemmProblem& p, int64_t z, int64_t m, float* __restrict__ orow) {
  if (p.beta == 0.0f) {
    if (p.alpha != 1.0f)
      for (int64_t n = 0; n < p.N; ++n) orow[n] *= p.alpha;
    return;
  }
  const float* crow = p.c + z * p.c_bs + m * p.c_rs;
  if (p.c_cs == 1) {
    for (int64_t n = 0; n < p.N; ++n) orow[n] = p.alpha * orow[n] + p.beta * crow[n];
  } else {
    for (int64_t n = 0; n < p.N; ++n) orow[n] = p.alpha * orow[n] + p.beta * crow[n * p.c_cs];
  }
}

// Runs body(begin, end) over [0, n) items of `work` multiply-adds each: in parallel once a
// chunk holds 2^18 of them (enough to pay for waking a thread), inline below 2^20 in all.
template <typename F>
void parallel_rows(int64_t n, int64_t work, const F& body) {
  if (n * work < (int64_t(1) << 20)) {
    body(0, n);
    return;
  }
  at::parallel_for(0, n, std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(1, work)), body);
}

// naive: the i-j-k loop. The inner loop walks B down a column, K elements b_rs apart:
// for a row-major B every step touches a new cache line.
at::Tensor naive_cpu(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& c,
                     double alpha, double beta) {
  PreparedGemm g = prepare_gemm("naive", a, b, c, alpha, beta, Operands::kStrided);
  if (!g.needs_kernel) return g.out;
  const GemmProblem& p = g.p;
  for (int64_t z = 0; z < p.batch; ++z) {
    const float* az = p.a + z * p.a_bs;
    const float* bz = p.b + z * p.b_bs;
    float* oz = p.out + z * p.out_bs;
    for (int64_t m = 0; m < p.M; ++m) {
      for (int64_t n = 0; n < p.N; ++n) {
        float acc = 0.0f;
        for (int64_t k = 0; k < p.K; ++k) acc += az[m * p.a_rs + k * p.a_cs] * bz[k * p.b_rs + n * p.b_cs];
        oz[m * p.out_rs + n] = epilogue(p, z, m, n, acc);
      }
    }
  }
  return g.out;
}
GEMMTILES_TIER(naive, CPU, Operands::kStrided, &naive_cpu);

// One row of the i-k-j loop: orow[n] = sum_k arow[k] * b(k, n), in strips of kStrip
// columns whose partial sums stay in vector registers for the whole K loop (a remainder
// strip goes through memory). Compiled for the widest vector unit the running CPU has
// (AVX-512, AVX2 with FMA, or SSE2), chosen once when the library loads.
constexpr int64_t kStrip = 64;

// orow[n] = sum_k arow[k] * b(k, n) for n in [n0, N): the columns after the last whole strip
// (inlined into each vector-width clone of its callers).
inline void row_tail(const float* arow, int64_t a_cs, const float* bz, int64_t b_rs, int64_t n0,
                     int64_t N, int64_t K, float* __restrict__ orow) {
  if (n0 >= N) return;
  for (int64_t n = n0; n < N; ++n) orow[n] = 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const float av = arow[k * a_cs];
    const float* __restrict__ brow = bz + k * b_rs;
    for (int64_t n = n0; n < N; ++n) orow[n] += av * brow[n];
  }
}

__attribute__((target_clones("avx512f", "arch=haswell", "default"))) void reorder_row(
    const float* arow, int64_t a_cs, const float* bz, int64_t b_rs, int64_t N, int64_t K,
    float* __restrict__ orow) {
  int64_t n0 = 0;
  for (; n0 + kStrip <= N; n0 += kStrip) {
    float acc[kStrip] = {};
    for (int64_t k = 0; k < K; ++k) {
      const float av = arow[k * a_cs];
      const float* __restrict__ brow = bz + k * b_rs + n0;
      for (int64_t j = 0; j < kStrip; ++j) acc[j] += av * brow[j];
    }
    for (int64_t j = 0; j < kStrip; ++j) orow[n0 + j] = acc[j];
  }
  row_tail(arow, a_cs, bz, b_rs, n0, N, K, orow);
}

// reorder: the i-k-j loop. The inner loop runs along a row of B and a row of the output,
// both unit stride, so it streams through cache lines and vectorises; rows run in parallel
// (parallel_rows). Operands are row-major: others are copied first.
at::Tensor reorder_cpu(const at::Tensor& a, const at::Tensor& b,
                       const std::optional<at::Tensor>& c, double alpha, double beta) {
  PreparedGemm g = prepare_gemm("reorder", a, b, c, alpha, beta, Operands::kRowMajor);
  if (!g.needs_kernel) return g.out;
  const GemmProblem& p = g.p;
  parallel_rows(p.batch * p.M, p.N * p.K, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t z = row / p.M, m = row % p.M;
      const float* arow = p.a + z * p.a_bs + m * p.a_rs;
      const float* bz = p.b + z * p.b_bs;
      float* orow = p.out + z * p.out_bs + m * p.out_rs;
      reorder_row(arow, p.a_cs, bz, p.b_rs, p.N, p.K, orow);
      epilogue_row(p, z, m, orow);
    }
  });
  return g.out;
}
GEMMTILES_TIER(reorder, CPU, Operands::kRowMajor, &reorder_cpu);

// kRows rows of the i-k-j loop at once, in strips of kBlockStrip columns: each strip of a B
// row, once in registers, feeds kRows FMAs instead of one, and the kRows x kBlockStrip sums
// stay in registers for the whole K loop (16 of AVX-512's 32 vector registers). A last group
// of fewer rows runs row by row (reorder_row), as does a remainder strip (row_tail): the
// full-group loop has no per-row test, which made small products markedly faster.
constexpr int64_t kRows = 4, kBlockStrip = 64;

__attribute__((target_clones("avx512f", "arch=haswell", "default"))) void blocked_rows(
    const float* a, int64_t a_rs, int64_t a_cs, int64_t rows, const float* bz, int64_t b_rs,
    int64_t N, int64_t K, float* __restrict__ out, int64_t out_rs) {
  if (rows < kRows) {
    for (int64_t r = 0; r < rows; ++r) reorder_row(a + r * a_rs, a_cs, bz, b_rs, N, K, out + r * out_rs);
    return;
  }
  int64_t n0 = 0;
  for (; n0 + kBlockStrip <= N; n0 += kBlockStrip) {
    float acc[kRows][kBlockStrip] = {};
    for (int64_t k = 0; k < K; ++k) {
      const float* __restrict__ brow = bz + k * b_rs + n0;
      for (int64_t r = 0; r < kRows; ++r) {
        const float av = a[r * a_rs + k * a_cs];
        for (int64_t j = 0; j < kBlockStrip; ++j) acc[r][j] += av * brow[j];
      }
    }
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t j = 0; j < kBlockStrip; ++j) out[r * out_rs + n0 + j] = acc[r][j];
  }
  for (int64_t r = 0; r < kRows; ++r) row_tail(a + r * a_rs, a_cs, bz, b_rs, n0, N, K, out + r * out_rs);
}

// blocked: reorder, kRows rows at a time (register blocking, the CPU's thread_tile). Operands
// are row-major: others are copied first.
at::Tensor blocked_cpu(const at::Tensor& a, const at::Tensor& b,
                       const std::optional<at::Tensor>& c, double alpha, double beta) {
  PreparedGemm g = prepare_gemm("blocked", a, b, c, alpha, beta, Operands::kRowMajor);
  if (!g.needs_kernel) return g.out;
  const GemmProblem& p = g.p;
  const int64_t groups = (p.M + kRows - 1) / kRows;
  parallel_rows(p.batch * groups, kRows * p.N * p.K, [&](int64_t begin, int64_t end) {
    for (int64_t group = begin; group < end; ++group) {
      const int64_t z = group / groups, m0 = group % groups * kRows;
      const int64_t rows = std::min(kRows, p.M - m0);
      float* out = p.out + z * p.out_bs + m0 * p.out_rs;
      blocked_rows(p.a + z * p.a_bs + m0 * p.a_rs, p.a_rs, p.a_cs, rows, p.b + z * p.b_bs, p.b_rs,
                   p.N, p.K, out, p.out_rs);
      for (int64_t r = 0; r < rows; ++r) epilogue_row(p, z, m0 + r, out + r * p.out_rs);
    }
  });
  return g.out;
}
GEMMTILES_TIER(blocked, CPU, Operands::kRowMajor, &blocked_cpu);

}  // namespace
}  // namespace gemmtiles
