// The gemmtiles op library: one functional op per tier, all with the semantics of
// torch.addmm:  out = alpha * a @ b + beta * c.
// Each tier registers itself with one GEMMTILES_TIER line beside its launcher (core/register.h);
// this file holds what those lines share: the schema, the registration record, and the
// Python module `gemmtiles._C`, whose one function reports the records.
#include <Python.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include "../auto/plan.h"
#include "../auto/table.h"
#include "../tensor_core/tensor_core.h"
#include "precision.h"
#include "register.h"

#ifndef GEMMTILES_CUTLASS
#define GEMMTILES_CUTLASS 0
#endif

#if GEMMTILES_CUTLASS  // a CUDA build: CUDA's headers, which a CPU build lacks
#include "../auto/cutlass_simt.h"
#endif
#ifndef GEMMTILES_AUTO
#define GEMMTILES_AUTO 0
#endif
#if GEMMTILES_AUTO  // auto's CUDA sources are built (an NVIDIA CUDA build)
#include <cuda_runtime_api.h>
namespace gemmtiles {
ClusterBlocks device_cluster_blocks();  // auto/auto.cu
}  // namespace gemmtiles
#endif

namespace gemmtiles {

void register_autograd(torch::Library& m, const char* name);  // core/autograd.cpp

namespace {

std::vector<TierRecord>& records() {
  static std::vector<TierRecord> r;
  return r;
}

const char* operands_name(Operands o) {
  switch (o) {
    case Operands::kStrided: return "strided";
    case Operands::kUnitStride: return "unit_stride";
    case Operands::kRowMajor: return "row_major";
    case Operands::kKMajor: return "k_major";
  }
  return "?";
}

}  // namespace

const std::vector<TierRecord>& registered_tiers() { return records(); }

void define_tier(torch::Library& m, const char* name, const char* device, Operands operands,
                 int min_sm) {
  // Registration runs while the library loads, on one thread.
  bool seen = false;
  for (const TierRecord& r : records()) seen = seen || r.name == name;
  std::string dev(device);
  for (char& ch : dev) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  records().push_back({name, dev, operands, min_sm});
  if (seen) return;
  m.def((std::string(name) +
         "(Tensor a, Tensor b, Tensor? c=None, float alpha=1.0, float beta=0.0) -> Tensor")
            .c_str());
  register_autograd(m, name);
}

}  // namespace gemmtiles

namespace {

// gemmtiles._C.registered_tiers() -> list of (name, device, operands, min_sm), one per
// registration line.
PyObject* py_registered_tiers(PyObject*, PyObject*) {
  const auto& recs = gemmtiles::registered_tiers();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(recs.size()));
  if (!list) return nullptr;
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    PyObject* item = Py_BuildValue("(sssi)", r.name.c_str(), r.device.c_str(),
                                   gemmtiles::operands_name(r.operands), r.min_sm);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
}

// A tuned table's text parsed into `table`; false, with a ValueError "<where>: line ...: ..."
// set, when it does not parse.
bool parse_table(const char* text, const std::string& where,
                 std::shared_ptr<const gemmtiles::AutoTable>& table) {
  try {
    table = std::make_shared<const gemmtiles::AutoTable>(gemmtiles::AutoTable::parse(text));
    return true;
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, (where + ": " + e.what()).c_str());
    return false;
  }
}

// A tensor-core math's name ("none", "tf32", "tf32x3") parsed into `math`; false, with a
// ValueError "<where>: expected ..." set, when it is none of them.
bool parse_math(const char* name, const char* where, gemmtiles::TensorCoreMath& math) {
  try {
    math = gemmtiles::parse_tensor_core_math(name);
    return true;
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, (std::string(where) + ": " + e.what()).c_str());
    return false;
  }
}

// The result of gemmtiles._C.auto_plan: a tuple whose fields have names, as torch.return_types'.
PyTypeObject* auto_plan_type() {
  static PyStructSequence_Field fields[] = {
      {"kernel", "the kernel: warptile, skinny_kmajor, skinny_nmajor, split_tile, cutlass, cutlass_streamk, "
                 "cutlass_a_copied, cutlass_b_copied, cutlass_ab_copied (K-major operands copied transposed first), "
                 "gemv, tf32 or tf32x3"},
      {"mt", "skinny: rows per pass; gemv: its build's rows (1, 4 or 8); split_tile: the block tile's rows; cutlass: its tile's rows"},
      {"nw", "skinny: columns per group of lanes or column groups per lane; gemv: columns of B per block; "
             "split_tile, cutlass: tile columns"},
      {"w", "skinny, gemv: elements of B per lane load (4: float4)"},
      {"splits", "slices of K"},
      {"k_slice", "K per slice"},
      {"swapped", "whether the kernel runs out^T = B^T A^T, the N x M product, the fields above its plan"},
      {nullptr, nullptr}};
  static PyStructSequence_Desc desc = {"gemmtiles.AutoPlan", "What the auto tier runs for a problem.", fields, 7};
  static PyTypeObject* type = [] {
    PyTypeObject* t = PyStructSequence_NewType(&desc);
    return t;
  }();
  return type;
}

// An AutoPlan as gemmtiles.AutoPlan (defined below).
PyObject* plan_object(PyTypeObject* type, const gemmtiles::AutoPlan& plan);

// A Python list of `values`, each made a Python object by `make` (PyFloat_FromDouble, ...).
template <class Values, class Make>
PyObject* py_list(const Values& values, Make make) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(values.size()));
  if (!list) return nullptr;
  Py_ssize_t i = 0;
  for (const auto& v : values) {
    PyObject* x = make(v);
    if (!x) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i++, x);
  }
  return list;
}

// A list of Python floats.
template <size_t F>
PyObject* double_list(const std::array<double, F>& values) {
  return py_list(values, PyFloat_FromDouble);
}

// gemmtiles._C.auto_plan(M, N, K, batch, b_kmajor, b_vec, sms, a_kmajor=True, table=None, a_vec=True,
//                        cutlass=False, tensor_cores="none") -> AutoPlan(kernel, mt, nw, w, splits, k_slice,
//                        swapped):
// what the auto tier runs for that problem on a GPU with `sms` SMs, with the tuned table
// whose text is `table` (None: the heuristic alone), where CUTLASS's SIMT kernel can run it
// (cutlass) or not, and with the tensor-core math the settings allow ("none", "tf32",
// "tf32x3"). Every argument may be given by keyword.
PyObject* py_auto_plan(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"M", "N", "K", "batch", "b_kmajor", "b_vec", "sms", "a_kmajor", "table",
                                "a_vec", "cutlass", "tensor_cores", nullptr};
  long long M, N, K, batch, sms;
  int b_kmajor, b_vec, a_kmajor = 1, a_vec = 1, cutlass = 0;
  const char* text = nullptr;
  const char* tensor_cores = "none";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LLLLppL|pzpps", const_cast<char**>(names), &M, &N, &K, &batch,
                                   &b_kmajor, &b_vec, &sms, &a_kmajor, &text, &a_vec, &cutlass, &tensor_cores))
    return nullptr;
  if (sms < 1) {
    PyErr_SetString(PyExc_ValueError, "auto_plan: sms must be >= 1");
    return nullptr;
  }
  gemmtiles::TensorCoreMath math;
  if (!parse_math(tensor_cores, "auto_plan: tensor_cores", math)) return nullptr;
  std::shared_ptr<const gemmtiles::AutoTable> table;
  if (text && !parse_table(text, "auto_plan: table", table)) return nullptr;
  const gemmtiles::AutoPlan plan = gemmtiles::auto_plan(M, N, K, batch, b_kmajor != 0, b_vec != 0, sms,
                                                        a_kmajor != 0, table.get(), a_vec != 0, cutlass != 0, math);
  PyTypeObject* type = auto_plan_type();
  if (!type) return nullptr;
  return plan_object(type, plan);
}

