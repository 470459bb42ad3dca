"""Loads the compiled ops and registers, for every tier this build has, its fake kernel (meta
tensors, torch.compile). Autograd and the argument checks of a real call live in C++."""

from __future__ import annotations

import functools
import numbers

import torch

from . import _tables
from ._tiers import BY_NAME, DEFAULT_TIER, DEVICES, check_tier, default_tier

REBUILD = "python -m pip install --no-build-isolation -e .   (in the gemmtiles source folder)"


def _load_extension():
    """Imports gemmtiles._C, first checking that it was built against the running torch: a
    C++ extension built against another torch fails with an undefined symbol, or worse."""
    try:
        from . import _build_info
    except ImportError:
        _build_info = None
    if _build_info is not None and _build_info.TORCH_VERSION != torch.__version__:
        raise ImportError(
            f"gemmtiles was built against torch {_build_info.TORCH_VERSION}, but torch "
            f"{torch.__version__} is running; rebuild gemmtiles against this torch: {REBUILD}"
        )
    try:
        from . import _C
    except ImportError as e:
        raise ImportError(f"gemmtiles' compiled extension does not load ({e}); "
                          f"rebuild it against the running torch {torch.__version__}: {REBUILD}") from e
    return _C


_C = _load_extension()
_tables.install(_C)

__all__ = ["check_args", "has_kernel", "lookup", "op", "op_for", "resolve", "REGISTERED"]

# (name, device, operands, min_sm): one per registration line of this build.
REGISTERED: tuple[tuple[str, str, str, int], ...] = tuple(_C.registered_tiers())
_KERNELS = {(name, device) for name, device, _, _ in REGISTERED}
_DEFINED = {name for name, _, _, _ in REGISTERED}


def op(name: str):
    """The custom op ``torch.ops.gemmtiles.<name>``."""
    return getattr(torch.ops.gemmtiles, name)


def sm90a_built() -> bool:
    """Whether this build has the sm_90a kernels (the *_sm90a.cu sources) of the tensor-core tiers."""
    return bool(_C.sm90a_kernels())


def unavailable_on_gpu(tier, device=None):
    """Why `tier` (a _tiers.Tier) does not run on the CUDA device `device` (default: the
    current one) with this build, or None when it runs there."""
    if tier.min_cc == (0, 0) and not tier.sm90a:
        return None
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible"
    return tier.unavailable_on(torch.cuda.get_device_capability(device), sm90a_built())


def has_kernel(name: str, device_type: str) -> bool:
    """Whether this build of gemmtiles has a kernel for tier `name` on `device_type`."""
    return (name, device_type) in _KERNELS


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
    messages), and returns the output shape. The fake kernels run it; sgemm runs it only
    when a call fails, to turn the dispatcher's argument errors into TypeErrors."""
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
        out.insert(0, b_batch if a_batch == 1 else a_batch)  # 1 broadcasts to the other, 0 included
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


def device_error(where: str, name: str, device: torch.device) -> RuntimeError:
    """The error for tier `name` called with tensors on `device`, where it has no kernel."""
    tier = BY_NAME[name]
    if not tier.runs_on(device.type):
        need = " or ".join(d.upper() for d in tier.devices)
        return RuntimeError(f"{where}: tier '{name}' needs a {need} tensor, got {device}")
    return RuntimeError(f"{where}: this build of gemmtiles has no {device.type.upper()} kernels (tier '{name}')")


# Tiers a user may name, by device type, as the op overloads a call goes to: the kernels of
# this build, and every defined op on meta tensors (the fake kernels).
_OPS: dict[tuple[str, str], object] = {}

# The same ops for eager calls: gemmtiles._C.call through the dispatcher, without a torch.ops
# call's Python argument parsing. torch.compile traces the overloads of _OPS instead.
_EAGER: dict[tuple[str, str], object] = {}
# nn.Linear's eager forward on each op: gemmtiles._C.linear (transpose, reshape and view in C++).
_EAGER_LINEAR: dict[tuple[str, str], object] = {}

# Kernels for the devices a tier has no kernel for, so that the raw op raises the same clear
# error as sgemm instead of the dispatcher's "could not run ... with arguments from the CPU
# backend"; they run only on misuse.
_lib = torch.library.Library("gemmtiles", "IMPL")


def _per_product(t: torch.Tensor, shape, batch: int, products: int, shared: bool) -> torch.Tensor:
    """Operand `t` of a vmapped call, one sample's `shape` (a matrix or a batch of them): as
    the op's batch of batch x products matrices, sample after sample. `t` holds the samples
    along its first dimension, or is one sample's operand for all of them: then repeated, a
    view where it is one matrix, a copy per sample where it is a batch (or a matrix that a
    sample's batch repeats). `shared`: a matrix every product takes, left as it is for the op
    to broadcast."""
    if shared:
        return t
    if t.dim() == len(shape):  # one for every sample: a view with a zero batch stride
        t = t.unsqueeze(0).expand(batch, *shape)
    if len(shape) == 2:
        t = t.unsqueeze(1)
    return t.expand(batch, products, *t.shape[2:]).reshape(batch * products, *t.shape[2:])


