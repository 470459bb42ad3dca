// CUTLASS's SM90 stream-K tile scheduler (PersistentTileSchedulerSm90StreamK), with each
// tile's lock left zero by the unit that finishes the tile, so that a workspace whose locks
// are already zero needs no zeroing pass before a launch.
//
// A tile shared by several units (stream-K, split-K) is summed through the scheduler's
// workspace: the units' partial tiles, then one lock per tile and consumer warpgroup that the
// units count up in K order. CUTLASS zeroes those locks with a memset before every launch (its
// initialize_workspace): a pass of its own on the stream ahead of the kernel, which a small
// product feels. Here the unit that computes a tile's epilogue, the last to
// read its lock, sets it back to zero; a caller whose workspace comes from a buffer whose
// locks every launch leaves zero (Arguments::locks_zero) then skips the memset. The partial
// tiles need no zeroing (the first unit of a tile stores, the later ones add), so the buffer's
// locks sit at a fixed place, the partial tiles of each launch in the bytes just before them:
// the workspace pointer given is where the locks start, and to_underlying_arguments places the
// partial tiles before it.
#pragma once

#include <cstdint>

#include <cutlass/gemm/kernel/tile_scheduler.hpp>

namespace gemmtiles {

// The tag that selects the scheduler below (cutlass::gemm::StreamKScheduler's counterpart).
struct StreamKLocksLeftZero {};

template <class TileShape, class ClusterShape>
class StreamKLocksLeftZeroScheduler
    : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamK<TileShape, ClusterShape> {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamK<TileShape, ClusterShape>;

 public:
  using Params = typename Base::Params;
  using WorkTileInfo = typename Base::WorkTileInfo;
  using BarrierType = typename Base::BarrierType;

  struct Arguments : Base::Arguments {
    // The workspace given starts at the locks, which are zero, with the partial tiles' bytes
    // (reduction_bytes) of scratch before it: no zeroing pass.
    bool locks_zero = false;
  };

  CUTLASS_HOST_DEVICE StreamKLocksLeftZeroScheduler() {}
  CUTLASS_DEVICE explicit StreamKLocksLeftZeroScheduler(Params const& params) : Base(params) {}

  // The bytes of partial tiles before the locks, as CUTLASS's fixup places them (fp32
  // accumulators; CUTLASS 4.2 runs no separate reduction).
  CUTLASS_HOST_DEVICE static uint64_t reduction_bytes(Params const& params) {
    const uint64_t tiles = params.divmod_splits_.divisor > 1 ? params.units_per_problem_ : params.sk_tiles_;
    return Params::get_reduction_workspace_size(tiles, cutlass::gemm::to_gemm_coord(TileShape{}), 32);
  }

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape problem_shape, TileShape tile_shape, ClusterShape cluster_shape,
                                        cutlass::KernelHardwareInfo const& hw_info, Arguments const& args,
                                        void* workspace, const uint32_t epilogue_subtile = 1,
                                        uint32_t ktile_start_alignment_count = 1u) {
    Params params = Base::to_underlying_arguments(problem_shape, tile_shape, cluster_shape, hw_info, args, workspace,
                                                  epilogue_subtile, ktile_start_alignment_count);
    if (args.locks_zero && workspace != nullptr)
      params.reduction_workspace_ = static_cast<uint8_t*>(workspace) - reduction_bytes(params);
    return params;
  }

  template <class ProblemShape, class ElementAccumulator>
  static cutlass::Status initialize_workspace(Arguments const& args, void* workspace, cudaStream_t stream,
                                              ProblemShape const& problem_shape,
                                              cutlass::KernelHardwareInfo const& hw_info, uint32_t mma_warp_groups,
                                              const uint32_t epilogue_subtile = 1,
                                              uint32_t num_accumulator_mtxs = 1,
                                              cutlass::CudaHostAdapter* cuda_adapter = nullptr) {
    if (args.locks_zero) return cutlass::Status::kSuccess;
    return Base::template initialize_workspace<ProblemShape, ElementAccumulator>(
        args, workspace, stream, problem_shape, hw_info, mma_warp_groups, epilogue_subtile, num_accumulator_mtxs,
        cuda_adapter);
  }

  // CUTLASS's fixup, then the tile's lock back to zero by the unit that finishes the tile: it
  // waited for every other unit's arrival, so no one reads the lock again in this launch. (Its
  // warpgroup's threads have all passed that wait: the wait ends in a barrier of the group.)
  template <class FrgTensorC>
  CUTLASS_DEVICE static void fixup(Params const& params, WorkTileInfo const& work_tile_info, FrgTensorC& accumulators,
                                   uint32_t num_barriers, uint32_t barrier_idx) {
    static_assert(sizeof(typename FrgTensorC::value_type) == 4, "reduction_bytes counts fp32 partial tiles");
    Base::fixup(params, work_tile_info, accumulators, num_barriers, barrier_idx);
    if (Base::requires_fixup(params, work_tile_info) && Base::compute_epilogue(work_tile_info, params) &&
        !params.requires_separate_reduction() && threadIdx.x % cutlass::NumThreadsPerWarpGroup == 0) {
      BarrierType* locks =
          reinterpret_cast<BarrierType*>(static_cast<uint8_t*>(params.reduction_workspace_) + reduction_bytes(params));
      locks[Base::output_tile_index(params, work_tile_info) * num_barriers + barrier_idx] = 0;
    }
  }
};

}  // namespace gemmtiles

namespace cutlass::gemm::kernel::detail {
template <class TileShape, class ClusterShape, uint32_t SchedulerPipelineStageCount>
struct TileSchedulerSelector<gemmtiles::StreamKLocksLeftZero, arch::Sm90, TileShape, ClusterShape,
                             SchedulerPipelineStageCount> {
  using Scheduler = gemmtiles::StreamKLocksLeftZeroScheduler<TileShape, ClusterShape>;
};
}  // namespace cutlass::gemm::kernel::detail
