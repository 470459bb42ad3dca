"""gemmtiles' fp32 precision setting: what the ``auto`` tier may run on the tensor cores.

The named tiers compute as their names say, whatever the settings. ``auto`` chooses:

==========  ==================================================================================
setting     what ``auto`` runs
==========  ==================================================================================
``none``    the default: follow torch. Under ``torch.set_float32_matmul_precision("highest")``
            (torch's default) the exact fp32 kernels; under ``"high"`` or ``"medium"`` (or
            ``torch.backends.cuda.matmul.allow_tf32 = True``), which permit TF32-class error
            as stock torch's cuBLAS calls do, ``tf32`` where it is faster than the exact
            kernels and the exact kernels where they are.
``ieee``    the exact fp32 kernels, whatever torch permits.
``tf32``    ``tf32`` where it is faster, whatever torch permits.
``tf32x3``  fp32-class accuracy on the tensor cores: ``tf32x3`` where it is faster than the
            exact kernels, the exact kernels elsewhere, whatever torch permits.
==========  ==================================================================================

The tensor cores run on Hopper (compute capability 9.0) in builds with the sm_90a kernels;
elsewhere every setting runs the exact kernels. Where a tensor-core tier is faster is decided
per call from a model of both times (``tensor_cores_pay`` in ``csrc/auto/plan.h``), with a
margin, so that no setting runs a product slower than ``ieee`` does.

Like torch's own setting, this one is process-wide, not thread-local: autograd runs the
backward pass on threads of its own, and they see the setting the forward pass saw. The
context manager sets it on entry and restores the previous value on exit, exceptions
included; entered from several threads at once, the last entry and exit win.
"""

from __future__ import annotations

import contextlib

from . import _ops

__all__ = ["FP32_PRECISIONS", "get_fp32_precision", "set_fp32_precision", "fp32_precision"]

FP32_PRECISIONS = ("none", "ieee", "tf32", "tf32x3")


def _check(where: str, precision) -> str:
    if not isinstance(precision, str):
        raise TypeError(f"{where}: precision must be a str, one of {', '.join(map(repr, FP32_PRECISIONS))}; "
                        f"got {type(precision).__name__}")
    if precision not in FP32_PRECISIONS:
        raise ValueError(f"{where}: unknown precision {precision!r}; expected one of "
                         f"{', '.join(map(repr, FP32_PRECISIONS))}")
    return precision


def get_fp32_precision() -> str:
    """gemmtiles' fp32 precision setting: 'none' (follow torch, the default), 'ieee', 'tf32'
    or 'tf32x3'."""
    return _ops._C.fp32_precision()


def set_fp32_precision(precision: str) -> None:
    """Sets gemmtiles' fp32 precision setting for the whole process (module docstring)."""
    _ops._C.set_fp32_precision(_check("gemmtiles.set_fp32_precision", precision))


def auto_tensor_cores() -> str:
    """What the settings, gemmtiles' and torch's together, allow ``auto`` now: 'none' (exact
    kernels only), 'tf32' or 'tf32x3'."""
    return _ops._C.auto_tensor_core_math()


class fp32_precision(contextlib.ContextDecorator):
    """Context manager (and decorator): gemmtiles' fp32 precision setting for a block, the
    previous one restored on exit::

        with gemmtiles.fp32_precision("tf32x3"):
            loss = model(x).sum()
            loss.backward()
    """

    def __init__(self, precision: str) -> None:
        self.precision = _check("gemmtiles.fp32_precision", precision)
        self._previous: list[str] = []

    def __enter__(self):
        self._previous.append(get_fp32_precision())
        set_fp32_precision(self.precision)
        return self

    def __exit__(self, *exc) -> bool:
        set_fp32_precision(self._previous.pop())
        return False
