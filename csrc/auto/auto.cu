// The `auto` tier: per call, the plan auto_plan makes (auto/plan.h). Where CUTLASS's SIMT
// kernels run the problem (built, sm_80+), the cost model's candidate of least estimate
// (auto/exact_model.h): CUTLASS's tiles, data-parallel or with K split, also after a
// transposing copy of a K-major operand; gemmtiles' own split-K and pipelined tiles; the skinny
// and GEMV kernels for few rows. Elsewhere the heuristic's plan: the skinny kernels for up to
// 16 rows, the split-K and pipelined tiles, warptile, with the copies and peels before them
// below. Where the precision settings allow them (core/precision.h) and the model says they
// are faster (tensor_cores_pay in plan.h), the tensor-core tiers on Hopper. A tuned table
// (auto/table.h) may carry its GPU's model parameters and a user's per-shape entries.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>

#include "table.h"
#include "launch.cuh"
#include "cutlass_simt.h"
#include "transpose.cuh"
#include "../core/launch.h"
#include "../tensor_core/tensor_core.h"

namespace gemmtiles {
namespace {

// The tensor-core math auto may run here: what the precision settings allow
// (core/precision.h), where this build has the sm_90a kernels and the GPU runs them.
TensorCoreMath tensor_cores_here(c10::DeviceIndex device) {
#if GEMMTILES_SM90A
  const TensorCoreMath math = auto_tensor_core_math();
  return math != TensorCoreMath::kNone && compute_capability(device) == 90 ? math : TensorCoreMath::kNone;
#else
  (void)device;
  return TensorCoreMath::kNone;
#endif
}

// auto's models for `device` where its tuned table has none: the H100's fits scaled to this
// GPU's SMs, SM clock and DRAM (scaled_tensor_core_model in plan.h, scaled_exact_model in
// exact_model.h), read once per device (its properties alone: no context on a device that
// this process does not use).
struct DeviceModels {
  TensorCoreModel tensor_cores;
  ExactModel exact;
};
const DeviceModels& device_models(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<DeviceModels> all;
  std::call_once(once, [] {
    all.resize(static_cast<size_t>(c10::cuda::device_count()));
    for (size_t d = 0; d < all.size(); ++d) {
      const auto index = static_cast<c10::DeviceIndex>(d);
      const DeviceClocks& clocks = device_clocks(index);
      all[d].tensor_cores = scaled_tensor_core_model(multiprocessors(index), clocks.sm_khz, clocks.dram_khz,
                                                       clocks.dram_bus_bits);
      all[d].exact = scaled_exact_model(clocks.sm_khz, clocks.dram_khz, clocks.dram_bus_bits);
    }
  });
  return all.at(static_cast<size_t>(device));
}

// A copy of the rows x cols matrix at `data` (row pitch ld, unit column stride) whose pitch is
// rounded up to 4 floats, 16-byte aligned: rows that take float4 loads. The pad is never read.
at::Tensor aligned_copy(const float* data, int64_t rows, int64_t cols, int64_t ld, c10::DeviceIndex device) {
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device);
  const at::Tensor src = at::from_blob(const_cast<float*>(data), {rows, cols}, {ld, 1}, opts);
  at::Tensor dst = at::empty({rows, round_up4(cols)}, opts);
  dst.narrow(1, 0, cols).copy_(src);
  return dst;
}

// The transpose of the rows x cols matrix at `data` (row pitch ld, unit column stride): a
// cols x rows matrix of row pitch `pitch` (>= rows; the pad is never read), made on the
// current stream; of each of `batch` such matrices, `bs` floats apart, where batch > 1 (at
// most 65535): a (batch, cols, pitch) tensor. The caller checks transpose_fits(rows, cols).
at::Tensor transposed_copy(const float* data, int64_t rows, int64_t cols, int64_t ld, int64_t pitch,
                           c10::DeviceIndex device, int64_t batch = 1, int64_t bs = 0) {
  at::Tensor t = at::empty({batch, cols, pitch}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device));
  launch_transpose(data, rows, cols, ld, t.data_ptr<float>(), pitch, c10::cuda::getCurrentCUDAStream(), batch, bs,
                   cols * pitch);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return t;
}

