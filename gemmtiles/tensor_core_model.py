"""The model behind auto's tensor-core choice (``tensor_cores_pay`` in csrc/auto/plan.h): its
features, its fit to timings of shapes drawn at random, and the check of its rule on another
sample. ``python -m gemmtiles.tune --fit-tensor-cores`` measures and fits on the current GPU;
``scripts/fit_tensor_core_model.py`` fits from a saved bench run.

The model, in microseconds:

- tensor cores: ``launch + k_steps * wave_k + bytes / bytes_per_us``, where k_steps are those
  the busiest SM runs, in 128 x 256 output tiles' steps (``tf32``: on 128 x 256 tiles, or
  128 x 128 where those count clearly fewer, on CUTLASS's stream-K schedule, which shares a
  short last wave's k iterations between the SMs; ``tf32x3``: 128 x 256 tiles in whole
  waves, over three K; the chain of stream-K's partial-tile additions on a shared tile is
  counted in k steps too), and bytes are the pack and output-copy passes' (``tf32`` packs an
  operand it cannot read in place and writes any output in place, counted at twice its bytes:
  its tiles write it after their k steps; ``tf32x3`` splits both and copies an output of
  unaligned rows);
- exact kernels: in a build with CUTLASS's kernels, the estimate of the exact plan auto would
  run (its cost model, csrc/auto/exact_model.h); elsewhere
  ``exact_launch + 2 M N K / exact_flops_per_us``.

The tensor cores run where ``MARGINS[tier]`` times their time, or their floor if more (``launch +
(read_bytes + bytes) / floor_bytes_per_us``: the kernel's read of its operands, at the passes'
bandwidth scaled by the GPU's DRAM rate, not fitted: ``gpu_floor_bytes_per_us``), is below the
exact kernels'. ``check`` weighs the rule as auto runs it (``_C.tensor_cores_pay``).
"""

from __future__ import annotations

import collections
import csv
import math
from typing import Iterable

from . import _tables
from ._ops import _C
from .exact_fit import _flags, candidates, device_clocks, gpu_model, planned

PARAMS = ("launch_us", "tf32x3_launch_us", "wave_k_us", "bytes_per_us", "exact_launch_us", "exact_flops_per_us")
MARGINS = {"tf32": 1.1, "tf32x3": 1.25}  # plan.h's kTf32Margin and kTf32x3Margin
BYTES_PER_US = 2.5e6  # the passes' bandwidth, fixed: the fit takes the rest


def sample(m: int, n: int, k: int, batch: int, layout: str, bmm: bool, times_us: dict) -> dict:
    """One timed shape: sizes, layout (NN, NT, TN), whether B differs per batch entry, and
    microseconds per tier (auto under "highest" as "auto", "tf32", "tf32x3", "cublas")."""
    return dict(M=m, N=n, K=k, batch=batch, layout=layout, bmm=bmm, t=dict(times_us))


def samples_from_csv(path: str) -> list[dict]:
    """The shapes of a bench run's bench.csv (``--tiers auto,tf32,tf32x3``)."""
    by = collections.defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            by[r["shape"]][r["tier"]] = r
    return [_from_rows(label, d) for label, d in by.items()]


def samples_from_rows(rows: Iterable) -> list[dict]:
    """The shapes of gemmtiles.bench.run's rows (``Row`` objects)."""
    by = collections.defaultdict(dict)
    for r in rows:
        by[r.shape][r.tier] = {"ms": r.ms, "layout": r.layout, "bmm": str(r.bmm)}
    return [_from_rows(label, d) for label, d in by.items()]


def _from_rows(label: str, d: dict) -> dict:
    dims = [int(x) for x in label.split()[0].split("x")]
    batch, (m, n, k) = (dims[0], dims[1:]) if len(dims) == 4 else (1, dims)
    a = d["auto"]
    return sample(m, n, k, batch, a["layout"], str(a["bmm"]) == "True",
                  {tier: float(r["ms"]) * 1e3 for tier, r in d.items()})