// An AutoPlan as gemmtiles.AutoPlan.
PyObject* plan_object(PyTypeObject* type, const gemmtiles::AutoPlan& plan) {
  PyObject* result = PyStructSequence_New(type);
  if (!result) return nullptr;
  PyObject* items[] = {PyUnicode_FromString(gemmtiles::auto_kernel_name(plan.kernel)), PyLong_FromLong(plan.mt),
                       PyLong_FromLong(plan.nw), PyLong_FromLong(plan.w),
                       PyLong_FromLongLong(static_cast<long long>(plan.splits)),
                       PyLong_FromLongLong(static_cast<long long>(plan.k_slice)), PyBool_FromLong(plan.swapped)};
  constexpr int n = int(std::size(items));
  for (int i = 0; i < n; ++i) {
    if (!items[i]) {
      for (int j = 0; j < n; ++j) Py_XDECREF(items[j]);
      Py_DECREF(result);
      return nullptr;
    }
  }
  for (int i = 0; i < n; ++i) PyStructSequence_SET_ITEM(result, i, items[i]);
  return result;
}

// gemmtiles._C.tensor_core_model(table=None, sms=0, clock_khz=0, dram_khz=0, bus_bits=0) ->
// (launch_us, tf32x3_launch_us, wave_k_us, bytes_per_us, exact_launch_us, exact_flops_per_us,
// floor_bytes_per_us): the model auto's tensor-core choice uses on a GPU of `sms` SMs at
// `clock_khz`, its DRAM at `dram_khz` on `bus_bits` (0: as fitted): the table's where its text
// has one (tensor_core_model_for), else the H100's fit scaled to that GPU.
PyObject* py_tensor_core_model(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"table", "sms", "clock_khz", "dram_khz", "bus_bits", nullptr};
  const char* text = nullptr;
  long long sms = 0;
  double clock_khz = 0, dram_khz = 0, bus_bits = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zLddd", const_cast<char**>(names), &text, &sms, &clock_khz,
                                   &dram_khz, &bus_bits))
    return nullptr;
  std::shared_ptr<const gemmtiles::AutoTable> table;
  if (text && !parse_table(text, "tensor_core_model: table", table)) return nullptr;
  const gemmtiles::TensorCoreModel m = gemmtiles::tensor_core_model_for(
      table.get(), gemmtiles::scaled_tensor_core_model(sms, clock_khz, dram_khz, bus_bits));
  return Py_BuildValue("(ddddddd)", m.launch_us, m.tf32x3_launch_us, m.wave_k_us, m.bytes_per_us, m.exact_launch_us,
                       m.exact_flops_per_us, m.floor_bytes_per_us);
}

// gemmtiles._C.tensor_core_work(M, N, K, batch, tensor_cores, a_kmajor, a_vec, b_kmajor, b_vec, sms,
// ampere=<this build has CUTLASS's kernels>) -> (k_steps, bytes, read_bytes): the features of
// auto's tensor-core model for those operands (plan.h): the busiest SM's k steps, the passes'
// bytes, and the kernel's read of the operands; ampere: tf32 may run Ampere's kernel.
PyObject* py_tensor_core_work(PyObject*, PyObject* args) {
  long long M, N, K, batch, sms;
  const char* name;
  int a_kmajor, a_vec, b_kmajor, b_vec, ampere = GEMMTILES_CUTLASS;
  if (!PyArg_ParseTuple(args, "LLLLsppppL|p", &M, &N, &K, &batch, &name, &a_kmajor, &a_vec, &b_kmajor, &b_vec, &sms,
                        &ampere))
    return nullptr;
  gemmtiles::TensorCoreMath math;
  if (!parse_math(name, "tensor_core_work: tensor_cores", math)) return nullptr;
  const gemmtiles::TensorCoreWork w = gemmtiles::tensor_core_work(M, N, K, batch, math, a_kmajor != 0, a_vec != 0,
                                                                  b_kmajor != 0, b_vec != 0, sms, ampere != 0);
  return Py_BuildValue("(ddd)", w.k_steps, w.bytes, w.read_bytes);
}

// gemmtiles._C.tf32_route(M, N, K, batch, b_kmajor, b_vec, sms, ampere=<this build has CUTLASS's
// kernels>) -> (kernel, tile_m, tile_n,
// b_in_place, k_steps, own_tile_n, splits): how tf32 runs B (tf32_b_route in plan.h), as
// launch_tf32_sm90a runs it for a batch of one product, or a batch of a B each: kernel
// "narrow" (C^T on tile_m x tile_n tiles of C^T), "transposing" (an N-major B transposed into
// registers, 128 x 256 tiles of C^T), "own" (tf32's K-major kernel on tf32_tiling's tile) or
// "ampere" (Ampere's TF32 kernel on tile_m x tile_n tiles of C, K in `splits` slices, reading an
// N-major B as it lies; the launch runs the route before where it cannot take the operands;
// ampere False: the route without it), or "slices" (K in `splits` slices summed apart, on the
// narrow kernel's tile_m x tile_n tiles of C^T, both operands packed);
// b_in_place: B read where it lies, else packed K-major first; k_steps: its busiest SM's, in
// 128 x 256 tiles' steps; own_tile_n: the width of tf32_tiling's 128-row tile, the one tf32's
// own kernel would run.
PyObject* py_tf32_route(PyObject*, PyObject* args) {
  long long M, N, K, batch, sms;
  int b_kmajor, b_vec, ampere = GEMMTILES_CUTLASS;
  if (!PyArg_ParseTuple(args, "LLLLppL|p", &M, &N, &K, &batch, &b_kmajor, &b_vec, &sms, &ampere)) return nullptr;
  if (M < 1 || N < 1 || K < 1 || batch < 1 || sms < 1) {
    PyErr_SetString(PyExc_ValueError, "tf32_route: M, N, K, batch and sms must be >= 1");
    return nullptr;
  }
  const gemmtiles::Tf32BRoute r =
      gemmtiles::tf32_b_route(M, N, K, batch, b_kmajor != 0, b_vec != 0, sms, ampere != 0);
  const gemmtiles::TensorCoreTile& own = *gemmtiles::tf32_tiling(M, N, K, batch, sms).tile;
  const int64_t slices = r.k_slices.slices;
  const bool on_ampere = r.ampere_splits > 0 && slices == 0;
  const gemmtiles::TensorCoreTile& t = slices           ? *r.k_slices.tile
                                       : on_ampere      ? gemmtiles::kTf32AmpereTile
                                       : r.narrow       ? *r.narrow
                                       : r.transposes_b ? gemmtiles::kTf32Tiles[0]
                                                        : own;
  const char* kernel = slices          ? "slices"
                       : on_ampere      ? "ampere"
                       : r.narrow       ? "narrow"
                       : r.transposes_b ? "transposing"
                                        : "own";
  return Py_BuildValue("(sLLOdLL)", kernel, static_cast<long long>(t.m), static_cast<long long>(t.n),
                       r.b_as_it_is && !slices ? Py_True : Py_False, r.k_steps, static_cast<long long>(own.n),
                       static_cast<long long>(slices ? slices : on_ampere ? r.ampere_splits : 0));
}

