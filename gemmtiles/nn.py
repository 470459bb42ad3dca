"""Drop-in ``nn.Linear`` on gemmtiles tiers.

``gemmtiles.nn.Linear`` has torch.nn.Linear's constructor, parameters and state_dict keys,
so a stock checkpoint loads unchanged; its forward is one gemmtiles op, ``x @ W^T + bias``,
with W^T read in place (column-major B) and the bias fused into the epilogue as
``beta * bias``. ``replace_linear`` swaps every nn.Linear of a model for one.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch
from torch import nn

from ._ops import autocast_lowers, linear_for, op_for
from ._tiers import check_tier, tier_argument

__all__ = ["Linear", "replace_linear"]


def _check_tier(tier: Optional[str]) -> None:
    if tier is not None:
        check_tier("gemmtiles.nn", tier)


class Linear(nn.Linear):
    """torch.nn.Linear computed by a gemmtiles tier.

    tier: the tier; None picks the default tier of the input's device (auto on CUDA,
    blocked on the CPU) at every call (``variant=``: its deprecated earlier name). Inputs of
    any leading shape (..., in_features). gemmtiles computes float32: an input or weight of
    another dtype (a model cast with ``.half()`` or ``.double()``) runs torch's F.linear, as
    ``gemmtiles.enable`` leaves other dtypes to torch; so does any input inside a
    ``torch.autocast`` region to bfloat16 or float16 for its device, which runs and returns
    that dtype as stock torch does.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None,
                 tier: Optional[str] = None, *, variant: Optional[str] = None) -> None:
        tier = tier_argument("gemmtiles.nn.Linear", tier, variant)
        _check_tier(tier)
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.tier = tier

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(
                f"gemmtiles.nn.Linear: expected input with last dimension {self.in_features}, got shape {list(x.shape)}"
            )
        if x.dtype != torch.float32 or self.weight.dtype != torch.float32 or autocast_lowers(x):
            return super().forward(x)  # torch's own Linear: its autocast, its errors for mixed dtypes
        eager = linear_for(self.tier, x)
        if eager is not None:
            return eager(x, self.weight, self.bias)
        tier_op = op_for("gemmtiles.nn.Linear", self.tier, x)
        x2 = x if x.dim() == 2 else x.reshape(-1, self.in_features)
        out = tier_op(x2, self.weight.t(), self.bias, 1.0, 0.0 if self.bias is None else 1.0)
        return out if x.dim() == 2 else out.view(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", tier={self.tier!r}"

    def __setstate__(self, state) -> None:
        # A Linear pickled when the attribute was still called `variant`.
        if "variant" in state and "tier" not in state:
            state["tier"] = state.pop("variant")
        super().__setstate__(state)

    @property
    def variant(self) -> Optional[str]:
        """The tier, by its deprecated earlier name."""
        return self.tier


def replace_linear(model: nn.Module, tier: Optional[str] = None,
                   filter: Optional[Callable[[str, nn.Linear], bool]] = None, *,
                   variant: Optional[str] = None) -> nn.Module:
    """Replaces, in place, every torch.nn.Linear in `model` by a gemmtiles.nn.Linear that
    shares its weight and bias Parameters (optimizer state and checkpoints stay valid), and
    returns the model; a bare nn.Linear is returned converted. filter(name, module) -> bool
    picks which to replace (default: all). Subclasses of nn.Linear are left alone. tier: as
    Linear's (``variant=``: its deprecated earlier name)."""
    tier = tier_argument("gemmtiles.nn.replace_linear", tier, variant)
    _check_tier(tier)

    def convert(lin: nn.Linear) -> Linear:
        new = Linear.__new__(Linear)
        nn.Module.__init__(new)
        new.in_features, new.out_features = lin.in_features, lin.out_features
        new.weight = lin.weight
        new.bias = lin.bias
        new.tier = tier
        new.train(lin.training)
        return new

    def wanted(name: str, m: nn.Module) -> bool:
        return type(m) is nn.Linear and (filter is None or filter(name, m))

    if wanted("", model):
        return convert(model)
    for parent_name, parent in model.named_modules():
        for child_name, child in list(parent.named_children()):
            full = f"{parent_name}.{child_name}" if parent_name else child_name
            if wanted(full, child):
                setattr(parent, child_name, convert(child))
    return model
