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

// The configurations of the ladder (one each). thread_tile to double_buffer share one tile
// shape, so that neighbouring tiers differ in their idea only.
using Naive = NaiveConfig<32, 8>;
using Coalesced = CoalescedConfig<8, 32>;
using Smem = SmemConfig<16>;
using Unroll = TileConfig<Shape<64, 64, 8>, Shape<8, 1>>;
using Tiles128 = TileConfig<Shape<128, 128, 8>, Shape<8, 8>>;
using Tiles128TwoBlocks = TileConfig<Shape<128, 128, 8>, Shape<8, 8>, /*MIN_BLOCKS=*/2>;

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

void launch_thread_tile(const GemmProblem& p) {
  launch_tier<Tiles128>(p, thread_tile_kernel<Tiles128>, "thread_tile");
}
GEMMTILES_CUDA_TIER(thread_tile, Operands::kStrided, launch_thread_tile);

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
}  // namespace gemmtiles