def _vmap_rule(qualname: str, overload):
    """torch.vmap's rule for a gemmtiles op (torch.library.register_vmap): the samples' products
    as one call of the op on a batch of them, instead of torch's fallback of one call per
    sample. Each sample's arguments are checked as the op checks one call's."""

    def rule(info, in_dims, a, b, c=None, alpha=1.0, beta=0.0):
        batch = info.batch_size
        dims = list(in_dims) + [None] * (3 - len(in_dims))
        a, b = (x if d is None else x.movedim(d, 0) for x, d in zip((a, b), dims))
        if c is not None and dims[2] is not None:
            c = c.movedim(dims[2], 0)
        shapes = [None if x is None else tuple(x.shape[1:] if d is not None else x.shape)
                  for x, d in zip((a, b, c), dims)]
        meta = [None if x is None else torch.empty(shape, dtype=x.dtype, device="meta")
                for x, shape in zip((a, b, c), shapes)]
        out = check_args(qualname, meta[0], meta[1], meta[2], alpha, beta)
        products = out[0] if len(out) == 3 else 1
        # An operand of one matrix for all products stays shared while the other makes the
        # op's output a batch; where neither would (only c is vmapped), a is repeated.
        b_shared = dims[1] is None and len(shapes[1]) == 2
        a_shared = dims[0] is None and len(shapes[0]) == 2 and not b_shared
        a = _per_product(a, shapes[0], batch, products, a_shared)
        b = _per_product(b, shapes[1], batch, products, b_shared)
        if c is not None and (dims[2] is not None or (len(shapes[2]) == 3 and shapes[2][0] != 1)):
            cs = (1,) * (3 - len(shapes[2])) + shapes[2]
            c = c.reshape(cs if dims[2] is None else (batch, *cs))
            c = _per_product(c, cs, batch, products, False)
        result = overload(a, b, c, alpha, beta)
        return result.reshape(batch, *out), 0

    return rule


def _register(name: str) -> None:
    qualname = f"gemmtiles::{name}"

    @torch.library.register_fake(qualname)
    def _fake(a, b, c=None, alpha=1.0, beta=0.0):
        return a.new_empty(check_args(qualname, a, b, c, alpha, beta))

    overload = op(name).default
    torch.library.register_vmap(qualname, _vmap_rule(qualname, overload))
    _OPS[(name, "meta")] = overload
    index = None
    for device in DEVICES:
        if has_kernel(name, device):
            _OPS[(name, device)] = overload
            if index is None:
                index = _C.op_index(qualname)
            _EAGER[(name, device)] = functools.partial(_C.call, index)
            _EAGER_LINEAR[(name, device)] = functools.partial(_C.linear, index)
        else:
            def wrong_device(a, b, c=None, alpha=1.0, beta=0.0):
                raise device_error(qualname, name, a.device)

            _lib.impl(name, wrong_device, device.upper())


for _name in sorted(_DEFINED):
    _register(_name)


def resolve(where: str, tier, device: torch.device):
    """The op overload of `tier` (None: the default tier) for tensors on `device`, or the
    clear error why there is none."""
    name = default_tier(device.type) if tier is None else tier
    if isinstance(name, str):
        found = _OPS.get((name, device.type))
        if found is not None:
            return found
    check_tier(where, name)
    raise device_error(where, name, device)


_is_compiling = torch.compiler.is_compiling


def _device_type(t: torch.Tensor) -> str:
    """t's device type (is_cuda / is_cpu are cheaper than t.device)."""
    return "cuda" if t.is_cuda else "cpu" if t.is_cpu else t.device.type


def _key(tier, t: torch.Tensor) -> tuple[str, str]:
    """(tier, device type) of `tier` (None: the default tier) for tensors like t."""
    device_type = _device_type(t)
    return (DEFAULT_TIER.get(device_type, "naive") if tier is None else tier), device_type


# Whether any autocast region is open, on any device: one cheap call for the per-call paths
# (torch's per-device query parses its argument); torch.compile traces it.
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", None)


def autocast_lowers(t: torch.Tensor) -> bool:
    """Whether torch.autocast is on for t's device type with a dtype other than float32
    (bfloat16 or float16). Its matrix products then run in that dtype, as stock torch runs
    them: the drop-in paths (nn.Linear, the switch) leave them to torch, since gemmtiles
    computes float32 alone."""
    if _any_autocast is not None and not _any_autocast():
        return False
    device_type = _device_type(t)
    try:
        return torch.is_autocast_enabled(device_type) and torch.get_autocast_dtype(device_type) != torch.float32
    except RuntimeError:  # a device type autocast has no dispatch key for (meta)
        return False


def lookup(tier, t: torch.Tensor):
    """The op overload of `tier` (None: the default tier) for tensors like t, or None:
    one dict lookup, for the per-call paths."""
    key = _key(tier, t)
    try:
        if not _is_compiling():
            found = _EAGER.get(key)
            if found is not None:
                return found
        return _OPS.get(key)
    except TypeError:  # an unhashable tier: resolve() says what a tier must be
        return None


def linear_for(tier, t: torch.Tensor):
    """nn.Linear's eager forward on `tier` for inputs like t (fn(x, weight, bias)), or None
    (under torch.compile, or no such op: then op_for() gives the op or the error)."""
    if _is_compiling() or not (tier is None or isinstance(tier, str)):
        return None
    return _EAGER_LINEAR.get(_key(tier, t))


def op_for(where: str, tier, t: torch.Tensor):
    """lookup(), or resolve()'s error why there is no op."""
    found = lookup(tier, t)
    return found if found is not None else resolve(where, tier, t.device)
