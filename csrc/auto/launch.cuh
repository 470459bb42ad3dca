// The kernels of the `auto` tier's own plans (auto/plan.h) and their launch: the skinny kernels
// (auto/skinny.cuh) for up to 16 rows, warptile's kernel on 32-row tiles and the pipelined kernel
// (auto/pipelined_tile.cuh) on 64-row ones (warptile's where it does not take the operands) split
// along K for up to a few thousand rows, and for more the pipelined 128 x 128 tile or, for operands
// it does not take, warptile's 128 x 256, K split where the tiles are too few. Torch-free, so that
// scripts/tune_auto.cu times exactly what auto.cu runs; the caller provides the workspace
// (auto_workspace floats) and checks the launches.
//
// Split K for the tile kernel: a problem with too few output tiles for the GPU (33 to a few
// hundred rows against a 4096-wide weight make 32-100 tiles of 128 x 128 for 132 SMs) runs the
// whole tile grid once per slice of K, each slice writing its partial product to the
// workspace; split_k_reduce_kernel then adds the slices in a fixed order and applies alpha,
// beta and c, so the result is the same bits on every run (the pipelined tile on Hopper adds
// them in a thread-block cluster instead: cluster_reduce). 32- and 64-row tiles waste no
// arithmetic on rows that do not exist.
#pragma once

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "plan.h"
#include "../ladder/configs.h"
#include "skinny.cuh"
#include "gemv.cuh"
#include "pipelined_tile.cuh"

namespace gemmtiles {

// The split-K tile configurations (kSplitTiles in auto/plan.h): 32 x 128 (2 warps) and
// 64 x 128 (4 warps) with warptile's 4 x 4 fragments and several blocks per SM (168 and 165
// registers, no spills), and warptile's large 128 x 256 tile (WarptileLarge).
using SplitTile32 = WarptileConfig<Shape<32, 128, 8>, Shape<32, 64>, Shape<4, 4>, 2, /*MIN_BLOCKS=*/6>;
using SplitTile64 = WarptileConfig<Shape<64, 128, 8>, Shape<64, 32>, Shape<4, 4>, 2, /*MIN_BLOCKS=*/3>;
// The pipelined 128-row tile (kAsyncTile): 128 x 128, four warps of 64 x 64 with 16 x 8 outputs
// per thread, two blocks per SM (209-254 registers with nvcc 13, no spills; 25-51 KB of
// shared memory). Slices of 16 k, three stages, where A and B are both K-major (nn.Linear's
// x @ W^T) or both M-major (weight gradients); slices of 8 for the others, four stages for
// NN: for each layout the fastest slice depth (8 or 16) and stage count (three or four) tried,
// TT's three stages as fast as four. 32-deep slices with two stages, or 16 k with four
// stages, were slower; warptile's 128 x 256 runs 4096^3 NT and NN slower than this tile
// (docs/auto.md, docs/ladder.md).
template <bool A_KMAJOR, bool B_KMAJOR>
using AsyncTileFor = AsyncTileConfig<Shape<128, 128, A_KMAJOR == B_KMAJOR ? 16 : 8>, Shape<64, 64>, Shape<16, 8>,
                                     /*STAGES=*/A_KMAJOR && !B_KMAJOR ? 4 : 3, /*MIN_BLOCKS=*/2>;
using AsyncTile = AsyncTileFor<true, true>;
// The pipelined kernel on the 64-row split tile (kAsyncTile64), row-major A: 64 x 128, four
// warps of 32 x 64 with 8 x 8 outputs per thread (warptile's 64-row tile's 64 accumulators),
// three blocks per SM, 16-deep slices three stages deep for B either way: at the best split
// of each, faster than warptile's 64-row tile on NN and NT (docs/auto.md). 8-deep slices four
// stages deep, as the 128-row tile's NN, and 8-deep three stages deep with four blocks per SM
// were slower.
template <bool B_KMAJOR>
using AsyncTile64For = AsyncTileConfig<Shape<64, 128, 16>, Shape<32, 64>, Shape<8, 8>, /*STAGES=*/3, /*MIN_BLOCKS=*/3>;
static_assert(AsyncTile64For<true>::BM == kAsyncTile64.bm && AsyncTile64For<true>::BN == kAsyncTile64.bn,
              "auto_plan models this tile");
static_assert(AsyncTile::BM == kAsyncTile.bm && AsyncTile::BN == kAsyncTile.bn, "auto_plan models this tile");

// cudaLaunchKernelEx's configuration with its attributes, which it holds (the configuration
// points to them: neither copied nor moved): blocks in clusters of `cluster` (spread: each
// cluster's blocks asked to go to SMs of their own), or (no cluster) a programmatic dependent of
// the stream's preceding kernel.
struct LaunchConfig {
  cudaLaunchAttribute attributes[2]{};
  cudaLaunchConfig_t config{};
  LaunchConfig(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const dim3* cluster, bool spread = false) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = attributes;
    config.numAttrs = 1;
    if (cluster) {
      attributes[0].id = cudaLaunchAttributeClusterDimension;
      attributes[0].val.clusterDim.x = cluster->x;
      attributes[0].val.clusterDim.y = cluster->y;
      attributes[0].val.clusterDim.z = cluster->z;
      if (spread) {
        attributes[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
        attributes[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicySpread;
        config.numAttrs = 2;
      }
    } else {
      attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attributes[0].val.programmaticStreamSerializationAllowed = 1;
    }
  }
  LaunchConfig(const LaunchConfig&) = delete;
  LaunchConfig& operator=(const LaunchConfig&) = delete;
};

// ask(device) for the current device, asked once per device (the first call on it, whichever
// thread) and kept: what the device offers a kernel does not change while the process runs.
// A device that cannot be named (cudaGetDevice fails, or past 64 of them): a value-initialised
// result.
template <class Ask>
const std::invoke_result_t<Ask, int>& once_per_device(Ask ask) {
  using T = std::invoke_result_t<Ask, int>;
  constexpr int kDevices = 64;
  static T known[kDevices + 1]{};  // the last: a device that cannot be named
  static std::once_flag asked[kDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kDevices) {
    cudaGetLastError();
    return known[kDevices];
  }
  std::call_once(asked[device], [&] { known[device] = ask(device); });
  return known[device];
}

// Kernel's shared-memory limit raised to `bytes` once per device (the first call on it,
// whichever thread; each kernel its own once, being its own instantiation), instead of a
// cudaFuncSetAttribute on every launch, which costs host time on every product. True where
// the device allows it; where not, the launch fails and reports it.
template <auto Kernel>
bool set_smem_limit_once(size_t bytes) {
  return once_per_device([bytes](int) {
    const bool ok = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)) == cudaSuccess;
    if (!ok) cudaGetLastError();
    return ok;
  });
}

