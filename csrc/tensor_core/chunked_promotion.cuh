// tf32x3's mainloop, in two phases over K' = [A_lo·B_hi | A_hi·B_lo | A_hi·B_hi]:
//
// 1. The correction sections (the first `mma_promotion_interval` K slices: the kernel's
//    argument of that name carries the count) are summed by the tensor cores straight into
//    the accumulators, one 64 x 256 wgmma per warpgroup and k-step, as a plain TF32 GEMM
//    would. Each of their products is below 2^-11 of hi·hi's, so the tensor cores'
//    truncating accumulation costs nothing visible on the result (the error table in
//    docs/tensor-cores.md did not move), and a whole-width wgmma reads A from shared memory once
//    per slice.
// 2. The hi·hi section is promoted: CUTLASS's promoted SS mainloop (each K slice summed by
//    the tensor cores into zeroed registers, then added to the fp32 accumulators by
//    round-to-nearest FADDs), with the slice's partial sums taken 64 columns at a time
//    through two sets of registers.
//
// Promotion needs a second set of accumulators. Over a whole 128 x 256 tile that is 2 x 128
// registers per consumer thread, which spills; CUTLASS's own promoted mainloop therefore ran
// on 128 x 128 tiles (64 + 64 registers), loading 32 KB of A and B per 0.5 M multiply-adds of
// a slice. Here the tile is 128 x 256 (48 KB per 1 M) and the tiled MMA is 64 x 64 per
// warpgroup, so a slice is MMA_N = 4 chunks of 64 columns; each chunk's partial sums take 32
// registers, in two sets used in turn: chunk n's wgmmas run in the tensor cores while chunk
// n - 1's sums are added. Within a slice a warpgroup keeps wgmmas in flight; at the slice's
// end it drains (wait, add the last chunk, release the stage, wait for the next one) while
// the other warpgroup's wgmmas run. One set of 128-column partials, waited for before each add,
// was slower; running the chunk pipeline on across slices made ptxas serialise the wgmmas.
// 128 + 2 x 32 registers stay live. The 64-column chunks read A from shared memory
// four times per slice, which keeps shared memory the busiest unit: promoting every slice
// (phase 2 alone) ran clearly slower than the two phases (docs/tensor-cores.md).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

namespace gemmtiles {

// Chunk kN's set of partial sums: even chunks in the first, odd ones in the second.
template <int kN, class Partial>
CUTLASS_DEVICE Partial& chunk_buffer(Partial& even, Partial& odd) {
  if constexpr (kN % 2 == 1) return odd;
  else return even;
}

// Base's slice shape with one 64 x 256 wgmma atom per warpgroup (two warpgroups along M): the
// correction sections' MMA, straight into the accumulators.
using Whole256Mma = decltype(cute::make_tiled_mma(
    cute::GMMA::ss_op_selector<cute::tfloat32_t, cute::tfloat32_t, float,
                               cute::Shape<cute::_64, cute::_256, cute::_32>, cute::GMMA::Major::K,
                               cute::GMMA::Major::K>(),
    cute::Layout<cute::Shape<cute::_2, cute::_1, cute::_1>>{}));

template <class Base>
struct ChunkedPromotionMainloop : Base {
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& shared_tensors,
                          Params const& params) {
    using namespace cute;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
    const Layout warp_groups = make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int warp_group = __shfl_sync(0xFFFFFFFF, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_slice(warp_groups(warp_group));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,MMA_M,MMA_K,PIPE)
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,MMA_N,MMA_K,PIPE)
    constexpr int kM = size<1>(tCrA), kChunks = size<1>(tCrB), kBlocks = size<2>(tCrA);
    static_assert(kM == size<1>(FrgTensorC{}) && kChunks == size<2>(FrgTensorC{}),
                  "accumulators shaped (MMA, MMA_M, MMA_N)");

    clear(accum);

