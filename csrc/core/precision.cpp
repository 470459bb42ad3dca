#include "precision.h"

#include <atomic>
#include <stdexcept>

#include <ATen/Context.h>

namespace gemmtiles {
namespace {
std::atomic<int> setting{static_cast<int>(Fp32Precision::kNone)};
constexpr const char* kPrecisionNames[] = {"none", "ieee", "tf32", "tf32x3"};
constexpr const char* kMathNames[] = {"none", "tf32", "tf32x3"};
}  // namespace

Fp32Precision fp32_precision() { return static_cast<Fp32Precision>(setting.load(std::memory_order_relaxed)); }

void set_fp32_precision(Fp32Precision p) { setting.store(static_cast<int>(p), std::memory_order_relaxed); }

const char* fp32_precision_name(Fp32Precision p) { return kPrecisionNames[static_cast<int>(p)]; }

Fp32Precision parse_fp32_precision(const std::string& name) {
  for (int i = 0; i < 4; ++i)
    if (name == kPrecisionNames[i]) return static_cast<Fp32Precision>(i);
  throw std::invalid_argument("expected one of 'none', 'ieee', 'tf32', 'tf32x3', got '" + name + "'");
}

const char* tensor_core_math_name(TensorCoreMath m) { return kMathNames[static_cast<int>(m)]; }

TensorCoreMath parse_tensor_core_math(const std::string& name) {
  for (int i = 0; i < 3; ++i)
    if (name == kMathNames[i]) return static_cast<TensorCoreMath>(i);
  throw std::invalid_argument("expected one of 'none', 'tf32', 'tf32x3', got '" + name + "'");
}

TensorCoreMath auto_tensor_core_math() {
  switch (fp32_precision()) {
    case Fp32Precision::kIeee: return TensorCoreMath::kNone;
    case Fp32Precision::kTf32: return TensorCoreMath::kTf32;
    case Fp32Precision::kTf32x3: return TensorCoreMath::kTf32x3;
    case Fp32Precision::kNone: break;
  }
  return at::globalContext().allowTF32CuBLAS() ? TensorCoreMath::kTf32 : TensorCoreMath::kNone;
}

}  // namespace gemmtiles