void launch_auto(const GemmProblem& p);

// Whether CUTLASS's SIMT kernels can run the problem here: built, on an sm_80+ GPU, and taking
// its operands and c.
bool cutlass_simt_runs(const GemmProblem& p, c10::DeviceIndex device) {
#if GEMMTILES_CUTLASS
  return cutlass_simt_takes(p) && compute_capability(device) >= 80;
#else
  (void)p, (void)device;
  return false;
#endif
}

// The problem of a swapped plan (AutoPlan::swapped in auto/plan.h): out^T = B^T A^T, an N x M
// product with A' = B^T and B' = A^T read where they lie, out^T written through its column
// stride (out's row stride) and c^T read through c's strides swapped.
GemmProblem swapped_problem(const GemmProblem& p) {
  GemmProblem q = p;
  q.M = p.N;
  q.N = p.M;
  q.a = p.b;
  q.a_bs = p.b_bs;
  q.a_rs = p.b_cs;
  q.a_cs = p.b_rs;
  q.b = p.a;
  q.b_bs = p.a_bs;
  q.b_rs = p.a_cs;
  q.b_cs = p.a_rs;
  q.c_rs = p.c_cs;
  q.c_cs = p.c_rs;
  q.out_rs = p.out_cs;
  q.out_cs = p.out_rs;
  return q;
}

// auto_plan's answer for the problem, from a cache of recent ones: the cost model weighs about
// a hundred candidates (microseconds a call, on the host, before every launch) and a model
// calls the same few shapes again and again. The key is everything auto_plan reads that can
// differ between calls on a device: the sizes, the operands' layout and alignment, whether
// CUTLASS's kernels take the problem and the tensor-core math the settings allow; the device's
// SMs and models (device_models) are its own. The plans were made with one table per device:
// a table replaced (set_auto_table) empties the cache.
struct PlanKey {
  int64_t M, N, K, batch;
  int device;
  unsigned flags;
  bool operator==(const PlanKey& o) const {
    return M == o.M && N == o.N && K == o.K && batch == o.batch && device == o.device && flags == o.flags;
  }
};
struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    size_t h = std::hash<int64_t>()(k.M);
    for (const int64_t x : {k.N, k.K, k.batch, int64_t(k.device), int64_t(k.flags)})
      h = h * 1000003u ^ std::hash<int64_t>()(x);
    return h;
  }
};
constexpr size_t kPlanCacheSize = 4096;  // plans kept before the cache starts over

AutoPlan cached_auto_plan(const GemmProblem& p, c10::DeviceIndex device, const std::shared_ptr<const AutoTable>& table,
                          bool a_vec, bool b_vec) {
  const bool cutlass = cutlass_simt_runs(p, device);
  const TensorCoreMath math = tensor_cores_here(device);
  const PlanKey key{p.M, p.N, p.K, p.batch, int(device),
                    unsigned(b_kmajor(p)) | unsigned(b_vec) << 1 | unsigned(a_kmajor(p)) << 2 | unsigned(a_vec) << 3 |
                        unsigned(cutlass) << 4 | unsigned(math) << 5};
  static std::mutex mu;
  static std::unordered_map<PlanKey, AutoPlan, PlanKeyHash> plans;
  static std::unordered_map<int, std::shared_ptr<const AutoTable>> tables;  // what the plans used
  {
    const std::lock_guard<std::mutex> lock(mu);
    std::shared_ptr<const AutoTable>& used = tables[int(device)];
    if (used != table) {
      plans.clear();
      used = table;
    }
    const auto hit = plans.find(key);
    if (hit != plans.end()) return hit->second;
  }
  const DeviceModels& models = device_models(device);
  // With the clusters this device runs (ExactModel::cluster_blocks; a table's fit takes them
  // too): the current device is the call's.
  ExactModel exact = models.exact;
  exact.cluster_blocks = skinny_cluster_blocks();
  const AutoPlan plan = auto_plan(p.M, p.N, p.K, p.batch, b_kmajor(p), b_vec, multiprocessors(device), a_kmajor(p),
                                  table.get(), a_vec, cutlass, math, models.tensor_cores, exact);
  const std::lock_guard<std::mutex> lock(mu);
  if (tables[int(device)] == table) {
    if (plans.size() >= kPlanCacheSize) plans.clear();
    plans.emplace(key, plan);
  }
  return plan;
}

