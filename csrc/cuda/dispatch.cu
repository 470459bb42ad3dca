// CUDA registrations of the ladder tiers: one GEMMTILES_CUDA_TIER line beside each launcher
// (launch.h: checks, device guard, layout normalisation, launch on the current stream).
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

// The scalar tiers read any strides in place; the float4 teaching tiers read row-major
// operands (others are copied).
void launch_naive(const GemmProblem& p) { launch_tier<NaiveTier>(p, naive_kernel, "naive"); }
GEMMTILES_CUDA_TIER(naive, Operands::kStrided, launch_naive);

void launch_coalesced(const GemmProblem& p) {
  launch_tier<CoalescedTier>(p, coalesced_kernel, "coalesced");
}
GEMMTILES_CUDA_TIER(coalesced, Operands::kStrided, launch_coalesced);

void launch_smem(const GemmProblem& p) { launch_tier<Smem>(p, smem_kernel<16>, "smem"); }
GEMMTILES_CUDA_TIER(smem, Operands::kStrided, launch_smem);

void launch_unroll(const GemmProblem& p) {
  launch_tier<Unroll>(p, unroll_kernel<64, 64, 8, 8>, "unroll");
}
GEMMTILES_CUDA_TIER(unroll, Operands::kStrided, launch_unroll);

void launch_thread_tile(const GemmProblem& p) {
  launch_tier<Tiles128>(p, thread_tile_kernel<128, 128, 8, 8, 8>, "thread_tile");
}
GEMMTILES_CUDA_TIER(thread_tile, Operands::kStrided, launch_thread_tile);

void launch_vectorized(const GemmProblem& p) {
  launch_tier<Tiles128>(p, vectorized_kernel<128, 128, 8, 8, 8>, "vectorized");
}
GEMMTILES_CUDA_TIER(vectorized, Operands::kRowMajor, launch_vectorized);

void launch_bank_free(const GemmProblem& p) {
  launch_tier<Tiles128>(p, bank_free_kernel<128, 128, 8, 8, 8>, "bank_free");
}
GEMMTILES_CUDA_TIER(bank_free, Operands::kRowMajor, launch_bank_free);

void launch_double_buffer(const GemmProblem& p) {
  launch_tier<Tiles128>(p, double_buffer_kernel<128, 128, 8, 8, 8>, "double_buffer");
}
GEMMTILES_CUDA_TIER(double_buffer, Operands::kRowMajor, launch_double_buffer);

}  // namespace
}  // namespace gemmtiles