// gemmtiles._C.tensor_cores_pay(M, N, K, batch, tensor_cores, a_kmajor, a_vec, b_kmajor, b_vec, sms,
// model, exact_us, ampere=<this build has CUTLASS's kernels>, floor_bytes_per_us=<model's
// bytes_per_us>) -> bool: auto's rule (tensor_cores_pay in plan.h) with the model's six
// parameters (tensor_core_model's first six, in its order) and the floor's bandwidth against
// the exact kernels' time exact_us (negative: the model's own flat estimate), so that the fit's check weighs the
// rule auto runs.
PyObject* py_tensor_cores_pay(PyObject*, PyObject* args) {
  long long M, N, K, batch, sms;
  const char* name;
  int a_kmajor, a_vec, b_kmajor, b_vec;
  gemmtiles::TensorCoreModel m{};
  double exact_us;
  int ampere = GEMMTILES_CUTLASS;
  if (!PyArg_ParseTuple(args, "LLLLsppppL(dddddd)d|pd", &M, &N, &K, &batch, &name, &a_kmajor, &a_vec, &b_kmajor,
                        &b_vec, &sms, &m.launch_us, &m.tf32x3_launch_us, &m.wave_k_us, &m.bytes_per_us,
                        &m.exact_launch_us, &m.exact_flops_per_us, &exact_us, &ampere, &m.floor_bytes_per_us))
    return nullptr;
  if (PyTuple_Size(args) < 14) m.floor_bytes_per_us = m.bytes_per_us;  // not given
  gemmtiles::TensorCoreMath math;
  if (!parse_math(name, "tensor_cores_pay: tensor_cores", math)) return nullptr;
  if (m.bytes_per_us <= 0 || m.exact_flops_per_us <= 0 || m.floor_bytes_per_us <= 0) {
    PyErr_SetString(PyExc_ValueError,
                    "tensor_cores_pay: model: expected a positive bytes_per_us, exact_flops_per_us and "
                    "floor_bytes_per_us");
    return nullptr;
  }
  return PyBool_FromLong(gemmtiles::tensor_cores_pay(M, N, K, batch, math, a_kmajor != 0, a_vec != 0, b_kmajor != 0,
                                                     b_vec != 0, sms, ampere != 0, m, exact_us));
}

// gemmtiles._C.peeled_columns(M, N, batch) -> the last columns auto runs apart (0: none), and
// max_table_splits() -> the most splits a table entry may name (auto/plan.h).
PyObject* py_peeled_columns(PyObject*, PyObject* args) {
  long long M, N, batch;
  if (!PyArg_ParseTuple(args, "LLL", &M, &N, &batch)) return nullptr;
  return PyLong_FromLongLong(static_cast<long long>(gemmtiles::peeled_columns(M, N, batch)));
}

PyObject* py_max_table_splits(PyObject*, PyObject*) { return PyLong_FromLongLong(gemmtiles::kMaxTableSplits); }

