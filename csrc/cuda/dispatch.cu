// CUDA registrations of the tiers: argument checks, device guard, layout normalisation
// (prepare_gemm), and the launch on the current stream.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "../prepare.h"
#include "kernels/01_naive.cuh"
#include "kernels/02_coalesced.cuh"
#include "kernels/03_smem.cuh"
#include "kernels/04_unroll.cuh"
#include "kernels/05_thread_tile.cuh"
#include "kernels/06_vectorized.cuh"
#include "kernels/07_bank_free.cuh"
#include "kernels/08_double_buffer.cuh"
#include "launch.h"

namespace gemmtiles {
namespace {

// The instantiations of the ladder (one each): block tiles and thread tiles of the seeds.
using Smem = SmemTier<16>;
using Unroll = UnrollTier<64, 64, 8, 8>;
// thread_tile to double_buffer: 128 x 128 x 8 block tiles, 8 x 8 outputs per thread.
using Tiles128 = ThreadTiling<128, 128, 8, 8>;

void launch_naive(const GemmProblem& p) { launch_tier<NaiveTier>(p, naive_kernel, "naive"); }
void launch_coalesced(const GemmProblem& p) {
  launch_tier<CoalescedTier>(p, coalesced_kernel, "coalesced");
}
void launch_smem(const GemmProblem& p) { launch_tier<Smem>(p, smem_kernel<16>, "smem"); }
void launch_unroll(const GemmProblem& p) {
  launch_tier<Unroll>(p, unroll_kernel<64, 64, 8, 8>, "unroll");
}
void launch_thread_tile(const GemmProblem& p) {
  launch_tier<Tiles128>(p, thread_tile_kernel<128, 128, 8, 8, 8>, "thread_tile");
}
void launch_vectorized(const GemmProblem& p) {
  launch_tier<Tiles128>(p, vectorized_kernel<128, 128, 8, 8, 8>, "vectorized");
}
void launch_bank_free(const GemmProblem& p) {
  launch_tier<Tiles128>(p, bank_free_kernel<128, 128, 8, 8, 8>, "bank_free");
}
void launch_double_buffer(const GemmProblem& p) {
  launch_tier<Tiles128>(p, double_buffer_kernel<128, 128, 8, 8, 8>, "double_buffer");
}

// One op implementation per tier: checks and problem first (they raise before any work),
// then the launch under a guard of the inputs' device.
template <const char* kName, Operands kOperands, void (*kLaunch)(const GemmProblem&)>
at::Tensor tier_op(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& c,
                   double alpha, double beta) {
  TORCH_CHECK(a.is_cuda(), "gemmtiles::", kName, ": expected all tensors on one device, got a on ",
              a.device().str(), " and b on ", b.device().str());
  const c10::cuda::CUDAGuard guard(a.device());
  PreparedGemm g = prepare_gemm(kName, a, b, c, alpha, beta, kOperands);
  if (g.needs_kernel) kLaunch(g.p);
  return g.out;
}

constexpr char kNaive[] = "naive";
constexpr char kCoalesced[] = "coalesced";
constexpr char kSmem[] = "smem";
constexpr char kUnroll[] = "unroll";
constexpr char kThreadTile[] = "thread_tile";
constexpr char kVectorized[] = "vectorized";
constexpr char kBankFree[] = "bank_free";
constexpr char kDoubleBuffer[] = "double_buffer";
constexpr char kWarptile[] = "warptile";

}  // namespace
}  // namespace gemmtiles

TORCH_LIBRARY_IMPL(gemmtiles, CUDA, m) {
  using namespace gemmtiles;
  // The scalar tiers read any strides in place; the float4 teaching tiers read row-major
  // operands (others are copied); warptile reads row- and column-major operands in place.
  m.impl("naive", &tier_op<kNaive, Operands::kStrided, launch_naive>);
  m.impl("coalesced", &tier_op<kCoalesced, Operands::kStrided, launch_coalesced>);
  m.impl("smem", &tier_op<kSmem, Operands::kStrided, launch_smem>);
  m.impl("unroll", &tier_op<kUnroll, Operands::kStrided, launch_unroll>);
  m.impl("thread_tile", &tier_op<kThreadTile, Operands::kStrided, launch_thread_tile>);
  m.impl("vectorized", &tier_op<kVectorized, Operands::kRowMajor, launch_vectorized>);
  m.impl("bank_free", &tier_op<kBankFree, Operands::kRowMajor, launch_bank_free>);
  m.impl("double_buffer", &tier_op<kDoubleBuffer, Operands::kRowMajor, launch_double_buffer>);
  m.impl("warptile", &tier_op<kWarptile, Operands::kUnitStride, launch_warptile>);
}
