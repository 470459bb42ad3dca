"""Build of the gemmtiles extension.

The CUDA extension is built whenever torch was built with CUDA and nvcc is found — a GPU
need not be visible — otherwise the CPU-only extension (CPU tiers, op schemas, fake kernels).
"""

import functools
import glob
import importlib.util
import os
import re
import shutil
import subprocess


def _toolkit_of_nvcc():
    """The CUDA toolkit that the `nvcc` on PATH runs from.

    torch takes the parent of nvcc's directory as CUDA_HOME; where nvcc is a wrapper script
    (e.g. /usr/local/bin/nvcc running /usr/local/cuda-13.0/bin/nvcc) that directory has no
    CUDA libraries, so ask nvcc where it really lives.
    """
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    try:
        out = subprocess.run([nvcc, "-dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    here = re.search(r"^#\$ _HERE_=(.*)$", out.stdout + out.stderr, re.MULTILINE)
    return os.path.dirname(here.group(1).strip()) if here else None


if not os.environ.get("CUDA_HOME") and not os.environ.get("CUDA_PATH"):
    _home = _toolkit_of_nvcc()
    if _home:
        os.environ["CUDA_HOME"] = _home

import torch  # noqa: E402  (after CUDA_HOME is settled: cpp_extension reads it on import)
from setuptools import setup  # noqa: E402
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension  # noqa: E402


def _use_cuda() -> bool:
    if os.environ.get("GEMMTILES_CPU_ONLY", "0") == "1":
        return False
    if torch.version.hip is not None:
        return _use_rocm()
    return torch.version.cuda is not None and CUDA_HOME is not None


def _use_rocm() -> bool:
    """A ROCm build of torch with its toolkit: BuildExtension hipifies the CUDA sources (not
    run on an AMD GPU here; scripts/hip_check.sh compiles the kernels with hipcc)."""
    from torch.utils.cpp_extension import ROCM_HOME

    return ROCM_HOME is not None


def _not_for_hip() -> set:
    """CUDA sources of the tiers the tier table does not build for HIP (gemmtiles/_tiers.py:
    hip=False), read without importing the package (it needs the extension being built)."""
    import runpy

    table = runpy.run_path(os.path.join("gemmtiles", "_tiers.py"))["TIERS"]
    return {os.path.normpath(src.strip()) for t in table if not t.hip
            for src in t.source.split(",") if src.strip().endswith(".cu")}


def _nvcc_version():
    """nvcc's release, e.g. "13.0", or None."""
    nvcc = os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError, TypeError):
        return None
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


_BASE_VERSION = "0.1.0"


def _write_build_info(use_cuda: bool) -> str:
    """Records what this build was made with (gemmtiles/_build_info.py, read by the import
    check and `python -m gemmtiles.info`) and returns the package version: the base version
    with a local suffix that tells CPU-only, CUDA and ROCm builds apart (+cpu, +cu130, +rocm62)."""
    nvcc = _nvcc_version() if use_cuda and torch.version.hip is None else None
    if use_cuda and torch.version.hip is not None:
        local = "rocm" + "".join(torch.version.hip.split(".")[:2])
    else:
        local = "cu" + nvcc.replace(".", "") if nvcc else "cpu"
    info = {
        "VERSION": f"{_BASE_VERSION}+{local}",
        "TORCH_VERSION": torch.__version__,
        "TORCH_CUDA": torch.version.cuda,
        "CUDA_BUILT": use_cuda,
        "NVCC_VERSION": nvcc,
        "CUDA_ARCH_LIST": os.environ.get("TORCH_CUDA_ARCH_LIST") if use_cuda else None,
        "SM90A_KERNELS": bool(use_cuda and torch.version.hip is None and _sm90a_sources()),
        "CUTLASS_KERNELS": bool(use_cuda and torch.version.hip is None and _cutlass_sources()),
    }
    lines = ['"""Written by setup.py at build time: what this build of gemmtiles was made with."""', ""]
    lines += [f"{k} = {v!r}" for k, v in info.items()]
    with open(os.path.join("gemmtiles", "_build_info.py"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return info["VERSION"]


# Sources that use sm_90a features (wgmma, TMA multicast, setmaxnreg), named *_sm90a.cu:
# compiled in their own translation units for sm_90a alone, and only when the arch list holds
# Hopper.
def _is_sm90a(src: str) -> bool:
    return src.endswith("_sm90a.cu")


# Sources built on CUTLASS's SIMT templates (`auto`'s kernels), named *_cutlass.cu: compiled in
# their own translation units with CUTLASS's flags for the arch list itself, where CUTLASS's
# headers are found and every arch of the list is sm_80 or later (the templates' cp.async).
def _is_cutlass(src: str) -> bool:
    return src.endswith("_cutlass.cu")


def _sources(ext: str) -> list:
    """Every source under csrc/ with this ending, in a fixed order."""
    return sorted(glob.glob(os.path.join("csrc", "**", "*" + ext), recursive=True))


CUTLASS_FLAGS = ["--expt-relaxed-constexpr", "-DNDEBUG", "-U__CUDA_NO_HALF_OPERATORS__",
                 "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                 "-U__CUDA_NO_HALF2_OPERATORS__"]
SM90A_FLAGS = ["-gencode=arch=compute_90a,code=sm_90a"] + CUTLASS_FLAGS


@functools.lru_cache(maxsize=None)
def _cutlass_include():
    """CUTLASS's headers: $CUTLASS_PATH/include, else those the nvidia-cutlass package ships
    (found without importing it)."""
    candidates = []
    if os.environ.get("CUTLASS_PATH"):
        candidates.append(os.path.join(os.environ["CUTLASS_PATH"], "include"))
    spec = importlib.util.find_spec("cutlass_library")
    if spec is not None and spec.origin:
        candidates.append(os.path.join(os.path.dirname(spec.origin), "source", "include"))
    for include in candidates:
        if os.path.isfile(os.path.join(include, "cutlass", "cutlass.h")):
            return include
    return None


def _arch_list() -> list:
    """TORCH_CUDA_ARCH_LIST's archs without their +PTX: ["8.0", "9.0a"]."""
    return [a.split("+")[0] for a in re.split(r"[;\s]+", os.environ.get("TORCH_CUDA_ARCH_LIST", "")) if a]


def _arch_list_has_hopper() -> bool:
    return any(arch in ("9.0", "9.0a") for arch in _arch_list())


def _arch_list_from_sm80() -> bool:
    archs = _arch_list()
    return bool(archs) and all(float(a.rstrip("a")) >= 8.0 for a in archs)


@functools.lru_cache(maxsize=None)
def _cutlass_sources() -> tuple:
    """The CUTLASS SIMT sources to build, or () (with the reason printed, once)."""
    sources = [src for src in _sources(".cu") if _is_cutlass(src)]
    if not sources or torch.version.hip is not None:
        return ()
    if not _arch_list_from_sm80():
        print("gemmtiles: TORCH_CUDA_ARCH_LIST holds an arch before sm_80: building without auto's CUTLASS "
              "kernels")
        return ()
    if _cutlass_include() is None:
        print("gemmtiles: CUTLASS's headers were not found (python -m pip install --no-deps "
              "nvidia-cutlass, or set CUTLASS_PATH): building without auto's CUTLASS kernels")
        return ()
    return tuple(sources)


@functools.lru_cache(maxsize=None)
def _sm90a_sources() -> tuple:
    """The sm_90a sources to build, or () (with the reason printed, once) when this build has
    none."""
    sources = [src for src in _sources(".cu") if _is_sm90a(src)]
    if not sources or torch.version.hip is not None or not _arch_list_has_hopper():
        return ()
    if _cutlass_include() is None:
        print("gemmtiles: CUTLASS's headers were not found (python -m pip install --no-deps "
              "nvidia-cutlass, or set CUTLASS_PATH): building without the tensor-core tiers")
        return ()
    return tuple(sources)


class _BuildExtension(BuildExtension):
    """torch's BuildExtension, with the sm_90a and CUTLASS sources compiled first under their
    own flags (torch gives every source of an extension the same ones) and linked in as
    objects. The CUTLASS sources take torch's arch flags (no -gencode of their own)."""

    def build_extension(self, ext):
        for is_own, flags in ((_is_sm90a, SM90A_FLAGS), (_is_cutlass, CUTLASS_FLAGS)):
            own = [src for src in ext.sources if is_own(src)]
            if not own:
                continue
            ext.sources = [src for src in ext.sources if src not in own]
            nvcc = list(ext.extra_compile_args["nvcc"]) + flags + ["-I" + _cutlass_include()]
            objects = self.compiler.compile(
                own, output_dir=self.build_temp, macros=ext.define_macros,
                include_dirs=ext.include_dirs, debug=self.debug,
                extra_postargs={"cxx": list(ext.extra_compile_args["cxx"]), "nvcc": nvcc},
                depends=ext.depends)
            ext.extra_objects = list(ext.extra_objects or []) + objects
        super().build_extension(ext)


def _extension():
    sources = _sources(".cpp")
    cxx = ["-O3"]
    if not _use_cuda():
        return CppExtension("gemmtiles._C", sources, extra_compile_args={"cxx": cxx})
    nvcc = ["-O3", "-lineinfo"]
    if os.environ.get("GEMMTILES_PTXAS_VERBOSE", "0") == "1":
        nvcc.append("--ptxas-options=-v")
    cuda_sources = [src for src in _sources(".cu") if not _is_sm90a(src) and not _is_cutlass(src)]
    macros = []
    if torch.version.hip is not None:
        skip = _not_for_hip()
        cuda_sources = [src for src in cuda_sources if os.path.normpath(src) not in skip]
        nvcc = ["-O3"]
    else:
        macros.append(("GEMMTILES_AUTO", "1"))  # auto's CUDA sources (csrc/auto/auto.cu) are built
        if _sm90a_sources():
            cuda_sources += list(_sm90a_sources())
            macros.append(("GEMMTILES_SM90A", "1"))
        if _cutlass_sources():
            cuda_sources += list(_cutlass_sources())
            macros.append(("GEMMTILES_CUTLASS", "1"))
    sources += cuda_sources
    return CUDAExtension("gemmtiles._C", sources, define_macros=macros,
                         extra_compile_args={"cxx": cxx, "nvcc": nvcc})


if _use_cuda() and torch.version.hip is None and not os.environ.get("TORCH_CUDA_ARCH_LIST"):
    # torch's default arch list needs a visible GPU; build for Hopper unless told otherwise.
    if torch.cuda.is_available():
        os.environ["TORCH_CUDA_ARCH_LIST"] = ";".join(
            f"{major}.{minor}" for major, minor in sorted({torch.cuda.get_device_capability(d)
                                                          for d in range(torch.cuda.device_count())}))
    else:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"

setup(
    version=_write_build_info(_use_cuda()),
    ext_modules=[_extension()],
    cmdclass={"build_ext": _BuildExtension},
)
