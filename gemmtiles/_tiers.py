"""The tier table: the one list of gemmtiles' tiers, in ladder order.

The Python API, fake and autograd registration, the tests' parametrisation, the benchmark and
the docs all read it. A new tier is a kernel file, a launch line in ``csrc/cuda/dispatch.cu``,
its name in ``csrc/tiers.h`` and a row here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tier:
    name: str
    devices: tuple[str, ...]
    layouts: str  # how operands are read
    idea: str  # what the tier adds to the one before it
    source: str  # where its kernel lives

    def runs_on(self, device_type: str) -> bool:
        return device_type in self.devices


_STRIDED = "any strides, in place"
_ROW_MAJOR = "row-major; other layouts are copied first"
_UNIT = "row- or column-major, in place; no unit stride: copied"

TIERS: tuple[Tier, ...] = (
    Tier("naive", ("cpu", "cuda"), _STRIDED,
         "one thread (CPU: one i-j-k loop step) per element of C, straight from memory",
         "csrc/cpu/cpu_tiers.cpp, csrc/cuda/kernels/01_naive.cuh"),
    Tier("reorder", ("cpu",), "A any strides; B row-major, other layouts copied first",
         "i-k-j loop order: unit-stride inner loop over rows of B and C, rows in parallel",
         "csrc/cpu/cpu_tiers.cpp"),
    Tier("coalesced", ("cuda",), _STRIDED,
         "a warp takes 32 consecutive columns, so its loads of B and stores of C coalesce",
         "csrc/cuda/kernels/02_coalesced.cuh"),
    Tier("smem", ("cuda",), _STRIDED,
         "16x16 tiles of A and B staged in shared memory: 16x less global traffic",
         "csrc/cuda/kernels/03_smem.cuh"),
    Tier("unroll", ("cuda",), _STRIDED,
         "inner product unrolled over 8 outputs per thread: one shared B load feeds 8 FMAs",
         "csrc/cuda/kernels/04_unroll.cuh"),
    Tier("thread_tile", ("cuda",), _STRIDED,
         "128x128x8 block tile, 8x8 outputs per thread as outer products from registers",
         "csrc/cuda/kernels/05_thread_tile.cuh"),
    Tier("vectorized", ("cuda",), _ROW_MAJOR,
         "float4 global loads and stores, A transposed in shared memory, float4 shared reads",
         "csrc/cuda/kernels/06_vectorized.cuh"),
    Tier("bank_free", ("cuda",), _ROW_MAJOR,
         "padded A tile and split fragments: no shared-memory bank conflicts",
         "csrc/cuda/kernels/07_bank_free.cuh"),
    Tier("double_buffer", ("cuda",), _ROW_MAJOR,
         "two shared buffers: the next K slice loads while this one is computed",
         "csrc/cuda/kernels/08_double_buffer.cuh"),
    Tier("warptile", ("cuda",), _UNIT,
         "block -> warp -> thread tiling, 256x128 tiles, NN/NT/TN/TT read natively",
         "csrc/cuda/kernels/09_warptile.cuh"),
)

BY_NAME: dict[str, Tier] = {t.name: t for t in TIERS}

# The tier sgemm uses when none is named, per device type.
DEFAULT_TIER: dict[str, str] = {"cuda": "warptile", "cpu": "reorder"}


def default_tier(device_type: str) -> str:
    """The tier used when none is named: the fastest for the device type."""
    return DEFAULT_TIER.get(device_type, "naive")


def check_variant(where: str, variant) -> None:
    """ValueError naming the known variants unless `variant` is one."""
    if not isinstance(variant, str) or variant not in BY_NAME:
        raise ValueError(f"{where}: unknown variant {variant!r}; known variants: {', '.join(BY_NAME)}")


def tier_names(device_type: str | None = None) -> list[str]:
    return [t.name for t in TIERS if device_type is None or t.runs_on(device_type)]
