"""Loads the compiled ops and registers, for every tier in the table, its fake kernel (meta
tensors, torch.compile) and its autograd formula."""

from __future__ import annotations

import numbers

import torch

from . import _C  # noqa: F401  (loading the library registers the ops)
from ._tiers import TIERS

__all__ = ["check_args", "op"]


def op(name: str):
    """The custom op ``torch.ops.gemmtiles.<name>``."""
    return getattr(torch.ops.gemmtiles, name)


def _shape(t: torch.Tensor) -> str:
    return "x".join(str(s) for s in t.shape)


def _check_tensor(where: str, name: str, t) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{where}: argument '{name}' must be a Tensor, not {type(t).__name__}")
    if t.dtype != torch.float32:
        raise TypeError(f"{where}: expected {name} to be float32, got {str(t.dtype).removeprefix('torch.')}")


def _check_scalar(where: str, name: str, x) -> None:
    if isinstance(x, torch.Tensor) or not isinstance(x, numbers.Real):
        raise TypeError(f"{where}: argument '{name}' must be a real number, not {type(x).__name__}")


def check_args(where: str, a, b, c=None, alpha=1.0, beta=0.0) -> list[int]:
    """Checks the arguments of a gemmtiles op as the C++ side does (same error types and
    messages), and returns the output shape."""
    _check_tensor(where, "a", a)
    _check_tensor(where, "b", b)
    for name, t in (("a", a), ("b", b)):
        if t.dim() not in (2, 3):
            raise ValueError(f"{where}: expected {name} to be 2-D or 3-D, got {t.dim()}-D (shape {list(t.shape)})")
    if a.device != b.device:
        raise RuntimeError(f"{where}: expected all tensors on one device, got a on {a.device} and b on {b.device}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{where}: shapes cannot be multiplied ({_shape(a)} and {_shape(b)})")
    a_batch = a.shape[0] if a.dim() == 3 else 1
    b_batch = b.shape[0] if b.dim() == 3 else 1
    if a_batch != b_batch and 1 not in (a_batch, b_batch):
        raise ValueError(f"{where}: batch sizes of a and b cannot be broadcast ({_shape(a)} and {_shape(b)})")
    out = [a.shape[-2], b.shape[-1]]
    if a.dim() == 3 or b.dim() == 3:
        out.insert(0, max(a_batch, b_batch))
    if c is not None:
        _check_tensor(where, "c", c)
        if c.device != a.device:
            raise RuntimeError(f"{where}: expected all tensors on one device, got a on {a.device} and c on {c.device}")
        ok = c.dim() <= len(out) and all(cs in (os, 1) for cs, os in zip(reversed(c.shape), reversed(out)))
        if not ok:
            raise ValueError(f"{where}: c of shape {list(c.shape)} cannot be broadcast to the output shape {out}")
    _check_scalar(where, "alpha", alpha)
    _check_scalar(where, "beta", beta)
    return out


def _register(name: str) -> None:
    qualname = f"gemmtiles::{name}"
    tier_op = op(name)

    @torch.library.register_fake(qualname)
    def _fake(a, b, c=None, alpha=1.0, beta=0.0):
        return a.new_empty(check_args(qualname, a, b, c, alpha, beta))

    def setup_context(ctx, inputs, output):
        a, b, c, alpha, beta = inputs
        ctx.alpha, ctx.beta = alpha, beta
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        ctx.c_shape = None if c is None else c.shape
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad_b = grad_c = None
        if ctx.needs_input_grad[0]:
            # d(out)/d(a) = alpha * grad @ b^T; a broadcast over the batch sums the batch.
            grad_a = tier_op(grad, b.mT, None, ctx.alpha, 0.0).sum_to_size(ctx.a_shape)
        if ctx.needs_input_grad[1]:
            if b.dim() == 2 and a.dim() == 3:
                # b shared by the batch: one product over the flattened batch instead of a
                # batch of products and a reduction.
                k, n = a.shape[-1], grad.shape[-1]
                grad_b = tier_op(a.reshape(-1, k).mT, grad.reshape(-1, n), None, ctx.alpha, 0.0)
            else:
                grad_b = tier_op(a.mT, grad, None, ctx.alpha, 0.0).sum_to_size(ctx.b_shape)
        if ctx.c_shape is not None and ctx.needs_input_grad[2]:
            grad_c = (grad if ctx.beta == 1.0 else grad * ctx.beta).sum_to_size(ctx.c_shape)
        return grad_a, grad_b, grad_c, None, None

    torch.library.register_autograd(qualname, backward, setup_context=setup_context)


for _tier in TIERS:
    _register(_tier.name)


# Which tiers this build has kernels for, read once: a plain lookup also traces under
# torch.compile, where the dispatcher query does not.
_KERNELS = {
    (t.name, d): torch._C._dispatch_has_kernel_for_dispatch_key(f"gemmtiles::{t.name}", d.upper())
    for t in TIERS
    for d in t.devices
}


def has_kernel(name: str, device_type: str) -> bool:
    """Whether this build of gemmtiles has a kernel for tier `name` on `device_type`."""
    return _KERNELS.get((name, device_type), False)
