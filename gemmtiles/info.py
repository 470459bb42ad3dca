"""``python -m gemmtiles.info`` / ``gemmtiles.show_config()``: what this build of gemmtiles
is and what it can run here."""

from __future__ import annotations

import torch

from . import precision
from ._ops import REGISTERED
from ._tiers import DEVICES, TIERS

__all__ = ["config", "show_config"]


def config() -> dict:
    """The build configuration and what runs on this machine, as a dict."""
    import gemmtiles
    from ._ops import _C, sm90a_built

    try:
        from . import _build_info as b
        built = {"torch": b.TORCH_VERSION, "torch CUDA": b.TORCH_CUDA, "CUDA kernels": b.CUDA_BUILT,
                 "nvcc": b.NVCC_VERSION, "arch list": b.CUDA_ARCH_LIST,
                 "sm_90a kernels (tf32, tf32x3)": sm90a_built(),
                 "auto's CUTLASS kernels (sm_80+)": _C.cutlass_kernels()}
    except ImportError:
        built = {}
    from . import _tables
    from ._ops import _C

    gpus = []
    if torch.cuda.is_available():
        for d in range(torch.cuda.device_count()):
            major, minor = torch.cuda.get_device_capability(d)
            name = torch.cuda.get_device_name(d)
            table = _tables.find(_C, name)
            gpus.append(f"cuda:{d} {name} (compute capability {major}.{minor}; auto's tuned table: "
                        f"{table if table else 'none'}; {_exact_model(d, table)})")
    runs = {}
    for device in DEVICES:
        if device == "cuda" and not gpus:
            continue
        runs[device] = gemmtiles.tiers(device)
    built_for = {d: [n for n, dev, _, _ in REGISTERED if dev == d] for d in DEVICES}
    return {
        "gemmtiles": gemmtiles.__version__,
        "torch": torch.__version__,
        "built with": built,
        "kernels built": built_for,
        "GPUs": gpus,
        "runs here": runs,
        "float32 matmul precision": torch.get_float32_matmul_precision(),
        "gemmtiles fp32 precision": precision.get_fp32_precision(),
        "auto's tensor cores": precision.auto_tensor_cores(),
        "precisions of the tiers": sorted({t.precision for t in TIERS}),
    }


def _exact_model(device: int, table) -> str:
    """Where auto's exact-kernel cost model comes from on `device`: its table's own fit, or the
    shipped fit scaled to the GPU's DRAM and SM clock (scaled_exact_model, csrc/auto/exact_model.h)."""
    from ._ops import _C
    from .exact_fit import COPY, GEMV, GLOBAL_FEATURES, SKINNY, scaled_model, table_model

    if table and table_model(table) is not None:
        return "cost model: the table's own fit"
    fitted, here = _C.exact_model(), scaled_model(device)
    skinny_b = len(fitted) - GEMV - COPY - SKINNY + 1  # the skinny kernels' microseconds per MB of B
    return (f"cost model: the shipped fit, DRAM traffic x{here[skinny_b] / fitted[skinny_b]:.2f} and SM work "
            f"x{here[GLOBAL_FEATURES] / fitted[GLOBAL_FEATURES]:.2f} their time on the GPU it was fitted on")


def show_config() -> None:
    """Prints config(): versions, build, kernels, GPUs, and what runs here."""
    c = config()
    print(f"gemmtiles {c['gemmtiles']} on torch {c['torch']}")
    for k, v in c["built with"].items():
        print(f"  built with {k}: {v}")
    for device, names in c["kernels built"].items():
        print(f"  {device.upper()} kernels built: {', '.join(names) if names else 'none'}")
    print(f"  GPUs: {'; '.join(c['GPUs']) if c['GPUs'] else 'none visible'}")
    for device, names in c["runs here"].items():
        print(f"  runs here on {device}: {', '.join(names) if names else 'nothing'}")
    tensor_cores = c["auto's tensor cores"]
    print(f"  torch.get_float32_matmul_precision(): {c['float32 matmul precision']!r}; "
          f"gemmtiles.get_fp32_precision(): {c['gemmtiles fp32 precision']!r}")
    print(f"  so auto may run on the tensor cores: {tensor_cores} (where faster; the named tiers compute in "
          f"{', '.join(c['precisions of the tiers'])} whatever the settings)")


if __name__ == "__main__":
    show_config()