def features(x: dict, tier: str, sms: int) -> tuple[float, float]:
    """(k steps of the busiest SM, bytes of the passes around the kernel), as auto counts
    them (tensor_core_work in csrc/auto/plan.h) for contiguous operands in the shape's layout:
    what the fit takes."""
    m, n, k = x["M"], x["N"], x["K"]
    a_kmajor, b_kmajor, a_vec, b_vec = _flags(x["layout"], m, n, k, x["batch"] if x["bmm"] else 1)
    return _C.tensor_core_work(m, n, k, x["batch"], tier, a_kmajor, a_vec, b_kmajor, b_vec, sms)[:2]


def pays(x: dict, tier: str, p: dict, sms: int, exact_us: float, floor_bytes_per_us: float | None = None) -> bool:
    """auto's rule (tensor_cores_pay in csrc/auto/plan.h) with the parameters p, for contiguous
    operands in the shape's layout, against the exact kernels' exact_us; the floor at
    floor_bytes_per_us (None: p's bytes_per_us, as on the H100)."""
    m, n, k = x["M"], x["N"], x["K"]
    a_kmajor, b_kmajor, a_vec, b_vec = _flags(x["layout"], m, n, k, x["batch"] if x["bmm"] else 1)
    floor = p["bytes_per_us"] if floor_bytes_per_us is None else floor_bytes_per_us
    return _C.tensor_cores_pay(m, n, k, x["batch"], tier, a_kmajor, a_vec, b_kmajor, b_vec, sms,
                               tuple(p[name] for name in PARAMS), exact_us, bool(_C.cutlass_kernels()), floor)


def gpu_floor_bytes_per_us(device=None) -> float:
    """The floor's bandwidth as auto weighs it on CUDA `device` (None: the current one): the
    H100's scaled by the GPU's DRAM rate (scaled_tensor_core_model, csrc/auto/plan.h, from
    exact_fit.device_clocks); without a GPU, the H100's."""
    import torch

    if not torch.cuda.is_available():
        return _C.tensor_core_model()[6]
    _, dram, bus = device_clocks(torch.cuda.current_device() if device is None else device)
    return _C.tensor_core_model(dram_khz=dram, bus_bits=bus)[6]


def _least_squares(rows: list[list[float]], ys: list[float]) -> list[float]:
    """The least-squares solution of rows @ x = ys (normal equations; a few unknowns)."""
    n = len(rows[0])
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    aty = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    for c in range(n):  # Gauss-Jordan with partial pivoting
        p = max(range(c, n), key=lambda i: abs(ata[i][c]))
        ata[c], ata[p], aty[c], aty[p] = ata[p], ata[c], aty[p], aty[c]
        for i in range(n):
            if i != c and ata[c][c]:
                f = ata[i][c] / ata[c][c]
                ata[i] = [a - f * b for a, b in zip(ata[i], ata[c])]
                aty[i] -= f * aty[c]
    return [aty[i] / ata[i][i] for i in range(n)]


def fit(data: list[dict], sms: int) -> dict:
    """The model's parameters from timed shapes (relative errors weighed alike)."""
    p = {"bytes_per_us": BYTES_PER_US}
    rows, ys = [], []
    for x in data:
        wk, by = features(x, "tf32", sms)
        t = x["t"]["tf32"]
        rows.append([1 / t, wk / t])
        ys.append((t - by / BYTES_PER_US) / t)
    p["launch_us"], p["wave_k_us"] = _least_squares(rows, ys)
    rows, ys = [], []
    for x in data:
        wk, by = features(x, "tf32x3", sms)
        t = x["t"]["tf32x3"]
        rows.append([1 / t])
        ys.append((t - by / BYTES_PER_US - wk * p["wave_k_us"]) / t)
    (p["tf32x3_launch_us"],) = _least_squares(rows, ys)
    rows, ys = [], []
    for x in data:  # the exact kernels where auto is not far off cuBLAS (not on a cliff)
        t = x["t"]["auto"]
        if "cublas" in x["t"] and t > 2 * x["t"]["cublas"]:
            continue
        rows.append([1 / t, 2.0 * x["M"] * x["N"] * x["K"] * x["batch"] / t])
        ys.append(1.0)
    launch, inv_rate = _least_squares(rows, ys)
    p["exact_launch_us"], p["exact_flops_per_us"] = launch, 1 / inv_rate
    return {k: p[k] for k in PARAMS}