// gemmtiles._C.set_fp32_precision(name) and fp32_precision() -> name: gemmtiles' own precision
// setting (core/precision.h); auto_tensor_core_math() -> "none", "tf32" or "tf32x3": what it
// and torch's setting allow auto now.
PyObject* py_set_fp32_precision(PyObject*, PyObject* args) {
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
  try {
    gemmtiles::set_fp32_precision(gemmtiles::parse_fp32_precision(name));
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, (std::string("gemmtiles.set_fp32_precision: ") + e.what()).c_str());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* py_fp32_precision(PyObject*, PyObject*) {
  return PyUnicode_FromString(gemmtiles::fp32_precision_name(gemmtiles::fp32_precision()));
}

PyObject* py_auto_tensor_core_math(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyUnicode_FromString(gemmtiles::tensor_core_math_name(gemmtiles::auto_tensor_core_math()));
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.async_tile_ok(M, N, a_kmajor, a_vec, b_kmajor, b_vec) -> whether the pipelined
// tile takes those operands (auto/plan.h).
PyObject* py_async_tile_ok(PyObject*, PyObject* args) {
  long long M, N;
  int a_kmajor, a_vec, b_kmajor, b_vec;
  if (!PyArg_ParseTuple(args, "LLpppp", &M, &N, &a_kmajor, &a_vec, &b_kmajor, &b_vec)) return nullptr;
  return PyBool_FromLong(gemmtiles::async_tile_ok(M, N, a_kmajor != 0, a_vec != 0, b_kmajor != 0, b_vec != 0));
}

// gemmtiles._C.exact_model_layout() -> str: the feature layout a table's 'model exact' line names
// (kExactModelLayout, auto/exact_model.h).
PyObject* py_exact_model_layout(PyObject*, PyObject*) { return PyUnicode_FromString(gemmtiles::kExactModelLayout); }

// gemmtiles._C.exact_rank(kernel, swapped, estimate_us) -> float: what auto ranks a candidate
// of that kernel by (exact_rank_us in auto/plan.h: a copying plan's and a swapped plan's
// margins).
PyObject* py_exact_rank(PyObject*, PyObject* args) {
  const char* kernel;
  int swapped;
  double estimate;
  if (!PyArg_ParseTuple(args, "spd", &kernel, &swapped, &estimate)) return nullptr;
  const std::optional<gemmtiles::AutoKernel> k = gemmtiles::parse_auto_kernel(kernel);
  if (!k) {
    PyErr_Format(PyExc_ValueError, "exact_rank: kernel must name one of auto's kernels, got '%s'", kernel);
    return nullptr;
  }
  gemmtiles::AutoPlan plan{*k};
  plan.swapped = swapped != 0;
  return PyFloat_FromDouble(gemmtiles::exact_rank_us(plan, estimate));
}

// gemmtiles._C.skinny_max_m(b_kmajor) -> the most rows auto's skinny kernels take for such a
// B (auto/plan.h), so that the tuner offers them exactly where auto can run them.
PyObject* py_skinny_max_m(PyObject*, PyObject* args) {
  int b_kmajor;
  if (!PyArg_ParseTuple(args, "p", &b_kmajor)) return nullptr;
  return PyLong_FromLongLong(gemmtiles::skinny_max_m(b_kmajor != 0));
}

// gemmtiles._C.skinny_cols(kernel, mt, nw, w) -> the columns of B one block of that skinny
// plan takes (auto/plan.h, skinny_cols): what a table's skinny entry names;
// gemmtiles._C.skinny_widths(M, b_kmajor, b_vec) -> [int]: those a skinny entry may name for
// M rows and such a B (a row-major B: float4s' 128 where its rows are aligned, and 32).
PyObject* py_skinny_cols(PyObject*, PyObject* args) {
  const char* kernel;
  int mt, nw, w;
  if (!PyArg_ParseTuple(args, "siii", &kernel, &mt, &nw, &w)) return nullptr;
  if (w != 1 && w != 4) {
    PyErr_Format(PyExc_ValueError, "skinny_cols: w must be 1 or 4, got %d", w);
    return nullptr;
  }
  const std::optional<gemmtiles::AutoKernel> k = gemmtiles::parse_auto_kernel(kernel);
  if (k != gemmtiles::AutoKernel::kSkinnyKMajor && k != gemmtiles::AutoKernel::kSkinnyNMajor) {
    PyErr_Format(PyExc_ValueError, "skinny_cols: kernel must be skinny_kmajor or skinny_nmajor, got '%s'", kernel);
    return nullptr;
  }
  return PyLong_FromLongLong(gemmtiles::skinny_cols(gemmtiles::AutoPlan{*k, mt, nw, w}));
}
// gemmtiles._C.gemv_columns(M, b_kmajor, b_vec=True) -> [int]: the columns of B a block takes
// in the GEMV build a table's gemv entry of M rows runs on such a B (auto/plan.h, kGemvBuilds,
// gemv_entry_build), which the entry names; none past its rows, for a row-major B, or for B's
// lines not 16-byte aligned (b_vec false) where the build has float4 loads alone.
PyObject* py_gemv_columns(PyObject*, PyObject* args) {
  long long M;
  int b_kmajor, b_vec = 1;
  if (!PyArg_ParseTuple(args, "Lp|p", &M, &b_kmajor, &b_vec)) return nullptr;
  std::vector<int64_t> cols;
  if (const gemmtiles::GemvBuild* build = gemmtiles::gemv_entry_build(M, b_kmajor != 0, b_vec != 0))
    cols.assign(build->columns, build->columns + build->widths);
  return py_list(cols, [](int64_t c) { return PyLong_FromLongLong(c); });
}
// gemmtiles._C.gemv_kernel(M, N, K, batch, b_vec, sms) -> (columns, lanes_along_k,
// blocks_per_sm): the kernel a table's gemv entry of M rows runs on such a problem (auto/plan.h,
// gemv_entry_build; gemv_kernel: the 1- and 2-4-row float4 builds' follow K, the 5-8-row
// build's its blocks); None where no build takes it.
PyObject* py_gemv_kernel(PyObject*, PyObject* args) {
  long long M, N, K, batch, sms;
  int b_vec;
  if (!PyArg_ParseTuple(args, "LLLLpL", &M, &N, &K, &batch, &b_vec, &sms)) return nullptr;
  const gemmtiles::GemvBuild* entry = gemmtiles::gemv_entry_build(M, true, b_vec != 0);
  if (!entry) Py_RETURN_NONE;
  const gemmtiles::GemvBuild& b = *entry;
  const gemmtiles::GemvVariant v = gemmtiles::gemv_variant(b, gemmtiles::gemv_kernel(b, N, K, batch, sms), b.columns[0]);
  return Py_BuildValue("(iii)", v.columns, v.lanes_along_k, v.blocks_per_sm);
}
PyObject* py_skinny_widths(PyObject*, PyObject* args) {
  long long M;
  int b_kmajor, b_vec;
  if (!PyArg_ParseTuple(args, "Lpp", &M, &b_kmajor, &b_vec)) return nullptr;
  return py_list(gemmtiles::skinny_widths(M, b_kmajor != 0, b_vec != 0),
                 [](int64_t cols) { return PyLong_FromLongLong(cols); });
}

// gemmtiles._C.transpose_a_first(M, N, K, batch, a_kmajor, b_kmajor, b_vec, table=None) ->
// whether auto copies a row-major A M-major before the product (auto/plan.h), with the tuned
// table whose text is `table` (None: the rule alone).
PyObject* py_transpose_a_first(PyObject*, PyObject* args) {
  long long M, N, K, batch;
  int a_kmajor, b_kmajor, b_vec;
  const char* text = nullptr;
  if (!PyArg_ParseTuple(args, "LLLLppp|z", &M, &N, &K, &batch, &a_kmajor, &b_kmajor, &b_vec, &text)) return nullptr;
  std::shared_ptr<const gemmtiles::AutoTable> table;
  if (text && !parse_table(text, "transpose_a_first: table", table)) return nullptr;
  return PyBool_FromLong(
      gemmtiles::transpose_a_first(M, N, K, batch, a_kmajor != 0, b_kmajor != 0, b_vec != 0, table.get()));
}

// gemmtiles._C.auto_bucket(x) -> the bucket key of a dimension in a tuned table.
PyObject* py_auto_bucket(PyObject*, PyObject* args) {
  long long x;
  if (!PyArg_ParseTuple(args, "L", &x)) return nullptr;
  return PyLong_FromLongLong(gemmtiles::auto_bucket(x));
}

// gemmtiles._C.auto_table_file(gpu_name) -> the file name of that GPU's tuned table.
PyObject* py_auto_table_file(PyObject*, PyObject* args) {
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
  return PyUnicode_FromString(gemmtiles::auto_table_file(name).c_str());
}

// gemmtiles._C.set_auto_table_dirs(dirs): where devices look for their tables, in order.
PyObject* py_set_auto_table_dirs(PyObject*, PyObject* args) {
  PyObject* seq;
  if (!PyArg_ParseTuple(args, "O", &seq)) return nullptr;
  PyObject* fast = PySequence_Fast(seq, "set_auto_table_dirs: expected a sequence of str");
  if (!fast) return nullptr;
  std::vector<std::string> dirs;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    const char* d = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
    if (!d) {
      Py_DECREF(fast);
      return nullptr;
    }
    dirs.emplace_back(d);
  }
  Py_DECREF(fast);
  gemmtiles::set_auto_table_dirs(std::move(dirs));
  Py_RETURN_NONE;
}

// gemmtiles._C.set_auto_table(device, text, source): device's table from text (None: forget
// it; the next call loads it from the directories).
PyObject* py_set_auto_table(PyObject*, PyObject* args) {
  int device;
  const char* text;
  const char* source = "";
  if (!PyArg_ParseTuple(args, "iz|s", &device, &text, &source)) return nullptr;
  std::shared_ptr<const gemmtiles::AutoTable> table;
  if (text && !parse_table(text, source, table)) return nullptr;
  gemmtiles::set_auto_table(device, std::move(table), source);
  Py_RETURN_NONE;
}

// gemmtiles._C.auto_table_source(device) -> where device's table came from (auto/table.h).
PyObject* py_auto_table_source(PyObject*, PyObject* args) {
  int device;
  if (!PyArg_ParseTuple(args, "i", &device)) return nullptr;
  return PyUnicode_FromString(gemmtiles::auto_table_source(device).c_str());
}

#ifndef GEMMTILES_SM90A
#define GEMMTILES_SM90A 0
#endif

// The eager call path: gemmtiles._C.call(index, a, b, c, alpha, beta) calls op `index`
// (from gemmtiles._C.op_index(name)) through the dispatcher — autograd, device kernels,
// tensor subclasses and dispatch modes as for torch.ops.gemmtiles.<name> — without the
// Python argument parsing of a torch.ops call, a large share of a small product's cost
// (docs/models.md). torch.compile traces torch.ops instead (gemmtiles/_ops.py).
std::vector<c10::TypedOperatorHandle<gemmtiles::OpSignature>>& handles() {
  static std::vector<c10::TypedOperatorHandle<gemmtiles::OpSignature>> h;
  return h;
}

PyObject* py_op_index(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<gemmtiles::OpSignature>();
  handles().push_back(handle);
  return PyLong_FromSsize_t(static_cast<Py_ssize_t>(handles().size() - 1));
  END_HANDLE_TH_ERRORS
}

// The op of index `obj` (from op_index()) for call() and linear(), copied out of handles()
// while the GIL is held (op_index() may grow it), or nothing with a Python error set.
std::optional<c10::TypedOperatorHandle<gemmtiles::OpSignature>> handle_at(PyObject* obj,
                                                                           const char* fn) {
  const Py_ssize_t index = PyLong_AsSsize_t(obj);
  if (index == -1 && PyErr_Occurred()) return std::nullopt;
  if (index < 0 || static_cast<size_t>(index) >= handles().size()) {
    PyErr_Format(PyExc_IndexError, "%s: no such op index", fn);
    return std::nullopt;
  }
  return handles()[static_cast<size_t>(index)];
}

// args[1] and args[2] as tensors and args[3] as a tensor or None, for call() and linear();
// false with a TypeError that says so (`what`) otherwise.
struct Operands {
  const at::Tensor* first = nullptr;
  const at::Tensor* second = nullptr;
  std::optional<at::Tensor> third;
};
bool unpack_operands(PyObject* const* args, const char* what, Operands& out) {
  if (!THPVariable_Check(args[1]) || !THPVariable_Check(args[2]) ||
      (args[3] != Py_None && !THPVariable_Check(args[3]))) {
    PyErr_SetString(PyExc_TypeError, what);
    return false;
  }
  out.first = &THPVariable_Unpack(args[1]);
  out.second = &THPVariable_Unpack(args[2]);
  if (args[3] != Py_None) out.third = THPVariable_Unpack(args[3]);
  return true;
}

PyObject* py_call(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError, "call(index, a, b, c, alpha, beta): 6 arguments");
    return nullptr;
  }
  const auto handle = handle_at(args[0], "call");
  if (!handle) return nullptr;
  Operands ops;
  if (!unpack_operands(args, "call: a and b must be tensors, c a tensor or None", ops)) return nullptr;
  const double alpha = PyFloat_AsDouble(args[4]);
  if (alpha == -1.0 && PyErr_Occurred()) return nullptr;
  const double beta = PyFloat_AsDouble(args[5]);
  if (beta == -1.0 && PyErr_Occurred()) return nullptr;
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;
    out = handle->call(*ops.first, *ops.second, ops.third, alpha, beta);
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.operand_layout(a, b) -> (a_kmajor, b_kmajor, a_vec, b_vec): a and b's layout
// and alignment as the auto tier's plan sees them, after prepare_gemm's strides (a one-row
// or one-column operand takes those that keep it aligned; a slice with no unit stride is
// copied row-major). Tensors on any device; the product must be non-empty.
PyObject* py_operand_layout(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "OO", &a, &b)) return nullptr;
  if (!THPVariable_Check(a) || !THPVariable_Check(b)) {
    PyErr_SetString(PyExc_TypeError, "operand_layout: a and b must be tensors");
    return nullptr;
  }
  const gemmtiles::PreparedGemm g =
      gemmtiles::prepare_gemm("operand_layout", THPVariable_Unpack(a), THPVariable_Unpack(b), std::nullopt, 1.0,
                              0.0, gemmtiles::Operands::kUnitStride);
  if (!g.needs_kernel) {
    PyErr_SetString(PyExc_ValueError, "operand_layout: expected a non-empty product (M, N and K >= 1)");
    return nullptr;
  }
  const gemmtiles::GemmProblem& p = g.p;
  return Py_BuildValue("(OOOO)", gemmtiles::a_kmajor(p) ? Py_True : Py_False,
                       gemmtiles::b_kmajor(p) ? Py_True : Py_False, gemmtiles::a_vec_ok(p) ? Py_True : Py_False,
                       gemmtiles::b_vec_ok(p) ? Py_True : Py_False);
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.linear(index, x, weight, bias) -> Tensor: nn.Linear's forward for eager calls,
// x @ weight^T + bias on the op `index`, inputs of any leading shape (..., in_features). The
// transpose, reshape and view go through autograd as in Python (and as aten::linear's do),
// without a Python call each (in grad mode weight.t() from Python costs about as much as the
// rest of the call's host work: docs/models.md).
PyObject* py_linear(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "linear(index, x, weight, bias): 4 arguments");
    return nullptr;
  }
  const auto handle = handle_at(args[0], "linear");
  if (!handle) return nullptr;
  Operands ops;
  if (!unpack_operands(args, "linear: x and weight must be tensors, bias a tensor or None", ops)) {
    return nullptr;
  }
  const at::Tensor &x = *ops.first, &weight = *ops.second;
  const std::optional<at::Tensor>& bias = ops.third;
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;
    const bool flat = x.dim() == 2;
    const at::Tensor x2 = flat ? x : x.reshape({-1, x.size(-1)});
    out = handle->call(x2, weight.t(), bias, 1.0, bias.has_value() ? 1.0 : 0.0);
    if (!flat) {
      std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
      shape.push_back(out.size(-1));
      out = out.view(shape);
    }
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

