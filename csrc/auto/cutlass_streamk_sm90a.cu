// CUTLASS's SIMT SGEMM with stream-K scheduling for `auto` (csrc/auto/cutlass_simt.h), for
// nn.Linear's layout (A row-major, B = W^T column-major: both K-major). So that a last wave of
// tiles no longer idles most of the GPU, CUTLASS's schedule runs whole tiles data-parallel
// while they fill whole waves (keeping the last whole wave, where there is one, for the shared
// part) and cuts the k iterations of the rest into equal shares, about one block per SM; the
// blocks of one tile add their partial tiles through a workspace in a fixed order (CUTLASS's
// turnstile, kMixed: the same bits on every run). Where its model of the waves finds no gain it
// runs every tile data-parallel.
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>

#include "plan.h"
#include "cutlass_simt.h"

namespace gemmtiles {

namespace {

// 256 x 128 x 8 tiles of eight warps of 64 x 64, four stages of single-float cp.async copies:
// the fastest of 128 x 256, 256 x 128 and 128 x 128 tiles with stream-K for 1024-row
// x @ W^T (docs/ladder.md).
using StreamK = cutlass::gemm::device::GemmUniversal<
    float, cutlass::layout::RowMajor, float, cutlass::layout::ColumnMajor, float, cutlass::layout::RowMajor, float,
    cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<kCutlassStreamKTile.bm, kCutlassStreamKTile.bn, 8>, cutlass::gemm::GemmShape<64, 64, 8>,
    cutlass::gemm::GemmShape<1, 1, 1>, cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
    cutlass::gemm::threadblock::ThreadblockSwizzleStreamK, /*Stages=*/4, /*AlignmentA=*/1, /*AlignmentB=*/1>;

}  // namespace

void launch_cutlass_streamk(const GemmProblem& p, cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(cutlass_streamk_takes(p), "gemmtiles: auto planned its stream-K kernel for a problem it "
                        "does not take (it takes one product of K-major A and B)");
  const int64_t lda = a_ld(p), ldb = b_ld(p);
  const CutlassSource c = cutlass_source(p);
  typename StreamK::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm,
                                   {static_cast<int>(p.M), static_cast<int>(p.N), static_cast<int>(p.K)},
                                   /*batch_split=*/1, {p.alpha, c.beta}, p.a, p.b, c.c, p.out,
                                   /*batch strides*/ 0, 0, 0, 0, lda, ldb, c.ldc, p.out_rs);
  // The workspace (partial tiles and the turnstile's flags, which initialize() zeroes on the
  // stream) comes from the caching allocator, on this stream: freed when this call returns,
  // reused only by work queued after the kernel.
  const size_t bytes = StreamK::get_workspace_size(args);
  const c10::DataPtr ws = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
  StreamK gemm;
  cutlass::Status status = gemm.can_implement(args);
  if (status == cutlass::Status::kSuccess) status = gemm.initialize(args, ws.get(), stream);
  if (status == cutlass::Status::kSuccess) status = gemm.run(stream);
  TORCH_CHECK(status == cutlass::Status::kSuccess, "gemmtiles: auto's CUTLASS stream-K kernel did not launch: ",
              cutlass::cutlassGetStatusString(status));
}

}  // namespace gemmtiles
