// The op names of the tiers, in ladder order; gemmtiles/_tiers.py is the table that
// describes them, and tests/test_ops.py checks that the two agree.
#pragma once

namespace gemmtiles {

inline constexpr const char* kCpuOnlyTiers[] = {"reorder"};
inline constexpr const char* kCudaOnlyTiers[] = {
    "coalesced", "smem", "unroll", "thread_tile", "vectorized",
    "bank_free", "double_buffer", "warptile"};
inline constexpr const char* kAllTiers[] = {
    "naive",       "reorder",    "coalesced", "smem",          "unroll",
    "thread_tile", "vectorized", "bank_free", "double_buffer", "warptile"};

}  // namespace gemmtiles
