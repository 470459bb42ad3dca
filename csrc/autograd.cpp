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
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "register.h"

namespace gemmtiles {
namespace {

using torch::autograd::AutogradContext;
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

class TierFunction : public torch::autograd::Function<TierFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const c10::OperatorHandle& op,
                            const at::Tensor& a, const at::Tensor& b,
                            const std::optional<at::Tensor>& c, double alpha, double beta) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView below;
      out = op.typed<OpSignature>().call(a, b, c, alpha, beta);
    }
    const bool has_c = c.has_value() && c->defined();
    ctx->saved_data["op"] = op.operator_name().name;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["beta"] = beta;
    ctx->saved_data["has_c"] = has_c;
    ctx->saved_data["a_sizes"] = a.sym_sizes();
    ctx->saved_data["b_sizes"] = b.sym_sizes();
    if (has_c) ctx->saved_data["c_sizes"] = c->sym_sizes();
    ctx->saved_data["a_column_major"] = column_major(a);
    ctx->saved_data["b_column_major"] = column_major(b);
    // Only what backward reads: a for grad_b, b for grad_a.
    ctx->save_for_backward({b.requires_grad() ? a : at::Tensor(),
                            a.requires_grad() ? b : at::Tensor()});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor& grad = grads[0];
    const std::string name = ctx->saved_data["op"].toStringRef();
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const double beta = ctx->saved_data["beta"].toDouble();
    const auto a_sizes = ctx->saved_data["a_sizes"].toSymIntVector();
    const auto b_sizes = ctx->saved_data["b_sizes"].toSymIntVector();
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1];
    // One gradient per forward argument: (op, a, b, c, alpha, beta).
    variable_list out(6);
    // A column-major operand's gradient comes column-major where it is one 2-D product
    // (a column-major operand is 2-D; with the other 2-D too, so is grad).
    if (ctx->needs_input_grad(0)) {
      const bool transposed = ctx->saved_data["a_column_major"].toBool() && b.dim() == 2;
      out[1] = reduce_to(product(name, grad, b.mT(), alpha, transposed), a_sizes);
    }
    if (ctx->needs_input_grad(1)) {
      const bool b_column_major = ctx->saved_data["b_column_major"].toBool();
      if (b_sizes.size() == 2 && a.dim() == 3) {
        // b shared by the batch: one product over the flattened batch instead of a batch
        // of products and a reduction.
        const c10::SymInt k = a.sym_size(-1), n = grad.sym_size(-1);
        out[2] = product(name, a.reshape_symint({-1, k}).mT(), grad.reshape_symint({-1, n}), alpha,
                         b_column_major);
      } else {
        out[2] = reduce_to(product(name, a.mT(), grad, alpha, b_column_major && a.dim() == 2), b_sizes);
      }
    }
    if (ctx->saved_data["has_c"].toBool() && ctx->needs_input_grad(2)) {
      out[3] = reduce_to(beta == 1.0 ? grad : grad * beta,
                         ctx->saved_data["c_sizes"].toSymIntVector());
    }
    return out;
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
  at::Tensor out;
  if (!at::GradMode::is_enabled() || !any_requires_grad(a, b, c)) {
    out = op.typed<OpSignature>().redispatch(ks & c10::after_autograd_keyset, a, b, c, alpha,
                                           beta);
  } else {
    out = TierFunction::apply(op, a, b, c, alpha, beta);
  }
  torch::jit::push(*stack, std::move(out));
}

}  // namespace

void register_autograd(torch::Library& m, const char* name) {
  m.impl(name, torch::dispatch(c10::DispatchKey::Autograd,
                               torch::CppFunction::makeFromBoxedFunction<&autograd_kernel>()));
}

}  // namespace gemmtiles
