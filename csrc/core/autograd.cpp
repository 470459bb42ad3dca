// Autograd of every tier, in C++: one kernel for the Autograd dispatch key, shared by all
// tiers, so an eager call runs no Python. The gradients are products computed by the same
// tier:
//   grad_a = alpha * grad @ b^T     grad_b = alpha * a^T @ grad     grad_c = beta * grad
// each summed over the dimensions that a, b or c were broadcast along. A gradient of a 2-D
// operand that lies column-major (nn.Linear's W^T) comes column-major too, computed as the
// transposed product (grad_b = alpha * (grad^T @ a)^T), as torch's own mm backward does: the
// gradient then reaches the leaf (the weight) in its own layout, where a row-major one would
// be copied by autograd's accumulation into the weight's layout (a transposing copy of every
// weight gradient in a training step).
#include <array>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/dynamo/compiled_autograd.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

#include "register.h"

namespace gemmtiles {
namespace {

using torch::autograd::variable_list;

at::Tensor call_tier(const std::string& name, const at::Tensor& a, const at::Tensor& b,
                     double alpha) {
  static auto& dispatcher = c10::Dispatcher::singleton();
  return dispatcher.findSchemaOrThrow(name.c_str(), "")
      .typed<OpSignature>()
      .call(a, b, std::nullopt, alpha, 0.0);
}

// A 2-D operand that lies column-major and not also row-major (torch's test in its mm
// backward: a column stride of 1, a row stride of the row count).
bool column_major(const at::Tensor& x) {
  return x.dim() == 2 && x.sym_stride(0) == 1 && x.sym_stride(1) == x.sym_size(0) && !x.is_contiguous();
}

// x @ y through the tier; transposed: computed as (y^T @ x^T)^T, so that it comes
// column-major (the layout of the operand whose gradient it is).
at::Tensor product(const std::string& name, const at::Tensor& x, const at::Tensor& y, double alpha,
                   bool transposed) {
  return transposed ? call_tier(name, y.mT(), x.mT(), alpha).mT() : call_tier(name, x, y, alpha);
}

// Sums `g` down to `sizes` where the forward broadcast an operand along a dimension.
at::Tensor reduce_to(const at::Tensor& g, c10::SymIntArrayRef sizes) {
  return g.sym_sizes().equals(sizes) ? g : g.sum_to_size_symint(sizes);
}

// What a tier's backward reads besides the incoming gradient.
struct BackwardArgs {
  std::string op;  // the op's name, "gemmtiles::<tier>"
  double alpha = 1.0, beta = 0.0;
  bool has_c = false, a_column_major = false, b_column_major = false;
  std::vector<c10::SymInt> a_sizes, b_sizes, c_sizes;  // of the inputs that need a gradient

