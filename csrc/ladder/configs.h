// The configuration each ladder tier launches with (one each), torch-free so that the
// standalone checks (scripts/hip_ladder.hip, scripts/tune_warptile.cu) instantiate exactly
// what the extension does.
#pragma once

#include "01_naive.cuh"
#include "02_coalesced.cuh"
#include "03_smem.cuh"
#include "04_unroll.cuh"
#include "05_thread_tile.cuh"
#include "06_vectorized.cuh"
#include "07_bank_free.cuh"
#include "08_double_buffer.cuh"
#include "09_warptile.cuh"

namespace gemmtiles {

using Naive = NaiveConfig<32, 8>;
// A warp (wavefront) along a row of C: kWarpSize consecutive columns.
using Coalesced = CoalescedConfig<256 / kWarpSize, kWarpSize>;
using Smem = SmemConfig<16>;
using Unroll = TileConfig<Shape<64, 64, 8>, Shape<8, 1>>;
// thread_tile to double_buffer share one tile shape, so that neighbouring tiers differ in
// their idea only.
using Tiles128 = TileConfig<Shape<128, 128, 8>, Shape<8, 8>>;
using Tiles128TwoBlocks = TileConfig<Shape<128, 128, 8>, Shape<8, 8>, /*MIN_BLOCKS=*/2>;

// warptile: 128 x 256 block tile, 16 x 8 outputs per thread: the most FMAs per shared load,
// one block per SM (a little faster than 256 x 128 at 8192^3: scripts/tune_warptile.cu,
// docs/ladder.md). 128 x 128, 8 x 8 per thread, two blocks per SM: for problems
// with too few large tiles to fill the GPU. A 64-lane wavefront takes a warp tile twice as
// tall, so that the block keeps its 256 threads and each lane its fragment.
inline constexpr int kWarpRows = 64 * kWarpSize / 32;
using WarptileLarge = WarptileConfig<Shape<128, 256, 8>, Shape<kWarpRows, 64>, Shape<8, 4>, /*WNITER=*/2>;
using WarptileSmall =
    WarptileConfig<Shape<128, 128, 8>, Shape<kWarpRows, 32>, Shape<4, 4>, /*WNITER=*/2, /*MIN_BLOCKS=*/2>;

}  // namespace gemmtiles