// The pipelined tile's kernel for a layout may use as much shared memory as its largest
// launch asks (cluster_smem_bytes): set to that and never lowered, so that a launch on one
// thread cannot find the limit lowered by another's.
template <bool A_KMAJOR, bool B_KMAJOR>
bool set_async_smem_limit() {
  using Cfg = AsyncTileFor<A_KMAJOR, B_KMAJOR>;
  return set_smem_limit_once<async_tile_kernel<Cfg, A_KMAJOR, B_KMAJOR, true>>(
      Cfg::template cluster_smem_bytes<A_KMAJOR, B_KMAJOR>());
}

// What the current device offers the pipelined tile, asked once per device: its SMs, how
// many of the tile's blocks it runs at once (slots), and clusters[n], how many clusters of n
// blocks (1 .. kMaxClusterSplits) with the partial product's shared memory
// (cluster_smem_bytes) — 0 where its kernels, as the device runs them, cannot add their
// slices in a cluster (async_tile_kernel with k_cluster): compiled for older than sm_90
// (cudaFuncAttributes::ptxVersion, the virtual architecture of the code the device runs, 90
// or more: a build JIT-compiled on Hopper from compute_80 code has no clusters). Clusters
// pack into a GPU's GPCs less tightly than single blocks: the H100 runs 264 of these blocks
// at once, but 62 clusters of 4 and 30 of 8.
struct AsyncTileFacts {
  int64_t sms = 0, slots = 0;
  int64_t clusters[kMaxClusterSplits + 1] = {};
};

inline const AsyncTileFacts& async_tile_facts() {
  return once_per_device([](int device) {
    AsyncTileFacts f;
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess) f.sms = sms;
    using Cfg = AsyncTileFor<true, true>;
    const auto kernel = async_tile_kernel<Cfg, true, true, true>;
    const size_t smem = Cfg::cluster_smem_bytes<true, true>();
    const bool limit = set_async_smem_limit<true, true>();
    int per_sm = 0;
    if (limit && cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads,
                                                               Cfg::smem_bytes<true, true>()) == cudaSuccess)
      f.slots = int64_t(per_sm) * f.sms;
    cudaFuncAttributes attributes{};
    const bool ok = limit && cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess && attributes.ptxVersion >= 90;
    for (int64_t n = 1; ok && n <= kMaxClusterSplits; ++n) {
      const dim3 cluster(1, 1, unsigned(n));
      const LaunchConfig launch(cluster, Cfg::block(), smem, nullptr, &cluster);
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config) == cudaSuccess) f.clusters[n] = clusters;
    }
    cudaGetLastError();
    return f;
  });
}

// Whether the plan runs on the pipelined tile with its slices of K added in their cluster:
// where the device can, where there are more blocks than SMs, and where the clusters take no
// more waves than the blocks alone. Clusters ran much slower than the workspace where they
// took more waves (256 blocks of 128 x 4096 x 4096 NT on 8 slices are one wave of blocks but
// two of clusters), and with no more blocks than SMs, where a block alone on its SM runs almost
// as fast as two sharing one, which clusters pack (128 x 4096 x 4096 NN on 4 slices):
// docs/auto.md.
inline bool cluster_reduce(const GemmProblem& p, const AutoPlan& plan) {
  if (!pipelined_tile(plan) || plan.splits < 2 || plan.splits > kMaxClusterSplits) return false;
  const AsyncTileFacts& f = async_tile_facts();
  const int64_t tiles = ceil_div64(p.M, kAsyncTile.bm) * ceil_div64(p.N, kAsyncTile.bn);
  const int64_t clusters = f.clusters[plan.splits], blocks = f.clusters[1];
  return clusters > 0 && blocks > 0 && tiles * plan.splits > f.sms &&
         ceil_div64(tiles, clusters) <= ceil_div64(tiles * plan.splits, blocks);
}