  // f(field) for every field of `s` in one order, the order in which compiled autograd
  // collects, swaps, packs and unpacks them (TierBackward, tier_backward_packed).
  template <class S, class F>
  static void each(S& s, F&& f) {
    f(s.op);
    f(s.alpha);
    f(s.beta);
    f(s.has_c);
    f(s.a_column_major);
    f(s.b_column_major);
    f(s.a_sizes);
    f(s.b_sizes);
    f(s.c_sizes);
  }
};

// A field of BackwardArgs as an IValue, and back.
template <class T>
c10::IValue to_ivalue(const T& x) {
  if constexpr (std::is_same_v<T, std::vector<c10::SymInt>>) {
    return c10::SymIntArrayRef(x);
  } else {
    return x;
  }
}
template <class T>
void from_ivalue(const c10::IValue& v, T& x) {
  if constexpr (std::is_same_v<T, std::vector<c10::SymInt>>) {
    x = v.toSymIntVector();
  } else {
    x = v.to<T>();
  }
}

// The gradients of a, b and c (undefined where `needs` says none is wanted) for the incoming
// gradient `grad`; a is read for b's gradient, b for a's.
variable_list tier_backward(const at::Tensor& grad, const BackwardArgs& s, const at::Tensor& a,
                            const at::Tensor& b, const std::array<bool, 3>& needs) {
  variable_list out(3);  // one gradient per edge: a, b, c
  if (!grad.defined()) return out;
  // A column-major operand's gradient comes column-major where it is one 2-D product
  // (a column-major operand is 2-D; with the other 2-D too, so is grad).
  if (needs[0]) {
    const bool transposed = s.a_column_major && b.dim() == 2;
    out[0] = reduce_to(product(s.op, grad, b.mT(), s.alpha, transposed), s.a_sizes);
  }
  if (needs[1]) {
    if (s.b_sizes.size() == 2 && a.dim() == 3) {
      // b shared by the batch: one product over the flattened batch instead of a batch
      // of products and a reduction.
      const c10::SymInt k = a.sym_size(-1), n = grad.sym_size(-1);
      out[1] = product(s.op, a.reshape_symint({-1, k}).mT(), grad.reshape_symint({-1, n}), s.alpha,
                       s.b_column_major);
    } else {
      out[1] = reduce_to(product(s.op, a.mT(), grad, s.alpha, s.b_column_major && a.dim() == 2), s.b_sizes);
    }
  }
  if (s.has_c && needs[2]) out[2] = reduce_to(s.beta == 1.0 ? grad : grad * s.beta, s.c_sizes);
  return out;
}

// tier_backward for compiled autograd: the incoming gradient, and BackwardArgs's fields, a, b
// and the three `needs` packed as IValues in that order (TierBackward::apply_with_saved).
variable_list tier_backward_packed(const variable_list& grads, const std::vector<c10::IValue>& args) {
  BackwardArgs s;
  size_t i = 0;
  BackwardArgs::each(s, [&](auto& x) { from_ivalue(args[i++], x); });
  const at::Tensor a = args[i++].toTensor(), b = args[i++].toTensor();
  std::array<bool, 3> needs{};
  for (bool& n : needs) n = args[i++].toBool();
  return tier_backward(grads[0], s, a, b, needs);
}

// The node that autograd records for a tier's call: BackwardArgs as plain members and a and
// b as saved variables (only those that backward reads), the way torch's own generated nodes
// (MmBackward0) keep theirs. (A torch::autograd::Function kept them in a dictionary of IValues
// and wrapped its inputs and outputs generically: autograd then cost well above torch.mm's
// on a tiny product.)
struct TierBackward : torch::autograd::Node {
  BackwardArgs s;
  torch::autograd::SavedVariable a, b;  // a for grad_b, b for grad_a

  std::string name() const override { return s.op + "_backward"; }

  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    a.reset_data();
    b.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);  // against release_variables from another thread
    const std::array<bool, 3> needs{task_should_compute_output(0), task_should_compute_output(1),
                                    task_should_compute_output(2)};
    return tier_backward(grads[0], s, needs[1] ? a.unpack() : at::Tensor(),
                         needs[0] ? b.unpack() : at::Tensor(), needs);
  }

  // Compiled autograd: what the backward depends on besides its incoming gradient; and the
  // backward as a function of IValues (tier_backward_packed), bound in the compiler and
  // called in its graph (traceable: the tiers' ops have fake kernels), as torch's own nodes
  // are.
  void compiled_args(torch::dynamo::autograd::CompiledNodeArgs& args) const override {
    BackwardArgs::each(s, [&](const auto& x) { args.collect(x); });
    args.collect(a, false);
    args.collect(b, false);
  }

  variable_list apply_with_saved(const variable_list& grads,
                                 torch::dynamo::autograd::SwapSavedVariables& saved) override {
    // The compiler's values in place of the sizes and saved tensors while the call is made
    // (a no-op for the scalars), restored after.
    auto swap = [&](auto step) {
      BackwardArgs::each(s, step);
      step(a);
      step(b);
    };
    swap([&](auto& x) { saved.before(x); });
    std::vector<c10::IValue> packed;
    BackwardArgs::each(s, [&](const auto& x) { packed.push_back(to_ivalue(x)); });
    packed.emplace_back(a.unpack());
    packed.emplace_back(b.unpack());
    for (size_t i = 0; i < 3; ++i) packed.emplace_back(static_cast<bool>(task_should_compute_output(i)));
    // Bound once per process under one name, a Python identifier (it is printed into the
    // compiler's graph code), as torch's generated nodes bind theirs; the tier is an argument.
    const auto& compiler = torch::dynamo::autograd::getPyCompilerInterface();
    static const std::string fn = "GemmtilesTierBackward";
    static bool bound = false;  // binding runs inside the compiler, under the GIL
    if (!bound) {
      bound = true;
      std::vector<at::TypePtr> schema;
      schema.reserve(packed.size());
      for (const c10::IValue& v : packed) schema.push_back(v.isTensor() ? at::TensorType::get() : v.type());
      compiler->bind_function(saved.get_py_compiler(), fn, tier_backward_packed, schema,
                              /*is_custom_function=*/false, /*is_traceable=*/true);
    }
    const auto metadata =
        torch::dynamo::autograd::IValuePacker<std::vector<std::optional<torch::autograd::InputMetadata>>>::pack(
            torch::dynamo::autograd::get_input_metadata(next_edges()));
    variable_list out =
        compiler->call_function(saved.get_py_compiler(), "apply_functional", fn, grads, packed, metadata);
    swap([&](auto& x) { saved.after(x); });
    return out;
  }
};

