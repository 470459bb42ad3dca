"""Fits the model behind auto's tensor-core choice to a saved random-sample run, and checks its
rule on the run and on another sample (gemmtiles.tensor_core_model).

    python -m gemmtiles.bench --shapes random:120:1 --tiers auto,tf32,tf32x3 --out fit
    python scripts/fit_tensor_core_model.py fit/bench.csv [check/bench.csv] [--sms 132] [--floor-bytes-per-us B]

(`python -m gemmtiles.tune --fit-tensor-cores` does both runs and the fit on the current GPU.)
Prints the fitted parameters as a tuned table's model line and the check of auto's rule with them.
"""

from __future__ import annotations

import argparse

from gemmtiles import tensor_core_model as tcm


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("train")
    p.add_argument("check", nargs="?")
    p.add_argument("--sms", type=int, default=132, help="the GPU's SMs (default: the H100 SXM's 132)")
    p.add_argument("--floor-bytes-per-us", type=float, default=None,
                   help="the floor's bandwidth on the run's GPU (default: this machine's GPU's, "
                        "else the H100's; tensor_core_model.gpu_floor_bytes_per_us)")
    args = p.parse_args()
    train = tcm.samples_from_csv(args.train)
    params = tcm.fit(train, args.sms)
    print(tcm.model_line(params))
    samples = [("train", train)] + ([("check", tcm.samples_from_csv(args.check))] if args.check else [])
    for label, data in samples:
        for tier in ("tf32", "tf32x3"):
            r = tcm.check(data, params, tier, args.sms, floor_bytes_per_us=args.floor_bytes_per_us)
            print(f"{label:<6} {tier:<7}: chosen on {r['chosen']:>3}/{r['shapes']}, "
                  f">3% slower than exact: {r['slower']}, speed-up over exact {r['speedup']:.3f} "
                  f"(oracle {r['oracle']:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
