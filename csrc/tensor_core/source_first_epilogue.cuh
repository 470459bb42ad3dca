// tf32's epilogue for outputs of any alignment: CUTLASS's DefaultEpilogue (each thread writes
// its accumulators straight to global memory, a float at a time) with C's elements loaded
// ahead of their use. CUTLASS's loop loads one element of C, computes and stores its output,
// then loads the next, through volatile asm that the compiler keeps in that order, so every
// element of a thread's tile waits out a global load's latency, one after another: with
// beta != 0 the epilogue of a tile took longer than its K loop on products of few rows.
// Here the loads of a chunk of kChunk elements are issued first, then their outputs computed
// and stored: one latency a chunk. The stores, the predicates at the problem's edges and
// everything else are DefaultEpilogue's.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/memory.h>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/default_epilogue.hpp>
#include <cutlass/epilogue/collective/detail.hpp>

namespace gemmtiles {

template <class Base, int kChunk = 32>
class SourceFirstEpilogue : public Base {
 public:
  using Params = typename Base::Params;
  using SharedStorage = typename Base::SharedStorage;
  using ThreadEpilogueOp = typename Base::ThreadEpilogueOp;

  CUTLASS_HOST_DEVICE
  SourceFirstEpilogue(Params const& params, SharedStorage const& shared = SharedStorage())
      : Base(params, shared), params_(params), op_(params.thread) {}

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_MNK,
                                 BlockCoordMNKL blk_coord_mnkl,
                                 cute::Tensor<FrgEngine, FrgLayout> const& accumulators, TiledMma tiled_mma,
                                 ResidueMNK residue_mnk, int thread_idx, char* smem) {
    using namespace cute;
    using X = Underscore;
    if (!op_.is_source_needed()) {
      // Stores alone: nothing waits on a load.
      Base::operator()(problem_shape_mnkl, blk_shape_MNK, blk_coord_mnkl, accumulators, tiled_mma, residue_mnk,
                       thread_idx, smem);
      return;
    }
    static_assert(is_static<FrgLayout>::value, "Accumulator layout must be static");
    // As DefaultEpilogue: the output tensors, this block's tile, each thread's elements of it.
    auto M = get<0>(problem_shape_mnkl);
    auto N = get<1>(problem_shape_mnkl);
    auto L = get<3>(problem_shape_mnkl);
    auto stride_c = cutlass::epilogue::collective::detail::get_epilogue_stride<typename Base::EpilogueSchedule>(
        params_.dC);
    auto stride_d = cutlass::epilogue::collective::detail::get_epilogue_stride<typename Base::EpilogueSchedule>(
        params_.dD);
    Tensor mC_mnl = make_tensor(make_gmem_ptr<typename Base::GmemElementC>(params_.ptr_C), make_shape(M, N, L),
                                stride_c);
    Tensor mD_mnl = make_tensor(make_gmem_ptr(params_.ptr_D), make_shape(M, N, L), stride_d);
    Tensor gC_mnl = local_tile(mC_mnl, blk_shape_MNK, make_coord(_, _, _), Step<_1, _1, X>{});
    Tensor gD_mnl = local_tile(mD_mnl, blk_shape_MNK, make_coord(_, _, _), Step<_1, _1, X>{});
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord_mnkl;
    Tensor gC = gC_mnl(_, _, m_coord, n_coord, l_coord);
    Tensor gD = gD_mnl(_, _, m_coord, n_coord, l_coord);
    auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor tCgD = thr_mma.partition_C(gD);
    Tensor tCgC = thr_mma.partition_C(gC);
    auto shape_MN = make_shape(M, N);
    Tensor mD_crd = make_identity_tensor(shape_MN);
    Tensor cD_mn = local_tile(mD_crd, take<0, 2>(blk_shape_MNK), make_coord(m_coord, n_coord));
    Tensor tCcD_mn = thr_mma.partition_C(cD_mn);
    Tensor cD = make_coord_tensor(cD_mn.layout());
    Tensor tCcD = make_coord_tensor(tCcD_mn.layout());
    auto residue_cD = shape_MN - cD_mn(_0{});
    auto residue_tCcD = shape_MN - tCcD_mn(_0{});
    if (not elem_less(repeat_like(residue_cD, _0{}), residue_cD)) return;  // the tile lies past the output

    using FragCType = remove_cvref_t<decltype(tCgC(0))>;
    using FragDType = remove_cvref_t<decltype(tCgD(0))>;
    constexpr int kCount = decltype(size(accumulators))::value;
    constexpr int kStep = kChunk < kCount ? kChunk : kCount;
    static_assert(kCount % kStep == 0, "whole chunks of a thread's elements");
    CUTLASS_PRAGMA_UNROLL
    for (int first = 0; first < kCount; first += kStep) {
      FragCType source[kStep];
      bool in_bounds[kStep];
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kStep; ++j) {
        in_bounds[j] = elem_less(tCcD(first + j), residue_tCcD);
        cutlass::arch::global_load<FragCType, sizeof(FragCType)>(source[j], &tCgC(first + j), in_bounds[j]);
      }
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kStep; ++j) {
        FragDType out = op_(accumulators(first + j), source[j]);
        cutlass::arch::global_store<FragDType, sizeof(FragDType)>(out, &tCgD(first + j), in_bounds[j]);
      }
    }
  }

 private:
  Params params_;
  ThreadEpilogueOp op_;
};

// The builder's no-shared-memory epilogue (Sm90TmaWarpSpecializedAdapter around
// DefaultEpilogue) with SourceFirstEpilogue inside, where kApply; Built as it is elsewhere.
template <class Built, bool kApply>
struct SourceFirstIf {
  using type = Built;
};
template <class Default>
struct SourceFirstIf<cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<Default>, true> {
  using type = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<SourceFirstEpilogue<Default>>;
};

}  // namespace gemmtiles