// The pipelined tile with K whole on more tiles than fill whole waves (tail_split in
// auto/plan.h): 344 tiles of 1024 x 5504 for the H100's 264 slots make a second wave of 80
// tiles that takes as long as the first. Instead the first `head_cols` columns (whole tile
// columns, as many as fill the full waves) run with K whole, and the rest on `tail`, K
// split. head_cols 0: no such split.
struct AsyncTail {
  int64_t head_cols = 0;
  AutoPlan tail{AutoKernel::kSplitTile};
};

inline AsyncTail async_tail(const GemmProblem& p, const AutoPlan& plan) {
  if (!pipelined_tile(plan) || plan.splits != 1) return {};
  const TailSplit split = tail_split(p.M, p.N, async_tile_facts().slots, p.K);
  if (split.head == 0) return {};
  AsyncTail t;
  t.tail = split_tile_plan(kAsyncTile.bm, kAsyncTile.bn, p.K, split.splits);
  if (t.tail.splits < 2) return {};
  t.head_cols = split.head * kAsyncTile.bn;
  return t;
}

// Columns from c0 on of the product (batch 1).
inline GemmProblem columns_from(const GemmProblem& p, int64_t c0) {
  GemmProblem q = p;
  q.N = p.N - c0;
  q.b = p.b + c0 * p.b_cs;
  q.c = p.c ? p.c + c0 * p.c_cs : nullptr;
  q.out = p.out + c0;
  return q;
}

inline bool skinny_in_cluster(const GemmProblem& p, const AutoPlan& plan);

// Floats of workspace the plan needs: one partial product per split, when K is split (and
// its slices are not added in a cluster); for a split tail (async_tail), the tail's.
inline int64_t auto_workspace(const GemmProblem& p, const AutoPlan& plan) {
  const AsyncTail t = async_tail(p, plan);
  if (t.head_cols > 0) return auto_workspace(columns_from(p, t.head_cols), t.tail);
  const int64_t partials = plan_partials(plan);
  return partials > 1 && !cluster_reduce(p, plan) && !skinny_in_cluster(p, plan) ? partials * p.batch * p.M * p.N : 0;
}

// Whether split_k_reduce_kernel, as the current device runs it, was compiled with its wait
// for the preceding kernel (PTX for sm_90 or newer): a build JIT-compiled on Hopper from
// older PTX has none, and its reduction must not start early. Asked once per device.
inline bool reduce_waits_for_the_splits() {
  return once_per_device([](int) {
    cudaFuncAttributes attributes{};
    const bool ok = cudaFuncGetAttributes(&attributes, split_k_reduce_kernel) == cudaSuccess;
    if (!ok) cudaGetLastError();
    return ok && attributes.ptxVersion >= 90;
  });
}

// The reduction is launched as a programmatic dependent of the splits' kernel where it waits
// for it (above): on Hopper its launch overlaps that kernel's last blocks instead of an idle
// gap between the two. Elsewhere, a plain launch.
inline void launch_reduce(const GemmProblem& p, int64_t splits, const float* ws, cudaStream_t stream) {
  const int64_t outputs = p.batch * p.M * p.N;
  const dim3 grid(static_cast<unsigned>(ceil_div64(outputs, split_k_reduce_span(splits))));
  if (!reduce_waits_for_the_splits()) {
    split_k_reduce_kernel<<<grid, kReduceThreads, 0, stream>>>(p, splits, ws);
    return;
  }
  const LaunchConfig launch(grid, dim3(kReduceThreads), 0, stream, nullptr);
  cudaLaunchKernelEx(&launch.config, split_k_reduce_kernel, p, splits, ws);
}

// A batch-1 problem on a tile kernel with Cfg's block tile, K in plan.splits slices of
// plan.k_slice (blockIdx.z; SPLIT_K kernels); set_limit: raise the kernel's shared-memory
// limit to smem first (false: the caller has).
template <class Cfg>
void launch_split(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream,
                  void (*kernel)(GemmProblem), size_t smem, bool set_limit = true) {
  if (set_limit && smem > 48 * 1024) cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  const dim3 grid(static_cast<unsigned>(ceil_div64(p.N, Cfg::BN)), static_cast<unsigned>(ceil_div64(p.M, Cfg::BM)),
                  static_cast<unsigned>(plan.splits));
  GemmProblem q = p;
  q.k_split = plan.k_slice;
  if (plan.splits > 1) {
    q.batch = plan.splits;
    q.a_bs = plan.k_slice * p.a_cs;  // slice s starts at k = s * k_slice
    q.b_bs = plan.k_slice * p.b_rs;
    q.c = nullptr;
    q.alpha = 1.0f;
    q.beta = 0.0f;
    q.out = ws;
    q.out_rs = p.N;
    q.out_bs = p.M * p.N;
  }
  kernel<<<grid, Cfg::block(), smem, stream>>>(q);
  if (plan.splits > 1) launch_reduce(p, plan.splits, ws, stream);
}

