"""Fuzz `auto` (under torch's "high" and "highest"), `tf32` and `tf32x3` on sizes past
tests/test_fuzz.py's 300, where the tensor-core routes and the exact kernels' split and
stream-K plans run: ``python scripts/fuzz_large.py [--seed S] [--seconds T]`` on a GPU.

Each problem (its shapes, layouts, c's kind, alpha and beta) is drawn once and run in every
mode, on operands drawn afresh for each: M log-uniform in [1, 2048], N in [8, 8192], K in
[8, 16384], or half the time M in [8, 2048], N in [256, 8192], K in [256, 16384] (at most 2^34
multiply-adds and 1e8 floats of operands); half of them rounded to multiples of 4; each operand
row- or column-major, for 40% of the problems with no pad and no offset, for the others with
leading dimensions padded by 0-5 and storage offsets of 0-4 floats; batches with either side
shared or broadcast; c absent, full, a bias row or a column; alpha and beta from test_fuzz's
list. Each result is checked with gemmtiles.testing.assert_gemm_close, its float64 reference
on the GPU. The problems follow from --seed, their number from --seconds. Failures print as
they come and are written to --out as JSON (the problem, the mode, the error); the exit status
is 1 if any.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time

import torch

import gemmtiles
from gemmtiles.testing import assert_gemm_close, operand

SCALARS = [0.0, 1.0, -1.0, 0.5, -2.75, 1e-3, 3.0]
# (tier, torch's float32 matmul precision, the accuracy rule's precision)
MODES = [("auto", "high", "tf32"), ("auto", "highest", "fp32"), ("tf32", "highest", "tf32"),
         ("tf32x3", "highest", "tf32x3")]


def draw(rng: random.Random) -> dict:
    def lu(lo, hi):
        return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))

    while True:
        if rng.random() < 0.5:
            m, n, k = lu(1, 2048), lu(8, 8192), lu(8, 16384)
        else:
            m, n, k = lu(8, 2048), lu(256, 8192), lu(256, 16384)
        if rng.random() < 0.5:
            m, n, k = (max(4, x // 4 * 4) for x in (m, n, k))
        batch = rng.choice([None, None, None, "both", "a", "b", "a1"])
        size = rng.randint(2, 3)
        entries = 1 if batch is None else size
        if m * n * k * entries <= 2**34 and (m * k + k * n + m * n) * entries <= 1e8:
            break
    aligned = rng.random() < 0.4

    def spec():
        return dict(layout=rng.choice(["row", "col"]), pad=0 if aligned else rng.choice([0, 0, 1, 3, 4, 5]),
                    offset=0 if aligned else rng.choice([0, 0, 1, 2, 3, 4]))

    return dict(m=m, n=n, k=k, a=spec(), b=spec(),
                a_batch={None: None, "both": size, "a": size, "b": None, "a1": 1}[batch],
                b_batch={None: None, "both": size, "a": None, "b": size, "a1": size}[batch],
                c=rng.choice([None, "full", "row", "col"]), alpha=rng.choice(SCALARS), beta=rng.choice(SCALARS))


def check(p: dict, tier: str, setting: str, precision: str, gen: torch.Generator) -> None:
    m, n, k = p["m"], p["n"], p["k"]
    a = operand(m, k, "cuda", batch=p["a_batch"], generator=gen, **p["a"])
    b = operand(k, n, "cuda", batch=p["b_batch"], generator=gen, **p["b"])
    c = {None: lambda: None, "full": lambda: torch.randn(m, n, generator=gen),
         "row": lambda: torch.randn(n, generator=gen), "col": lambda: torch.randn(m, 1, generator=gen)}[p["c"]]()
    c = c.cuda() if c is not None else None
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(setting)
        out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=p["alpha"], beta=p["beta"])
        torch.set_float32_matmul_precision("highest")  # the reference's fp32 torch.matmul
        assert_gemm_close(out, a, b, c, p["alpha"], p["beta"], precision=precision, on="cuda")
    finally:
        torch.set_float32_matmul_precision(before)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=120.0, help="stop drawing problems after this long")
    ap.add_argument("--out", default="fuzz-large-failures.json")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        ap.exit(2, "fuzz_large.py: needs a CUDA GPU\n")
    rng, gen = random.Random(args.seed), torch.Generator().manual_seed(args.seed)
    start, problems, failures, passed = time.time(), 0, [], {}
    while time.time() - start < args.seconds:
        p = draw(rng)
        problems += 1
        for tier, setting, precision in MODES:
            mode = f"{tier}@{setting}"
            try:
                check(p, tier, setting, precision, gen)
                passed[mode] = passed.get(mode, 0) + 1
            except Exception as e:  # a wrong result, or an error raised on valid input
                failures.append(dict(problem=p, mode=mode, error=str(e)[:400]))
                print("FAIL", mode, json.dumps(p), str(e)[:300], flush=True)
    torch.cuda.synchronize()
    print(f"seed {args.seed}: {problems} problems in {time.time() - start:.0f} s, {len(failures)} failures; "
          f"passed by mode: {passed}")
    with open(args.out, "w") as f:
        json.dump(failures, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
