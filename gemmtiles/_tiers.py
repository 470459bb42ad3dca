"""The tier table: the one list of gemmtiles' tiers, in ladder order.

The Python API, fake registration, the tests' parametrisation and tolerances, the benchmark
and the docs' tier tables all read it. A new tier is its kernel file(s), one registration
line beside its launcher in C++ (``GEMMTILES_TIER`` / ``GEMMTILES_CUDA_TIER``), and a row
here; ``tests/test_ops.py`` checks the rows against what the C++ registration reports.

The API, this table and the C++ sources call one rung a *tier* (``sgemm(..., tier=)``);
``variant=``, its earlier name, is still taken and warns (``tier_argument``).
"""

from __future__ import annotations

import warnings

from dataclasses import dataclass

# Device types a tier may have kernels for.
DEVICES = ("cpu", "cuda")

# How a tier reads its operands (the C++ Operands of its registration line).
OPERANDS = {
    "strided": "any strides, in place",
    "unit_stride": "row- or column-major, in place; no unit stride: copied",
    "row_major": "row-major; other layouts are copied first",
    "k_major": "K-major A and B (x @ W^T) in place, an N-major B (x @ W) too where cheaper; others repacked by the tier",
}

# What a tier's arithmetic promises.
PRECISIONS = {
    "fp32": "fp32 products and sums, like cuBLAS's SGEMM",
    "tf32": "operands rounded to TF32 (10 mantissa bits) by the tensor cores, fp32 sums",
    "tf32x3": "fp32 by compensation: operands split into two TF32 parts, three products, fp32 sums",
}


@dataclass(frozen=True)
class Tier:
    name: str
    devices: tuple[str, ...]
    operands: str  # a key of OPERANDS
    idea: str  # what the tier adds to the one before it
    source: str  # where its kernel lives
    precision: str = "fp32"  # a key of PRECISIONS
    min_cc: tuple[int, int] = (0, 0)  # lowest CUDA compute capability; (0, 0): any
    # sm_90a code (the *_sm90a.cu sources): built only where the arch list holds Hopper and
    # CUTLASS's headers are found, and runs on compute capability 9.0 alone.
    sm90a: bool = False
    hip: bool = True  # its CUDA kernels also compile as HIP for AMD GPUs (scripts/hip_check.sh)

    def runs_on(self, device_type: str) -> bool:
        return device_type in self.devices

    def unavailable_on(self, capability: tuple[int, int], sm90a_built: bool) -> str | None:
        """Why the tier's CUDA kernel does not run on a GPU of `capability` in a build that
        has (or lacks) sm_90a kernels; None when it runs."""
        if self.sm90a and not sm90a_built:
            return "this build has no sm_90a kernels (arch list without Hopper, or no CUTLASS headers)"
        if self.sm90a and capability != (9, 0):
            return f"sm_90a code runs on compute capability 9.0 only, have {capability[0]}.{capability[1]}"
        if capability < self.min_cc:
            return (f"needs compute capability {self.min_cc[0]}.{self.min_cc[1]}, "
                    f"have {capability[0]}.{capability[1]}")
        return None

    @property
    def layouts(self) -> str:
        return OPERANDS[self.operands]


