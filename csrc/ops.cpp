// The gemmtiles op library: one functional op per tier, all with the semantics of
// torch.addmm:  out = alpha * a @ b + beta * c.
// Kernels register per dispatch key in cpu/cpu_tiers.cpp and cuda/dispatch.cu.
#include <Python.h>

#include <iterator>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "tiers.h"

extern "C" {
// `import gemmtiles._C` loads this library, and with it the registrations below;
// the module itself has no Python functions.
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&module_def);
}
}

TORCH_LIBRARY(gemmtiles, m) {
  for (const char* tier : gemmtiles::kAllTiers) {
    const std::string schema =
        std::string(tier) +
        "(Tensor a, Tensor b, Tensor? c=None, float alpha=1.0, float beta=0.0) -> Tensor";
    m.def(schema.c_str());
  }
}

namespace {

template <size_t I>
at::Tensor needs_cuda(const at::Tensor& a, const at::Tensor&, const std::optional<at::Tensor>&,
                      double, double) {
  const char* tier = gemmtiles::kCudaOnlyTiers[I];
  TORCH_CHECK(false, "gemmtiles::", tier, ": tier '", tier, "' needs a CUDA tensor, got ",
              a.device().str());
}

template <size_t... I>
void register_needs_cuda(torch::Library& m, std::index_sequence<I...>) {
  (m.impl(gemmtiles::kCudaOnlyTiers[I], &needs_cuda<I>), ...);
}

}  // namespace

// CUDA-only tiers called with CPU tensors: a clear error instead of the dispatcher's
// "could not run ... with arguments from the 'CPU' backend".
TORCH_LIBRARY_IMPL(gemmtiles, CPU, m) {
  register_needs_cuda(m, std::make_index_sequence<std::size(gemmtiles::kCudaOnlyTiers)>{});
}