// Whether a forced plan (forced_auto_plan in plan.h) runs the problem here: CUTLASS's kernels
// where they run it on a tile built for its layout (a copying plan: only K-major operands
// copied; K split on a batch of up to kEntryLaunchMaxBatch products, one launch each, as on
// one product), gemmtiles' own tiles and the skinny kernels where auto's candidates would
// include them (exact_candidates), the tensor-core tiers where auto could plan them.
bool forced_plan_runs(const GemmProblem& p, const AutoPlan& plan, bool a_vec, bool b_vec, c10::DeviceIndex device) {
  const bool a_k = a_kmajor(p), b_k = b_kmajor(p);
  if (plan.swapped) {  // a skinny or GEMV plan of the N x M product, where its candidates name it
    AutoPlan q = plan;
    q.swapped = false;
    const std::vector<AutoPlan> all =
        swapped_candidates(p.M, p.N, p.K, p.batch, a_k, a_vec, multiprocessors(device));
    return std::find(all.begin(), all.end(), plan) != all.end() &&
           forced_plan_runs(swapped_problem(p), q, b_vec, a_vec, device);
  }
  switch (plan.kernel) {
    case AutoKernel::kCutlass:
    case AutoKernel::kCutlassStreamK:
      return cutlass_simt_runs(p, device) && cutlass_tile_built(plan.mt, plan.nw, plan.w) &&
             (plan.kernel == AutoKernel::kCutlass || (p.batch == 1 && a_k && b_k)) &&
             (plan.splits <= 1 || p.batch <= kEntryLaunchMaxBatch);
    case AutoKernel::kCutlassBCopied:
    case AutoKernel::kCutlassACopied:
    case AutoKernel::kCutlassABCopied:
      return cutlass_simt_runs(p, device) && cutlass_tile_built(plan.mt, plan.nw, plan.w) &&
             (plan.splits == 1 || p.batch == 1 || (plan.splits > 1 && p.batch <= kEntryLaunchMaxBatch)) &&
             (!copies_a(plan.kernel) || (a_k && copy_fits(p.M, p.K, p.batch))) &&
             (!copies_b(plan.kernel) || (b_k && copy_fits(p.N, p.K, p.batch)));
    case AutoKernel::kTf32:
    case AutoKernel::kTf32x3:
      return tensor_cores_here(device) != TensorCoreMath::kNone;
    case AutoKernel::kWarptile:
      return true;
    case AutoKernel::kSkinnyNMajor: {
      // Row-major B: the split kernel with either width (four columns a lane on any B:
      // skinny_float4s), on any warps' slices of K.
      return !b_k && p.M <= kSkinnySplitMaxM && plan.mt == skinny_rows(p.M, false) && plan.nw == 1 &&
             (plan.w == 1 || plan.w == 4) && plan.k_slice > 0 && plan.k_slice % kSkinnySplitMinRows == 0 &&
             plan.splits == ceil_div64(p.K, plan.k_slice);
    }
    default: {
      const std::vector<AutoPlan> all =
          exact_candidates(p.M, p.N, p.K, p.batch, a_k, b_k, b_vec, multiprocessors(device), a_vec);
      return std::find(all.begin(), all.end(), plan) != all.end();
    }
  }
}

// Whether launch_peeled takes the problem: its last r <= 8 columns of a large output apart.
bool peels(const GemmProblem& p) { return peeled_columns(p.M, p.N, p.batch) != 0; }

// Whether launch_a_transposed takes the problem (B's rows float4s: b_vec). Not where the last
// columns are peeled: the rest's product decides then, as the tuner tunes it (tuned_shape in
// gemmtiles/tune.py), and its own call transposes A where that product's rule says so.
bool transposes_a(const GemmProblem& p, bool b_vec, const AutoTable* table) {
  return !peels(p) && transpose_a_first(p.M, p.N, p.K, p.batch, a_kmajor(p), b_kmajor(p), b_vec, table) &&
         transpose_fits(p.M, p.K);
}

