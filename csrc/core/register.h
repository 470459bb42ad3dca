// Registration of a tier: one line beside its kernel's launcher,
//
//   GEMMTILES_TIER(naive, CPU, Operands::kStrided, &naive_cpu);
//
// registers the kernel for the dispatch key and, the first time the name is seen (a tier on
// two devices has two lines), the op's schema and its autograd kernel (core/autograd.cpp). Each
// line is also recorded in the list that gemmtiles._C.registered_tiers() returns, which the
// tests compare with the tier table of gemmtiles/_tiers.py.
#pragma once

#include <string>
#include <vector>

#include <torch/library.h>

#include "prepare.h"

namespace gemmtiles {

// The C++ signature of every tier's op (the schema define_tier gives it):
//   (Tensor a, Tensor b, Tensor? c, float alpha, float beta) -> Tensor
using OpSignature = at::Tensor(const at::Tensor&, const at::Tensor&,
                               const std::optional<at::Tensor>&, double, double);

struct TierRecord {
  std::string name;
  std::string device;  // "cpu" or "cuda"
  Operands operands;   // which layouts its kernel reads in place
  int min_sm;          // lowest compute capability (major * 10 + minor) it runs on; 0: any
};

// The tiers registered so far, in registration order.
const std::vector<TierRecord>& registered_tiers();

// Records a registration line; defines the schema and the autograd kernel on first sight.
void define_tier(torch::Library& m, const char* name, const char* device, Operands operands,
                 int min_sm);

}  // namespace gemmtiles

#define GEMMTILES_TIER_MIN_SM(name, key, operands, min_sm, kernel)                  \
  TORCH_LIBRARY_FRAGMENT(gemmtiles, m) {                                            \
    ::gemmtiles::define_tier(m, #name, #key, ::gemmtiles::operands, min_sm);        \
  }                                                                                 \
  TORCH_LIBRARY_IMPL(gemmtiles, key, m) { m.impl(#name, kernel); }

#define GEMMTILES_TIER(name, key, operands, kernel) \
  GEMMTILES_TIER_MIN_SM(name, key, operands, 0, kernel)
