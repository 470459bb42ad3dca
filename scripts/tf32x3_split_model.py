"""tf32x3's split on the CPU, with every sum exact: how much of the depth rule's bound
(tests/test_tensor_core.py: 2x the largest error of a float32 product plus one float32 ulp of
the largest |C|) the split alone uses, before the tensor cores' truncating sums add theirs.
The operands are the test's (seeded normal draws, or rows and columns scaled by
exp(2 N(0, 1))); the float32 product stands in for cuBLAS fp32 as sequential fused
multiply-adds. Runs on the CPU in seconds:

    python scripts/tf32x3_split_model.py
"""

from __future__ import annotations

import numpy as np

from gemmtiles.testing import log_normal_operands


def round_tf32(x: np.ndarray) -> np.ndarray:
    """x rounded to TF32 (10 mantissa bits), to nearest with ties away from zero, as
    cvt.rna.tf32.f32 does in the pack pass."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)).view(np.float32)


def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = round_tf32(x)
    return hi, round_tf32((x - hi).astype(np.float32))


def fma_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A float32 product as one fused multiply-add per term, in order along K."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[1]):
        acc = (acc.astype(np.float64) + np.outer(a[:, i].astype(np.float64), b[i].astype(np.float64))).astype(np.float32)
    return acc


def split_product(a: np.ndarray, b: np.ndarray, lo_lo: bool) -> np.ndarray:
    """lo·hi + hi·lo (+ lo·lo) summed exactly and rounded once, then hi·hi summed exactly,
    rounded, and added to nearest: tf32x3 with exact tensor-core sums."""
    (ah, al), (bh, bl) = split(a), split(b)
    f64 = np.float64
    small = al.astype(f64) @ bh.astype(f64) + ah.astype(f64) @ bl.astype(f64)
    if lo_lo:
        small += al.astype(f64) @ bl.astype(f64)
    return small.astype(np.float32) + (ah.astype(f64) @ bh.astype(f64)).astype(np.float32)


def main() -> int:
    print("K      inputs  float32 err  bound      3 terms / bound  with lo·lo / bound")
    for k in (1, 3, 7, 16, 100, 1000):
        for wide in (False, True):
            a, b = (x.numpy() for x in log_normal_operands(33, 65, k, wide, seed=k + wide, device="cpu"))
            exact = a.astype(np.float64) @ b.astype(np.float64)
            ref = np.abs(fma_product(a, b) - exact).max()
            top = np.float32(np.abs(exact).max())
            bound = 2 * ref + float(np.nextafter(top, np.float32(np.inf)) - top)
            three = np.abs(split_product(a, b, False) - exact).max() / bound
            four = np.abs(split_product(a, b, True) - exact).max() / bound
            print(f"{k:<6} {'wide' if wide else 'normal':7} {ref:10.3g}  {bound:9.3g}  {three:15.2f}  {four:18.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