// The tile kernels load an operand whose rows are not 16-byte aligned (a leading dimension
// that is not a multiple of 4, or an odd offset) one float at a time, well below their rate on
// aligned rows. For the heuristic's plans of large outputs (M and N >= 1024) such an operand is
// copied first into rows that are: the copy reads and writes it once (a small share of the
// product's time), the product then runs at the aligned rate (docs/auto.md).
bool launch_realigned(const GemmProblem& p, const AutoTable* table, c10::DeviceIndex device) {
  if (p.batch != 1 || p.M < 1024 || p.N < 1024) return false;
  const bool a_k = a_kmajor(p), b_k = b_kmajor(p);
  const int64_t lda = a_ld(p), ldb = b_ld(p);
  const bool b_ok = operand_vec_ok(p.b, ldb);
  // Where A would be copied M-major once B's rows are (transposes_a), A is left as it is:
  // one copy of A, not two.
  const bool a_ok = operand_vec_ok(p.a, lda) || (!b_ok && transposes_a(p, true, table));
  if (a_ok && b_ok) return false;
  GemmProblem q = p;
  at::Tensor a, b;  // alive until the launches are queued; the allocator orders their reuse
  if (!a_ok) {
    a = aligned_copy(p.a, a_k ? p.M : p.K, a_k ? p.K : p.M, lda, device);
    q.a = a.data_ptr<float>();
    (a_k ? q.a_rs : q.a_cs) = a.stride(0);
  }
  if (!b_ok) {
    b = aligned_copy(p.b, b_k ? p.N : p.K, b_k ? p.K : p.N, ldb, device);
    q.b = b.data_ptr<float>();
    (b_k ? q.b_cs : q.b_rs) = b.stride(0);
  }
  launch_auto(q);
  return true;
}

// NN with the copy of A transposed (transpose_a_first in auto/plan.h, or the tuned table's
// `transposed` entry): the product then runs with an M-major A, on the heuristic's plan. The
// copy comes from the caching allocator, on this stream.
bool launch_a_transposed(const GemmProblem& p, bool b_vec, const AutoTable* table, c10::DeviceIndex device) {
  if (!transposes_a(p, b_vec, table)) return false;
  const at::Tensor t = transposed_copy(p.a, p.M, p.K, a_ld(p), p.M, device);
  GemmProblem q = p;
  q.a = t.data_ptr<float>();
  q.a_rs = 1;
  q.a_cs = p.M;
  launch_auto(q);
  return true;
}

// A column-major A that the plan leaves on warptile with K whole (copy_a_kmajor_first in
// plan.h), copied K-major with its rows padded to 16 bytes, and the product planned again.
bool launch_a_kmajor(const GemmProblem& p, const AutoPlan& plan, c10::DeviceIndex device) {
  if (!copy_a_kmajor_first(plan, p.batch, a_kmajor(p)) || !transpose_fits(p.K, p.M)) return false;
  const int64_t ld = round_up4(p.K);
  // A column-major is the K x M row-major matrix at p.a (pitch a_cs); its transpose is A K-major.
  const at::Tensor t = transposed_copy(p.a, p.K, p.M, p.a_cs, ld, device);
  GemmProblem q = p;
  q.a = t.data_ptr<float>();
  q.a_rs = ld;
  q.a_cs = 1;
  launch_auto(q);
  return true;
}

