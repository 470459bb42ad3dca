// CUDA registrations of the ladder tiers: one GEMMTILES_CUDA_TIER line beside each launcher
// (launch.h: checks, device guard, layout normalisation, launch on the current stream).
#include "configs.h"
#include "../core/launch.h"

namespace gemmtiles {
namespace {

// The scalar tiers read any strides in place; the float4 teaching tiers read row-major
// operands (others are copied).
void launch_naive(const GemmProblem& p) { launch_tier<Naive>(p, naive_kernel<Naive>, "naive"); }
GEMMTILES_CUDA_TIER(naive, Operands::kStrided, launch_naive);

void launch_coalesced(const GemmProblem& p) {
  launch_tier<Coalesced>(p, coalesced_kernel<Coalesced>, "coalesced");
}
GEMMTILES_CUDA_TIER(coalesced, Operands::kStrided, launch_coalesced);

void launch_smem(const GemmProblem& p) { launch_tier<Smem>(p, smem_kernel<Smem>, "smem"); }
GEMMTILES_CUDA_TIER(smem, Operands::kStrided, launch_smem);

void launch_unroll(const GemmProblem& p) {
  launch_tier<Unroll>(p, unroll_kernel<Unroll>, "unroll");
}
GEMMTILES_CUDA_TIER(unroll, Operands::kStrided, launch_unroll);

void launch_vectorized(const GemmProblem& p) {
  launch_tier<Tiles128>(p, vectorized_kernel<Tiles128>, "vectorized");
}
GEMMTILES_CUDA_TIER(vectorized, Operands::kRowMajor, launch_vectorized);

void launch_bank_free(const GemmProblem& p) {
  launch_tier<Tiles128>(p, bank_free_kernel<Tiles128>, "bank_free");
}
GEMMTILES_CUDA_TIER(bank_free, Operands::kRowMajor, launch_bank_free);

void launch_double_buffer(const GemmProblem& p) {
  launch_tier<Tiles128TwoBlocks>(p, double_buffer_kernel<Tiles128TwoBlocks>, "double_buffer");
}
GEMMTILES_CUDA_TIER(double_buffer, Operands::kRowMajor, launch_double_buffer);

}  // namespace

void launch_thread_tile(const GemmProblem& p) {
  launch_tier<Tiles128>(p, thread_tile_kernel<Tiles128>, "thread_tile");
}
GEMMTILES_CUDA_TIER(thread_tile, Operands::kStrided, launch_thread_tile);

}  // namespace gemmtiles
