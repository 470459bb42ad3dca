"""gemmtiles: fp32 matrix multiply as a ladder of kernel tiers, each a PyTorch custom op.

    >>> import torch, gemmtiles
    >>> a, b = torch.randn(128, 64), torch.randn(64, 32)
    >>> out = gemmtiles.sgemm(a, b, tier="reorder")   # CPU; on CUDA e.g. "warptile"
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _ops, nn
from ._ops import check_args, has_kernel, op_for
from ._tiers import BY_NAME, TIERS, Tier, tier_argument, tier_names
from .precision import fp32_precision, get_fp32_precision, set_fp32_precision
from .switch import enable

if torch.distributed.is_available():
    from . import _sharding

    _sharding.register()

try:
    from ._build_info import VERSION as __version__
except ImportError:  # a source tree that setup.py has not built
    __version__ = "0.1.0"
__all__ = ["sgemm", "tiers", "variants", "enable", "fp32_precision", "get_fp32_precision", "set_fp32_precision",
           "show_config", "nn", "Tier", "TIERS", "__version__"]


def show_config() -> None:
    """Prints what this build of gemmtiles is and what runs here (``python -m gemmtiles.info``)."""
    from .info import show_config as show  # imported on use: `python -m gemmtiles.info` runs that module

    show()


def _runs_on_gpu(tier: Tier, device: torch.device) -> bool:
    return device.type != "cuda" or _ops.unavailable_on_gpu(tier, device) is None


def tiers(device: Optional[torch.device | str] = None) -> list[str]:
    """The tiers this build can run, in ladder order; with `device`, those that run there
    (built for its device type, and for a GPU, built for its compute capability)."""
    if device is None:
        return [t.name for t in TIERS if any(has_kernel(t.name, d) for d in t.devices)]
    device = torch.device(device)
    return [n for n in tier_names(device.type)
            if has_kernel(n, device.type) and _runs_on_gpu(BY_NAME[n], device)]


def variants(device: Optional[torch.device | str] = None) -> list[str]:
    """``tiers(device)``, by the API's earlier word for a tier."""
    return tiers(device)


def sgemm(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    tier: Optional[str] = None,
    c: Optional[torch.Tensor] = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    variant: Optional[str] = None,
) -> torch.Tensor:
    """``alpha * a @ b + beta * c`` in float32, computed by one tier of the ladder.

    a: (M, K) or (B, M, K); b: (K, N) or (B, K, N), batches broadcast as in torch.matmul.
    c: optional, broadcastable to the output (a bias row of shape (N,) works); with
    beta == 0 it is not read, so NaN in c does not reach the output. K == 0 gives beta * c.
    tier: a tier name from ``tiers()``; default: the device's default tier (``auto`` on
    CUDA, ``blocked`` on the CPU). ``variant=`` is its deprecated earlier name.
    Operands are read through their strides: transposed and sliced views need no copy.
    """
    # The op checks its arguments in C++ (ValueError / TypeError / RuntimeError naming the
    # argument); Python adds only what the dispatcher would report as a RuntimeError.
    where = "gemmtiles.sgemm"
    if variant is not None:
        tier = tier_argument(where, tier, variant)
    if not isinstance(a, torch.Tensor):
        check_args(where, a, b, c, alpha, beta)
    try:
        tier_op = op_for(where, tier, a)
    except (ValueError, TypeError, RuntimeError):
        check_args(where, a, b, c, alpha, beta)  # mixed devices, dtypes: the first error
        raise
    if not (isinstance(alpha, (float, int)) and isinstance(beta, (float, int))):
        check_args(where, a, b, c, alpha, beta)
    try:
        return tier_op(a, b, c, alpha, beta)
    except (RuntimeError, TypeError) as e:
        if type(e) is TypeError or (type(e) is RuntimeError and "Expected a value of type" in str(e)):
            check_args(where, a, b, c, alpha, beta)
        raise