    // The first `unpromoted` K slices (the correction sections, each product below 2^-11 of
    // hi·hi's) are summed by the tensor cores straight into the accumulators with whole
    // 64 x 256 wgmmas per warpgroup: A is read from shared memory once per slice instead of
    // once per 64-column chunk, and no FADDs run. Their rounding, relative to terms that
    // small, stays far below fp32's on the result.
    static_assert(kChunks * 64 == 256 && kM == 1, "the whole-tile MMA covers the chunks' 64 x 256");
    const int unpromoted = k_tile_count < int(params.mma_promotion_interval)
                               ? k_tile_count : int(params.mma_promotion_interval);
    if (unpromoted > 0) {
      Whole256Mma whole_mma;
      auto whole_thread = whole_mma.get_slice(warp_groups(warp_group));
      Tensor wA = whole_thread.make_fragment_A(whole_thread.partition_A(sA));  // (MMA,1,MMA_K,PIPE)
      Tensor wB = whole_thread.make_fragment_B(whole_thread.partition_B(sB));  // (MMA,1,MMA_K,PIPE)
      // The accumulators as the whole atom's fragment: the chunks' registers are its 64-column
      // groups in order, so (v, 0, n) of the chunked layout is value 32 n + v of the whole.
      Tensor whole = make_tensor(accum.data(), Layout<Shape<Shape<_2, _2, _32>, _1, _1>>{});
      constexpr int kWholeBlocks = size<2>(wA);
      whole_mma.accumulate_ = GMMA::ScaleOut::One;
      PipelineState release = smem_pipe_read;
      warpgroup_fence_operand(accum);
      CUTLASS_PRAGMA_NO_UNROLL
      for (int t = 0; t < unpromoted; ++t) {
        pipeline.consumer_wait(smem_pipe_read, pipeline.consumer_try_wait(smem_pipe_read));
        const int stage = smem_pipe_read.index();
        warpgroup_arrive();
        CUTLASS_PRAGMA_UNROLL
        for (int k = 0; k < kWholeBlocks; ++k)
          cute::gemm(whole_mma, wA(_, _, k, stage), wB(_, _, k, stage), whole);
        warpgroup_commit_batch();
        warpgroup_wait<1>();  // the slice before is done: its stage goes back to the producer
        if (t > 0) {
          pipeline.consumer_release(release);
          ++release;
        }
        ++smem_pipe_read;
      }
      warpgroup_wait<0>();
      pipeline.consumer_release(release);
      warpgroup_fence_operand(accum);
      k_tile_count -= unpromoted;
    }

    // Partial sums of one chunk for each of the warpgroup's MMA_M rows of atoms: even chunks
    // in partial0, odd ones in partial1.
    Tensor partial0 = make_fragment_like(accum(_, _, 0));  // (MMA,MMA_M)
    Tensor partial1 = make_fragment_like(accum(_, _, 0));
    auto promote = [&](auto n) {
      constexpr int kN = decltype(n)::value;
      auto& partial = chunk_buffer<kN>(partial0, partial1);
      warpgroup_fence_operand(partial);
      CUTLASS_PRAGMA_UNROLL
      for (int m = 0; m < kM; ++m)
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size<0>(partial); ++i) accum(i, m, kN) += partial(i, m);
    };
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      pipeline.consumer_wait(smem_pipe_read, pipeline.consumer_try_wait(smem_pipe_read));
      const int stage = smem_pipe_read.index();
      for_each(make_int_sequence<kChunks>{}, [&](auto n) {
        constexpr int kN = decltype(n)::value;
        auto& partial = chunk_buffer<kN>(partial0, partial1);
        warpgroup_fence_operand(partial);
        warpgroup_arrive();
        CUTLASS_PRAGMA_UNROLL
        for (int m = 0; m < kM; ++m) {
          tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
          CUTLASS_PRAGMA_UNROLL
          for (int k = 0; k < kBlocks; ++k) {
            cute::gemm(tiled_mma, tCrA(_, m, k, stage), tCrB(_, kN, k, stage), partial(_, m));
            tiled_mma.accumulate_ = GMMA::ScaleOut::One;
          }
        }
        warpgroup_commit_batch();
        if constexpr (kN > 0) {
          warpgroup_wait<1>();  // chunk n - 1 done, chunk n in flight
          promote(Int<kN - 1>{});
        }
      });
      warpgroup_wait<0>();
      promote(Int<kChunks - 1>{});
      pipeline.consumer_release(smem_pipe_read);
      ++smem_pipe_read;
    }
  }

  // Every stage was released inside mma.
  CUTLASS_DEVICE void mma_tail(MainloopPipeline, PipelineState, int) {}
};

}  // namespace gemmtiles
