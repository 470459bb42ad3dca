// The problem every gemmtiles tier solves, for one launch:
//   out[z] = alpha * A[z] @ B[z] + beta * C[z]      z in [0, batch)
// A[z] is (M, K), B[z] is (K, N), out[z] is (M, N) row-major, C[z] broadcasts to (M, N).
// Operands are read through a row stride and a column stride, so transposed and sliced
// tensors are used in place; a broadcast operand has stride 0 (batch or bias row).
// Plain C++ with no torch headers: the CUDA kernels and the CPU loops share it.
#pragma once

#include <cstdint>

namespace gemmtiles {

struct GemmProblem {
  int64_t batch, M, N, K;
  const float* a;  // a: (batch, M, K), element (z, m, k) at a[z*a_bs + m*a_rs + k*a_cs]
  int64_t a_bs, a_rs, a_cs;
  const float* b;  // b: (batch, K, N), element (z, k, n) at b[z*b_bs + k*b_rs + n*b_cs]
  int64_t b_bs, b_rs, b_cs;
  const float* c;  // c: broadcast to (batch, M, N); nullptr when beta == 0 (never read)
  int64_t c_bs, c_rs, c_cs;
  float* out;      // out: (batch, M, N), element (z, m, n) at out[z*out_bs + m*out_rs + n*out_cs]
  int64_t out_bs, out_rs;
  float alpha, beta;
  // Split K (the tile kernels' SPLIT_K mode, auto.cu): when > 0, blockIdx.z numbers slices
  // of K of k_split each (the last one shorter), whose operands the batch strides step to;
  // each slice writes its partial product, and a second pass adds them — or, when k_cluster
  // > 1 (the pipelined tile on sm_90+), the k_cluster slices of a tile run as one thread-block
  // cluster and add their partial products in shared memory, in slice order, into out.
  int64_t k_split = 0;
  int64_t k_cluster = 0;
  // out's column stride: 1 for every tier's problem. auto's swapped plans (AutoPlan::swapped in
  // auto/plan.h) run out^T = B^T A^T, whose column stride is out's row stride, on the skinny
  // and GEMV kernels and the split-K reduction: the only kernels that read it.
  int64_t out_cs = 1;
};

// What a CUDA or HIP compiler builds for host and device alike; the host alone elsewhere.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define GEMMTILES_HOST_DEVICE __host__ __device__
#else
#define GEMMTILES_HOST_DEVICE
#endif

GEMMTILES_HOST_DEVICE inline bool aligned16(const void* ptr) {
  return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0;
}

// x floats rounded up to a whole number of float4s: the pitch of a copy whose rows are 16-byte
// aligned lines, or a stride TMA takes.
GEMMTILES_HOST_DEVICE inline int64_t round_up4(int64_t x) { return (x + 3) / 4 * 4; }

// Whether an operand's tiles may take float4 loads: every tile pointer is the operand's
// pointer plus multiples of 4 floats when that pointer is 16-byte aligned and ld % 4 == 0.
// (Asked by the kernels and by auto's launcher alike.)
GEMMTILES_HOST_DEVICE inline bool operand_vec_ok(const float* base, int64_t ld) {
  return aligned16(base) && ld % 4 == 0;
}

// The layouts prepare_gemm gives the operands, each with one unit stride: A is K-major
// (row-major) when its column stride is 1, B K-major (column-major) when its column stride is
// not; an operand's leading dimension is its other stride.
inline bool a_kmajor(const GemmProblem& p) { return p.a_cs == 1; }
inline bool b_kmajor(const GemmProblem& p) { return p.b_cs != 1; }
inline int64_t a_ld(const GemmProblem& p) { return a_kmajor(p) ? p.a_rs : p.a_cs; }
inline int64_t b_ld(const GemmProblem& p) { return b_kmajor(p) ? p.b_cs : p.b_rs; }

// Whether A's (B's) tiles may take float4 loads in every batch entry: what auto's plan and
// gemmtiles._C.operand_layout call an operand's alignment.
inline bool a_vec_ok(const GemmProblem& p) { return operand_vec_ok(p.a, a_ld(p)) && p.a_bs % 4 == 0; }
inline bool b_vec_ok(const GemmProblem& p) { return operand_vec_ok(p.b, b_ld(p)) && p.b_bs % 4 == 0; }

}  // namespace gemmtiles