// warptile's kernel, A and B in any layout.
template <class Cfg, bool A_KMAJOR, bool B_KMAJOR>
void launch_split_tile(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  launch_split<Cfg>(p, plan, ws, stream, warptile_kernel<Cfg, A_KMAJOR, B_KMAJOR, true>, Cfg::kSmemBytes);
}

// warptile's kernel on the operands' layouts.
template <class Cfg>
void launch_split_tile_any(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  if (a_kmajor(p)) {
    b_kmajor(p) ? launch_split_tile<Cfg, true, true>(p, plan, ws, stream)
                : launch_split_tile<Cfg, true, false>(p, plan, ws, stream);
  } else {
    b_kmajor(p) ? launch_split_tile<Cfg, false, true>(p, plan, ws, stream)
                : launch_split_tile<Cfg, false, false>(p, plan, ws, stream);
  }
}

// The pipelined kernel on the 64-row split tile, row-major A; K split through the workspace.
template <bool B_KMAJOR>
void launch_async_tile64(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  using Cfg = AsyncTile64For<B_KMAJOR>;
  launch_split<Cfg>(p, plan, ws, stream, async_tile_kernel<Cfg, true, B_KMAJOR, true>,
                    Cfg::template smem_bytes<true, B_KMAJOR>());
}

// The pipelined tile, any layout (async_tile_ok); K split, the slices of a tile added in
// their cluster where the device allows it (cluster_reduce), else through the workspace.
// Through the workspace the reduction pass takes a small share of the time; the slices
// added in their cluster run faster than through the workspace, close to cuBLAS (docs/auto.md).
// K whole on a few tiles past full waves: the full waves' columns, then the rest split
// (async_tail).
template <bool A_KMAJOR, bool B_KMAJOR>
void launch_async_tile(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  using Cfg = AsyncTileFor<A_KMAJOR, B_KMAJOR>;
  const auto kernel = async_tile_kernel<Cfg, A_KMAJOR, B_KMAJOR, true>;
  set_async_smem_limit<A_KMAJOR, B_KMAJOR>();
  if (const AsyncTail t = async_tail(p, plan); t.head_cols > 0) {
    GemmProblem head = p;
    head.N = t.head_cols;
    launch_split<Cfg>(head, plan, ws, stream, kernel, Cfg::template smem_bytes<A_KMAJOR, B_KMAJOR>(), false);
    return launch_async_tile<A_KMAJOR, B_KMAJOR>(columns_from(p, t.head_cols), t.tail, ws, stream);
  }
  if (!cluster_reduce(p, plan))
    return launch_split<Cfg>(p, plan, ws, stream, kernel, Cfg::template smem_bytes<A_KMAJOR, B_KMAJOR>(), false);
  GemmProblem q = p;
  q.k_split = plan.k_slice;
  q.k_cluster = plan.splits;
  q.batch = plan.splits;
  q.a_bs = plan.k_slice * p.a_cs;  // slice s starts at k = s * k_slice
  q.b_bs = plan.k_slice * p.b_rs;
  q.c_bs = 0;  // every slice's block sees the product's c and out
  q.out_bs = 0;
  const dim3 grid(static_cast<unsigned>(ceil_div64(p.N, Cfg::BN)), static_cast<unsigned>(ceil_div64(p.M, Cfg::BM)),
                  static_cast<unsigned>(plan.splits));
  const dim3 cluster(1, 1, static_cast<unsigned>(plan.splits));
  const LaunchConfig launch(grid, Cfg::block(), Cfg::template cluster_smem_bytes<A_KMAJOR, B_KMAJOR>(), stream, &cluster);
  cudaLaunchKernelEx(&launch.config, kernel, q);
}

// A skinny kernel of `threads` threads a block, each block on `cols` columns and one of the
// plan's partial products along K (plan_partials: blockIdx.y), which the reduction pass adds
// where there are several, or their cluster (the row-major-B kernels: skinny_in_cluster).
inline void launch_skinny_grid(const GemmProblem& p, const AutoPlan& plan, void (*kernel)(GemmProblem, SkinnySplit),
                               int64_t cols, int threads, size_t smem, float* ws, cudaStream_t stream) {
  const int64_t partials = plan_partials(plan);
  const dim3 grid(static_cast<unsigned>(ceil_div64(p.N, cols)), static_cast<unsigned>(partials),
                  static_cast<unsigned>(p.batch));
  if (skinny_in_cluster(p, plan)) {
    const dim3 cluster(1, static_cast<unsigned>(partials), 1);
    const LaunchConfig launch(grid, dim3(static_cast<unsigned>(threads)), smem, stream, &cluster, true);
    cudaLaunchKernelEx(&launch.config, kernel, p, SkinnySplit{plan.k_slice, nullptr, static_cast<int>(partials)});
    return;
  }
  const SkinnySplit s{plan.k_slice, partials > 1 ? ws : nullptr};
  kernel<<<grid, threads, smem, stream>>>(p, s);
  if (partials > 1) launch_reduce(p, partials, ws, stream);
}

