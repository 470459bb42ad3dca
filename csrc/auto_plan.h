// The choice the `auto` tier makes for a problem: which kernel, with which configuration and
// how many splits of K. Plain C++ (no torch, no CUDA): the CUDA launcher follows it, and
// gemmtiles._C.auto_plan() reports it, so tests can check the choice without timing it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gemmtiles {

enum class AutoKernel { kWarptile, kSkinnyKMajor, kSkinnyNMajor };

inline const char* auto_kernel_name(AutoKernel k) {
  switch (k) {
    case AutoKernel::kSkinnyKMajor: return "skinny_kmajor";
    case AutoKernel::kSkinnyNMajor: return "skinny_nmajor";
    default: return "warptile";
  }
}

struct AutoPlan {
  AutoKernel kernel;
  int mt = 0;          // skinny: rows of A per pass (M rounded up to 4, 8, 16 or 32)
  int nw = 0;          // skinny: columns of B per warp (kmajor), or column groups per lane (nmajor)
  int w = 1;           // skinny: consecutive elements of B per lane load (4: float4)
  int64_t splits = 1;  // skinny: blocks along K
  int64_t k_slice = 0; // skinny: K per split, a multiple of 32
};

// Rows up to which the bandwidth-bound skinny kernels run, and blocks per SM they aim for.
inline constexpr int64_t kSkinnyMaxM = 32;
inline constexpr int64_t kSkinnyBlocksPerSm = 2;
inline constexpr int kSkinnyWarps = 8;

// b_kmajor: B is read down its columns (unit row stride), as nn.Linear's W^T is.
// b_vec: B's contiguous lines are 16-byte aligned, so a lane can load 4 floats at once.
inline AutoPlan auto_plan(int64_t M, int64_t N, int64_t K, int64_t batch, bool b_kmajor,
                          bool b_vec, int64_t sms) {
  if (M > kSkinnyMaxM || batch > 65535 || K == 0) return {AutoKernel::kWarptile};
  AutoPlan plan{b_kmajor ? AutoKernel::kSkinnyKMajor : AutoKernel::kSkinnyNMajor};
  plan.mt = M <= 4 ? 4 : M <= 8 ? 8 : M <= 16 ? 16 : 32;
  plan.w = b_vec ? 4 : 1;
  plan.nw = b_kmajor ? (plan.mt <= 8 ? 4 : 2) : (plan.mt <= 8 && !b_vec ? 4 : 1);
  const int64_t cols = int64_t(kSkinnyWarps) * plan.nw * (b_kmajor ? 1 : 32 * plan.w);
  const int64_t blocks = (N + cols - 1) / cols * batch;
  const int64_t want = std::max<int64_t>(1, (kSkinnyBlocksPerSm * sms + blocks - 1) / blocks);
  const int64_t splits = std::min<int64_t>({want, (K + 31) / 32, 65535});
  plan.k_slice = ((K + splits - 1) / splits + 31) / 32 * 32;
  plan.splits = (K + plan.k_slice - 1) / plan.k_slice;
  return plan;
}

}  // namespace gemmtiles
