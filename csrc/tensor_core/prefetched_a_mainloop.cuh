// tf32's mainloop for an MMA A operand that lives in registers (an M-major A: TF32 wgmma
// reads such an operand from registers only, so each K slice of it is copied from shared
// memory into registers, transposed, before its wgmmas issue).
//
// CUTLASS's register-A mainloop copies one 8-deep k block ahead of the wgmma that reads it
// and keeps two k blocks in flight: every k block waits on its own copy and fence, and the
// tensor cores see at most two 64 x N x 8 wgmmas queued. Here the registers hold two whole
// K slices (of 32) in turn: a slice's four k blocks issue as one batch, and while they run
// the next slice's A is copied into the other set, once the batch before (which read that
// set) is done. The tensor cores always have a slice queued behind the running one; the
// copy's latency and the fence sit beside a whole slice's math instead of in front of each
// k block. 2 x 16 registers of A per thread (a 64 x 32 slice per warpgroup).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

namespace gemmtiles {

template <class Base>
struct PrefetchedAMainloop : Base {
  using MainloopPipeline = typename Base::MainloopPipeline;
  using PipelineState = typename Base::PipelineState;
  using TiledMma = typename Base::TiledMma;
  static_assert(!Base::SwapAB && !Base::TransposeB,
                "the caller swaps: A is the M-major operand, B K-major, as shared memory holds them");

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, typename Base::TensorStorage& shared_tensors,
                          typename Base::Params const&) {
    using namespace cute;
    // (BLK_M,BLK_K,PIPE) and (BLK_N,BLK_K,PIPE)
    Tensor sA = as_position_independent_swizzle_tensor(
        make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), typename Base::SmemLayoutA{}));
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), typename Base::SmemLayoutB{});
    constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
    const Layout warp_groups = make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int warp_group = __shfl_sync(0xFFFFFFFF, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_thread_slice(thread_idx);
    auto group_mma = tiled_mma.get_slice(warp_groups(warp_group));
    Tensor even = thread_mma.partition_fragment_A(sA(_, _, Int<0>{}));  // (MMA,MMA_M,MMA_K)
    Tensor odd = make_fragment_like(even);
    Tensor tCrB = group_mma.make_fragment_B(group_mma.partition_B(sB));  // (MMA,MMA_N,MMA_K,PIPE)
    auto copy_a = make_tiled_copy_A(typename Base::InternalSmemCopyAtomA{}, tiled_mma);
    auto thread_copy_a = copy_a.get_thread_slice(thread_idx);
    Tensor tCsA = thread_copy_a.partition_S(sA);  // (CPY,CPY_M,CPY_K,PIPE)
    Tensor even_copy = thread_copy_a.retile_D(even), odd_copy = thread_copy_a.retile_D(odd);
    constexpr int kBlocks = size<2>(even);

    if (k_tile_count <= 0) {
      clear(accum);
      return;
    }
    // A's slice in `stage` into the registers of `dst` (one of the two sets, retiled).
    auto load = [&](auto& dst, int stage) {
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < kBlocks; ++k) copy(copy_a, tCsA(_, _, k, stage), dst(_, _, k));
    };
    PipelineState release = smem_pipe_read;
    bool first = true;
    // Issues the slice in `stage` from registers `cur`; once the slice before is done, gives
    // its stage back and copies the next slice into `next`, which that slice read.
    auto step = [&](auto& cur, auto& next, auto& next_copy) {
      const int stage = smem_pipe_read.index();
      warpgroup_fence_operand(cur);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < kBlocks; ++k) {
        cute::gemm(tiled_mma, cur(_, _, k), tCrB(_, _, k, stage), accum);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      warpgroup_wait<1>();
      warpgroup_fence_operand(next);
      if (!first) {
        pipeline.consumer_release(release);
        ++release;
      }
      first = false;
      ++smem_pipe_read;
      if (k_tile_count > 1) {
        pipeline.consumer_wait(smem_pipe_read, pipeline.consumer_try_wait(smem_pipe_read));
        load(next_copy, smem_pipe_read.index());
      }
      --k_tile_count;
    };

    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
    warpgroup_fence_operand(accum);
    pipeline.consumer_wait(smem_pipe_read, pipeline.consumer_try_wait(smem_pipe_read));
    load(even_copy, smem_pipe_read.index());
    CUTLASS_PRAGMA_NO_UNROLL
    while (k_tile_count > 0) {
      step(even, odd, odd_copy);
      if (k_tile_count == 0) break;
      step(odd, even, even_copy);
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(even);
    warpgroup_fence_operand(odd);
    pipeline.consumer_release(release);
    warpgroup_fence_operand(accum);
  }

  // Every stage was released inside mma.
  CUTLASS_DEVICE void mma_tail(MainloopPipeline, PipelineState, int) {}
};

}  // namespace gemmtiles
