"""auto's time on one product under torch's "highest" and "high", interleaved in one process
(each a median of the bench's own timer, gemmtiles.bench._timer), with the tensor-core math
each setting allows: tells a plan that differs between the settings from two runs of one
kernel.

    python scripts/time_under_settings.py 1899 133 3343 TN
"""

from __future__ import annotations

import argparse

import torch

import gemmtiles
from gemmtiles._ops import _C
from gemmtiles.bench import _timer


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

    for r in range(args.rounds):
        for precision in ("highest", "high"):
            torch.set_float32_matmul_precision(precision)
            ms, _ = _timer(a.device, lambda: gemmtiles.sgemm(a, b), warmup=10, repeats=50, budget_s=1.0)
            print(f"round {r} {precision:8} (tensor cores: {_C.auto_tensor_core_math():5}) auto {ms * 1e3:.1f} us",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