// The measurement switches of the sm_90a build (tensor_core/tensor_core.h): one int, `fallback`
// where not given, to `set`; a build without those kernels (set null) raises.
PyObject* force_sm90a(PyObject* args, const char* name, int fallback, void (*set)(int)) {
  int value = fallback;
  if (!PyArg_ParseTuple(args, "|i", &value)) return nullptr;
  if (set == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "%s: this build of gemmtiles has no sm_90a kernels", name);
    return nullptr;
  }
  set(value);
  Py_RETURN_NONE;
}
#if GEMMTILES_SM90A
#define GEMMTILES_SM90A_SETTER(fn) (&gemmtiles::fn)
#else
#define GEMMTILES_SM90A_SETTER(fn) nullptr
#endif

// gemmtiles._C.force_tf32_splits(splits=-1): tf32's wgmma kernels on `splits` from now on (0:
// CUTLASS's heuristic decomposition; s >= 1: each tile's K in s splits), for measurement
// (scripts/tf32_splits.py); -1 ends it.
PyObject* py_force_tf32_splits(PyObject*, PyObject* args) {
  return force_sm90a(args, "force_tf32_splits", -1, GEMMTILES_SM90A_SETTER(force_tf32_splits));
}

// gemmtiles._C.force_tf32_slices(slices=0): every later tf32 call of one product runs K in
// about `slices` slices summed apart, for measurement (scripts/tf32_slices.py); below 2 ends it.
PyObject* py_force_tf32_slices(PyObject*, PyObject* args) {
  return force_sm90a(args, "force_tf32_slices", 0, GEMMTILES_SM90A_SETTER(force_tf32_slices));
}
#undef GEMMTILES_SM90A_SETTER

// gemmtiles._C.force_tf32_route(kernel=None, tile_n=0, splits=0): every later tf32 call runs B
// on `kernel` instead of its route's (tf32_route), for measurement (scripts/tf32_routes.py;
// process-wide, not for concurrent callers): "narrow" on tile_n 32, 64 or 128 (C^T's tile
// 128 x tile_n) or "own" (tf32's K-major kernel) on 128 x tile_n, tile_n 128 or 256, B packed
// K-major where they cannot read it as it lies; "transposing" (an N-major B transposed into
// registers), or "ampere" (Ampere's TF32 kernel) on `splits`, one of tf32_ampere's, on an
// N-major B read as it lies. None ends it. A call the kernel cannot run (force_tf32_route in
// tensor_core/tensor_core.h) runs its route's, and gemmtiles._C.forced_tf32_route_refused() ->
// bool says so until the next force_tf32_route.
PyObject* py_force_tf32_route(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kernel", "tile_n", "splits", nullptr};
  const char* kernel = nullptr;
  int tile_n = 0, splits = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zii", const_cast<char**>(names), &kernel, &tile_n, &splits))
    return nullptr;
  using K = gemmtiles::Tf32RouteKernel;
  K k = K::kModel;
  if (kernel) {
    const std::string name = kernel;
    const auto expect = [&](bool ok, const char* what) {
      if (!ok) PyErr_Format(PyExc_ValueError, "force_tf32_route: %s for kernel '%s', got tile_n=%d, splits=%d", what,
                            kernel, tile_n, splits);
      return ok;
    };
    if (name == "narrow") {
      k = K::kNarrow;
      if (!expect((tile_n == 32 || tile_n == 64 || tile_n == 128) && splits == 0, "expected tile_n 32, 64 or 128 and no splits"))
        return nullptr;
    } else if (name == "own") {
      k = K::kOwn;
      if (!expect((tile_n == 128 || tile_n == 256) && splits == 0, "expected tile_n 128 or 256 and no splits"))
        return nullptr;
    } else if (name == "transposing") {
      k = K::kTransposing;
      if (!expect((tile_n == 0 || tile_n == 256) && splits == 0, "expected tile_n 256 (or 0) and no splits"))
        return nullptr;
    } else if (name == "ampere") {
      k = K::kAmpere;
      const bool listed = std::find(std::begin(gemmtiles::kAmpereSplits), std::end(gemmtiles::kAmpereSplits),
                                    int64_t(splits)) != std::end(gemmtiles::kAmpereSplits);
      if (!expect(listed && (tile_n == 0 || tile_n == 128), "expected splits 1, 2, 3, 4, 6, 8, 12 or 16 and tile_n 128 (or 0)"))
        return nullptr;
    } else {
      PyErr_Format(PyExc_ValueError,
                   "force_tf32_route: kernel must be 'narrow', 'own', 'transposing', 'ampere' or None, got '%s'", kernel);
      return nullptr;
    }
  }
#if GEMMTILES_SM90A
  HANDLE_TH_ERRORS
  if (k == K::kModel) tile_n = splits = 0;
  gemmtiles::force_tf32_route(k, tile_n, splits);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
#else
  (void)k;
  PyErr_SetString(PyExc_RuntimeError, "force_tf32_route: this build of gemmtiles has no sm_90a kernels");
  return nullptr;
#endif
}
PyObject* py_forced_tf32_route_refused(PyObject*, PyObject*) {
#if GEMMTILES_SM90A
  return PyBool_FromLong(gemmtiles::forced_tf32_route_refused());
#else
  return PyBool_FromLong(0);
#endif
}

