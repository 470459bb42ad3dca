// gemmtiles' own fp32 precision setting (gemmtiles.set_fp32_precision), and what it and torch's
// setting together allow the auto tier. Process-wide, as torch's own setting is: autograd runs
// backward on threads of its own, which must see the setting a model's forward saw.
#pragma once

#include <string>

namespace gemmtiles {

enum class Fp32Precision {
  kNone,    // follow torch (torch.set_float32_matmul_precision / allow_tf32): TF32 where it allows
  kIeee,    // exact fp32 on the CUDA cores, whatever torch allows
  kTf32,    // TF32 tensor cores where they are faster, whatever torch allows
  kTf32x3,  // fp32-class accuracy on the tensor cores (tf32x3) where they are faster
};

// The tensor-core math auto may run: none (exact fp32 kernels only), tf32 or tf32x3.
enum class TensorCoreMath { kNone, kTf32, kTf32x3 };

Fp32Precision fp32_precision();
void set_fp32_precision(Fp32Precision p);

// "none", "ieee", "tf32", "tf32x3"; parse throws std::invalid_argument naming the choices.
const char* fp32_precision_name(Fp32Precision p);
Fp32Precision parse_fp32_precision(const std::string& name);
const char* tensor_core_math_name(TensorCoreMath m);
TensorCoreMath parse_tensor_core_math(const std::string& name);

// gemmtiles' setting over torch's: kNone defers to at::globalContext().allowTF32CuBLAS(), the
// switch stock torch reads for its own fp32 GEMMs on cuBLAS.
TensorCoreMath auto_tensor_core_math();

}  // namespace gemmtiles
