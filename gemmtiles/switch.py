"""``gemmtiles.enable()``: one switch that runs a whole model's fp32 matrix products on
gemmtiles, without changing its code.

Inside ``with gemmtiles.enable():`` the calls ``torch.matmul`` / ``@`` / ``Tensor.matmul``,
``torch.mm``, ``torch.bmm``, ``torch.addmm``, ``torch.baddbmm`` and ``F.linear`` (so also
``nn.Linear``) on float32 tensors go to a gemmtiles op — the default tier of the device, or
the tier named — with gemmtiles' autograd; ``torch.matmul``'s operands of more than three
dimensions as one batch, their leading dimensions broadcast as torch broadcasts them, and a
1-D operand against a matrix (``F.linear``'s input included) as one row.
Everything else runs on torch untouched: other dtypes, ``out=`` arguments, a product of two
vectors (a dot product), ``torch.mv``, an ``F.linear`` bias of more than one dimension on an
input of more than two, devices the tier has no kernel for, and products inside a
``torch.autocast`` region to bfloat16 or float16 for their device (torch runs them in that
dtype, as without the switch). Shapes that torch cannot multiply raise torch's own error.

It is a ``torch.overrides.TorchFunctionMode``: it applies to the thread that entered it (the
mode stack is thread-local), nests, and is traced by ``torch.compile``: a function compiled
inside the switch has gemmtiles ops in its graph; called outside, it is recompiled for torch
(dynamo guards on the mode stack), and the other way round.
"""

from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ._ops import autocast_lowers, linear_for, lookup
from ._tiers import check_tier, tier_argument
from .precision import fp32_precision

__all__ = ["enable"]

_MM = {torch.mm, torch.Tensor.mm}
_BMM = {torch.bmm, torch.Tensor.bmm}
_MATMUL = {torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__}
_ADDMM = {torch.addmm, torch.Tensor.addmm}
_BADDBMM = {torch.baddbmm, torch.Tensor.baddbmm}
_HANDLED = _MM | _BMM | _MATMUL | _ADDMM | _BADDBMM | {torch.Tensor.__rmatmul__, F.linear}


def _fp32(*ts) -> bool:
    return all(isinstance(t, torch.Tensor) and t.dtype == torch.float32 for t in ts)


def _broadcast(s, t) -> Optional[tuple]:
    """The shape torch broadcasts shapes s and t to, or None where it cannot: along each
    dimension, counted from the last, a size of 1 takes the other's, and sizes other than 1
    must be equal. (Plain Python, on every product: torch.broadcast_shapes expands and
    broadcasts tensors to find it.)"""
    if len(s) < len(t):
        s, t = t, s
    out = list(s)
    lead = len(s) - len(t)
    for i, y in enumerate(t):
        x = out[lead + i]
        if x == 1:
            out[lead + i] = y
        elif y != 1 and y != x:
            return None
    return tuple(out)


def _expands_to(shape, target) -> bool:
    """Whether a tensor of `shape` expands to `target` (addmm's rule for its input)."""
    lead = len(target) - len(shape)
    if lead < 0:
        return False
    for i, size in enumerate(shape):
        if size != 1 and size != target[lead + i]:
            return False
    return True