// gemmtiles._C.stream_k_locks_left_set() -> int: the bytes of tf32's stream-K locks, kept
// zero between launches, that were left nonzero (0: every launch reset those it used); 0 in
// a build without the sm_90a kernels.
PyObject* py_stream_k_locks_left_set(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
#if GEMMTILES_SM90A
  return PyLong_FromLongLong(gemmtiles::stream_k_locks_left_set());
#else
  return PyLong_FromLongLong(0);
#endif
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.sm90a_kernels() -> bool: whether this build compiled the *_sm90a.cu sources.
PyObject* py_sm90a_kernels(PyObject*, PyObject*) { return PyBool_FromLong(GEMMTILES_SM90A); }

// gemmtiles._C.exact_candidates(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec=True) ->
// [(AutoPlan, estimate_us)]: the exact-kernel candidates auto weighs where CUTLASS's kernels
// run the problem, each with the model's estimate (csrc/auto/exact_model.h), in auto's order;
// auto ranks them by gemmtiles.exact_fit.rank_us (_C.exact_rank: copying and swapped plans' margins).
PyObject* py_exact_candidates(PyObject*, PyObject* args) {
  long long M, N, K, batch, sms;
  int a_kmajor, b_kmajor, b_vec, a_vec = 1;
  if (!PyArg_ParseTuple(args, "LLLLpppL|p", &M, &N, &K, &batch, &a_kmajor, &b_kmajor, &b_vec, &sms, &a_vec))
    return nullptr;
  if (M < 1 || N < 1 || K < 1 || batch < 1 || sms < 1) {
    PyErr_SetString(PyExc_ValueError, "exact_candidates: M, N, K, batch and sms must be >= 1");
    return nullptr;
  }
  PyTypeObject* type = auto_plan_type();
  if (!type) return nullptr;
  PyObject* list = PyList_New(0);
  if (!list) return nullptr;
  for (const gemmtiles::AutoPlan& plan :
       gemmtiles::exact_candidates(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec)) {
    PyObject* p = plan_object(type, plan);
    const double us = gemmtiles::exact_plan_us(plan, M, N, K, batch, a_kmajor, b_kmajor, sms, a_vec, b_vec);
    PyObject* item = p ? Py_BuildValue("(Nd)", p, us) : nullptr;
    if (!item || PyList_Append(list, item) < 0) {
      Py_XDECREF(item);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return list;
}

// gemmtiles._C.exact_features(kernel, mt, nw, w, splits, k_slice, M, N, K, batch, a_kmajor, b_kmajor, sms,
// a_vec=True, b_vec=True) -> [float]: the cost model's features of that plan (plan.h,
// exact_plan_features; zeros for a plan the model does not cover), for the fit;
// gemmtiles._C.exact_model(clock_khz=0, dram_khz=0, bus_bits=0) -> [float]: its parameters, in
// the same order: as fitted, or as auto scales them to a GPU of that SM clock and DRAM where
// its table has no fit of its own (scaled_exact_model; 0: that part as fitted).
PyObject* py_exact_features(PyObject*, PyObject* args) {
  const char* kernel;
  int mt, nw, w, swapped, a_kmajor, b_kmajor, a_vec = 1, b_vec = 1;
  long long splits, k_slice, M, N, K, batch, sms;
  if (!PyArg_ParseTuple(args, "siiiLLpLLLLppL|pp", &kernel, &mt, &nw, &w, &splits, &k_slice, &swapped, &M, &N, &K,
                        &batch, &a_kmajor, &b_kmajor, &sms, &a_vec, &b_vec))
    return nullptr;
  const std::optional<gemmtiles::AutoKernel> k = gemmtiles::parse_auto_kernel(kernel);
  if (!k) {
    PyErr_Format(PyExc_ValueError, "exact_features: kernel must name one of auto's kernels, got '%s'", kernel);
    return nullptr;
  }
  const gemmtiles::AutoPlan plan{*k, mt, nw, w, splits, k_slice, swapped != 0};
  const auto features = gemmtiles::exact_plan_features(plan, M, N, K, batch, a_kmajor, b_kmajor, sms, a_vec, b_vec);
  return double_list(features.value_or(std::array<double, gemmtiles::kExactModelSize>{}));
}
PyObject* py_forced_plan_refused(PyObject*, PyObject*) { return PyBool_FromLong(gemmtiles::forced_plan_refused()); }
PyObject* py_exact_model(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"clock_khz", "dram_khz", "bus_bits", nullptr};
  double clock_khz = 0, dram_khz = 0, bus_bits = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ddd", const_cast<char**>(names), &clock_khz, &dram_khz, &bus_bits))
    return nullptr;
  return double_list(gemmtiles::exact_model_params(gemmtiles::scaled_exact_model(clock_khz, dram_khz, bus_bits)));
}

// gemmtiles._C.cutlass_kernels() -> bool: whether this build compiled auto's CUTLASS SIMT kernels.
PyObject* py_cutlass_kernels(PyObject*, PyObject*) { return PyBool_FromLong(GEMMTILES_CUTLASS); }

// gemmtiles._C.cutlass_tiles() -> [(rows, cols, warps)]: CUTLASS's tiles as auto weighs them
// (cutlass_tile_at in auto/plan.h), in the order of the cost model's parameters
// (auto/exact_model.h): the model prices them in every build, cutlass_kernels() says whether
// they run here.
PyObject* py_cutlass_tiles(PyObject*, PyObject*) {
  std::vector<gemmtiles::CutlassTile> tiles;
  for (int i = 0; i < gemmtiles::kCutlassTileCount; ++i) tiles.push_back(gemmtiles::cutlass_tile_at(i));
  return py_list(tiles, [](const gemmtiles::CutlassTile& t) { return Py_BuildValue("(iii)", t.bm, t.bn, t.warps); });
}

// The index of CUTLASS's tile of rows x cols on `warps` warps (cutlass_tile_index in
// auto/plan.h), or -1 with a ValueError set that names the caller `fn`.
int cutlass_tile_arg(const char* fn, int rows, int cols, int warps) {
  const int tile = gemmtiles::cutlass_tile_index(rows, cols, warps);
  if (tile < 0)
    PyErr_Format(PyExc_ValueError, "%s: the tile must be one of cutlass_tiles(), got %d x %d on %d warps", fn, rows,
                 cols, warps);
  return tile;
}

// gemmtiles._C.cutlass_slices_apart(rows, cols, warps, m, n, k, splits, sms, a_kmajor, b_kmajor) -> bool:
// whether CUTLASS's kernel on that tile (one of cutlass_tiles()), K of one M x N x K product in
// `splits` slices on `sms` SMs, runs its slices apart (cutlass_slices_apart in auto/plan.h).
PyObject* py_cutlass_slices_apart(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  int rows, cols, warps, a_kmajor, b_kmajor;
  long long m, n, k, splits, sms;
  if (!PyArg_ParseTuple(args, "iiiLLLLLpp", &rows, &cols, &warps, &m, &n, &k, &splits, &sms, &a_kmajor, &b_kmajor))
    return nullptr;
  const int tile = cutlass_tile_arg("cutlass_slices_apart", rows, cols, warps);
  if (tile < 0) return nullptr;
  constexpr long long most = std::numeric_limits<int32_t>::max();  // CUTLASS's sizes are ints
  if (m < 0 || n < 0 || k < 0 || splits < 1 || sms < 1 || std::max({m, n, k, splits, sms}) > most) {
    PyErr_SetString(PyExc_ValueError,
                    "cutlass_slices_apart: m, n and k must be in [0, 2**31 - 1], splits and sms in [1, 2**31 - 1]");
    return nullptr;
  }
  return PyBool_FromLong(gemmtiles::cutlass_slices_apart(m, n, k, tile, a_kmajor, b_kmajor, splits, sms));
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.cutlass_blocks_per_sm(rows, cols, warps, a_kmajor, b_kmajor) -> (model, device):
// the blocks of CUTLASS's kernel on that tile (one of cutlass_tiles()) and layout an SM holds at
// once, as auto's cost model takes it (tile_blocks_per_sm in auto/exact_model.h) and as the
// current CUDA device holds them (None in builds without those kernels or without a device).
PyObject* py_cutlass_blocks_per_sm(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  int rows, cols, warps, a_kmajor, b_kmajor;
  if (!PyArg_ParseTuple(args, "iiipp", &rows, &cols, &warps, &a_kmajor, &b_kmajor)) return nullptr;
  const int tile = cutlass_tile_arg("cutlass_blocks_per_sm", rows, cols, warps);
  if (tile < 0) return nullptr;
  const int model = gemmtiles::tile_blocks_per_sm(tile, a_kmajor, b_kmajor);
  int device = -1;
#if GEMMTILES_CUTLASS
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
    device = gemmtiles::cutlass_simt_blocks_per_sm(rows, cols, warps, a_kmajor, b_kmajor);
  // No device, or one the kernels are not built for: the error the query left is not the
  // next launch's.
  if (device < 0) cudaGetLastError();
#endif
  if (device < 0) return Py_BuildValue("(iO)", model, Py_None);
  return Py_BuildValue("(ii)", model, device);
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.cluster_blocks() -> (model, device): for clusters of n blocks (index n, 2 ..
// kMaxClusterSplits), the blocks that run at once, one block an SM, as auto's shipped model
// takes them (ExactModel::cluster_blocks) and as the current CUDA device runs them (None in
// builds without auto's CUDA kernels or without a device). The model's estimates that the
// bindings give (exact_candidates, exact_features, auto_plan) take the model's, Hopper's.
PyObject* py_cluster_blocks(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  const auto as_list = [](const gemmtiles::ClusterBlocks& b) {
    return py_list(b, [](int64_t x) { return PyLong_FromLongLong(x); });
  };
  PyObject* model = as_list(gemmtiles::kExactModel.cluster_blocks);
  if (!model) return nullptr;
#if GEMMTILES_AUTO
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    PyObject* device = as_list(gemmtiles::device_cluster_blocks());
    if (!device) {
      Py_DECREF(model);
      return nullptr;
    }
    return Py_BuildValue("(NN)", model, device);
  }
  cudaGetLastError();
#endif
  return Py_BuildValue("(NO)", model, Py_None);
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.cutlass_flags_left_set() -> int: the bytes of the CUTLASS launches' barrier
// flags left nonzero once the devices finish (auto/cutlass_simt.h; 0 in builds without those
// kernels). For the tests: every launch must leave them zero.
PyObject* py_cutlass_flags_left_set(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
#if GEMMTILES_CUTLASS
  return PyLong_FromLongLong(gemmtiles::cutlass_flags_left_set());
#else
  return PyLong_FromLongLong(0);
#endif
  END_HANDLE_TH_ERRORS
}

// gemmtiles._C.force_auto_plan(kernel=None, mt=0, nw=0, w=1, splits=1, k_slice=0): the plan every
// auto call runs from now on instead of its own (kernel None: auto's own again), the fields
// those of AutoPlan. For the tuner and the tests: process-wide, not for concurrent callers. A
// call whose problem the forced kernel does not take runs auto's own plan, and
// gemmtiles._C.forced_plan_refused() -> bool says so until the next force_auto_plan.
PyObject* py_force_auto_plan(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kernel", "mt", "nw", "w", "splits", "k_slice", "swapped", nullptr};
  const char* kernel = nullptr;
  int mt = 0, nw = 0, w = 1, swapped = 0;
  long long splits = 1, k_slice = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ziiiLLp", const_cast<char**>(names), &kernel, &mt, &nw, &w,
                                   &splits, &k_slice, &swapped))
    return nullptr;
  gemmtiles::forced_plan_refused() = false;
  if (!kernel) {
    gemmtiles::forced_auto_plan().reset();
    Py_RETURN_NONE;
  }
  const std::optional<gemmtiles::AutoKernel> k = gemmtiles::parse_auto_kernel(kernel);
  if (!k) {
    PyErr_Format(PyExc_ValueError, "force_auto_plan: kernel must name one of auto's kernels, got '%s'", kernel);
    return nullptr;
  }
  if (splits < 0 || k_slice < 0) {
    PyErr_SetString(PyExc_ValueError, "force_auto_plan: splits and k_slice must be >= 0");
    return nullptr;
  }
  gemmtiles::AutoPlan plan{*k, mt, nw, w, splits, k_slice, swapped != 0};
  gemmtiles::forced_auto_plan() = plan;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"auto_plan", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_auto_plan)),
     METH_VARARGS | METH_KEYWORDS,
     "auto_plan(M, N, K, batch, b_kmajor, b_vec, sms, a_kmajor=True, table=None, a_vec=True, cutlass=False, "
     "tensor_cores='none'): AutoPlan(kernel, mt, nw, w, splits, k_slice, swapped), what the auto tier runs; every "
     "argument may be given by keyword."},
    {"tensor_core_model", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_tensor_core_model)),
     METH_VARARGS | METH_KEYWORDS,
     "tensor_core_model(table=None, sms=0, clock_khz=0, dram_khz=0, bus_bits=0): the parameters of auto's "
     "tensor-core model (plan.h) on such a GPU (0: as fitted), its floor's bandwidth last."},
    {"tensor_core_work", py_tensor_core_work, METH_VARARGS,
     "tensor_core_work(M, N, K, batch, tensor_cores, a_kmajor, a_vec, b_kmajor, b_vec, sms, ampere=<build>): "
     "(k_steps, bytes, "
     "read_bytes), the features of auto's tensor-core model."},
    {"tf32_route", py_tf32_route, METH_VARARGS,
     "tf32_route(M, N, K, batch, b_kmajor, b_vec, sms, ampere=<build>): (kernel, tile_m, tile_n, b_in_place, k_steps, own_tile_n, "
     "splits), how tf32 runs B: on its narrow kernel, the kernel transposing an N-major B, its own, Ampere's "
     "kernel (K in splits slices), or K in splits slices summed apart ('slices'); B in place or packed."},
    {"tensor_cores_pay", py_tensor_cores_pay, METH_VARARGS,
     "tensor_cores_pay(M, N, K, batch, tensor_cores, a_kmajor, a_vec, b_kmajor, b_vec, sms, model, exact_us, "
     "ampere=<build>, floor_bytes_per_us=<model's bytes_per_us>): whether auto's rule runs the tensor-core tier, "
     "with the model's six parameters (tensor_core_model's first six) and the floor's bandwidth, against the exact "
     "kernels' exact_us."},
    {"peeled_columns", py_peeled_columns, METH_VARARGS,
     "peeled_columns(M, N, batch): the last columns of the output auto runs apart, 0 for none."},
    {"max_table_splits", py_max_table_splits, METH_NOARGS, "max_table_splits(): the most splits a table entry may name."},
    {"set_fp32_precision", py_set_fp32_precision, METH_VARARGS,
     "set_fp32_precision(name): gemmtiles' fp32 precision setting: 'none', 'ieee', 'tf32' or 'tf32x3'."},
    {"fp32_precision", py_fp32_precision, METH_NOARGS, "fp32_precision(): gemmtiles' fp32 precision setting."},
    {"auto_tensor_core_math", py_auto_tensor_core_math, METH_NOARGS,
     "auto_tensor_core_math(): the tensor-core math the settings allow auto now: 'none', 'tf32' or 'tf32x3'."},
    {"transpose_a_first", py_transpose_a_first, METH_VARARGS,
     "transpose_a_first(M, N, K, batch, a_kmajor, b_kmajor, b_vec, table=None): whether auto copies a row-major A M-major first."},
    {"async_tile_ok", py_async_tile_ok, METH_VARARGS,
     "async_tile_ok(M, N, a_kmajor, a_vec, b_kmajor, b_vec): whether auto's pipelined tile takes the operands."},
    {"exact_model_layout", py_exact_model_layout, METH_NOARGS,
     "exact_model_layout(): the feature layout a table's 'model exact' line names."},
    {"exact_rank", py_exact_rank, METH_VARARGS,
     "exact_rank(kernel, swapped, estimate_us): what auto ranks a candidate by, its estimate with the margins of "
     "copying and swapped plans."},
    {"skinny_cols", py_skinny_cols, METH_VARARGS,
     "skinny_cols(kernel, mt, nw, w): the columns of B one block of that skinny plan takes."},
    {"skinny_widths", py_skinny_widths, METH_VARARGS,
     "skinny_widths(M, b_kmajor, b_vec): the widths (columns of B a block) a table's skinny entry may name."},
    {"gemv_columns", py_gemv_columns, METH_VARARGS,
     "gemv_columns(M, b_kmajor, b_vec=True): the columns of B a block of the GEMV kernel takes for M rows, which a "
     "table's gemv entry names."},
    {"gemv_kernel", py_gemv_kernel, METH_VARARGS,
     "gemv_kernel(M, N, K, batch, b_vec, sms): (columns, lanes_along_k, blocks_per_sm) of the GEMV kernel a table's gemv "
     "entry of M rows runs on such a problem (the 1- and 2-4-row float4 builds' follow K, the 5-8-row build's its "
     "blocks); None where no build takes it."},
    {"skinny_max_m", py_skinny_max_m, METH_VARARGS,
     "skinny_max_m(b_kmajor): the most rows auto's skinny kernels take for such a B."},
    {"auto_bucket", py_auto_bucket, METH_VARARGS, "auto_bucket(x): a dimension's bucket in a tuned table."},
    {"auto_table_file", py_auto_table_file, METH_VARARGS, "auto_table_file(gpu_name): the file name of its tuned table."},
    {"set_auto_table_dirs", py_set_auto_table_dirs, METH_VARARGS,
     "set_auto_table_dirs(dirs): where each device looks for its tuned table on its first auto call."},
    {"set_auto_table", py_set_auto_table, METH_VARARGS,
     "set_auto_table(device, text, source=''): the device's tuned table from its text (None: reload from the directories)."},
    {"auto_table_source", py_auto_table_source, METH_VARARGS,
     "auto_table_source(device): the path of the device's tuned table, '' for none, or 'not loaded'."},
    {"registered_tiers", py_registered_tiers, METH_NOARGS,
     "The tier registrations of this build: (name, device, operands, min_sm) per line."},
    {"op_index", py_op_index, METH_VARARGS,
     "op_index(qualified_name): the index of an op for call()."},
    {"operand_layout", py_operand_layout, METH_VARARGS,
     "operand_layout(a, b): (a_kmajor, b_kmajor, a_vec, b_vec), a and b's layout and alignment as auto's plan "
     "sees them."},
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_call)), METH_FASTCALL,
     "call(index, a, b, c, alpha, beta): the op through the dispatcher, for eager calls."},
    {"linear", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_linear)), METH_FASTCALL,
     "linear(index, x, weight, bias): x @ weight^T + bias on the op, for nn.Linear's eager calls."},
    {"exact_candidates", py_exact_candidates, METH_VARARGS,
     "exact_candidates(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec=True): [(AutoPlan, estimate_us)], the exact "
     "kernels auto weighs where CUTLASS's run the problem."},
    {"exact_features", py_exact_features, METH_VARARGS,
     "exact_features(kernel, mt, nw, w, splits, k_slice, swapped, M, N, K, batch, a_kmajor, b_kmajor, sms, "
     "a_vec=True, b_vec=True): the cost model's features of a plan (an AutoPlan's fields, then the problem's)."},
    {"forced_plan_refused", py_forced_plan_refused, METH_NOARGS,
     "forced_plan_refused(): whether a call since the last force_auto_plan ran auto's own plan, the forced one "
     "not taking its problem."},
    {"exact_model", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_exact_model)),
     METH_VARARGS | METH_KEYWORDS,
     "exact_model(clock_khz=0, dram_khz=0, bus_bits=0): the cost model's parameters as fitted, or scaled to a GPU "
     "of that SM clock and DRAM (clock and bus width; 0: as fitted)."},
    {"cutlass_kernels", py_cutlass_kernels, METH_NOARGS, "Whether this build has auto's CUTLASS SIMT kernels."},
    {"cutlass_tiles", py_cutlass_tiles, METH_NOARGS,
     "cutlass_tiles(): CUTLASS's tiles auto weighs, (rows, cols, warps), in the cost model's order."},
    {"cutlass_slices_apart", py_cutlass_slices_apart, METH_VARARGS,
     "cutlass_slices_apart(rows, cols, warps, m, n, k, splits, sms, a_kmajor, b_kmajor): whether CUTLASS's kernel on "
     "that tile runs the slices of K split `splits` ways apart (its data-parallel kernel, then a reduction), where its "
     "stream-K kernel would add them in a wave of reduction blocks."},
    {"cutlass_blocks_per_sm", py_cutlass_blocks_per_sm, METH_VARARGS,
     "cutlass_blocks_per_sm(rows, cols, warps, a_kmajor, b_kmajor): (model, device), the blocks of CUTLASS's kernel on "
     "that tile and layout an SM holds at once, as auto's cost model takes it and as the current device holds them "
     "(None where this build or machine cannot say)."},
    {"cluster_blocks", py_cluster_blocks, METH_NOARGS,
     "cluster_blocks(): (model, device), for clusters of n blocks (index n) the blocks that run at once, one an SM, "
     "as auto's cost model takes them and as the current device runs them (None where this build or machine cannot "
     "say)."},
    {"stream_k_locks_left_set", py_stream_k_locks_left_set, METH_NOARGS,
     "stream_k_locks_left_set(): bytes of tf32's stream-K locks left nonzero (0: every launch reset them)."},
    {"cutlass_flags_left_set", py_cutlass_flags_left_set, METH_NOARGS,
     "cutlass_flags_left_set(): bytes of auto's CUTLASS barrier flags left nonzero (0: every launch reset them)."},
    {"force_auto_plan", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_force_auto_plan)),
     METH_VARARGS | METH_KEYWORDS,
     "force_auto_plan(kernel=None, mt=0, nw=0, w=1, splits=1, k_slice=0, swapped=False): the plan every auto call "
     "runs instead of its own (None: its own); for tuning and tests, process-wide."},
    {"force_tf32_splits", py_force_tf32_splits, METH_VARARGS,
     "force_tf32_splits(splits=-1): tf32's wgmma kernels on splits from now on (0: CUTLASS's heuristic; s >= 1: "
     "K in s splits a tile), for measurement; -1 ends it."},
    {"force_tf32_slices", py_force_tf32_slices, METH_VARARGS,
     "force_tf32_slices(slices=0): every later tf32 call of one product runs K in about slices slices summed apart, "
     "for measurement; below 2 ends it."},
    {"force_tf32_route", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_force_tf32_route)),
     METH_VARARGS | METH_KEYWORDS,
     "force_tf32_route(kernel=None, tile_n=0, splits=0): every later tf32 call runs B on kernel ('narrow' on "
     "tile_n 32/64/128, 'own' on 128/256, 'transposing', 'ampere' on splits) instead of its route's, for "
     "measurement; None ends it."},
    {"forced_tf32_route_refused", py_forced_tf32_route_refused, METH_NOARGS,
     "forced_tf32_route_refused(): whether a tf32 call since the last force_tf32_route ran its route's kernel, the "
     "forced one unable to run it."},
    {"sm90a_kernels", py_sm90a_kernels, METH_NOARGS,
     "Whether this build has the sm_90a kernels of the tensor-core tiers."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

extern "C" {
// `import gemmtiles._C` loads this library, and with it every registration.
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, methods};
  return PyModule_Create(&module_def);
}
}
