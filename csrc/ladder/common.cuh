// Pieces every CUDA tier shares: the batch entry of a block, the alpha/beta epilogue, and
// (for the float4 tiers) the global -> register -> shared staging of an operand tile.
// Torch-free, so a standalone tuning harness can include the kernels too.
#pragma once

#include <cstdint>

#include "../core/gemm_problem.h"
#include "platform.cuh"

namespace gemmtiles {

// The pointers of the batch entry blockIdx.z.
struct BatchView {
  const float* a;
  const float* b;
  const float* c;
  float* out;
};

__device__ __forceinline__ BatchView batch_view(const GemmProblem& p) {
  const int64_t z = blockIdx.z;
  return {p.a + z * p.a_bs, p.b + z * p.b_bs, p.c ? p.c + z * p.c_bs : nullptr,
          p.out + z * p.out_bs};
}

// alpha * acc + beta * c(m, n); c is not read when beta == 0, so NaN in c never leaks.
__device__ __forceinline__ float epilogue(const GemmProblem& p, const float* c, int64_t m,
                                          int64_t n, float acc) {
  float v = p.alpha * acc;
  if (p.beta != 0.0f) v += p.beta * c[m * p.c_rs + n * p.c_cs];
  return v;
}

// Asynchronous global -> shared copies (cp.async, sm_80+; a plain copy before that), for the
// pipelined tile (auto/pipelined_tile.cuh) and the skinny kernels' staged rows of A (auto/skinny.cuh).
// dst[0..3] = the first src_bytes (0, 4, 8, 12 or 16) bytes at src, zeros after them;
// asynchronous where the GPU has cp.async (sm_80+): complete after cp_async_wait. Both 16-byte
// aligned; only the first src_bytes bytes at src are read.
__device__ __forceinline__ void cp_async16(float* dst, const float* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
#else
  if (src_bytes == 16) {
    *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);
  } else {
    for (int j = 0; j < 4; ++j) dst[j] = 4 * j < src_bytes ? src[j] : 0.0f;
  }
#endif
}

// cp_async16 of all 16 bytes: no source size, so no register or predicate for it.
__device__ __forceinline__ void cp_async16_all(float* dst, const float* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
#else
  *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);
#endif
}

// dst[0] = src[0] if src_bytes is 4, else 0; asynchronous as cp_async16.
// (Neither has a memory clobber: what they write is read only after cp_async_wait and a
// barrier, which order the compiler's accesses.)
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
#else
  dst[0] = src_bytes ? src[0] : 0.0f;
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N of this thread's committed groups of copies are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// True when rows of `out` can take float4 stores at columns that are multiples of 4.
__device__ __forceinline__ bool out_vec_ok(const GemmProblem& p) {
  return aligned16(p.out) && p.out_rs % 4 == 0 && p.out_bs % 4 == 0;
}

// Writes out(m, n..n+3) = epilogue(acc[0..3]), skipping what lies outside the matrix:
// one float4 store when the four are inside and `vec` (out_vec_ok, n % 4 == 0) holds.
__device__ __forceinline__ void store_row4(const GemmProblem& p, const BatchView& v, int64_t m,
                                           int64_t n, const float* acc, bool vec) {
  if (m >= p.M) return;
  float r[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) r[j] = n + j < p.N ? epilogue(p, v.c, m, n + j, acc[j]) : 0.0f;
  float* dst = v.out + m * p.out_rs + n;
  if (vec && n + 3 < p.N) {
    *reinterpret_cast<float4*>(dst) = make_float4(r[0], r[1], r[2], r[3]);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (n + j < p.N) dst[j] = r[j];
  }
}

// The tile of one level of the hierarchy (block, warp, thread): M x N outputs, K deep, as
// CUTLASS's GemmShape.
template <int M_, int N_, int K_ = 1>
struct Shape {
  static constexpr int M = M_, N = N_, K = K_;
};

// Configuration of the tiers in which each thread computes a Thread::M x Thread::N tile of C
// within a Block::M x Block::N block tile, stepping K by Block::K (unroll to double_buffer).
// The kernels take it as their one template parameter; their thread count, launch bounds and
// the grid derive from it. MIN_BLOCKS: blocks per SM that the register allocation must leave
// room for (__launch_bounds__); 0 leaves the register budget to ptxas's own heuristic, as a
// bare __launch_bounds__(threads) does (asking for 1 is not the same: bank_free then takes
// 147 registers instead of 127).
template <class Block_, class Thread_, int MIN_BLOCKS = 0>
struct TileConfig {
  using Block = Block_;
  using Thread = Thread_;
  static constexpr int BM = Block::M, BN = Block::N, BK = Block::K;
  static constexpr int TM = Thread::M, TN = Thread::N;
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static constexpr int kMinBlocks = MIN_BLOCKS;
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tiles must tile the block tile");
  static dim3 block() { return dim3(kThreads); }
};