TIERS: tuple[Tier, ...] = (
    Tier("naive", ("cpu", "cuda"), "strided",
         "one thread (CPU: one i-j-k loop step) per element of C, straight from memory",
         "csrc/cpu/cpu_tiers.cpp, csrc/ladder/01_naive.cuh"),
    Tier("reorder", ("cpu",), "row_major",
         "i-k-j loop order: unit-stride inner loop over rows of B and C, rows in parallel",
         "csrc/cpu/cpu_tiers.cpp"),
    Tier("blocked", ("cpu",), "row_major",
         "reorder on several rows at once: each strip of a B row in registers feeds several rows of C",
         "csrc/cpu/cpu_tiers.cpp"),
    Tier("coalesced", ("cuda",), "strided",
         "a warp takes consecutive columns, so its loads of B and stores of C coalesce",
         "csrc/ladder/02_coalesced.cuh"),
    Tier("smem", ("cuda",), "strided",
         "square tiles of A and B staged in shared memory: global traffic divided by the tile side",
         "csrc/ladder/03_smem.cuh"),
    Tier("unroll", ("cuda",), "strided",
         "several outputs per thread, unrolled: one shared B load feeds several FMAs",
         "csrc/ladder/04_unroll.cuh"),
    Tier("thread_tile", ("cuda",), "strided",
         "large block tiles, a 2-D tile of outputs per thread as outer products from registers",
         "csrc/ladder/05_thread_tile.cuh"),
    Tier("vectorized", ("cuda",), "row_major",
         "float4 global loads and stores, A transposed in shared memory, float4 shared reads",
         "csrc/ladder/06_vectorized.cuh"),
    Tier("bank_free", ("cuda",), "row_major",
         "padded A tile and split fragments: no shared-memory bank conflicts",
         "csrc/ladder/07_bank_free.cuh"),
    Tier("double_buffer", ("cuda",), "row_major",
         "two shared buffers: the next K slice loads while this one is computed",
         "csrc/ladder/08_double_buffer.cuh"),
    Tier("warptile", ("cuda",), "unit_stride",
         "block -> warp -> thread tiling, tile shape chosen per problem, NN/NT/TN/TT read natively",
         "csrc/ladder/09_warptile.cuh"),
    Tier("auto", ("cuda",), "unit_stride",
         "per call the candidate of least estimated time (a cost model of the GPU's work): split-K streaming of B for up to 16 rows (of A for up to 16 columns, on the transposed product), CUTLASS's SIMT SGEMM on six tiles, data-parallel or with K split, also after its K-major operands are copied transposed where that pays (builds for sm_80+ with CUTLASS); without CUTLASS, gemmtiles' own split-K and pipelined tiles, warptile",
         "csrc/auto/plan.h, csrc/auto/exact_model.h, csrc/auto/auto.cu, csrc/auto/cutlass_simt.cuh, "
         "csrc/auto/skinny.cuh, csrc/auto/launch.cuh", hip=False),
    Tier("tf32", ("cuda",), "k_major",
         "tensor cores: wgmma fed by TMA through a warp-specialised pipeline (CUTLASS's SM90 collectives); "
         "x @ W of few rows on mma.sync (CUTLASS's Sm80 GEMM, W read as it lies); TF32 inputs",
         "csrc/tensor_core/tiers.cu, csrc/tensor_core/wgmma_sm90a.cu, csrc/auto/cutlass_simt.cuh", precision="tf32",
         min_cc=(9, 0), sm90a=True, hip=False),
    Tier("tf32x3", ("cuda",), "strided",
         "fp32 accuracy on tensor cores: each operand split into TF32 hi + lo, hi·hi + hi·lo + lo·hi in one tf32 GEMM over 3K",
         "csrc/tensor_core/tiers.cu, csrc/tensor_core/wgmma_sm90a.cu", precision="tf32x3",
         min_cc=(9, 0), sm90a=True, hip=False),
)

BY_NAME: dict[str, Tier] = {t.name: t for t in TIERS}

# The tier sgemm uses when none is named, per device type.
DEFAULT_TIER: dict[str, str] = {"cuda": "auto", "cpu": "blocked"}


def default_tier(device_type: str) -> str:
    """The tier used when none is named: the fastest for the device type."""
    return DEFAULT_TIER.get(device_type, "naive")


def check_tier(where: str, tier) -> None:
    """TypeError unless `tier` is a str; ValueError naming the known tiers unless it is one."""
    if not isinstance(tier, str):
        raise TypeError(f"{where}: argument 'tier' must be a str, not {type(tier).__name__}")
    if tier not in BY_NAME:
        raise ValueError(f"{where}: unknown tier {tier!r}; known tiers: {', '.join(BY_NAME)}")


def tier_argument(where: str, tier, variant):
    """The tier a call names: `tier`, or `variant`, its deprecated name (FutureWarning, as
    PyTorch deprecates an argument); both at once is a TypeError."""
    if variant is None:
        return tier
    if tier is not None:
        raise TypeError(f"{where}: got both tier= and variant= (its old name); pass tier= alone")
    warnings.warn(f"{where}: variant= is deprecated and will be removed; use tier= (the same values)",
                  FutureWarning, stacklevel=3)
    return variant


def tier_names(device_type: str | None = None) -> list[str]:
    return [t.name for t in TIERS if device_type is None or t.runs_on(device_type)]


def markdown_table() -> str:
    """The tier table as README.md shows it (tests/test_docs.py keeps the two equal)."""
    lines = ["| tier | devices | precision | operands read | idea |", "|---|---|---|---|---|"]
    for t in TIERS:
        devices = ", ".join(d.upper() for d in t.devices)
        lines.append(f"| `{t.name}` | {devices} | {t.precision} | {t.layouts} | {t.idea} |")
    return "\n".join(lines)
