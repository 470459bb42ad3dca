// CUTLASS's SIMT SGEMM for `auto` (csrc/auto/cutlass_simt.h): one instantiation per layout of
// A and B, on the tile that auto/plan.h's cutlass_tile names for it (the fastest of the tiles
// tried for that layout: docs/ladder.md).
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm.h>

#include <type_traits>

#include <c10/util/Exception.h>

#include "plan.h"
#include "cutlass_simt.h"

namespace gemmtiles {
namespace {

// A and B K-major (row-major A; column-major B) or not.
template <bool A_KMAJOR, bool B_KMAJOR>
void run(const GemmProblem& p, int64_t lda, int64_t ldb, cudaStream_t stream) {
  using Row = cutlass::layout::RowMajor;
  using Col = cutlass::layout::ColumnMajor;
  constexpr CutlassTile kTile = cutlass_tile(A_KMAJOR, B_KMAJOR);
  using Gemm = cutlass::gemm::device::Gemm<
      float, std::conditional_t<A_KMAJOR, Row, Col>, float, std::conditional_t<B_KMAJOR, Col, Row>, float, Row, float,
      cutlass::arch::OpClassSimt, cutlass::arch::Sm80, cutlass::gemm::GemmShape<kTile.bm, kTile.bn, 8>,
      cutlass::gemm::GemmShape<64, 64, 8>, cutlass::gemm::GemmShape<1, 1, 1>,
      cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, /*Stages=*/4, /*AlignmentA=*/1,
      /*AlignmentB=*/1>;
  const CutlassSource c = cutlass_source(p);
  typename Gemm::Arguments args({static_cast<int>(p.M), static_cast<int>(p.N), static_cast<int>(p.K)},
                                {p.a, lda}, {p.b, ldb}, {c.c, c.ldc}, {p.out, p.out_rs}, {p.alpha, c.beta});
  Gemm gemm;
  const cutlass::Status status = gemm(args, nullptr, stream);
  TORCH_CHECK(status == cutlass::Status::kSuccess, "gemmtiles: auto's CUTLASS SIMT kernel did not launch: ",
              cutlass::cutlassGetStatusString(status));
}

}  // namespace

void launch_cutlass_simt(const GemmProblem& p, cudaStream_t stream) {
  const bool a_k = a_kmajor(p), b_k = b_kmajor(p);
  const int64_t lda = a_ld(p), ldb = b_ld(p);
  if (a_k && !b_k) return run<true, false>(p, lda, ldb, stream);
  if (a_k) return run<true, true>(p, lda, ldb, stream);
  if (!b_k) return run<false, false>(p, lda, ldb, stream);
  run<false, true>(p, lda, ldb, stream);
}

}  // namespace gemmtiles