// A new node, owned as this torch's autograd owns its nodes (an intrusive pointer from torch
// 2.12 on, a shared pointer with torch's deleter before).
template <class N, bool kIntrusive = std::is_base_of_v<c10::intrusive_ptr_target, torch::autograd::Node>>
struct NodeMaker;
template <class N>
struct NodeMaker<N, true> {
  static auto make() { return c10::make_intrusive<N>(); }
};
template <class N>
struct NodeMaker<N, false> {
  static auto make() {
    // deleteNode found through the node's namespace (dependent lookup): the intrusive
    // branch's torch need not have it.
    return std::shared_ptr<N>(new N(), [](N* node) { deleteNode(node); });
  }
};

bool any_requires_grad(const at::Tensor& a, const at::Tensor& b,
                       const std::optional<at::Tensor>& c) {
  return a.requires_grad() || b.requires_grad() ||
         (c.has_value() && c->defined() && c->requires_grad());
}

// The Autograd kernel of every tier (boxed: the op it serves comes with the call).
void autograd_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                     torch::jit::Stack* stack) {
  const double beta = torch::jit::pop(*stack).toDouble();
  const double alpha = torch::jit::pop(*stack).toDouble();
  const std::optional<at::Tensor> c = torch::jit::pop(*stack).toOptional<at::Tensor>();
  const at::Tensor b = torch::jit::pop(*stack).toTensor();
  const at::Tensor a = torch::jit::pop(*stack).toTensor();
  const bool has_c = c.has_value() && c->defined();
  auto redispatch = [&] {
    return op.typed<OpSignature>().redispatch(ks & c10::after_autograd_keyset, a, b, c, alpha, beta);
  };
  // A dual tensor's tangent would be lost silently: refused, with or without grad mode.
  TORCH_CHECK_NOT_IMPLEMENTED(
      !torch::autograd::isFwGradDefined(a) && !torch::autograd::isFwGradDefined(b) &&
          !(has_c && torch::autograd::isFwGradDefined(*c)),
      op.operator_name().name, ": forward-mode automatic differentiation is not supported");
  if (!at::GradMode::is_enabled() || !any_requires_grad(a, b, c)) {
    torch::jit::push(*stack, redispatch());
    return;
  }
  auto node = NodeMaker<TierBackward>::make();
  node->s.op = op.operator_name().name;
  node->set_next_edges(torch::autograd::collect_next_edges(a, b, has_c ? *c : at::Tensor()));
  node->s.alpha = alpha;
  node->s.beta = beta;
  node->s.has_c = has_c;
  node->s.a_column_major = column_major(a);
  node->s.b_column_major = column_major(b);
  // Only what backward reads: a for grad_b, b for grad_a, the sizes of those with a gradient.
  if (node->should_compute_output(0)) {
    node->s.a_sizes = a.sym_sizes().vec();
    node->b = torch::autograd::SavedVariable(b, false);
  }
  if (node->should_compute_output(1)) {
    node->s.b_sizes = b.sym_sizes().vec();
    node->a = torch::autograd::SavedVariable(a, false);
  }
  if (has_c && node->should_compute_output(2)) node->s.c_sizes = c->sym_sizes().vec();
  at::Tensor out;
  {
    at::AutoDispatchBelowADInplaceOrView below;
    out = redispatch();
  }
  torch::autograd::set_history(out, node);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 14)
  torch::autograd::fire_node_creation_hooks(node);  // torch.autograd.graph.node_creation_hook
#endif
  torch::jit::push(*stack, std::move(out));
}

}  // namespace

void register_autograd(torch::Library& m, const char* name) {
  m.impl(name, torch::dispatch(c10::DispatchKey::Autograd,
                               torch::CppFunction::makeFromBoxedFunction<&autograd_kernel>()));
}

}  // namespace gemmtiles