// The column-major-B kernel: each of its warps' groups of lanes on NW columns.
template <class Cfg>
void launch_skinny(const GemmProblem& p, const AutoPlan& plan, void (*kernel)(GemmProblem, SkinnySplit),
                   float* ws, cudaStream_t stream, size_t smem = 0) {
  const int64_t cols = int64_t(Cfg::kWarps) * Cfg::NW * Cfg::kGroups;
  launch_skinny_grid(p, plan, kernel, cols, Cfg::kThreads, smem, ws, stream);
}

// Attribute `What` of the current device, asked once per device; 0 where it cannot be read.
template <cudaDeviceAttr What>
int64_t device_attribute() {
  return once_per_device([](int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, What, device) != cudaSuccess) {
      cudaGetLastError();
      value = 0;
    }
    return int64_t(value);
  });
}

// Shared memory one block may opt in to on the current device.
inline int64_t block_smem_optin() {
  const int64_t bytes = device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>();
  return bytes > 0 ? bytes : 48 * 1024;  // 0: unread, or a device that cannot be named
}

// Whether each SM of the current device holds `blocks` blocks of Kernel at once, of kThreads
// threads and kSmem bytes of dynamic shared memory (CUDA's occupancy calculator, asked once
// per device: the launch's shape is part of the template, so the answer kept is its own;
// false where it cannot be asked); Kernel's shared-memory limit is raised to kSmem where one
// block may have that much.
template <auto Kernel, int kThreads, size_t kSmem>
bool sm_holds(int blocks) {
  if (int64_t(kSmem) > block_smem_optin() || !set_smem_limit_once<Kernel>(kSmem)) return false;
  return once_per_device([](int) {
           int held = 0;
           if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&held, Kernel, kThreads, kSmem) != cudaSuccess) {
             cudaGetLastError();
             held = 0;
           }
           return held;
         }) >= blocks;
}

// The row-major-B skinny kernel's ring build for MT rows (float4 copies, or kSingles: four
// single-float copies a lane), its dynamic shared memory, and whether the current device's SMs
// hold its blocks (sm_holds).
template <int MT, bool kSingles>
constexpr auto skinny_ring_kernel = skinny_nmajor_async_kernel<MT, skinny_async_stages<MT>(), kSingles>;
template <int MT>
constexpr size_t skinny_ring_smem = skinny_async_smem<MT, skinny_async_stages<MT>()>();
template <int MT, bool kSingles>
bool skinny_ring_runs() {
  return sm_holds<skinny_ring_kernel<MT, kSingles>, 256, skinny_ring_smem<MT>>(skinny_split_blocks_per_sm(MT, 4));
}

// The blocks of clusters of n (n = 2 .. kMaxClusterSplits) that the current device runs at
// once, one block an SM (cudaOccupancyMaxActiveClusters of the row-major-B skinny build that
// holds the most shared memory: 16 rows of float4s through its rings, one block an SM), with the
// clusters spread as their launch asks: where a plan's blocks along K fit them, their cluster
// adds them up (skinny_cluster_sums in auto/plan.h). Zeros where the kernels' code as the device
// runs it is for older than sm_90 (cudaFuncAttributes::ptxVersion; a build JIT-compiled on
// Hopper from compute_80 code has no clusters). Asked once per device; auto's model prices the
// plans by it (ExactModel::cluster_blocks, set for each call's device by cached_auto_plan in
// auto/auto.cu).
inline const ClusterBlocks& skinny_cluster_blocks() {
  return once_per_device([](int) {
    ClusterBlocks blocks{};
    constexpr auto kernel = skinny_ring_kernel<16, false>;
    constexpr size_t smem = skinny_ring_smem<16>;
    cudaFuncAttributes attributes{};
    if (int64_t(smem) <= block_smem_optin() && set_smem_limit_once<kernel>(smem) &&
        cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess && attributes.ptxVersion >= 90)
      for (int64_t n = 2; n <= kMaxClusterSplits; ++n) {
        const dim3 cluster(1, static_cast<unsigned>(n), 1);
        const LaunchConfig launch(cluster, dim3(256), smem, nullptr, &cluster, true);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config) == cudaSuccess) blocks[n] = n * clusters;
      }
    cudaGetLastError();
    return blocks;
  });
}
// Whether the plan's blocks along K add up in their cluster on the current device (the device
// asked only for plans of several blocks along K: auto_workspace asks this of every plan).
inline bool skinny_in_cluster(const GemmProblem& p, const AutoPlan& plan) {
  return skinny_split(plan) && plan_partials(plan) > 1 &&
         skinny_cluster_sums(plan, p.N, p.batch, skinny_cluster_blocks());
}

