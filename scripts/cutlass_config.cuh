// What the standalone CUTLASS harnesses (scripts/tf32_configs.cu, scripts/tf32_narrow_rows.cu)
// share: a configuration of CUTLASS's SM90 kernels built from its collective builders, and the
// strides of its arguments.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

using namespace cute;
using Row = cutlass::layout::RowMajor;
using Col = cutlass::layout::ColumnMajor;
using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using NoSmem = cutlass::epilogue::NoSmemWarpSpecialized;
using TmaCoop = cutlass::epilogue::TmaWarpSpecializedCooperative;
using SK = cutlass::gemm::StreamKScheduler;

// The shared memory the builder leaves out of the mainloop's stages: the epilogue's, or where
// kStages > 0 as much as leaves room for kStages and half of one more (CUTLASS's register-sourced
// builder reads a carveout, not StageCount).
template <class Tile, class Epilogue, int kStages>
inline constexpr int kCarveout = [] {
  if constexpr (kStages == 0) {
    return static_cast<int>(sizeof(typename Epilogue::SharedStorage));
  } else {
    constexpr int stage = (size<0>(Tile{}) + size<1>(Tile{})) * size<2>(Tile{}) * 4 + 16;
    return cutlass::gemm::collective::detail::sm90_smem_capacity_bytes - kStages * stage - stage / 2;
  }
}();

// An N-major B (NN) makes CUTLASS swap A and B (B^T, transposed in registers, is the MMA's A):
// the kernel computes C^T, so its epilogue writes a column-major output (LayoutOut = Col).
// LayoutA Col: A M-major (the weight gradient's grad^T), which CUTLASS copies into registers
// transposed (and with an N-major B too, transposes B in shared memory first). kStages: the
// mainloop's stages, 0 for as many as shared memory holds beside the epilogue (one block an SM);
// fewer let two blocks share an SM.
template <class Tile, class Cluster, class Sched, class Epi, class TileSched, int kAlign, class LayoutB,
          class LayoutOut = Row, class Element = float, class LayoutA = Row, int kStages = 0>
struct Config {
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float, float, LayoutOut, kAlign, float, LayoutOut, kAlign, Epi>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, 4, Element, LayoutB, 4, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<kCarveout<Tile, Epilogue, kStages>>, Sched>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, TileSched>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static constexpr bool kNN = std::is_same_v<LayoutB, Row>;
  static constexpr bool kSwapped = std::is_same_v<LayoutOut, Col>;
  static constexpr bool kTN = std::is_same_v<LayoutA, Col>;
};

// A stride of CUTLASS's arguments from three extents' strides; its static slots (a unit
// stride) keep their value.
template <class S>
S stride3(int64_t s0, int64_t s1, int64_t s2) {
  S s{};
  auto set = [](auto&& slot, int64_t v) {
    if constexpr (std::is_integral_v<std::remove_reference_t<decltype(slot)>>) slot = v;
  };
  set(get<0>(s), s0);
  set(get<1>(s), s1);
  set(get<2>(s), s2);
  return s;
}