// The last few columns of a large output cost a whole extra wave of tiles: 4097 columns make
// 17 tiles of 256 across, 544 tiles for 4095 rows against 512 at 4096 (5 waves of 132 SMs
// instead of 4). For N a few columns past a multiple of 128, the product runs on the first
// N0 columns, and the last r <= 8 as the transposed problem (out[:, N0:]^T = B[:, N0:]^T A^T:
// r rows against the whole of A, which the skinny kernel streams once), scaled into place.
bool launch_peeled(const GemmProblem& p, c10::DeviceIndex device) {
  const int64_t r = peeled_columns(p.M, p.N, p.batch);
  if (r == 0) return false;
  GemmProblem main = p;
  main.N = p.N - r;
  launch_auto(main);
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device);
  at::Tensor t = at::empty({r, p.M}, opts);  // alpha * (out[:, N0:])^T
  GemmProblem q{};
  q.batch = 1;
  q.M = r;
  q.N = p.M;
  q.K = p.K;
  q.a = p.b + main.N * p.b_cs;  // B[:, N0:]^T: (r, K)
  q.a_rs = p.b_cs;
  q.a_cs = p.b_rs;
  q.b = p.a;  // A^T: (K, M)
  q.b_rs = p.a_cs;
  q.b_cs = p.a_rs;
  q.out = t.data_ptr<float>();
  q.out_rs = p.M;
  q.out_bs = r * p.M;
  q.alpha = p.alpha;
  q.beta = 0.0f;
  launch_auto(q);
  at::Tensor out = at::from_blob(p.out + main.N, {p.M, r}, {p.out_rs, 1}, opts);
  out.copy_(t.t());
  if (p.beta != 0.0f) {
    out.add_(at::from_blob(const_cast<float*>(p.c) + main.N * p.c_cs, {p.M, r}, {p.c_rs, p.c_cs}, opts),
             p.beta);
  }
  return true;
}