// The column-major-B register kernel's configuration for MT rows (skinny_kmajor_shape in
// auto/plan.h, loads of single floats; float4s where the async kernel cannot run): up to 4
// rows A read in place, 4 columns per warp; 8 rows A staged in shared memory 256 columns at a
// time (two buffers), two blocks per SM (four steps of single floats of B in flight); 16 rows
// A staged KC = 1024 columns at a time (two buffers, 128 KB) and shared by four groups of 8
// lanes, 4 columns per group, one block per SM (64 accumulators and eight steps of single
// floats of B in flight) — or 256 columns at a time (32 KB) on a GPU whose blocks cannot have
// 128 KB (sm_86 / sm_89: about 99 KB).
// SkinnyKMajorFor: the configuration of skinny_kmajor_shape(MT, W) on chunks of KC columns of A.
template <int MT, int W, int KC>
using SkinnyKMajorFor = SkinnyConfig<MT, skinny_kmajor_shape(MT, W).nw, skinny_kmajor_shape(MT, W).blocks_per_sm, KC,
                                     32 / skinny_kmajor_shape(MT, W).groups>;
template <int MT, int KC = (MT <= 8 ? 256 : 1024)>
using SkinnyKMajor = SkinnyKMajorFor<MT, 1, KC>;

// The kernel with W-wide loads of B; its shared-memory limit raised past the default 48 KB
// where it needs more (set_smem_limit_once).
template <class Cfg, int W, bool kStaged>
void launch_skinny_kmajor_w(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  const size_t smem = skinny_kmajor_smem<Cfg>(kStaged);
  if (smem > 48 * 1024) set_smem_limit_once<skinny_kmajor_kernel<Cfg, W, kStaged>>(smem);
  launch_skinny<Cfg>(p, plan, skinny_kmajor_kernel<Cfg, W, kStaged>, ws, stream, smem);
}

template <class Cfg, bool kStaged>
void launch_skinny_kmajor_cfg(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  plan.w == 4 ? launch_skinny_kmajor_w<Cfg, 4, kStaged>(p, plan, ws, stream)
              : launch_skinny_kmajor_w<Cfg, 1, kStaged>(p, plan, ws, stream);
}

template <int MT>
void launch_skinny_kmajor(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  if constexpr (skinny_kmajor_ring(MT, 4)) {
    // Float4s of 8 and 16 rows: the async kernel (chunks of A 256 columns, B's steps in a
    // ring per warp) where each SM holds its blocks.
    using Async = SkinnyKMajorFor<MT, 4, 256>;
    constexpr int S = skinny_kmajor_async_stages<MT>();
    constexpr auto kernel = skinny_kmajor_async_kernel<Async, S>;
    constexpr size_t smem = skinny_kmajor_async_smem<Async, S>();
    if (plan.w == 4 && sm_holds<kernel, Async::kThreads, smem>(Async::kMinBlocks))
      return launch_skinny<Async>(p, plan, kernel, ws, stream, smem);
  }
  using Cfg = SkinnyKMajor<MT>;
  if constexpr (MT > 8) {
    if (int64_t(skinny_kmajor_smem<Cfg>(true)) > block_smem_optin())
      return launch_skinny_kmajor_cfg<SkinnyKMajor<MT, 256>, true>(p, plan, ws, stream);
  }
  launch_skinny_kmajor_cfg<Cfg, skinny_kmajor_staged(MT)>(p, plan, ws, stream);
}