class enable(TorchFunctionMode):
    """Context manager: fp32 matrix products of torch run on gemmtiles (module docstring).

    tier: the tier to use; None (default) picks the default tier of each call's device
    (``variant=``: its deprecated earlier name).
    precision: gemmtiles' fp32 precision setting inside the block (gemmtiles.fp32_precision:
    'none', 'ieee', 'tf32', 'tf32x3'), restored on exit; None (default) leaves it as it is.
    ``enable(precision="tf32x3")`` runs a whole model at fp32-class accuracy on the tensor
    cores wherever they are faster.
    """

    def __init__(self, tier: Optional[str] = None, precision: Optional[str] = None, *,
                 variant: Optional[str] = None) -> None:
        tier = tier_argument("gemmtiles.enable", tier, variant)
        if tier is not None:
            check_tier("gemmtiles.enable", tier)
        self._precision = None if precision is None else fp32_precision(precision)
        super().__init__()
        self.tier = tier

    def __enter__(self):
        if self._precision is not None:
            self._precision.__enter__()
        try:
            return super().__enter__()
        except BaseException:
            if self._precision is not None:
                self._precision.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            if self._precision is not None:
                self._precision.__exit__(*exc)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _HANDLED:
            out = self._gemm(func, args, kwargs)
            if out is not None:
                return out
        return func(*args, **kwargs)

    def _gemm(self, func, args, kwargs):
        """The gemmtiles result of func(*args, **kwargs), or None to leave it to torch."""
        if "out" in kwargs:
            return None
        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and autocast_lowers(first):
            return None
        if func is torch.Tensor.__rmatmul__:
            func, args = torch.matmul, (args[1], args[0])
        if func in _MM or func in _BMM or func in _MATMUL:
            if len(args) != 2 or kwargs:
                return None
            a, b = args
            if not _fp32(a, b):
                return None
            rank = 2 if func in _MM else 3 if func in _BMM else None
            if rank is not None and (a.dim() != rank or b.dim() != rank):
                return None
            if rank == 3 and a.shape[0] != b.shape[0]:
                return None  # bmm does not broadcast its batch: torch raises its error
            if rank is None and (a.dim() == 1) != (b.dim() == 1):
                # A vector as torch.matmul takes it, its dimension removed from the result: a row
                # before a matrix; after one, a column, run as the row v^T against the matrix
                # transposed (a @ v = (v^T a^T)^T: one row against a K-major operand, the
                # product auto streams for decoding, where a column of one output would take a
                # tile's worth of columns).
                if a.dim() == 1:
                    out = self._matmul(a.unsqueeze(0), b, None, 1.0, 0.0)
                else:
                    out = self._matmul(b.unsqueeze(0), a.mT, None, 1.0, 0.0)
                return None if out is None else out.squeeze(-2)
            return self._matmul(a, b, None, 1.0, 0.0)
        if func in _ADDMM or func in _BADDBMM:
            if len(args) != 3:
                return None
            c, a, b = args
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            rank = 2 if func in _ADDMM else 3
            if set(kwargs) - {"beta", "alpha"} or not _fp32(c, a, b) or a.dim() != rank or b.dim() != rank:
                return None
            if rank == 3 and a.shape[0] != b.shape[0]:
                return None  # nor does baddbmm
            if not (isinstance(alpha, (int, float)) and isinstance(beta, (int, float))):
                return None
            return self._matmul(a, b, c, float(alpha), float(beta))
        if func is F.linear:
            x, w = args[0], args[1] if len(args) > 1 else kwargs.get("weight")
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            if not _fp32(x, w) or (bias is not None and not _fp32(bias)) or w.dim() != 2 or x.dim() < 1:
                return None
            sx, sw = x.shape, w.shape
            if sx[-1] != sw[1]:
                return None  # torch raises its own error
            if bias is not None:
                sbias = bias.shape
                if len(sbias) > 1:
                    # A bias of rows: on a 2-D input, where it expands to the output (else torch
                    # raises its error); an input of more rank runs its rows as one product.
                    if len(sx) > 2 or not _expands_to(sbias, (*sx[:-1], sw[0])):
                        return None
                elif len(sbias) == 1 and sbias[0] != 1 and sbias[0] != sw[0]:
                    return None
            if x.dim() >= 2 and w.device == x.device and (bias is None or bias.device == x.device):
                eager = linear_for(self.tier, x)  # nn.Linear's eager path: transposes in C++
                if eager is not None:
                    return eager(x, w, bias)
            if x.dim() == 1:  # a vector: one row
                out = self._matmul(x.unsqueeze(0), w.t(), bias, 1.0, 0.0 if bias is None else 1.0)
                return None if out is None else out.squeeze(0)
            return self._matmul(x, w.t(), bias, 1.0, 0.0 if bias is None else 1.0)
        return None

    def _matmul(self, a, b, c, alpha, beta):
        # A gemmtiles op takes 2-D and 3-D operands; an (..., K) a against a 2-D b is one
        # product of a's leading dimensions flattened, and past three dimensions the leading
        # ones broadcast as torch.matmul broadcasts them, into one batch. (Each shape is read
        # once: every product through the switch pays for these checks on the host.)
        sa, sb = a.shape, b.shape
        ra, rb = len(sa), len(sb)
        if ra < 2 or rb < 2 or a.device != b.device:
            return None
        if c is not None and c.device != a.device:
            return None
        # Shapes that torch cannot multiply go back to it, so that it raises its own error.
        if rb == 2:  # the common cases first: a batch on one side at most
            batch = sa[:-2]
        elif ra == 2:
            batch = sb[:-2]
        elif ra == 3 and rb == 3:
            x, y = sa[0], sb[0]
            batch = (x,) if y == 1 or y == x else (y,) if x == 1 else None
        else:
            batch = _broadcast(sa[:-2], sb[:-2])
        if batch is None or sa[-1] != sb[-2]:
            return None
        if c is not None:
            sc = c.shape
            if len(sc) == 1:  # a bias row
                if sc[0] != 1 and sc[0] != sb[-1]:
                    return None
            elif not _expands_to(sc, (*batch, sa[-2], sb[-1])):
                return None
        op = lookup(self.tier, a)  # None: no kernel for this device, torch runs it
        if op is None:
            return None
        if rb == 2 and ra >= 3:
            # One large product instead of a batch of small ones sharing b.
            out = op(a.reshape(-1, sa[-1]), b, c, alpha, beta)
            return out.view(*sa[:-1], sb[-1])
        if ra <= 3 and rb <= 3:
            return op(a, b, c, alpha, beta)
        if c is not None:
            return None
        # The batch as torch.matmul makes it: each operand expanded to the broadcast leading
        # dimensions, then one batch (a view where they lie batch after batch or broadcast
        # whole, a copy otherwise, as in torch).
        n = math.prod(batch)
        a3 = a.expand(*batch, *sa[-2:]).reshape(n, *sa[-2:])
        b3 = b.expand(*batch, *sb[-2:]).reshape(n, *sb[-2:])
        return op(a3, b3, None, alpha, beta).view(*batch, sa[-2], sb[-1])
