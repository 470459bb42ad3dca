"""Fits the model behind auto's tensor-core choice (tensor_cores_pay in csrc/auto/plan.h) to a
random-sample run, and checks a rule on another sample.

    python -m gemmtiles.bench --shapes random:120:1 --tiers auto,tf32,tf32x3 --out fit
    python scripts/fit_tensor_core_model.py fit/bench.csv [check/bench.csv]

The first run (training seed) must time auto under "highest" and the two tensor-core tiers;
the optional second (another seed, same tiers) is the check. Prints the parameters (the
fields of TensorCoreModel) and, for margins 1.0-2.0, on how many shapes each tier would be
chosen, how many of those would run more than 3% slower than the exact kernels, and the
geometric-mean speed-up over the exact kernels (and the oracle's, which always picks the
faster). Needs numpy alone.
"""

from __future__ import annotations

import collections
import csv
import math
import sys

import numpy as np

SMS = 132
TILE_M, TILE_N = 128, 256


def load(path: str) -> list[dict]:
    by = collections.defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            by[r["shape"]][r["tier"]] = r
    data = []
    for label, d in by.items():
        dims = [int(x) for x in label.split()[0].split("x")]
        batch, (m, n, k) = (dims[0], dims[1:]) if len(dims) == 4 else (1, dims)
        a = d["auto"]
        data.append(dict(M=m, N=n, K=k, batch=batch, layout=a["layout"], bmm=a["bmm"] == "True",
                         t={tier: float(r["ms"]) * 1e3 for tier, r in d.items()}))
    return data


def features(x: dict, tier: str) -> tuple[float, float]:
    """(waves x k steps, bytes of the passes around the kernel), as plan.h counts them."""
    m, n, k, batch = x["M"], x["N"], x["K"], x["batch"]
    waves = math.ceil(batch * math.ceil(m / TILE_M) * math.ceil(n / TILE_N) / SMS)
    x3 = tier == "tf32x3"
    b_batch = batch if x["bmm"] else 1
    pack = 12 if x3 else 8
    a_inplace = x["layout"] in ("NN", "NT") and k % 4 == 0
    b_inplace = x["layout"] == "NT" and k % 4 == 0 and n % 4 == 0
    by = 0.0
    if x3 or not a_inplace:
        by += pack * m * k * batch
    if x3 or not b_inplace:
        by += pack * k * n * b_batch
    if n % 4:
        by += 8 * m * n * batch
    return waves * (3 * k if x3 else k), by


def fit(data: list[dict], bytes_per_us: float = 2.5e6) -> dict:
    p = {"bytes_per_us": bytes_per_us}
    rows, ys = [], []
    for x in data:  # tf32: t - bytes / bw = launch + wave_k * waves k, relative errors
        wk, by = features(x, "tf32")
        t = x["t"]["tf32"]
        rows.append([1 / t, wk / t])
        ys.append((t - by / bytes_per_us) / t)
    (p["launch_us"], p["wave_k_us"]), *_ = np.linalg.lstsq(np.array(rows), np.array(ys), rcond=None)
    rows, ys = [], []
    for x in data:  # tf32x3: its own launch, the same k-step cost
        wk, by = features(x, "tf32x3")
        t = x["t"]["tf32x3"]
        rows.append([1 / t])
        ys.append((t - by / bytes_per_us - wk * p["wave_k_us"]) / t)
    (p["tf32x3_launch_us"],), *_ = np.linalg.lstsq(np.array(rows), np.array(ys), rcond=None)
    rows, ys = [], []
    for x in data:  # exact kernels: launch + flops / rate, where auto is not far off cuBLAS
        t = x["t"]["auto"]
        if t > 2 * x["t"]["cublas"]:
            continue
        flops = 2.0 * x["M"] * x["N"] * x["K"] * x["batch"]
        rows.append([1 / t, flops / t])
        ys.append(1.0)
    (p["exact_launch_us"], inv_rate), *_ = np.linalg.lstsq(np.array(rows), np.array(ys), rcond=None)
    p["exact_flops_per_us"] = 1 / inv_rate
    return p


def tensor_core_us(x: dict, tier: str, p: dict) -> float:
    wk, by = features(x, tier)
    return (p["tf32x3_launch_us"] if tier == "tf32x3" else p["launch_us"]) + wk * p["wave_k_us"] + by / p["bytes_per_us"]


def exact_us(x: dict, p: dict) -> float:
    return p["exact_launch_us"] + 2.0 * x["M"] * x["N"] * x["K"] * x["batch"] / p["exact_flops_per_us"]


def check(data: list[dict], p: dict, tier: str, margin: float, label: str) -> None:
    chosen = slower = 0
    speedups, oracle = [], []
    for x in data:
        use = margin * tensor_core_us(x, tier, p) < exact_us(x, p)
        exact = x["t"]["auto"]
        t = x["t"][tier] if use else exact
        chosen += use
        slower += t > 1.03 * exact
        speedups.append(exact / t)
        oracle.append(exact / min(exact, x["t"][tier]))
    g = math.exp(np.mean(np.log(speedups)))
    o = math.exp(np.mean(np.log(oracle)))
    print(f"{label:<6} {tier:<7} margin {margin:.2f}: chosen on {chosen:>3}/{len(data)}, "
          f">3% slower than exact: {slower}, speed-up over exact {g:.3f} (oracle {o:.3f})")


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__)
        return 2
    train = load(argv[0])
    p = fit(train)
    print("TensorCoreModel{" + ", ".join(f"{k} = {v:.4g}" for k, v in p.items()) + "}")
    samples = [("train", train)] + ([("check", load(argv[1]))] if len(argv) == 2 else [])
    for label, data in samples:
        for tier in ("tf32", "tf32x3"):
            for margin in (1.0, 1.25, 1.5, 2.0):
                check(data, p, tier, margin, label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
