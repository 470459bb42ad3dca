"""Error table of the fp32-class and TF32-class GEMMs on this GPU, against a float64 product:
cuBLAS fp32 (TF32 off), cuBLAS TF32, 3xTF32 emulated with three cuBLAS TF32 GEMMs over
operands split by truncation, and gemmtiles' tf32x3 and tf32. Each figure is the mean over
elements of |out - exact| / (|a| @ |b|). Usage: python scripts/tensor_core_errors.py
"""

import torch

import gemmtiles
from gemmtiles.bench import cublas_matmul as matmul
from gemmtiles.testing import accuracy_operands, relative_error


def truncate_tf32(x):
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


def emulated_3xtf32(a, b):
    a_hi, b_hi = truncate_tf32(a), truncate_tf32(b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return matmul(a_lo, b_hi, True) + matmul(a_hi, b_lo, True) + matmul(a_hi, b_hi, True)


def main():
    methods = {
        "cuBLAS fp32": lambda a, b: matmul(a, b, False),
        "cuBLAS TF32": lambda a, b: matmul(a, b, True),
        "3xTF32 emulated": emulated_3xtf32,
        "tf32x3": lambda a, b: gemmtiles.sgemm(a, b, tier="tf32x3"),
        "tf32": lambda a, b: gemmtiles.sgemm(a, b, tier="tf32"),
    }
    shapes = [(256, 256, 256), (1024, 1024, 1024), (512, 384, 11008), (4096, 4096, 4096)]
    print(f"{'shape':<18} {'inputs':<6} " + " ".join(f"{m:>16}" for m in methods))
    for m, n, k in shapes:
        for wide in (False, True):
            a, b = accuracy_operands(m, n, k, wide, seed=m + n + k)
            errs = [relative_error(fn(a, b), a, b) for fn in methods.values()]
            print(f"{m}x{n}x{k:<8} {'wide' if wide else 'randn':<6} " + " ".join(f"{e:>16.3e}" for e in errs))


if __name__ == "__main__":
    main()