// Row-major B: 32 W columns a block (W = 4: 128, four a lane), its 8 warps on 8 slices of K
// (skinny_split in auto/plan.h). Blocks of 128 columns go through shared memory (the async
// kernel: float4 copies where B's rows are 16-byte aligned, four single floats elsewhere) where
// an SM holds skinny_split_blocks_per_sm blocks of it, as on sm_90, else through registers
// (float4s of aligned rows; on rows that are not, the plan runs single floats instead:
// skinny_plan_as_run). Rows of B in flight per group in the register kernel
// (skinny_split_rows_in_flight in auto/plan.h, which the model counts single floats' steps by),
// float4s: 8 for up to 4 rows of A, 4 for 8 (whose accumulators need the registers: 128, 8
// bytes spilled with nvcc 13 for sm_90), 8 for 16 (one block per SM, 239 registers, 64 KB of
// shared memory for the warps' sums); single floats: 16, 8 for 16 rows (a quarter of the bytes
// a load, so more loads in flight for as many bytes).
template <int MT, int W>
void launch_skinny_split(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  static_assert(kSkinnySplitWarps == 8, "auto_plan models this kernel");
  constexpr int P = skinny_split_rows_in_flight(MT, W);
  constexpr auto kernel = skinny_nmajor_split_kernel<MT, P, W>;
  constexpr size_t smem = skinny_split_smem<MT, W>();
  if (smem > 48 * 1024) set_smem_limit_once<kernel>(smem);
  launch_skinny_grid(p, plan, kernel, skinny_split_cols(plan), 256, smem, ws, stream);
}
template <int MT, bool kSingles>
void launch_skinny_ring(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  if (skinny_ring_runs<MT, kSingles>())
    return launch_skinny_grid(p, plan, skinny_ring_kernel<MT, kSingles>, skinny_split_cols(plan), 256,
                              skinny_ring_smem<MT>, ws, stream);
  if constexpr (kSingles) throw std::logic_error("gemmtiles: a ring plan of single floats where no ring runs");
  else launch_skinny_split<MT, 4>(p, plan, ws, stream);
}
template <int MT>
void launch_skinny_async(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  b_vec_ok(p) ? launch_skinny_ring<MT, false>(p, plan, ws, stream) : launch_skinny_ring<MT, true>(p, plan, ws, stream);
}
// f.template operator()<MT>() for the row-major-B kernel's build of the plan's rows (1, 4, 8
// or 16: skinny_rows in auto/plan.h).
template <class F>
decltype(auto) with_skinny_nmajor_rows(const AutoPlan& plan, F&& f) {
  if (plan.mt == 1) return f.template operator()<1>();
  if (plan.mt == 4) return f.template operator()<4>();
  if (plan.mt == 8) return f.template operator()<8>();
  return f.template operator()<16>();
}
// The plan as the current device runs it: a row-major-B plan of 128-column blocks on rows of B
// that are not 16-byte aligned runs single floats, on the same slices of K in blocks of 32
// columns, where the ring cannot run (the register kernel's float4s need aligned rows); its
// workspace and clusters follow (auto_workspace of this plan).
inline AutoPlan skinny_plan_as_run(const GemmProblem& p, AutoPlan plan) {
  if (!skinny_split(plan) || plan.w != 4 || b_vec_ok(p)) return plan;
  if (!with_skinny_nmajor_rows(plan, [&]<int MT>() { return skinny_ring_runs<MT, true>(); })) plan.w = 1;
  return plan;
}
template <int MT>
void launch_skinny_split_rows(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  plan.w == 4 ? launch_skinny_async<MT>(p, plan, ws, stream) : launch_skinny_split<MT, 1>(p, plan, ws, stream);
}

// The GEMV kernel on build kBuild of kGemvBuilds, blocks of kColumns columns of B (NB per group
// of its lanes along k), a grid layer per product. Float4s of B's lines that are not all 16-byte
// aligned (its pitch, batch stride or start; up to kGemvRealignedMaxRows rows) run realigned
// (gemv_kmajor_kernel's kRealign): each block on columns `period` apart, 4 / gcd(pitch, 4),
// whose lines start alike; a grid of up to period - 1 blocks more.
template <int MT, int W, int kColumns, int kLanes, int kBlocksPerSm>
void launch_gemv_kernel(const GemmProblem& p, cudaStream_t stream) {
  constexpr int NB = kColumns / (32 / kLanes);
  static_assert(kGemvBlockColumns<NB, kLanes> == kColumns, "a block holds whole groups of lanes");
  if (W == 1 || (operand_vec_ok(p.b, p.b_cs) && p.b_bs % 4 == 0)) {
    const dim3 grid(static_cast<unsigned>(ceil_div64(p.N, kColumns)), 1, static_cast<unsigned>(p.batch));
    if constexpr (W == 4 && MT > kGemvCheckedMaxRows) {
      // A's rows 16-byte aligned lines in every batch entry: the steps inside K unchecked.
      if (p.a_cs == 1 && operand_vec_ok(p.a, p.a_rs) && (p.batch == 1 || p.a_bs % 4 == 0)) {
        gemv_kmajor_kernel<MT, NB, W, kLanes, kBlocksPerSm, false, true><<<grid, 32 * kGemvWarps, 0, stream>>>(p, 1);
        return;
      }
    }
    gemv_kmajor_kernel<MT, NB, W, kLanes, kBlocksPerSm, false><<<grid, 32 * kGemvWarps, 0, stream>>>(p, 1);
  } else if constexpr (W == 4 && MT <= kGemvRealignedMaxRows) {
    if (p.b_rs != 1) throw std::logic_error("gemmtiles: float4s of B's lines along k need a unit stride");
    const int period = gemv_realign_period(p.b_cs);
    const dim3 grid(static_cast<unsigned>(gemv_realigned_blocks(p.N, kColumns, period)), 1,
                    static_cast<unsigned>(p.batch));
    gemv_kmajor_kernel<MT, NB, W, kLanes, kBlocksPerSm, true><<<grid, 32 * kGemvWarps, 0, stream>>>(p, period);
  } else {
    throw std::logic_error("gemmtiles: a gemv plan of float4s on B's unaligned lines past the rows realigned");
  }
}
// The current device's SMs, asked once per device.
inline int64_t device_sms() {
  return once_per_device([](int device) {
    int sms = 0;
    return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess ? int64_t(sms)
                                                                                               : int64_t(0);
  });
}
template <int kBuild, int kColumns>
void launch_gemv_blocks(const GemmProblem& p, cudaStream_t stream) {
  constexpr GemvBuild b = kGemvBuilds[kBuild];
  if constexpr (b.w == 4) {  // the float4 builds' other kernels: gemv_kernel
    switch (gemv_kernel(b, p.N, p.K, p.batch, device_sms())) {
      case GemvKernel::kShallow:
        if constexpr (b.rows < kGemvMaxRows) {
          constexpr GemvVariant v = gemv_shallow(b);
          return launch_gemv_kernel<b.rows, b.w, v.columns, v.lanes_along_k, v.blocks_per_sm>(p, stream);
        }
        break;
      case GemvKernel::kFew:
        if constexpr (b.rows == kGemvMaxRows)
          return launch_gemv_kernel<b.rows, b.w, kGemvFew.columns, kGemvFew.lanes_along_k, kGemvFew.blocks_per_sm>(
              p, stream);
        break;
      case GemvKernel::kBuild:
        break;
    }
  }
  launch_gemv_kernel<b.rows, b.w, kColumns, b.lanes_along_k, b.blocks_per_sm>(p, stream);
}
// A plan on build kBuild: its block width (the plan's nw, one of the build's, which gemv_built
// checks).
template <int kBuild>
void launch_gemv_build(const GemmProblem& p, const AutoPlan& plan, cudaStream_t stream) {
  constexpr GemvBuild b = kGemvBuilds[kBuild];
  static_assert(b.widths == 1 || b.widths == 2, "one or two block widths a build");
  if constexpr (b.widths == 2) {
    if (plan.nw == b.columns[1]) return launch_gemv_blocks<kBuild, b.columns[1]>(p, stream);
  }
  launch_gemv_blocks<kBuild, b.columns[0]>(p, stream);
}
inline void launch_gemv(const GemmProblem& p, const AutoPlan& plan, cudaStream_t stream) {
  static_assert(std::size(kGemvBuilds) == 4, "a launch for each build below");
  // The planner makes gemv plans of its builds alone (gemv_candidates, table entries, forced
  // plans among the candidates); any other would run another build's kernel, or leave rows
  // past its own uncomputed.
  if (p.M > plan.mt || !gemv_built(int(plan.mt), plan.nw, int(plan.w)))
    throw std::logic_error("gemmtiles: a gemv plan that no GEMV build takes");
  switch (gemv_build_index(plan.mt, int(plan.w))) {
    case 0: return launch_gemv_build<0>(p, plan, stream);
    case 1: return launch_gemv_build<1>(p, plan, stream);
    case 2: return launch_gemv_build<2>(p, plan, stream);
    default: return launch_gemv_build<3>(p, plan, stream);
  }
}

