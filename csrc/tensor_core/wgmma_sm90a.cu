// The tensor-core tiers on Hopper (sm_90a). Both run one GEMM kernel of CUTLASS's SM90
// collectives: wgmma on 128x256 output tiles (tf32: or 128x128), fed by TMA through a
// multi-stage shared-memory pipeline, a producer warp issuing the loads while two consumer
// warpgroups run the MMAs (warp specialisation), clusters of two blocks sharing tiles by TMA
// multicast. TF32 wgmma reads K-major shared memory only, so the kernel takes K-major A and
// B (nn.Linear's x @ W^T as it is); tf32 also reads an N-major B (x @ W) in place where that
// is cheaper, on a kernel that computes C^T with B^T as the MMA's A, copied into registers
// transposed a K slice ahead of its MMAs (Tf32TransposedB); other layouts are repacked
// K-major by the pack pass. An output of up to 128 rows, and x @ W^T where its model finds it
// faster, runs tf32 as C^T = B^T A^T on tiles narrow along C's rows (Tf32NarrowConfig); few
// such tiles over a deep K run K in slices, every slice's tiles at once, summed by a pass of
// their own (run_tf32_slices).
//
//   tf32    the GEMM as it is: the tensor cores round A and B to TF32 (10 mantissa bits).
//   tf32x3  the pack pass splits each operand x into hi = tf32(x) and lo = tf32(x - hi),
//           both rounded to nearest, and writes A' = [A_lo | A_hi | A_hi] and
//           B' = [B_hi ; B_lo ; B_hi] (K-major, K' = 3K); the same GEMM over K' sums
//           A_lo·B_hi + A_hi·B_lo + A_hi·B_hi, the two small terms first. Operands exact
//           in TF32 lose nothing to the tensor cores, A_lo·B_lo is below fp32's rounding,
//           the two small terms are summed by the tensor cores, and each K slice of
//           A_hi·B_hi is added to them by round-to-nearest FADDs (the tensor cores' own
//           accumulation is not rounded to nearest; chunked_promotion.cuh).
//
// TMA needs 16-byte aligned base addresses and row strides, whatever an operand's extent
// along its rows (tf32 runs any K; tf32x3's parts, an N-major B and a TMA-written output are
// whole vectors of 4 along their rows, as CUTLASS checks); operands that are not get an
// aligned (zero-padded) copy, as does tf32x3's output, and a c that TMA cannot read in place
// (run_with_output), so every shape and stride runs.
// tf32 writes an output with 16-byte aligned rows through shared memory by TMA, and any other
// in place from the accumulators, a float at a time.
#include <algorithm>
#include <atomic>
#include <iterator>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <type_traits>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "../auto/cutlass_simt.h"
#include "../auto/plan.h"
#include "../core/kept_flags.h"
#include "../core/launch.h"
#include "tensor_core.h"
#include "chunked_promotion.cuh"
#include "prefetched_a_mainloop.cuh"
#include "source_first_epilogue.cuh"
#include "stream_k_locks.cuh"

#ifndef GEMMTILES_CUTLASS
#define GEMMTILES_CUTLASS 0
#endif