// dst[0..3] = src[0..3] with one 128-bit shared or global load; src 16-byte aligned.
__device__ __forceinline__ void load4(float* dst, const float* src) {
  const float4 x = *reinterpret_cast<const float4*>(src);
  dst[0] = x.x;
  dst[1] = x.y;
  dst[2] = x.z;
  dst[3] = x.w;
}

// One BK-deep tile of an operand, staged global -> registers -> shared memory, where it is
// kept as smem[k][r] with a row pitch of ROWS + PAD floats (r runs over the BM rows of A or
// the BN columns of B), so the compute loop reads TM or TN consecutive r as float4.
//
// K_MAJOR: k is the operand's unit-stride index (A row-major, B column-major). Loads run
// along k as float4 and are transposed on the way into shared memory: four scalar stores.
// Otherwise (A column-major, B row-major) float4 loads run along r and are stored as they
// are. A float4 load needs the tile pointer 16-byte aligned and ld % 4 == 0 (`vec`) and all
// four elements inside the matrix; anything else takes four guarded scalar loads, and what
// lies outside the matrix is stored as zero, so partial tiles add nothing to the sums.
template <int ROWS, int BK, int THREADS, bool K_MAJOR, int PAD>
struct TileLoader {
  static_assert(ROWS % 4 == 0 && BK % 4 == 0, "tile sides must be multiples of the float4 width");
  static_assert((ROWS * BK) % (4 * THREADS) == 0, "each thread loads whole float4s");
  static_assert(PAD % 4 == 0, "padding must keep the float4 reads of smem rows aligned");
  static constexpr int kVecs = ROWS * BK / 4 / THREADS;
  static constexpr int kPitch = ROWS + PAD;

  float4 reg[kVecs];

  // Pointer to element (r0, k = 0) of an operand with leading dimension ld.
  static __device__ __forceinline__ const float* origin(const float* base, int64_t ld,
                                                         int64_t r0) {
    return K_MAJOR ? base + r0 * ld : base + r0;
  }
  // How far the tile pointer moves for the next BK values of k.
  static __device__ __forceinline__ int64_t k_step(int64_t ld) { return K_MAJOR ? BK : BK * ld; }

  // The tile element (r, k) that starts this thread's float4 number i: four consecutive k
  // (K_MAJOR) or four consecutive r. load, load_interior and store all use this mapping.
  static __device__ __forceinline__ void coords(int i, int& r, int& k) {
    const int v = threadIdx.x + i * THREADS;
    if (K_MAJOR) {
      r = v / (BK / 4);
      k = v % (BK / 4) * 4;
    } else {
      k = v / (ROWS / 4);
      r = v % (ROWS / 4) * 4;
    }
  }

  // src: the tile's element (0, 0); rows, ks: how many of its r and k lie inside the matrix.
  __device__ __forceinline__ void load(const float* src, int64_t ld, int64_t rows, int64_t ks,
                                       bool vec) {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      int r, k;
      coords(i, r, k);
      if (K_MAJOR) {
        const float* s = src + r * ld + k;
        if (vec && r < rows && k + 3 < ks) {
          reg[i] = *reinterpret_cast<const float4*>(s);
        } else {
          const bool in = r < rows;
          reg[i] = make_float4(in && k < ks ? s[0] : 0.0f, in && k + 1 < ks ? s[1] : 0.0f,
                               in && k + 2 < ks ? s[2] : 0.0f, in && k + 3 < ks ? s[3] : 0.0f);
        }
      } else {
        const float* s = src + k * ld + r;
        if (vec && k < ks && r + 3 < rows) {
          reg[i] = *reinterpret_cast<const float4*>(s);
        } else {
          const bool in = k < ks;
          reg[i] = make_float4(in && r < rows ? s[0] : 0.0f, in && r + 1 < rows ? s[1] : 0.0f,
                               in && r + 2 < rows ? s[2] : 0.0f, in && r + 3 < rows ? s[3] : 0.0f);
        }
      }
    }
  }

  // load() for a tile that lies wholly inside the matrix with `vec` true: float4 loads with
  // no bounds checks.
  __device__ __forceinline__ void load_interior(const float* src, int64_t ld) {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      int r, k;
      coords(i, r, k);
      reg[i] = *reinterpret_cast<const float4*>(K_MAJOR ? src + r * ld + k : src + k * ld + r);
    }
  }

  // smem: [BK][kPitch]
  __device__ __forceinline__ void store(float* smem) const {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      int r, k;
      coords(i, r, k);
      if (K_MAJOR) {
        smem[(k + 0) * kPitch + r] = reg[i].x;
        smem[(k + 1) * kPitch + r] = reg[i].y;
        smem[(k + 2) * kPitch + r] = reg[i].z;
        smem[(k + 3) * kPitch + r] = reg[i].w;
      } else {
        *reinterpret_cast<float4*>(smem + k * kPitch + r) = reg[i];
      }
    }
  }
};

}  // namespace gemmtiles
