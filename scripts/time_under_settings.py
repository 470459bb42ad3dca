"""auto's time on one product under torch's "highest" and "high", interleaved in one process
(rounds of 200 calls each, CUDA events), with the tensor-core math each setting allows: tells
a plan that differs between the settings from two runs of one kernel.

    python scripts/time_under_settings.py 1899 133 3343 TN
"""

from __future__ import annotations

import argparse

import torch

import gemmtiles
from gemmtiles._ops import _C


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("m", type=int)
    p.add_argument("n", type=int)
    p.add_argument("k", type=int)
    p.add_argument("layout", nargs="?", default="NN", choices=("NN", "NT", "TN"))
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    m, n, k = args.m, args.n, args.k
    a = torch.randn(k, m, device="cuda").t() if args.layout == "TN" else torch.randn(m, k, device="cuda")
    b = torch.randn(n, k, device="cuda").t() if args.layout == "NT" else torch.randn(k, n, device="cuda")

    def us(fn, calls=200):
        for _ in range(10):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / calls * 1000

    for r in range(args.rounds):
        for precision in ("highest", "high"):
            torch.set_float32_matmul_precision(precision)
            t = us(lambda: gemmtiles.sgemm(a, b))
            print(f"round {r} {precision:8} (tensor cores: {_C.auto_tensor_core_math():5}) auto {t:.1f} us", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