// Launches a skinny, gemv or split_tile plan; false for a plan that is not auto's own (warptile,
// the tensor-core tiers), which the caller launches.
inline bool launch_auto_plan(const GemmProblem& p, const AutoPlan& plan, float* ws, cudaStream_t stream) {
  const bool b_kmajor = p.b_cs != 1;
  switch (plan.kernel) {
    case AutoKernel::kSkinnyNMajor:
      with_skinny_nmajor_rows(plan, [&]<int MT>() { launch_skinny_split_rows<MT>(p, plan, ws, stream); });
      return true;
    case AutoKernel::kSkinnyKMajor:
      plan.mt == 4   ? launch_skinny_kmajor<4>(p, plan, ws, stream)
      : plan.mt == 8 ? launch_skinny_kmajor<8>(p, plan, ws, stream)
                     : launch_skinny_kmajor<16>(p, plan, ws, stream);
      return true;
    case AutoKernel::kGemv:
      launch_gemv(p, plan, stream);
      return true;
    case AutoKernel::kSplitTile:
      if (plan.mt == 32) {
        launch_split_tile_any<SplitTile32>(p, plan, ws, stream);
      } else if (plan.mt == 64) {
        // The pipelined kernel for a row-major A, B's lines as float4 where it is N-major
        // (split_tile64_pipelined); warptile's otherwise.
        const bool b_vec = b_kmajor || (operand_vec_ok(p.b, p.b_rs) && p.b_bs % 4 == 0);
        if (split_tile64_pipelined(p.M, p.N, a_kmajor(p), b_kmajor, b_vec)) {
          b_kmajor ? launch_async_tile64<true>(p, plan, ws, stream) : launch_async_tile64<false>(p, plan, ws, stream);
        } else {
          launch_split_tile_any<SplitTile64>(p, plan, ws, stream);
        }
      } else if (pipelined_tile(plan)) {
        if (p.a_cs == 1) {
          b_kmajor ? launch_async_tile<true, true>(p, plan, ws, stream)
                   : launch_async_tile<true, false>(p, plan, ws, stream);
        } else {
          b_kmajor ? launch_async_tile<false, true>(p, plan, ws, stream)
                   : launch_async_tile<false, false>(p, plan, ws, stream);
        }
      } else {  // warptile's 128 x 256 tile, which the heuristic plans for a row-major A alone
        if (!a_kmajor(p))
          throw std::logic_error("gemmtiles: warptile's 128 x 256 split tile planned for a column-major A");
        b_kmajor ? launch_split_tile<WarptileLarge, true, true>(p, plan, ws, stream)
                 : launch_split_tile<WarptileLarge, true, false>(p, plan, ws, stream);
      }
      return true;
    default:
      return false;
  }
}

}  // namespace gemmtiles