#if GEMMTILES_CUTLASS
// A CUTLASS plan's launch: a batch with K split (cutlass_entry_launches in auto/plan.h) as one
// launch per product, one after another on the stream (they share its barrier flags, which
// each launch leaves zero); otherwise one launch.
void launch_cutlass_plan(const GemmProblem& p, const AutoPlan& plan, cudaStream_t stream) {
  if (!cutlass_entry_launches(p.batch, plan.splits)) {
    launch_cutlass_simt(p, plan.mt, plan.nw, plan.w, plan.splits, stream);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  for (int64_t z = 0; z < p.batch; ++z) {
    GemmProblem q = p;
    q.batch = 1;
    q.a += z * p.a_bs;
    q.b += z * p.b_bs;
    if (q.c) q.c += z * p.c_bs;
    q.out += z * p.out_bs;
    q.a_bs = q.b_bs = q.c_bs = q.out_bs = 0;
    launch_cutlass_simt(q, plan.mt, plan.nw, plan.w, plan.splits, stream);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}
#endif

// The plan's own kernels (launch_auto_plan in auto/launch.cuh), with their workspace. The
// workspace comes from the caching allocator, on this stream: freed when this call returns,
// reused only by work queued after the reduction.
void launch_plan_kernel(const GemmProblem& p, const AutoPlan& planned, c10::DeviceIndex device) {
  const AutoPlan plan = skinny_plan_as_run(p, planned);
  at::Tensor ws;
  if (const int64_t floats = auto_workspace(p, plan)) {
    ws = at::empty({floats}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device));
  }
  const bool launched = launch_auto_plan(p, plan, ws.defined() ? ws.data_ptr<float>() : nullptr,
                                         c10::cuda::getCurrentCUDAStream());
  TORCH_INTERNAL_ASSERT(launched, "gemmtiles: auto planned ", auto_kernel_name(plan.kernel), " with ", plan.mt,
                        " rows, which no launch takes");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void launch_auto(const GemmProblem& p) {
  // A batch against one shared B (a 3-D activation times a weight) is one product of
  // batch * M rows when A, C and the output run batch after batch: one plan, one B stream.
  if (p.batch > 1 && p.b_bs == 0 && p.a_cs == 1 && p.a_bs == p.M * p.a_rs &&
      p.out_bs == p.M * p.out_rs && (!p.c || p.c_bs == p.M * p.c_rs)) {
    GemmProblem q = p;
    q.M = p.batch * p.M;
    q.batch = 1;
    q.a_bs = q.out_bs = q.c_bs = 0;
    return launch_auto(q);
  }
  const bool a_vec = a_vec_ok(p), b_vec = b_vec_ok(p);
  const c10::DeviceIndex device = c10::cuda::current_device();
  const std::shared_ptr<const AutoTable> table = auto_table_for(device, gpu_name(device));
  std::optional<AutoPlan> forced = forced_auto_plan();
  if (forced && !forced_plan_runs(p, *forced, a_vec, b_vec, device)) {
    forced_plan_refused() = true;
    forced.reset();
  }
  AutoPlan plan = forced ? *forced : cached_auto_plan(p, device, table, a_vec, b_vec);
  if (plan.swapped) {
    plan.swapped = false;
    return launch_plan_kernel(swapped_problem(p), plan, device);
  }
#if GEMMTILES_SM90A
  if (plan.kernel == AutoKernel::kTf32 || plan.kernel == AutoKernel::kTf32x3) {
    (plan.kernel == AutoKernel::kTf32 ? launch_tf32_sm90a : launch_tf32x3_sm90a)(p);
    return;
  }
#endif
  if (copies_a(plan.kernel) || copies_b(plan.kernel)) {
    // The K-major operands copied transposed, their rows padded to 16 bytes: A row-major, the
    // M x K matrix at p.a (pitch a_rs), into A column-major (K x M, row-major); B
    // column-major, the N x K matrix at p.b (pitch b_cs), into B row-major (K x N). An operand
    // shared by a batch (batch stride 0) is copied once.
    GemmProblem q = p;
    at::Tensor a, b;  // alive until the launch is queued; the allocator orders their reuse
    if (copies_a(plan.kernel)) {
      const int64_t ld = round_up4(p.M), n = p.a_bs == 0 ? 1 : p.batch;
      a = transposed_copy(p.a, p.M, p.K, p.a_rs, ld, device, n, p.a_bs);
      q.a = a.data_ptr<float>();
      q.a_rs = 1;
      q.a_cs = ld;
      q.a_bs = n == 1 ? 0 : p.K * ld;
    }
    if (copies_b(plan.kernel)) {
      const int64_t ld = round_up4(p.N), n = p.b_bs == 0 ? 1 : p.batch;
      b = transposed_copy(p.b, p.N, p.K, p.b_cs, ld, device, n, p.b_bs);
      q.b = b.data_ptr<float>();
      q.b_rs = ld;
      q.b_cs = 1;
      q.b_bs = n == 1 ? 0 : p.K * ld;
    }
#if GEMMTILES_CUTLASS
    launch_cutlass_plan(q, plan, c10::cuda::getCurrentCUDAStream());
#endif
    return;
  }
  if (plan.kernel == AutoKernel::kCutlass || plan.kernel == AutoKernel::kCutlassStreamK) {
#if GEMMTILES_CUTLASS
    launch_cutlass_plan(p, plan, c10::cuda::getCurrentCUDAStream());
#endif
    return;
  }
  // The heuristic's plans (no CUTLASS kernel runs the problem here) may copy an operand or run
  // the last columns apart first, and plan again what they make; the cost model's plans, which
  // price their copies as candidates of their own, run as auto_plan reports them.
  if (!forced && (plan.kernel == AutoKernel::kSplitTile || plan.kernel == AutoKernel::kWarptile) &&
      !cutlass_simt_runs(p, device)) {
    if (launch_a_transposed(p, b_vec, table.get(), device) || launch_a_kmajor(p, plan, device) ||
        launch_realigned(p, table.get(), device) || launch_peeled(p, device))
      return;
  }
  if (plan.kernel == AutoKernel::kWarptile) return launch_warptile(p);
  launch_plan_kernel(p, plan, device);
}
GEMMTILES_CUDA_TIER(auto, Operands::kUnitStride, launch_auto);

}  // namespace

// The clusters the current device runs, as auto's model takes them (gemmtiles._C.cluster_blocks).
ClusterBlocks device_cluster_blocks() { return skinny_cluster_blocks(); }

#if GEMMTILES_CUTLASS
void launch_split_k_reduce(const GemmProblem& p, int64_t slices, const float* ws, cudaStream_t stream) {
  launch_reduce(p, slices, ws, stream);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
#endif

}  // namespace gemmtiles
