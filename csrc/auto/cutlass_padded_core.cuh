// CUTLASS's SIMT mainloop with padded shared-memory tiles for K-major operands, selected by
// the multiply-add tag PaddedSimtMultiplyAdd: what auto's exact CUTLASS kernels
// (cutlass_simt.cuh) run, and what scripts/splitk_reduce.cu times alone. CUTLASS's headers only.
#pragma once

#include <cutlass/gemm/threadblock/default_mma_core_simt.h>

namespace gemmtiles {
namespace cutlass_simt {
// The exact multiply-add of SimtMath: CUTLASS's own (arch::OpMultiplyAdd), tagged so that the
// SIMT mainloop below takes shared-memory tiles of its own for K-major operands.
struct PaddedSimtMultiplyAdd {};
}  // namespace cutlass_simt
}  // namespace gemmtiles

// CUTLASS's SIMT mainloop stores a K-major operand's tile transposed into shared memory, an
// 8-deep slice at a time: lane t copies element (k = t % 8, row t / 8) to row + k * ld. Its
// default pad (K / 32, none for 8-deep slices) leaves ld a multiple of 32 floats, so the eight
// k of a row fall in one bank: every copy of a warp is an 8-way bank conflict, on both operands
// of NT, A of NN and B of TT. A pad of 4 floats (ld % 32 == 4) spreads a warp's 32 copies over 32
// banks, and keeps each k's line 16-byte aligned for the warps' 4-float reads (CUTLASS's
// "padding must be divisible by lane"). Everything else is CUTLASS's core for that layout.
#define GEMMTILES_PADDED_SIMT_CORE(LAYOUT_A, LAYOUT_B, PAD_A, PAD_B)                                          \
  template <class Shape_, class WarpShape_, class InstructionShape_, class ElementA_, class ElementB_,        \
            class ElementC_, class LayoutC_, int Stages, cutlass::arch::CacheOperation::Kind CacheOpA,        \
            cutlass::arch::CacheOperation::Kind CacheOpB>                                                     \
  struct DefaultMmaCore<Shape_, WarpShape_, InstructionShape_, ElementA_, LAYOUT_A, ElementB_, LAYOUT_B,        \
                        ElementC_, LayoutC_, arch::OpClassSimt, Stages,                                       \
                        gemmtiles::cutlass_simt::PaddedSimtMultiplyAdd, false, CacheOpA, CacheOpB>            \
      : DefaultMmaCore<Shape_, WarpShape_, InstructionShape_, ElementA_, LAYOUT_A, ElementB_, LAYOUT_B,        \
                       ElementC_, LayoutC_, arch::OpClassSimt, Stages, arch::OpMultiplyAdd, false, CacheOpA,   \
                       CacheOpB> {                                                                            \
    using Base = DefaultMmaCore<Shape_, WarpShape_, InstructionShape_, ElementA_, LAYOUT_A, ElementB_, LAYOUT_B, \
                                ElementC_, LayoutC_, arch::OpClassSimt, Stages, arch::OpMultiplyAdd, false,    \
                                CacheOpA, CacheOpB>;                                                          \
    static_assert(Shape_::kK == 8, "the pad is worked out for 8-deep slices");                                \
    using MmaPolicy = cutlass::gemm::threadblock::MmaPolicy<typename Base::MmaWarpSimt, MatrixShape<PAD_A, 0>,   \
                                                            MatrixShape<0, PAD_B>, Base::WarpCount::kK>;      \
  };
namespace cutlass {
namespace gemm {
namespace threadblock {
GEMMTILES_PADDED_SIMT_CORE(layout::RowMajor, layout::ColumnMajor, 4, 4)
GEMMTILES_PADDED_SIMT_CORE(layout::RowMajor, layout::RowMajor, 4, 0)
GEMMTILES_PADDED_SIMT_CORE(layout::ColumnMajor, layout::ColumnMajor, 0, 4)
}  // namespace threadblock
}  // namespace gemm
}  // namespace cutlass
#undef GEMMTILES_PADDED_SIMT_CORE