namespace gemmtiles {
namespace {

// ---------------------------------------------------------------------------------------
// The GEMM: one configuration type per operand layout (CUTLASS layout tags: A is M x K,
// B is K x N; RowMajor A and ColumnMajor B are K-major).

// CUTLASS's promoted SS mainloop (its FP8 one, which takes any element type) on `Built`'s
// tile, stages and loads with the tiled MMA `Mma`: the base of tf32x3's mainloop, which
// replaces its mma() (chunked_promotion.cuh) and keeps its loads, shared memory and checks.
// Its promotion interval argument is therefore unused: tf32x3 promotes every K slice.
template <class Built, class Mma>
using PromotedMainloop = cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Built::DispatchPolicy::Stages,
                                                         typename Built::DispatchPolicy::ClusterShape,
                                                         typename Built::DispatchPolicy::Schedule>,
    typename Built::TileShape, float, typename Built::StrideA, float, typename Built::StrideB, Mma,
    typename Built::GmemTiledCopyA, typename Built::SmemLayoutAtomA, void, cute::identity,
    typename Built::GmemTiledCopyB, typename Built::SmemLayoutAtomB, void, cute::identity>;

// The accumulation: in the tensor cores across all of K (tf32), or promoted every K slice
// 64 columns at a time (tf32x3; chunked_promotion.cuh).
enum class Accumulation { kTensorCore, kPromoted };

// The mainloop of an accumulation on `Built` (CUTLASS's, for that tile and those stages), A
// read from shared memory (kRegisterA false: K-major) or copied into registers transposed
// (true: M-major): CUTLASS's own for tf32 on a K-major A; PrefetchedAMainloop on an M-major one
// (prefetched_a_mainloop.cuh: a whole K slice ahead of the wgmmas that read it, where CUTLASS's
// copies one 8-deep k block ahead); tf32x3's chunked promotion, on a K-major A only.
template <Accumulation kAccumulation, class Built, bool kRegisterA>
struct SelectMainloop;
template <class Built>
struct SelectMainloop<Accumulation::kTensorCore, Built, false> {
  using type = Built;
};
template <class Built>
struct SelectMainloop<Accumulation::kTensorCore, Built, true> {
  using type = PrefetchedAMainloop<Built>;
};
// Two consumer warpgroups along M, each on 64 x 64 wgmma atoms.
using Chunk64Mma = decltype(cute::make_tiled_mma(
    cute::GMMA::ss_op_selector<cute::tfloat32_t, cute::tfloat32_t, float,
                               cute::Shape<cute::_64, cute::_64, cute::_32>, cute::GMMA::Major::K,
                               cute::GMMA::Major::K>(),
    cute::Layout<cute::Shape<cute::_2, cute::_1, cute::_1>>{}));
template <class Built>
struct SelectMainloop<Accumulation::kPromoted, Built, false> {
  static_assert(cute::size<0>(typename Built::TileShape{}) == 128,
                "Chunk64Mma tiles 128 rows: two warpgroups of 64");
  using type = ChunkedPromotionMainloop<PromotedMainloop<Built, Chunk64Mma>>;
};

// How the epilogue writes the output (and reads C): kTma through shared memory by TMA, rows
// 16-byte aligned (the stores leave the SM as whole swizzled tiles, overlapped with the math;
// faster on every product measured, most where there is one tile per SM); kAnyAlignment
// straight from the accumulators a float at a time, rows of any length and stride at any
// address.
enum class Output { kTma, kAnyAlignment };

// One GEMM configuration: Tile (BM, BN, BK) output tile and K slice per block (BK = 32:
// 128 bytes of fp32, one 128-byte swizzle row), Cluster blocks sharing tiles by TMA
// multicast, two consumer warpgroups per tile (cooperative), as many pipeline stages as
// shared memory holds beside the epilogue, and one of CUTLASS's persistent tile Schedulers.
// A (M x K) is K-major (LayoutA RowMajor), or M-major (ColumnMajor: copied into registers
// transposed: B^T of an N-major B, on PrefetchedAMainloop); B (K x N) K-major (ColumnMajor: TF32
// wgmma reads nothing else from shared memory). The output is column-major (LayoutOut,
// kSwapped) where the kernel computes C^T, its operands swapped by the caller (run_swapped):
// C^T's N x M column-major output is C's row-major memory.
template <class Tile, class Cluster, Accumulation kAccumulation_, class Scheduler, Output kOutput,
          class LayoutOut_ = cutlass::layout::RowMajor, class LayoutA = cutlass::layout::RowMajor>
struct Tf32Config {
  static constexpr Accumulation kAccumulation = kAccumulation_;
  static constexpr bool kStreamK = std::is_same_v<Scheduler, StreamKLocksLeftZero>;
  using LayoutOut = LayoutOut_;
  static constexpr bool kSwapped = std::is_same_v<LayoutOut, cutlass::layout::ColumnMajor>;  // computes C^T
  static constexpr int kAlignCD = kOutput == Output::kTma ? 4 : 1;
  using TileShape = Tile;
  using ClusterShape = Cluster;
  using BuiltEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float,  //
      float, LayoutOut, kAlignCD,                                      // C
      float, LayoutOut, kAlignCD,                                      // D
      std::conditional_t<kOutput == Output::kTma, cutlass::epilogue::TmaWarpSpecializedCooperative,
                         cutlass::epilogue::NoSmemWarpSpecialized>>::CollectiveOp;
  // Outputs of any alignment read C a chunk of elements at a time (source_first_epilogue.cuh).
  using Epilogue = typename SourceFirstIf<BuiltEpilogue, kOutput == Output::kAnyAlignment>::type;
  using BuiltMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,  //
      float, LayoutA, 4, float, cutlass::layout::ColumnMajor, 4, float,
      TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Mainloop =
      typename SelectMainloop<kAccumulation_, BuiltMainloop, std::is_same_v<LayoutA, cutlass::layout::ColumnMajor>>::type;
  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
                                                          Mainloop, Epilogue, Scheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
};

using cute::_1;
using cute::_2;
using cute::_32;
using cute::_128;
using cute::_256;
// tf32 on CUTLASS's stream-K scheduler (its heuristic decomposition; StreamKLocksLeftZero, whose
// launches leave their locks zero: stream_k_locks.cuh): whole waves of tiles
// run data-parallel; where the last wave is less than half full (a product of fewer tiles
// than half the SMs included) and tiles are deeper than 8 k iterations, that wave and the one
// before it have their k iterations shared out between one wave of blocks, partial tiles
// summed through a workspace in a fixed order (the same bits every run). tf32x3's mainloop
// promotes by K slice from the first and keeps one block per tile (the persistent
// data-parallel scheduler). tf32 writes any output in place (through TMA where its rows are
// 16-byte aligned); tf32x3's outputs are 16-byte aligned (run_with_output). tf32x3 on
// 128 x 256 tiles, tf32 on those of tf32_tiling (auto/plan.h).
using Tile128x256 = cute::Shape<_128, _256, _32>;
using Tile128x128 = cute::Shape<_128, _128, _32>;
template <class Tile, class Cluster, Output kOutput>
using Tf32Tile = Tf32Config<Tile, Cluster, Accumulation::kTensorCore, StreamKLocksLeftZero, kOutput>;
using Tf32x3Tile = Tf32Config<Tile128x256, cute::Shape<_2, _1, _1>, Accumulation::kPromoted,
                              cutlass::gemm::PersistentScheduler, Output::kTma>;

// tf32 on an N-major B as it is (tf32_b_route in auto/plan.h): C^T = B^T A^T, B^T the MMA's
// A, M-major, copied from shared memory into registers transposed (TF32 wgmma reads an
// MN-major operand from registers only), A^T its B, K-major; 128 x 256 tiles of C^T, clusters
// of two along its M (C's N), stream-K. Its epilogue writes C^T's N x M column-major, which is
// C's row-major memory, straight from the accumulators at any alignment: through TMA (C^T's
// columns 16-byte aligned) the same kernel took 1.08-1.12x as long on products of 2048 rows
// and more. The fastest of the configurations measured (docs/tensor-cores.md).
using Tf32TransposedB = Tf32Config<Tile128x256, cute::Shape<_2, _1, _1>, Accumulation::kTensorCore,
                                   StreamKLocksLeftZero, Output::kAnyAlignment, cutlass::layout::ColumnMajor,
                                   cutlass::layout::ColumnMajor>;

// tf32 on an output of few rows, or x @ W^T where its model picks it (tf32_narrow in
// auto/plan.h): the kernel computes C^T = B^T A^T on Tile (128 rows of C^T, the columns of C,
// by the narrow width), B^T the MMA's A, K-major (LayoutA RowMajor: x @ W^T) or M-major
// (ColumnMajor: x @ W, transposed into registers), A^T its B, K-major; C^T's column-major
// output is C's rows, written from the accumulators at any alignment. One block a tile (no cluster: the narrow side is one tile),
// stream-K, B^T M-major on PrefetchedAMainloop. Given as it is (the swap is run_swapped's),
// CUTLASS swaps nothing, so its stream-K workspace is sized for the grid it runs.
template <class Tile, class LayoutA>
using Tf32NarrowConfig =
    Tf32Config<Tile, cute::Shape<_1, _1, _1>, Accumulation::kTensorCore, StreamKLocksLeftZero,
               Output::kAnyAlignment, cutlass::layout::ColumnMajor, LayoutA>;
static_assert(std::size(kTf32NarrowTiles) == 3 && kTf32NarrowTiles[0].m == 128 && kTf32NarrowTiles[0].n == 32 &&
                  kTf32NarrowTiles[1].m == 128 && kTf32NarrowTiles[1].n == 64 && kTf32NarrowTiles[2].m == 128 &&
                  kTf32NarrowTiles[2].n == 128,
              "tf32_narrow_kernel runs the tiles that auto/plan.h's tf32_narrow picks from");

// A matrix (or a batch of them) in memory: element (z, i, j) at ptr[z*bs + i*rs + j*cs].
struct View {
  const float* ptr;
  int64_t rs, cs, bs;
};

template <class Slot>
void set_stride(Slot&& slot, int64_t value) {
  // Static unit strides (cute::_1) stay as they are.
  if constexpr (std::is_integral_v<std::remove_reference_t<Slot>>) slot = value;
}

template <class Stride>
Stride make_stride3(int64_t s0, int64_t s1, int64_t s2) {
  Stride s{};
  set_stride(cute::get<0>(s), s0);
  set_stride(cute::get<1>(s), s1);
  set_stride(cute::get<2>(s), s2);
  return s;
}

void check_cutlass(cutlass::Status status, const char* tier, const char* what) {
  TORCH_CHECK(status == cutlass::Status::kSuccess, "gemmtiles::", tier, ": ", what, " failed: ",
              cutlassGetStatusString(status));
}

at::Tensor scratch(int64_t elements, at::ScalarType dtype = at::kFloat) {
  return at::empty({elements}, at::TensorOptions().dtype(dtype).device(
                                   at::kCUDA, c10::cuda::current_device()));
}

// out[z] = alpha * A[z] @ B[z] + beta * C[z] with aligned operands; C (when beta != 0) read
// along its own row and batch strides, zero where one row or matrix serves every row or entry.
struct Aligned {
  const char* tier;
  int64_t batch, M, N, K;
  View a, b;  // a: M x K, b: K x N
  const float* c;
  int64_t c_rs = 0, c_bs = 0;  // c's strides along rows and batch (its columns': a unit stride)
  float* out;
  int64_t out_rs, out_bs;
  float alpha, beta;
  // tf32x3: the leading K slices (of 32) that the tensor cores sum without promotion, a
  // multiple of 4 (the correction sections; chunked_promotion.cuh).
  int unpromoted = 0;
  // A stream-K kernel's schedule: 0 CUTLASS's heuristic decomposition; s >= 1 every tile's K
  // in s splits (1: data-parallel), the partial tiles summed in a fixed order.
  int splits = 0;
};

// The schedule tf32's stream-K kernels are forced to (force_tf32_splits), -1 for none; the K
// slices one product is forced to, 0 for none (force_tf32_slices).
std::atomic<int> forced_tf32_splits{-1}, forced_tf32_slices{0};
// The route tf32 is forced to (force_tf32_route): kernel | tile_n << 8 | splits << 24, 0 for
// none; and whether a call since the last force could not run it.
std::atomic<int64_t> forced_tf32_route{0};
std::atomic<bool> forced_tf32_route_refused_{false};
struct ForcedTf32Route {
  Tf32RouteKernel kernel;
  int tile_n, splits;
};
ForcedTf32Route forced_route() {
  const int64_t v = forced_tf32_route.load(std::memory_order_relaxed);
  return {static_cast<Tf32RouteKernel>(v & 0xff), static_cast<int>((v >> 8) & 0xffff), static_cast<int>(v >> 24)};
}

// The stream-K kernels' workspaces (StreamKLocksLeftZero): one buffer per device and stream
// (core/kept_flags.h), scratch for the partial tiles followed by the locks, which are zeroed
// once, when the buffer is made, and left zero by every launch. A launch's workspace pointer is
// where the locks start; its partial tiles lie in the scratch just before. Workspaces past
// kKeptWorkspace bytes (products of many shared tiles, where a zeroing pass is nothing beside
// the kernel) and those of a stream capturing a graph are the launch's own, zeroed by CUTLASS.
constexpr size_t kKeptWorkspace = size_t(1) << 22;
// Never destroyed: at exit the caching allocator may be gone before static destructors run.
KeptFlags& stream_k_locks() {
  static auto* locks = new KeptFlags(64 * 1024, kKeptWorkspace);
  return *locks;
}
// Where the locks of a kept workspace of `bytes` (CUTLASS's count: partial tiles and locks)
// start on `stream`, at least `bytes` of scratch before them and of zero locks from there;
// nullptr where the launch takes a workspace of its own.
void* kept_stream_k_workspace(size_t bytes, cudaStream_t stream) {
  if (bytes == 0 || bytes > kKeptWorkspace) return nullptr;
  return stream_k_locks().get(bytes, bytes, stream);
}

template <class Config>
void run_gemm(const Aligned& g) {
  using Gemm = typename Config::Gemm;
  using Kernel = typename Config::GemmKernel;
  TORCH_CHECK(g.M <= INT_MAX && g.N <= INT_MAX && round_up4(g.K) <= INT_MAX && g.batch <= INT_MAX,
              "gemmtiles::", g.tier, ": M, N, K and batch must each stay below 2^31, got M = ",
              g.M, ", N = ", g.N, ", K = ", g.K, ", batch = ", g.batch);
  const auto device = c10::cuda::current_device();
  cutlass::KernelHardwareInfo hw;
  hw.device_id = device;
  hw.sm_count = multiprocessors(device);
  // A matrix's strides along the kernel's M and N, and its batch's, from its rows' and
  // batch's: C's (rows, 1), or C^T's (1, rows). The output's, and c's own (zero where one row
  // or matrix serves every row or entry); the unit stride along C's columns is static in both
  // layouts (make_stride3 leaves a static slot as it is).
  const auto strides = [](auto stride, int64_t rs, int64_t bs) {
    return make_stride3<decltype(stride)>(Config::kSwapped ? 1 : rs, Config::kSwapped ? rs : 1, bs);
  };
  const auto stride_out = strides(typename Kernel::StrideD{}, g.out_rs, g.out_bs);
  static_assert(cute::is_constant<1, cute::remove_cvref_t<decltype(cute::get<Config::kSwapped ? 0 : 1>(
                                         typename Kernel::StrideC{}))>>::value,
                "C's stride along its columns is a static 1");
  typename Gemm::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {static_cast<int>(g.M), static_cast<int>(g.N), static_cast<int>(g.K),
       static_cast<int>(g.batch)},
      {g.a.ptr, make_stride3<typename Kernel::StrideA>(g.a.rs, g.a.cs, g.a.bs),  //
       g.b.ptr, make_stride3<typename Kernel::StrideB>(g.b.cs, g.b.rs, g.b.bs)},
      {{g.alpha, g.beta},
       g.beta != 0.0f ? g.c : nullptr,
       strides(typename Kernel::StrideC{}, g.c_rs, g.c_bs),
       g.out,
       stride_out},
      hw};
  if constexpr (Config::kAccumulation == Accumulation::kPromoted)
    args.mainloop.mma_promotion_interval = static_cast<uint32_t>(g.unpromoted);
  if constexpr (Config::kStreamK) {
    using Decomposition = typename Kernel::TileScheduler::DecompositionMode;
    if (g.splits > 0) {
      args.scheduler.splits = g.splits;
      args.scheduler.decomposition_mode = g.splits == 1 ? Decomposition::DataParallel : Decomposition::SplitK;
    }
  }
  Gemm gemm;
  // CUTLASS checks an operand's extent along its unit stride as if it were its lines' stride;
  // TMA needs only the strides and the start 16-byte aligned (tma_readable) and fills a K
  // slice past K with zeros, so K is checked as the multiple of 4 that its lines hold.
  typename Gemm::Arguments checked = args;
  cute::get<2>(checked.problem_shape) = static_cast<int>(round_up4(g.K));
  check_cutlass(gemm.can_implement(checked), g.tier, "can_implement");
  const size_t workspace_bytes = Gemm::get_workspace_size(args);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  void* workspace_ptr = nullptr;
  if constexpr (Config::kStreamK) {
    // The kept workspace where the scheduler's is all of it (the epilogue's takes none).
    if (Kernel::CollectiveEpilogue::get_workspace_size(args.problem_shape, args.epilogue) == 0) {
      workspace_ptr = kept_stream_k_workspace(workspace_bytes, stream);
      args.scheduler.locks_zero = workspace_ptr != nullptr;
    }
  }
  at::Tensor workspace;
  if (workspace_ptr == nullptr) {
    workspace = scratch(static_cast<int64_t>(workspace_bytes), at::kByte);
    workspace_ptr = workspace.data_ptr();
  }
  check_cutlass(gemm.initialize(args, workspace_ptr, stream), g.tier, "initialize");
  if constexpr (Config::kStreamK)
    TORCH_INTERNAL_ASSERT(!gemm.params().scheduler.requires_separate_reduction(),
                          "gemmtiles: CUTLASS's stream-K ran a separate reduction, which StreamKLocksLeftZero does not reset");
  check_cutlass(gemm.run(stream), g.tier, "run");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The fastest configurations of those measured (docs/tensor-cores.md; scripts/tf32_configs.cu
// times them against cuBLAS): tf32 on 128x256 tiles (faster than 256x128), or 128x128 where
// those leave the SMs less to do (tf32_tiling in auto/plan.h, whose model counts the same: a
// product of about a wave of 128x256 tiles or fewer), its output through TMA where aligned,
// stream-K where waves leave SMs idle, on clusters of two blocks along M, or along N where
// that rounds fewer tiles up to the cluster (tf32_clusters_along_n); tf32x3 on
// 128x256 with the correction sections unpromoted on whole 64x256 wgmmas, then A_hi·B_hi
// promoted every K slice in 64-column chunks (well ahead of cuBLAS's fp32; faster than every
// slice promoted, which beat CUTLASS's promoted mainloop on 128x128 tiles, 2x2 / 1x2 / 4x1
// clusters or 128x192 tiles slower still; the whole 128x256 tile promoted at once spills).
static_assert(kTensorCoreTileM == 128 && kTensorCoreTileN == 256, "auto/plan.h's model counts these tiles");
static_assert(std::size(kTf32Tiles) == 2 && kTf32Tiles[0].m == 128 && kTf32Tiles[0].n == 256 &&
                  kTf32Tiles[1].m == 128 && kTf32Tiles[1].n == 128,
              "run_tf32 runs the tiles that auto/plan.h's tf32_tiling picks from");
template <class Tile, Output kOutput>
void run_tf32_on_tile(const Aligned& g, bool along_n) {
  if (along_n) return run_gemm<Tf32Tile<Tile, cute::Shape<_1, _2, _1>, kOutput>>(g);
  run_gemm<Tf32Tile<Tile, cute::Shape<_2, _1, _1>, kOutput>>(g);
}
template <Output kOutput>
void run_tf32(const Aligned& g) {
  const ForcedTf32Route forced = forced_route();
  const TensorCoreTile& t =
      forced.kernel == Tf32RouteKernel::kOwn
          ? kTf32Tiles[forced.tile_n == 128 ? 1 : 0]
          : *tf32_tiling(g.M, g.N, g.K, g.batch, multiprocessors(c10::cuda::current_device())).tile;
  const bool along_n = tf32_clusters_along_n(g.M, g.N, t);
  if (t.n == 128) return run_tf32_on_tile<Tile128x128, kOutput>(g, along_n);
  run_tf32_on_tile<Tile128x256, kOutput>(g, along_n);
}
void run_tf32x3(const Aligned& g) { run_gemm<Tf32x3Tile>(g); }

// g as C^T = B^T A^T on Config (a kernel of C^T, column-major output): B^T (N x K) the MMA's
// A, A^T (K x M) its B, the output's rows its columns, batch for batch.
template <class Config>
void run_swapped(const Aligned& g) {
  Aligned s = g;
  s.M = g.N;
  s.N = g.M;
  s.a = {g.b.ptr, g.b.cs, g.b.rs, g.b.bs};  // (n, k) = B's (k, n)
  s.b = {g.a.ptr, g.a.cs, g.a.rs, g.a.bs};  // (k, m) = A's (m, k)
  run_gemm<Config>(s);
}

// g (one product) on the narrow kernel's tile 128 x kWidth (tf32_narrow).
template <class LayoutA, int kWidth>
void run_tf32_narrow_as(const Aligned& g) {
  // A batch runs data-parallel only (the K slices of run_tf32_slices).
  TORCH_INTERNAL_ASSERT(g.batch == 1 || g.splits == 1, "gemmtiles::tf32: the narrow kernel runs one product");
  run_swapped<Tf32NarrowConfig<cute::Shape<_128, cute::Int<kWidth>, _32>, LayoutA>>(g);
}

// The narrow kernel of tile t for B K-major (x @ W^T) or N-major (x @ W: 64 or 128 wide only,
// tf32_narrow).
using GemmFn = void (*)(const Aligned&);
GemmFn tf32_narrow_kernel(const TensorCoreTile& t, bool b_kmajor) {
  using Row = cutlass::layout::RowMajor;
  using Col = cutlass::layout::ColumnMajor;
  if (b_kmajor) {
    if (t.n == 32) return run_tf32_narrow_as<Row, 32>;
    if (t.n == 64) return run_tf32_narrow_as<Row, 64>;
    TORCH_INTERNAL_ASSERT(t.n == 128, "gemmtiles::tf32: no narrow kernel ", t.n, " wide");
    return run_tf32_narrow_as<Row, 128>;
  }
  if (t.n == 64) return run_tf32_narrow_as<Col, 64>;
  TORCH_INTERNAL_ASSERT(t.n == 128, "gemmtiles::tf32: no narrow kernel ", t.n, " wide for an N-major B");
  return run_tf32_narrow_as<Col, 128>;
}

// ---------------------------------------------------------------------------------------
// The pack pass: dst[z][r][j] (rows of length >= J at stride ld, batches at dst_bs) from
// src element (z, r, j), j < J - z * J_step (a batch of K slices of one row: J_step the
// slice's length, J the row's), through a 64 x 64 shared tile so that both the reads (along src's
// unit stride) and the writes (along j) coalesce. Each thread holds 16 elements: all its
// loads are issued before the first is stored, so that enough bytes are in flight to keep
// the memory busy (the pass is a copy, bound by bandwidth).

enum class Pack { kCopy, kLoHiHi, kHiLoHi };

constexpr int kPackTile = 64, kPackRowsPerPass = 8, kPackPasses = kPackTile / kPackRowsPerPass;

__device__ __forceinline__ float round_tf32(float x) {
  uint32_t bits;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
}

template <Pack kPack>
__global__ void __launch_bounds__(32 * kPackRowsPerPass)
pack_kernel(View src, int64_t R, int64_t J, int64_t J_pad, bool j_fast, float* dst, int64_t ld, int64_t dst_bs,
            int64_t r_pad, int64_t J_step) {
  __shared__ float tile[kPackTile][kPackTile + 1];
  const int64_t z = blockIdx.z, r0 = int64_t(blockIdx.y) * kPackTile, j0 = int64_t(blockIdx.x) * kPackTile;
  const float* s = src.ptr + z * src.bs;
  // Entry z's slice starts z * J_step into the row and ends at J_pad or the row's end: a
  // tile past J_pad reads nothing (it would read the next slice's columns to discard them).
  J -= z * J_step;
  if (J > J_pad) J = J_pad;
  float v[kPackPasses][2];
#pragma unroll
  for (int i = 0; i < kPackPasses; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Lanes run along src's unit stride: j where j_fast, else r.
      const int along = threadIdx.x + 32 * h, across = threadIdx.y + kPackRowsPerPass * i;
      const int ti = j_fast ? across : along, tj = j_fast ? along : across;
      const int64_t r = r0 + ti, j = j0 + tj;
      v[i][h] = (r < R && j < J) ? s[r * src.rs + j * src.cs] : 0.0f;
    }
  }
#pragma unroll
  for (int i = 0; i < kPackPasses; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int along = threadIdx.x + 32 * h, across = threadIdx.y + kPackRowsPerPass * i;
      if (j_fast) {
        tile[across][along] = v[i][h];
      } else {
        tile[along][across] = v[i][h];
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kPackPasses; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Rows up to r_pad and columns up to J_pad: the zeros past R and J are written too.
      const int ti = threadIdx.y + kPackRowsPerPass * i, tj = threadIdx.x + 32 * h;
      const int64_t r = r0 + ti, j = j0 + tj;
      if (r >= r_pad || j >= J_pad) continue;
      const float x = tile[ti][tj];
      float* d = dst + z * dst_bs + r * ld + j;
      if constexpr (kPack == Pack::kCopy) {
        d[0] = x;
      } else {
        // A non-finite x (or one whose hi overflows) stays in the hi·hi section only: the
        // correction sections get 0 in its place, so inf·lo terms of either sign cannot
        // turn an infinite product into NaN.
        const float hi = round_tf32(x);
        const bool finite = isfinite(hi);
        const float lo = finite ? round_tf32(x - hi) : 0.0f, hi_or_0 = finite ? hi : 0.0f;
        d[0] = kPack == Pack::kLoHiHi ? lo : hi_or_0;
        d[J_pad] = kPack == Pack::kLoHiHi ? hi_or_0 : lo;
        d[2 * J_pad] = hi;
      }
    }
  }
}

// dst (batch of r_pad x J_pad, rows at stride ld; kLoHiHi / kHiLoHi: three sections of
// J_pad per row) from src's R x J, zero past R and J (past J - z * J_step in entry z).
template <Pack kPack>
void pack(View src, int64_t batch, int64_t R, int64_t J, float* dst, int64_t ld, int64_t dst_bs,
          int64_t r_pad, int64_t J_pad, int64_t J_step = 0) {
  constexpr int64_t kMaxGridYZ = 65535;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const bool j_fast = src.cs == 1 || (src.rs != 1 && std::abs(src.cs) <= std::abs(src.rs));
  for (int64_t z0 = 0; z0 < batch; z0 += kMaxGridYZ) {
    for (int64_t r0 = 0; r0 < r_pad; r0 += kMaxGridYZ * kPackTile) {
      View s = src;
      s.ptr += z0 * src.bs + r0 * src.rs;
      const int64_t rows = std::min(kMaxGridYZ * kPackTile, r_pad - r0), zs = std::min(kMaxGridYZ, batch - z0);
      const dim3 grid(static_cast<unsigned>(ceil_div(J_pad, kPackTile)), static_cast<unsigned>(ceil_div(rows, kPackTile)),
                      static_cast<unsigned>(zs));
      pack_kernel<kPack><<<grid, dim3(32, kPackRowsPerPass), 0, stream>>>(
          s, std::max<int64_t>(0, std::min(rows, R - r0)), J - z0 * J_step, J_pad, j_fast,
          dst + z0 * dst_bs + r0 * ld, ld, dst_bs, rows, J_step);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  }
}

// out[z][m][n] = c element (z, m, n), for a C that cannot be read in place.
__global__ void fill_kernel(View c, int64_t M, int64_t N, float* out, int64_t out_rs,
                            int64_t out_bs) {
  const int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t m = blockIdx.y, z = blockIdx.z;
  if (n < N) out[z * out_bs + m * out_rs + n] = c.ptr[z * c.bs + m * c.rs + n * c.cs];
}

void fill(View c, int64_t batch, int64_t M, int64_t N, float* out, int64_t out_rs, int64_t out_bs) {
  constexpr int64_t kMaxGridYZ = 65535;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  for (int64_t z0 = 0; z0 < batch; z0 += kMaxGridYZ) {
    for (int64_t m0 = 0; m0 < M; m0 += kMaxGridYZ) {
      View s = c;
      s.ptr += z0 * c.bs + m0 * c.rs;
      const dim3 grid(static_cast<unsigned>(ceil_div(N, 256)),
                      static_cast<unsigned>(std::min(kMaxGridYZ, M - m0)),
                      static_cast<unsigned>(std::min(kMaxGridYZ, batch - z0)));
      fill_kernel<<<grid, 256, 0, stream>>>(s, M, N, out + z0 * out_bs + m0 * out_rs, out_rs,
                                            out_bs);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  }
}

// out[m][n] = alpha * (parts[0][m][n] + ... + parts[slices - 1][m][n]) + beta * c (c read
// where beta != 0): the K slices of run_tf32_slices added in their order, the same bits every
// run.
__global__ void sum_slices_kernel(const float* parts, int64_t slices, int64_t M, int64_t N, float alpha,
                                  float beta, View c, float* out, int64_t out_rs) {
  const int64_t mn = M * N;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int64_t z = 0; z < slices; ++z) sum += parts[z * mn + i];
    const int64_t m = i / N, n = i - m * N;
    float v = alpha * sum;
    if (beta != 0.0f) v += beta * c.ptr[m * c.rs + n * c.cs];
    out[m * out_rs + n] = v;
  }
}

// ---------------------------------------------------------------------------------------
// Alignment: what TMA reads and writes in place.

// A (rows x cols, batches) that TMA can read as it is, K-major (unit column stride) or
// MN-major (unit row stride); size-1 dimensions first get a harmless aligned stride.
bool tma_readable(View& v, int64_t batch, int64_t rows, int64_t cols) {
  if (rows == 1 && v.cs == 1) v.rs = round_up4(cols);
  if (cols == 1 && v.rs == 1) v.cs = round_up4(rows);
  if (rows == 1 && cols == 1) v.rs = 4, v.cs = 1;
  const bool single = batch == 1;
  if (!aligned16(v.ptr)) return false;
  int64_t matrix = 0;  // elements one matrix spans
  if (v.cs == 1 && v.rs % 4 == 0 && v.rs >= cols) {
    matrix = rows * v.rs;
  } else if (v.rs == 1 && v.cs % 4 == 0 && v.cs >= rows) {
    matrix = cols * v.cs;
  } else {
    return false;
  }
  if (single) {
    v.bs = round_up4(matrix);
    return true;
  }
  return v.bs % 4 == 0 && v.bs >= matrix;
}

// Whether TMA can write p's output in place: 16-byte aligned rows, whole vectors of 4 floats.
bool tma_writable_out(const GemmProblem& p) {
  return p.N % 4 == 0 && aligned16(p.out) && p.out_rs % 4 == 0 && (p.batch == 1 || p.out_bs % 4 == 0);
}

// Runs `g` (whose N may be p.N padded to a multiple of 4) with its out, c and batch in
// shapes the kernel takes: where the kernel needs 16-byte aligned output rows (aligned_out),
// an aligned scratch output if out's rows are not or N was padded; c read where it lies, or
// copied into the output where it cannot be; and a batch whose B is shared folded into M.
void run_with_output(Aligned g, View c, const GemmProblem& p, void (*gemm)(const Aligned&), bool aligned_out) {
  at::Tensor out_scratch;
  const bool out_ok = g.N == p.N && (!aligned_out || tma_writable_out(p));
  if (!out_ok) {
    out_scratch = scratch(p.batch * p.M * g.N);
    g.out = out_scratch.data_ptr<float>();
    g.out_rs = g.N;
    g.out_bs = p.M * g.N;
  } else {
    g.out = p.out;
    g.out_rs = p.out_rs;
    g.out_bs = p.out_bs;
  }
  // A batch sharing one B (nn.Linear's 3-D input) is one GEMM of batch * M rows when A and the
  // output are laid out batch after batch (and c, where it is read in place).
  const bool fold = g.batch > 1 && g.b.bs == 0 && g.a.cs == 1 && g.a.bs == g.M * g.a.rs && g.out_bs == g.M * g.out_rs;
  g.c = nullptr;
  g.c_rs = g.c_bs = 0;
  if (g.beta != 0.0f) {
    // c is read where it lies, along its own strides, where its columns have a unit stride,
    // the kernel reads no padded columns past them, its rows fold as the output's do, and,
    // for a kernel writing through TMA, its start and strides are 16-byte aligned: a full c, a
    // bias row (zero strides: one row serves every row and entry), a mask shared by a
    // batch's entries, rows of a wider tensor. Any other c is copied into the output first.
    int64_t rs = p.M == 1 ? 0 : c.rs, bs = p.batch == 1 ? 0 : c.bs;
    bool in_place = c.cs == 1 && g.N == p.N;
    if (fold) {
      // Row z * M + m of the folded product lies at z * bs + m * rs: rows at a stride of
      // rs where bs = M * rs, of bs where M is 1.
      in_place = in_place && (p.M == 1 || bs == p.M * rs);
      if (p.M == 1) rs = bs;
      bs = 0;
    }
    if (aligned_out) in_place = in_place && aligned16(c.ptr) && rs % 4 == 0 && bs % 4 == 0;
    if (in_place) {
      g.c = c.ptr;
      g.c_rs = rs;
      g.c_bs = bs;
    } else {
      fill(c, p.batch, p.M, p.N, g.out, g.out_rs, g.out_bs);
      g.c = g.out;
      g.c_rs = g.out_rs;
      g.c_bs = g.out_bs;
    }
  }
  if (fold) {
    g.M *= g.batch;
    g.batch = 1;
    g.a.bs = round_up4(g.M * g.a.rs);
    g.out_bs = round_up4(g.M * g.out_rs);
    if (g.c == g.out) g.c_bs = g.out_bs;
  }
  TORCH_INTERNAL_ASSERT(g.batch == 1 || g.b.bs != 0, "a shared B left unfolded");
  if (g.batch == 1) g.b.bs = round_up4(g.K * g.N);
  gemm(g);
  if (out_scratch.defined()) {
    // The first p.N columns of the scratch's rows back into out.
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    if (p.batch == 1 || p.out_bs == p.M * p.out_rs) {
      C10_CUDA_CHECK(cudaMemcpy2DAsync(p.out, p.out_rs * sizeof(float), out_scratch.data_ptr<float>(),
                                       g.N * sizeof(float), p.N * sizeof(float), p.batch * p.M,
                                       cudaMemcpyDeviceToDevice, stream));
    } else {
      for (int64_t z = 0; z < p.batch; ++z) {
        C10_CUDA_CHECK(cudaMemcpy2DAsync(p.out + z * p.out_bs, p.out_rs * sizeof(float),
                                         out_scratch.data_ptr<float>() + z * p.M * g.N,
                                         g.N * sizeof(float), p.N * sizeof(float), p.M,
                                         cudaMemcpyDeviceToDevice, stream));
      }
    }
  }
}

Aligned base(const char* tier, const GemmProblem& p) {
  Aligned g{};
  g.tier = tier;
  g.batch = p.batch;
  g.M = p.M;
  g.N = p.N;
  g.K = p.K;
  g.alpha = p.alpha;
  g.beta = p.beta;
  return g;
}

View c_view(const GemmProblem& p) { return {p.c, p.c_rs, p.c_cs, p.c_bs}; }

// tf32 on p's output in place: on the narrow kernel of tile narrow (B K-major or N-major as
// it is), where given; through TMA where its rows allow, else a float at a time; or, on a B
// left N-major (transposed_b), the kernel that transposes it in registers.
void run_tf32_on(const Aligned& g, const GemmProblem& p, bool transposed_b, const TensorCoreTile* narrow) {
  if (narrow) return run_with_output(g, c_view(p), p, tf32_narrow_kernel(*narrow, g.b.rs == 1), false);
  if (transposed_b) return run_with_output(g, c_view(p), p, run_swapped<Tf32TransposedB>, false);
  if (tma_writable_out(p)) return run_with_output(g, c_view(p), p, run_tf32<Output::kTma>, true);
  run_with_output(g, c_view(p), p, run_tf32<Output::kAnyAlignment>, false);
}

// p (one product) as the K slices s (tf32_slices, auto/plan.h): A's and B's slices packed
// K-major, slice after slice (zeros past K); the narrow kernel on every slice at once into
// partial outputs; their sum in order, with alpha, beta and c, into p's output.
void run_tf32_slices(Aligned g, const GemmProblem& p, const Tf32Slices& s) {
  TORCH_INTERNAL_ASSERT(p.batch == 1 && s.slices > 0 && s.slice_k % 32 == 0 && s.tile,
                        "gemmtiles::tf32: K slices of one product");
  const int64_t slices = s.slices, slice_k = s.slice_k;
  at::Tensor a_slices = scratch(slices * p.M * slice_k), b_slices = scratch(slices * p.N * slice_k);
  at::Tensor parts = scratch(slices * p.M * p.N);
  pack<Pack::kCopy>({p.a, p.a_rs, p.a_cs, slice_k * p.a_cs}, slices, p.M, p.K, a_slices.data_ptr<float>(), slice_k,
                    p.M * slice_k, p.M, slice_k, slice_k);
  pack<Pack::kCopy>({p.b, p.b_cs, p.b_rs, slice_k * p.b_rs}, slices, p.N, p.K, b_slices.data_ptr<float>(), slice_k,
                    p.N * slice_k, p.N, slice_k, slice_k);
  g.batch = slices;
  g.K = slice_k;
  g.a = {a_slices.data_ptr<float>(), slice_k, 1, p.M * slice_k};
  g.b = {b_slices.data_ptr<float>(), 1, slice_k, p.N * slice_k};
  g.c = nullptr;
  g.alpha = 1.0f;
  g.beta = 0.0f;
  g.out = parts.data_ptr<float>();
  g.out_rs = p.N;
  g.out_bs = p.M * p.N;
  g.splits = 1;  // data-parallel: a block a tile of a slice
  tf32_narrow_kernel(*s.tile, true)(g);
  const int64_t mn = p.M * p.N;
  const int blocks = static_cast<int>(std::min<int64_t>(ceil_div(mn, 256), 4 * 1024));
  sum_slices_kernel<<<blocks, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
      parts.data_ptr<float>(), slices, p.M, p.N, p.alpha, p.beta, c_view(p), p.out, p.out_rs);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void launch_tf32_sm90a(const GemmProblem& p) {
  // TMA reads A and B in place where their lines are 16-byte aligned, whatever K (it fills
  // the last K slice past K with zeros); otherwise they are packed K-major, in lines of K
  // padded to a multiple of 4. The output is written in place, whatever its alignment.
  Aligned g = base("tf32", p);
  g.splits = std::max(0, forced_tf32_splits.load(std::memory_order_relaxed));
  const bool b_shared = p.batch > 1 && p.b_bs == 0;
  const int64_t b_batch = b_shared ? 1 : p.batch;
  const int64_t K4 = round_up4(p.K);
  View a = {p.a, p.a_rs, p.a_cs, p.batch == 1 ? 0 : p.a_bs};
  View b = {p.b, p.b_rs, p.b_cs, b_batch == 1 ? 0 : p.b_bs};
  at::Tensor a_copy, b_copy;
  // B is read as it is where tf32_b_route (auto/plan.h) finds a kernel that takes it so, else
  // packed K-major; a batch sharing B runs as batch * M rows against one B (folded, or entry
  // by entry).
  const bool b_readable = tma_readable(b, b_batch, p.K, p.N);
  const bool b_kmajor = b.rs == 1;
  const int64_t sms = multiprocessors(c10::cuda::current_device());
  // Ampere's kernel where its launch takes B, the output and c (A is given it K-major, in place
  // or packed), so that where it does not, the route is chosen without it.
  const bool ampere_takes = GEMMTILES_CUTLASS != 0 && cutlass_tf32_takes_but_a(p);
  const Tf32BRoute model =
      tf32_b_route(b_shared ? p.batch * p.M : p.M, p.N, p.K, b_batch, b_kmajor, b_readable, sms, ampere_takes);
  Tf32BRoute route = model;
  // A forced route (force_tf32_route) in its place, where its kernel can run the problem.
  const ForcedTf32Route forced = forced_route();
  const bool foldable = p.batch == 1 || (b_shared && p.out_bs == p.M * p.out_rs);
  const bool b_as_it_is = tf32_reads_b_in_place(b_kmajor, b_readable, p.N);
  if (forced.kernel != Tf32RouteKernel::kModel) {
    Tf32BRoute f{false, 0.0};
    bool runs = true;
    switch (forced.kernel) {
      case Tf32RouteKernel::kNarrow:
        for (const TensorCoreTile& t : kTf32NarrowTiles)
          if (t.n == forced.tile_n) f.narrow = &t;
        // An N-major B runs as it lies on the 64- and 128-wide tiles, packed K-major on the 32.
        f.b_as_it_is = b_as_it_is && (b_kmajor || forced.tile_n != 32);
        runs = foldable && f.narrow;
        break;
      case Tf32RouteKernel::kOwn:
        f.b_as_it_is = b_as_it_is && b_kmajor;
        break;
      case Tf32RouteKernel::kTransposing:
        f.transposes_b = true;
        f.b_as_it_is = true;
        runs = !b_kmajor && b_as_it_is && b.cs == 1;
        break;
      case Tf32RouteKernel::kAmpere:
        f.ampere_splits = forced.splits;
        f.b_as_it_is = true;
        runs = p.batch == 1 && !b_kmajor && ampere_takes && p.K % 4 == 0;
        break;
      case Tf32RouteKernel::kModel:
        break;
    }
    if (runs) {
      route = f;
    } else {
      forced_tf32_route_refused_.store(true, std::memory_order_relaxed);
    }
  }
  // K in slices summed apart runs one product; a batch runs the route they stand in for.
  if (p.batch == 1) {
    const int forced_slices = forced_tf32_slices.load(std::memory_order_relaxed);
    const Tf32Slices s = forced_slices > 0 ? tf32_slices_of(p.M, p.N, p.K, sms, forced_slices) : route.k_slices;
    if (s.slices > 0) return run_tf32_slices(g, p, s);
  }
  const bool a_in_place = !(p.batch > 1 && p.a_bs == 0) && tma_readable(a, p.batch, p.M, p.K) && a.cs == 1;
  if (!a_in_place) {
    a_copy = scratch(p.batch * p.M * K4);
    pack<Pack::kCopy>({p.a, p.a_rs, p.a_cs, p.batch == 1 ? 0 : p.a_bs}, p.batch, p.M, p.K,
                      a_copy.data_ptr<float>(), K4, p.M * K4, p.M, K4);
    a = {a_copy.data_ptr<float>(), K4, 1, p.M * K4};
  }
#if GEMMTILES_CUTLASS
  // Ampere's kernel reads an N-major B as it lies (one product; A as it is, or its K-major
  // copy).
  if (route.ampere_splits > 0) {
    GemmProblem q = p;
    q.a = a.ptr;
    q.a_rs = a.rs;
    q.a_cs = a.cs;
    if (cutlass_tf32_takes(q))
      return launch_cutlass_tf32_nn(q, route.ampere_splits, c10::cuda::getCurrentCUDAStream());
    if (forced.kernel == Tf32RouteKernel::kAmpere) {
      // Not expected (ampere_takes asks all of cutlass_tf32_takes but A's layout, which A's
      // K-major copy meets); refused, should it happen: the route's fields below, those Ampere's
      // kernel stands in for where the route has it.
      forced_tf32_route_refused_.store(true, std::memory_order_relaxed);
      route = model;
    }
  }
#endif
  // The narrow kernel takes one product: a batch sharing B runs as one (folded by
  // run_with_output, where its outputs follow one another) or entry by entry, the route asked
  // of its rows together.
  const TensorCoreTile* narrow = foldable ? route.narrow : nullptr;
  const bool transposed_b = route.transposes_b && b.cs == 1;
  const bool b_in_place = route.b_as_it_is && (b_kmajor || transposed_b || narrow);
  if (!b_in_place) {
    // B^T (N x K4) row-major: B K-major.
    b_copy = scratch(b_batch * p.N * K4);
    pack<Pack::kCopy>({p.b, p.b_cs, p.b_rs, b_batch == 1 ? 0 : p.b_bs}, b_batch, p.N, p.K,
                      b_copy.data_ptr<float>(), K4, p.N * K4, p.N, K4);
    b = {b_copy.data_ptr<float>(), 1, K4, p.N * K4};
  }
  g.a = a;
  g.b = b;
  if (b_shared) {
    g.b.bs = 0;
    if (!(g.a.cs == 1 && g.a.bs == p.M * g.a.rs)) {
      // Each batch entry its own GEMM against the one B.
      for (int64_t z = 0; z < p.batch; ++z) {
        GemmProblem q = p;
        q.batch = 1;
        if (q.c) q.c += z * p.c_bs;
        q.out += z * p.out_bs;
        Aligned gz = g;
        gz.batch = 1;
        gz.a.ptr += z * g.a.bs;
        run_tf32_on(gz, q, transposed_b, narrow);
      }
      return;
    }
  }
  run_tf32_on(g, p, transposed_b, narrow);
}

int64_t stream_k_locks_left_set() { return stream_k_locks().left_set(); }

void force_tf32_splits(int splits) { forced_tf32_splits.store(splits < 0 ? -1 : splits); }
void force_tf32_slices(int slices) { forced_tf32_slices.store(slices < 2 ? 0 : slices); }
void force_tf32_route(Tf32RouteKernel kernel, int tile_n, int splits) {
  forced_tf32_route_refused_.store(false);
  forced_tf32_route.store(int64_t(kernel) | int64_t(tile_n) << 8 | int64_t(splits) << 24);
}
bool forced_tf32_route_refused() { return forced_tf32_route_refused_.load(); }

void launch_tf32x3_sm90a(const GemmProblem& p) {
  // Up to one K slice deep (kTf32x3MinK in auto/plan.h) the tensor cores would sum all the
  // hi·hi products in one truncating pass, with no round-to-nearest addition between them:
  // error up to a few times cuBLAS fp32's, whose few rounded FMAs are all the error there
  // is. The fp32 FMA kernel gives that error, and a product that shallow is bound by writing
  // its output. (Every caller comes here: the tier, auto's plan and a forced plan.)
  if (p.K < kTf32x3MinK) return launch_thread_tile(p);
  // A' rows [lo | hi | hi] for every batch entry (a shared A is expanded: the fold needs A'
  // batch after batch), B' = B^T's rows [hi | lo | hi]; each section K padded by zeros to
  // a multiple of 4, B' rows N padded likewise.
  Aligned g = base("tf32x3", p);
  const int64_t K4 = round_up4(p.K), N4 = round_up4(p.N), ld = 3 * K4;
  const bool b_shared = p.batch > 1 && p.b_bs == 0;
  const int64_t b_batch = b_shared ? 1 : p.batch;
  at::Tensor a3 = scratch(p.batch * p.M * ld), b3 = scratch(b_batch * N4 * ld);
  pack<Pack::kLoHiHi>({p.a, p.a_rs, p.a_cs, p.batch == 1 ? 0 : p.a_bs}, p.batch, p.M, p.K,
                      a3.data_ptr<float>(), ld, p.M * ld, p.M, K4);
  pack<Pack::kHiLoHi>({p.b, p.b_cs, p.b_rs, b_batch == 1 ? 0 : p.b_bs}, b_batch, p.N, p.K,
                      b3.data_ptr<float>(), ld, N4 * ld, N4, K4);
  g.K = ld;
  g.N = N4;
  // The two correction sections' whole slices of 32 (rounded down to a multiple of 4, as
  // CUTLASS checks the field it travels in) run unpromoted.
  g.unpromoted = static_cast<int>(std::min<int64_t>(2 * K4 / 32 / 4 * 4, INT_MAX / 2));
  g.a = {a3.data_ptr<float>(), ld, 1, p.M * ld};
  g.b = {b3.data_ptr<float>(), 1, ld, b_shared ? 0 : N4 * ld};
  run_with_output(g, c_view(p), p, run_tf32x3, true);
}

}  // namespace gemmtiles
