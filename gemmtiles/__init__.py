"""gemmtiles: fp32 matrix multiply as a ladder of kernel tiers, each a PyTorch custom op.

    >>> import torch, gemmtiles
    >>> a, b = torch.randn(128, 64), torch.randn(64, 32)
    >>> out = gemmtiles.sgemm(a, b, variant="reorder")   # CPU; on CUDA e.g. "warptile"
"""

from __future__ import annotations

from typing import Optional

import torch

from . import nn
from ._ops import check_args, has_kernel, op
from ._tiers import BY_NAME, TIERS, Tier, check_variant, default_tier, tier_names

__version__ = "0.1.0"
__all__ = ["sgemm", "variants", "nn", "Tier", "TIERS", "__version__"]


def variants(device: Optional[torch.device | str] = None) -> list[str]:
    """The tiers this build can run, in ladder order; with `device`, those that run there."""
    if device is None:
        return [t.name for t in TIERS if any(has_kernel(t.name, d) for d in t.devices)]
    device_type = torch.device(device).type
    return [n for n in tier_names(device_type) if has_kernel(n, device_type)]


def sgemm(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    variant: Optional[str] = None,
    c: Optional[torch.Tensor] = None,
    alpha: float = 1.0,
    beta: float = 0.0,
) -> torch.Tensor:
    """``alpha * a @ b + beta * c`` in float32, computed by one tier of the ladder.

    a: (M, K) or (B, M, K); b: (K, N) or (B, K, N), batches broadcast as in torch.matmul.
    c: optional, broadcastable to the output (a bias row of shape (N,) works); with
    beta == 0 it is not read, so NaN in c does not reach the output. K == 0 gives beta * c.
    variant: a tier name from ``variants()``; default: the fastest tier for the device.
    Operands are read through their strides: transposed and sliced views need no copy.
    """
    where = "gemmtiles.sgemm"
    check_args(where, a, b, c, alpha, beta)
    device_type = a.device.type
    if variant is None:
        variant = default_tier(device_type)
    check_variant(where, variant)
    tier = BY_NAME[variant]
    if device_type != "meta" and not tier.runs_on(device_type):
        need = " or ".join(d.upper() for d in tier.devices)
        raise RuntimeError(f"{where}: tier '{variant}' needs a {need} tensor, got {a.device}")
    if device_type != "meta" and not has_kernel(variant, device_type):
        raise RuntimeError(f"{where}: this build of gemmtiles has no {device_type.upper()} kernels (tier '{variant}')")
    return op(variant)(a, b, c, float(alpha), float(beta))
