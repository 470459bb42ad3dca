"""Fuzz `auto` (under torch's "high" and "highest"), `tf32` and `tf32x3` on sizes past
tests/test_fuzz.py's 300, where the tensor-core routes and the exact kernels' split and
stream-K plans run: ``python scripts/fuzz_large.py [--seed S] [--seconds T]`` on a GPU.

Problems are drawn by gemmtiles.testing.large_problem (up to 2048 x 8192 x 16384; padded,
offset, batched and broadcast operands; c; alpha and beta) and each runs in every mode of
gemmtiles.testing.LARGE_MODES, on operands drawn afresh for each, checked by
check_large_problem (assert_gemm_close's bound, its float64 reference on the GPU). The
problems follow from --seed, their number from --seconds; tests/test_fuzz.py's
test_fuzz_large_sizes runs the first few of one seed. Failures print as they come and are
written to --out as JSON (the problem, the mode, the error); the exit status is 1 if any.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

import torch

from gemmtiles.testing import LARGE_MODES, check_large_problem, large_problem


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
        p = large_problem(rng)
        problems += 1
        for tier, setting, precision in LARGE_MODES:
            mode = f"{tier}@{setting}"
            try:
                check_large_problem(p, tier, setting, precision, gen)
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