def tensor_core_us(x: dict, tier: str, p: dict, sms: int) -> float:
    wk, by = features(x, tier, sms)
    launch = p["tf32x3_launch_us"] if tier == "tf32x3" else p["launch_us"]
    return launch + wk * p["wave_k_us"] + by / p["bytes_per_us"]


def exact_us(x: dict, p: dict) -> float:
    """The exact kernels' time by the flat model (a launch and a FLOP rate)."""
    return p["exact_launch_us"] + 2.0 * x["M"] * x["N"] * x["K"] * x["batch"] / p["exact_flops_per_us"]


def exact_plan_us(x: dict, sms: int, params=None) -> float:
    """The exact kernels' time as auto weighs it in a build with CUTLASS's kernels: the estimate
    of the exact candidate auto plans (exact_fit.candidates, exact_fit.planned) by the exact
    model's `params` (None: the shipped fit; check passes this GPU's, exact_fit.gpu_model), for
    contiguous operands in the shape's layout; a batch sharing one B is one product of its
    rows, as auto runs it."""
    m, n, k, batch = x["M"], x["N"], x["K"], x["batch"]
    if not x["bmm"]:
        m, batch = m * batch, 1
    a_kmajor, b_kmajor, a_vec, b_vec = _flags(x["layout"], m, n, k, batch)
    return planned(candidates(m, n, k, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec, params))[1]


def check(data: list[dict], p: dict, tier: str, sms: int, exact: str = "auto",
          floor_bytes_per_us: float | None = None) -> dict:
    """The rule on measured shapes: on how many the tier is chosen, how many of those run more
    than 3% slower than the exact kernels, and the geometric-mean speed-up over the exact
    kernels (and the oracle's, which always picks the faster). The rule is auto's (pays), its
    margin MARGINS[tier], its floor at floor_bytes_per_us (None: the current GPU's,
    gpu_floor_bytes_per_us); exact: the rule's exact side, "auto" as auto weighs it in this build
    (exact_plan_us with CUTLASS's kernels, else the flat model), or "flat" (exact_us)."""
    if exact not in ("auto", "flat"):
        raise ValueError(f"exact: expected 'auto' or 'flat', got {exact!r}")
    plan = exact == "auto" and _C.cutlass_kernels()
    params = gpu_model() if plan else None
    floor = gpu_floor_bytes_per_us() if floor_bytes_per_us is None else floor_bytes_per_us
    chosen = slower = 0
    logs, oracle = [], []
    for x in data:
        use = pays(x, tier, p, sms, exact_plan_us(x, sms, params) if plan else exact_us(x, p), floor)
        exact_t = x["t"]["auto"]
        t = x["t"][tier] if use else exact_t
        chosen += use
        slower += t > 1.03 * exact_t
        logs.append(math.log(exact_t / t))
        oracle.append(math.log(exact_t / min(exact_t, x["t"][tier])))
    return {"shapes": len(data), "chosen": chosen, "slower": slower,
            "speedup": math.exp(sum(logs) / len(logs)), "oracle": math.exp(sum(oracle) / len(oracle))}


def model_line(p: dict) -> str:
    """The tuned table's line for the model (auto/table.cpp parses it)."""
    return "model tensor_cores " + " ".join(f"{p[k]:.6g}" for k in PARAMS)


def model_line_of(text: str):
    """The model line of a table's text, or None."""
    return _tables.line_of(text, "model", "tensor_cores")
