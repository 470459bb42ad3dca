// The CUTLASS SIMT kernels of csrc/auto/cutlass_simt.h, instantiated per layout in
// cutlass_simt_<layout>_cutlass.cu (one translation unit each, so that a parallel build
// compiles them side by side): CUTLASS's GemmUniversal with its stream-K scheduler. The same
// template runs Ampere's TF32 tensor-core GEMM (launch_cutlass_tf32).
#pragma once

#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm_universal.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle_streamk.h>

#include <type_traits>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include "plan.h"
#include "cutlass_padded_core.cuh"
#include "cutlass_simt.h"

namespace gemmtiles {
namespace cutlass_simt {

// CUTLASS's GemmUniversal set up on partial tiles and barrier flags given apart:
// GemmUniversalBase::initialize lays both out in one workspace and zeroes the flags on the
// stream before every launch that shares tiles: a memset of its own (about a microsecond of
// the GPU's time, most of it hidden behind the launch after it, docs/auto.md). The flags
// need no zeroing where they were left zero (zeroed_cutlass_flags).
template <class Gemm>
class GemmOnFlags : public Gemm {
 public:
  cutlass::Status set_up(const typename Gemm::Arguments& args) { return this->init_params(args, nullptr); }
  // Bytes of the partial tiles, then of the flags: the workspace's two parts, in
  // GemmUniversalStreamk::Params's own sizes.
  size_t partial_bytes() const {
    const auto& mapping = this->params_.block_mapping;
    const size_t blocks = size_t(mapping.sk_regions()) * size_t(mapping.sk_blocks_per_region());
    return (Gemm::GemmKernel::kWorkspaceBytesPerBlock * blocks + 127) / 128 * 128;
  }
  size_t flag_bytes() const { return this->params_.get_workspace_size() - partial_bytes(); }
  void use_workspace(void* partials, void* flags) {
    this->params_.partials_workspace = partials;
    this->params_.barrier_workspace = flags;
  }
  // Whether the grid adds the tiles' slices in a wave of reduction blocks of its own
  // (ThreadblockSwizzleStreamK: 3 or more slices a tile, its blocks in fewer waves than the
  // blocks an SM holds).
  bool reduction_wave() const { return this->params_.block_mapping.reduction_blocks > 0; }
};

// The math a kernel runs. Exact fp32 FMAs on the CUDA cores: slices 8 deep, single-float
// copies (any leading dimension and offset), single-float stores. TF32 on Ampere's tensor-core
// instruction (mma.sync m16n8k8, operands rounded to TF32 on their way from shared memory):
// slices 32 deep, 16-byte copies and stores, so operands and output with 16-byte aligned rows
// (cutlass_tf32_takes).
struct SimtMath {
  using OpClass = cutlass::arch::OpClassSimt;
  using Instruction = cutlass::gemm::GemmShape<1, 1, 1>;
  using Operator = PaddedSimtMultiplyAdd;
  static constexpr int kK = 8, kAlign = 1;
  static constexpr const char* kName = "SIMT SGEMM";
};
struct Tf32Math {
  using OpClass = cutlass::arch::OpClassTensorOp;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 8>;
  using Operator = cutlass::arch::OpMultiplyAdd;
  static constexpr int kK = 32, kAlign = 4;
  static constexpr const char* kName = "TF32 tensor-core GEMM";
};

// A and B K-major (row-major A; column-major B) or not; a BM x BN x Math::kK tile of warps of
// WM x WN, STAGES stages of cp.async copies; CUTLASS's stream-K scheduler, or (Swizzle) its
// data-parallel one, for the slices of a split K run apart (run_slices).
template <class Math, bool A_KMAJOR, bool B_KMAJOR, int BM, int BN, int WM, int WN, int STAGES,
          class Swizzle = cutlass::gemm::threadblock::ThreadblockSwizzleStreamK>
using GemmOf = cutlass::gemm::device::GemmUniversal<
    float, std::conditional_t<A_KMAJOR, cutlass::layout::RowMajor, cutlass::layout::ColumnMajor>, float,
    std::conditional_t<B_KMAJOR, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>, float,
    cutlass::layout::RowMajor, float, typename Math::OpClass, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, Math::kK>, cutlass::gemm::GemmShape<WM, WN, Math::kK>, typename Math::Instruction,
    cutlass::epilogue::thread::LinearCombination<float, Math::kAlign, float, float>, Swizzle, STAGES, Math::kAlign,
    Math::kAlign, typename Math::Operator>;

// A split K's slices run apart: CUTLASS's data-parallel kernel with K cut into slices
// (kGemmSplitKParallel), each slice's tiles writing their partial product (alpha 1, no c) to a
// workspace of one M x N output a slice, then launch_split_k_reduce adding them up in a fixed
// order, so every run gives the same bits. About `splits` slices: CUTLASS rounds a slice's K
// up to a multiple of 4, and of a cache line where an operand's rows run along K and K allows,
// which can leave fewer; the reduction adds those written. Why, where the stream-K kernel
// would add them in a wave of reduction blocks (run, below): on deep-K products of at most one
// 64 x 64 tile an SM (scripts/splitk_reduce.cu, H200, that tile's two- and four-warp builds, NN
// and NT, with a reduction of its own, a loop over the slices), slices run apart took
// 0.80-0.92x the wave's time at each number of slices from 3 to 32 (geomean; down to 0.39x).
// Where the stream-K kernel adds them one slice after another (2 slices, or more blocks than
// fit the SMs at once) they stay in its grid: apart, they ran 0.98-1.02x its time up to 16
// slices there, and through auto on such split plans of large outputs (hundreds of tiles),
// whose partial products are many bytes, up to 1.2x (docs/auto.md). Past 16 slices
// (kCutlassInGridSplits) a plan runs apart even where the stream-K kernel would add its slices
// in its grid (a GPU that holds fewer blocks an SM than the model's table): the planner weighs
// such plans only where its rule sends them apart (cutlass_slices_apart in auto/plan.h), and
// the stream-K kernel ran them behind their estimates.
template <class Math, bool A_KMAJOR, bool B_KMAJOR, int BM, int BN, int WM, int WN, int STAGES>
void run_slices(const GemmProblem& p, int64_t splits, cudaStream_t stream) {
  using Gemm = GemmOf<Math, A_KMAJOR, B_KMAJOR, BM, BN, WM, WN, STAGES,
                      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>>;
  struct Sliced : Gemm {
    int64_t slices() const { return this->params_.grid_tiled_shape.k(); }
  };
  const int64_t mn = p.M * p.N;
  // From the caching allocator, on this stream: freed when this call returns, reused only by
  // work queued after the reduction.
  const c10::DataPtr partials = c10::cuda::CUDACachingAllocator::get()->allocate(size_t(splits * mn) * sizeof(float));
  float* ws = static_cast<float*>(partials.get());
  typename Gemm::Arguments args(cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel,
                                {static_cast<int>(p.M), static_cast<int>(p.N), static_cast<int>(p.K)},
                                static_cast<int>(splits), {1.0f, 0.0f}, p.a, p.b, ws, ws, 0, 0, mn, mn, a_ld(p),
                                b_ld(p), p.N, p.N);
  Sliced gemm;
  cutlass::Status status = gemm.can_implement(args);
  if (status == cutlass::Status::kSuccess) status = gemm.initialize(args, nullptr, stream);
  if (status == cutlass::Status::kSuccess) status = gemm.run(stream);
  TORCH_CHECK(status == cutlass::Status::kSuccess, "gemmtiles: CUTLASS's ", Math::kName, " (", BM, " x ", BN,
              " tile, K in ", splits, " slices) did not launch: ", cutlass::cutlassGetStatusString(status));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  launch_split_k_reduce(p, gemm.slices(), ws, stream);
}

template <class Math, bool A_KMAJOR, bool B_KMAJOR, int BM, int BN, int WM, int WN, int STAGES>
void run(const GemmProblem& p, int64_t splits, cudaStream_t stream) {
  using Gemm = GemmOf<Math, A_KMAJOR, B_KMAJOR, BM, BN, WM, WN, STAGES>;
  using Policy = typename Gemm::GemmKernel::Mma::Policy;
  static_assert(!std::is_same_v<Math, SimtMath> || (Policy::SmemPaddingA::kRow == (A_KMAJOR ? 4 : 0) &&
                                                     Policy::SmemPaddingB::kColumn == (B_KMAJOR ? 4 : 0)),
                "the SIMT mainloop's padded core (PaddedSimtMultiplyAdd above) is the one built");
  const CutlassSource c = cutlass_source(p);
  const bool batched = p.batch > 1;
  // A batch runs data-parallel, one grid layer per entry; one product takes the plan's
  // schedule: CUTLASS's stream-K (batch_split 1 with every SM available), data-parallel
  // (batch_split 1 with one SM "available": no tile is shared), or split-K (batch_split s).
  const int batch_split = batched ? static_cast<int>(p.batch) : static_cast<int>(splits > 1 ? splits : 1);
  const int avail_sms = !batched && splits == 1 ? 1 : -1;
  typename Gemm::Arguments args(batched ? cutlass::gemm::GemmUniversalMode::kBatched
                                        : cutlass::gemm::GemmUniversalMode::kGemm,
                                {static_cast<int>(p.M), static_cast<int>(p.N), static_cast<int>(p.K)}, batch_split,
                                {p.alpha, c.beta}, p.a, p.b, c.c, p.out, p.a_bs, p.b_bs, c.batch_stride, p.out_bs,
                                a_ld(p), b_ld(p), c.ldc, p.out_rs, avail_sms);
  GemmOnFlags<Gemm> gemm;
  cutlass::Status status = gemm.can_implement(args);
  if (status == cutlass::Status::kSuccess) status = gemm.set_up(args);
  if constexpr (std::is_same_v<Math, SimtMath>) {
    if (status == cutlass::Status::kSuccess && !batched && splits > 1 &&
        (splits > kCutlassInGridSplits || gemm.reduction_wave())) {
      return run_slices<Math, A_KMAJOR, B_KMAJOR, BM, BN, WM, WN, STAGES>(p, splits, stream);
    }
  }
  // Partial tiles come from the caching allocator, on this stream: freed when this call
  // returns, reused only by work queued after the kernel. The barrier flags are the stream's
  // own, already zero (zeroed_cutlass_flags); while the stream captures a graph, flags of
  // this call's own, zeroed on the stream.
  c10::DataPtr partials, own_flags;
  if (status == cutlass::Status::kSuccess && !batched) {
    if (const size_t bytes = gemm.partial_bytes()) partials = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
    void* flags = nullptr;
    if (const size_t bytes = gemm.flag_bytes()) {
      flags = zeroed_cutlass_flags(bytes, stream);
      if (flags == nullptr) {
        own_flags = c10::cuda::CUDACachingAllocator::get()->allocate(bytes);
        C10_CUDA_CHECK(cudaMemsetAsync(own_flags.get(), 0, bytes, stream));
        flags = own_flags.get();
      }
    }
    gemm.use_workspace(partials.get(), flags);
  }
  if (status == cutlass::Status::kSuccess) status = gemm.run(stream);
  TORCH_CHECK(status == cutlass::Status::kSuccess, "gemmtiles: CUTLASS's ", Math::kName, " (", BM, " x ", BN,
              " tile) did not launch: ", cutlass::cutlassGetStatusString(status));
}

// The tiles of cutlass_tile_at (auto/plan.h): f.template operator()<BM, BN, WM, WN, STAGES>()
// for the tile of rows x cols on `warps` warps. On the two large tiles each warp computes
// 64 x 64 of C (eight warps on 128 x 256, four on 128 x 128): fewer shared-memory reads per FMA
// than warps of 32 x 64.
template <class F>
void with_tile(int rows, int cols, int warps, F&& f) {
  static_assert(kCutlassLargeTile.bm == 128 && kCutlassLargeTile.bn == 256 && kCutlassLargeTile.warps == 8,
                "the large tile built below");
  const auto is = [&](int r, int c, int w) { return rows == r && cols == c && warps == w; };
  if (is(128, 256, 8)) return f.template operator()<128, 256, 64, 64, 4>();
  if (is(128, 128, 4)) return f.template operator()<128, 128, 64, 64, 5>();
  if (is(64, 64, 2)) return f.template operator()<64, 64, 32, 64, 5>();
  if (is(64, 64, 4)) return f.template operator()<64, 64, 32, 32, 5>();
  if (is(32, 128, 2)) return f.template operator()<32, 128, 32, 64, 5>();
  // Narrow outputs (a tall product of few columns) and small products: as many blocks as
  // there is work for, one or two warps each. The 32 x 32 tile on one warp holds more blocks
  // an SM; on two warps of 16 x 32, each warp runs half of a k step's FMAs, so that a lone
  // block's k loop, the latency of a small product, is shorter.
  if (is(128, 32, 2)) return f.template operator()<128, 32, 64, 32, 4>();
  if (is(32, 32, 1)) return f.template operator()<32, 32, 32, 32, 3>();
  if (is(32, 32, 2)) return f.template operator()<32, 32, 16, 32, 3>();
  TORCH_INTERNAL_ASSERT(false, "gemmtiles: auto planned a CUTLASS tile of ", rows, " x ", cols, " on ", warps,
                        " warps, which is not built");
}

template <bool A_KMAJOR, bool B_KMAJOR>
void launch(const GemmProblem& p, int rows, int cols, int warps, int64_t splits, cudaStream_t stream) {
  with_tile(rows, cols, warps, [&]<int BM, int BN, int WM, int WN, int STAGES>() {
    run<SimtMath, A_KMAJOR, B_KMAJOR, BM, BN, WM, WN, STAGES>(p, splits, stream);
  });
}

// The blocks of the kernel of a tile of cutlass_tile_at the current device holds an SM at once
// (CUDA's occupancy calculator, as CUTLASS's stream-K scheduler asks it), -1 where the device
// cannot say.
template <bool A_KMAJOR, bool B_KMAJOR>
int blocks_per_sm(int rows, int cols, int warps) {
  int blocks = -1;
  with_tile(rows, cols, warps, [&]<int BM, int BN, int WM, int WN, int STAGES>() {
    blocks = GemmOf<SimtMath, A_KMAJOR, B_KMAJOR, BM, BN, WM, WN, STAGES>::maximum_active_blocks();
  });
  return blocks;
}

// TF32 on Ampere's tensor-core instruction, the 64 x 128 tile of four warps of 32 x 64, four
// stages (two blocks an SM): kTf32AmpereTile in auto/plan.h, which picks the splits.
template <bool A_KMAJOR, bool B_KMAJOR>
void launch_tf32(const GemmProblem& p, int64_t splits, cudaStream_t stream) {
  static_assert(kTf32AmpereTile.m == 64 && kTf32AmpereTile.n == 128, "the tile built below");
  run<Tf32Math, A_KMAJOR, B_KMAJOR, 64, 128, 32, 64, 4>(p, splits, stream);
}

}  // namespace cutlass_simt
}  // namespace gemmtiles
