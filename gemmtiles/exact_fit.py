"""The fit of auto's exact-kernel cost model (csrc/auto/exact_model.h) to measured candidates.

`measure` (``python -m gemmtiles.tune --fit-exact``, or scripts/measure_candidates.py) times
every candidate `_C.exact_candidates` lists for each shape of a random sample, forced through
the auto op (`_C.force_auto_plan`), and writes the timings as CSV; this module reads them, takes each candidate's features from the C++ model
itself (`_C.exact_features`), and fits the parameters by non-negative least squares of the
relative error. `check` scores a parameter vector on another sample: the speed of the
candidate it picks, and of the best one, against cuBLAS. `fit_gemv`, `fit_kmajor`,
`fit_skinny`, `fit_tile` and `fit_own` fit one part of the parameters alone (the GEMV kernel's,
CUTLASS's costs per K-major element, the skinny kernels', one CUTLASS tile's, gemmtiles' own
tiles'), the others held at this GPU's model (`gpu_model`).

    python -m gemmtiles.exact_fit candidates.csv [more.csv ...] [--sms 132]
        [--gemv | --kmajor | --skinny | --tile RxCxW | --own]
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import Counter, defaultdict

from ._ops import _C

__all__ = ["measure", "load", "fit", "fit_gemv", "fit_kmajor", "fit_skinny", "fit_tile", "fit_own", "gpu_model",
           "table_model", "scaled_model", "candidates", "check", "rank_us", "planned", "model_line", "main"]

CSV_FIELDS = ["batch", "m", "n", "k", "layout", "bmm", "candidate", "mt", "nw", "splits", "us", "err", "w"]


def rank_us(plan, estimate_us: float) -> float:
    """What auto ranks a candidate by (exact_rank_us in csrc/auto/plan.h): its estimate, with
    the margins of a plan that copies an operand first and of a swapped plan."""
    return _C.exact_rank(plan.kernel, plan.swapped, estimate_us)


def planned(candidates):
    """The (plan, estimate) of _C.exact_candidates' list that auto plans: the least rank, the
    first of equals."""
    return min(candidates, key=lambda c: rank_us(*c))


def candidates(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec=True, params=None):
    """_C.exact_candidates' list, each plan's estimate by `params` (None: the shipped fit, as
    _C.exact_candidates gives it): with gpu_model(), the estimates auto weighs on this GPU."""
    listed = _C.exact_candidates(M, N, K, batch, a_kmajor, b_kmajor, b_vec, sms, a_vec)
    if params is None:
        return listed
    return [(plan, sum(f * p for f, p in zip(_C.exact_features(*plan, M, N, K, batch, a_kmajor, b_kmajor, sms,
                                                                a_vec, b_vec), params)))
            for plan, _ in listed]


def _layout_flags(a, b):
    """A's and B's layouts and alignment as auto sees them: (a_kmajor, b_kmajor, a_vec, b_vec)
    after prepare_gemm's strides (an operand is K-major where its column stride is 1 for A,
    not 1 for B)."""
    return _C.operand_layout(a, b)


def measure(shapes, out, device, repeats: int = 7, start: int = 0, progress=None, kernels=None,
            exact_kernels=None, splits=None, tiles=None) -> None:
    """Times cuBLAS, auto's own plan and every candidate of each shape (from index `start`,
    appending to `out` past 0), each forced through the auto op, and writes them as CSV.
    kernels: the candidates whose kernel's name starts with one of these alone (None: all);
    exact_kernels: those whose kernel is one of these alone; splits: those of these splits
    alone (None: any); tiles: those of CUTLASS's tiles (mt, nw, warps) alone (None: any
    candidate)."""
    if start > 0:  # appending: the file's columns must be these, or its new rows would misread
        with open(out, newline="") as f:
            header = next(csv.reader(f), None)
        if header != CSV_FIELDS:
            raise ValueError(f"exact_fit.measure: {out} has the columns {header}, expected {CSV_FIELDS}; "
                             "start from 0 into a new file")
    import sys

    import torch

    import gemmtiles

    from . import bench

    prefixes = (kernels,) if isinstance(kernels, str) else tuple(kernels or ())
    split_counts = None if splits is None else set(splits)
    tile_set = None if tiles is None else set(map(tuple, tiles))

    torch.set_float32_matmul_precision("highest")
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    g = torch.Generator().manual_seed(0)
    with open(out, "w" if start == 0 else "a", newline="") as f:
        writer = csv.writer(f)
        if start == 0:
            writer.writerow(CSV_FIELDS)
        for i, shape in enumerate(shapes):
            if i < start:
                continue
            a, b = bench.operands(shape, g, device)
            ref = torch.matmul(a.double(), b.double())
            norm = ref.norm().item() or 1.0
            a_k, b_k, a_vec, b_vec = _layout_flags(a, b)
            m = shape.m if shape.bmm or shape.batch == 1 else shape.m * shape.batch
            plans = [tuple(p) for p, _ in _C.exact_candidates(m, shape.n, shape.k, shape.batch if shape.bmm else 1,
                                                              a_k, b_k, b_vec, sms, a_vec)
                     if not p.swapped  # a swapped plan's kernel is priced on the N x M product's features
                     and (kernels is None or p.kernel.startswith(prefixes))
                     and (exact_kernels is None or p.kernel in exact_kernels)
                     and (split_counts is None or p.splits in split_counts)
                     and (tile_set is None or (p.kernel.startswith("cutlass") and (p.mt, p.nw, p.w) in tile_set))]
            rows = []
            for plan in [("cublas",), ("auto",)] + plans:
                if progress:  # before the call, so that a crash names its candidate
                    print(f"shape {i} {shape.label} {plan}", file=progress, flush=True)
                if plan[0] == "cublas":
                    fn = lambda: torch.matmul(a, b)  # noqa: E731
                else:
                    fn = lambda: gemmtiles.sgemm(a, b, tier="auto")  # noqa: E731
                if len(plan) > 1:
                    _C.force_auto_plan(*plan)
                try:
                    err = (fn().double() - ref).norm().item() / norm
                    ms, _ = bench._timer(device, fn, 2, repeats, 0.3)
                    refused = _C.forced_plan_refused()
                finally:
                    _C.force_auto_plan()
                if refused:  # the problem is not the forced kernel's: auto's own plan ran
                    continue
                name, mt, nw, width, splits = (plan[0], 0, 0, 0, 0) if len(plan) == 1 else plan[:5]
                rows.append([shape.batch, shape.m, shape.n, shape.k, shape.layout, int(shape.bmm), name, mt, nw,
                             splits, ms * 1e3, err, width])
            writer.writerows(rows)
            f.flush()
            if progress:
                best = f"best candidate {min(r[10] for r in rows[2:]):.1f}" if rows[2:] else "no candidate"
                print(f"[{i + 1}/{len(shapes)}] {shape.label}: cublas {rows[0][10]:.1f} us, auto {rows[1][10]:.1f}, "
                      f"{best}", file=progress, flush=True)
            del a, b, ref


def _flags(layout: str, m: int, n: int, k: int, batch: int = 1) -> tuple[bool, bool, bool, bool]:
    """a_kmajor, b_kmajor, a_vec, b_vec of the bench's contiguous operands in `layout` (batch
    > 1: an A and a B per entry), as _layout_flags gives them for such tensors: prepare_gemm
    (csrc/core/prepare.cpp) gives a one-row or one-column operand the strides that keep it
    aligned, whatever its layout."""

    def strides(rows, cols, row_major):
        rs, cs = (cols, 1) if row_major else (1, rows)
        if rows == 1:
            return (_round_up4(cols), 1) if cs == 1 else (1, cs)
        if cols == 1:
            return (rs, _round_up4(rows)) if rs == 1 else (rs, 1)
        return rs, cs

    def vec(ld, rows, cols):
        return ld % 4 == 0 and (batch == 1 or rows * cols % 4 == 0)

    a_rs, a_cs = strides(m, k, layout[0] == "N")
    b_rs, b_cs = strides(k, n, layout[1] == "N")
    a_k, b_k = a_cs == 1, b_cs != 1
    return a_k, b_k, vec(a_rs if a_k else a_cs, m, k), vec(b_cs if b_k else b_rs, k, n)


def _round_up4(x: int) -> int:
    return (x + 3) // 4 * 4


def load(path: str) -> dict:
    """{shape: {(candidate, mt, nw, splits, w): us}} from a candidates CSV (w -1 where the CSV,
    of an earlier gemmtiles, has no such column)."""
    rows = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (int(r["batch"]), int(r["m"]), int(r["n"]), int(r["k"]), r["layout"], r["bmm"] == "1")
            plan = (r["candidate"], int(r["mt"]), int(r["nw"]), int(r["splits"]), int(r.get("w") or -1))
            rows[key][plan] = float(r["us"])
    return rows


# The warps of each CUTLASS tile as built before a plan's w named them (rows, columns: warps):
# a CSV of that time (w 1 for every CUTLASS tile, or no w column: w -1) times these builds. The
# 32 x 32 tile had its one-warp build alone, the 64 x 64 tile its two-warp one. (CSVs older
# still, from before the 128 x 128 tile took four warps, timed it on eight: read as four.)
_CUTLASS_WARPS_BEFORE_W = {(128, 256): 8, (128, 128): 4, (64, 64): 2, (32, 128): 2, (128, 32): 2, (32, 32): 1}


def problems(rows: dict, sms: int):
    """For each shape: cuBLAS's time, and each measured candidate's plan, features and time."""
    out = {}
    for key, times in rows.items():
        batch, m, n, k, layout, bmm = key

        mm, bb = (m, batch) if bmm else (m * batch, 1)
        a_k, b_k, a_vec, b_vec = _flags(layout, mm, n, k, bb)
        plans = [plan for plan, _ in _C.exact_candidates(mm, n, k, bb, a_k, b_k, b_vec, sms, a_vec) if not plan.swapped]
        # A CSV without widths (w -1) names a plan only where no other candidate shares its
        # kernel, tile and splits: two load widths at one cut are two plans it cannot tell apart.
        # CUTLASS's tiles are read apart: a CSV written before a plan's w named its tile's warps
        # (w 1 for every tile, or no w: -1) timed the builds of that time
        # (_CUTLASS_WARPS_BEFORE_W), whichever other builds share the tile now.
        shared = Counter((p.kernel, p.mt, p.nw, p.splits) for p in plans)

        def timed(name, mt=0, nw=0, splits=0, w=0):
            us = times.get((name, mt, nw, splits, w))
            if us is None and name.startswith("cutlass"):
                if _CUTLASS_WARPS_BEFORE_W.get((mt, nw)) == w:
                    us = times.get((name, mt, nw, splits, -1), times.get((name, mt, nw, splits, 1)))
            elif us is None and shared[(name, mt, nw, splits)] <= 1:
                us = times.get((name, mt, nw, splits, -1))
            return us

        if timed("cublas") is None:
            continue
        cands = []
        for plan in plans:
            us = timed(plan.kernel, plan.mt, plan.nw, plan.splits, plan.w)
            if us is not None:
                cands.append((plan, _C.exact_features(*plan, mm, n, k, bb, a_k, b_k, sms, a_vec, b_vec), us))
        if cands:
            out[key] = {"cublas": timed("cublas"), "auto": timed("auto"), "candidates": cands}
    return out


# The layout of the parameter vector (csrc/auto/exact_model.h): global features (the last two:
# the split tiles' edge blocks' serial iterations, of the 32-row and the 64-row tile), then per tile
# its serial iterations, its FMAs per SM (millions), its K-major A's and B's elements copied per
# SM (millions) and its waves, then the skinny kernels' (the last: B's MB at a build's streaming
# excess), the copies' and the GEMV kernel's (then its 5-8-row build's own rates per MB of B and
# per step in series, and the streaming excess's, the skinny kernels' rate).
GLOBAL_FEATURES, PER_TILE, SKINNY, COPY, GEMV = 8, 5, 9, 2, 8


# Microseconds per million FMAs on one SM at its peak (128 FMAs a clock) at the H100's 1980 MHz.
_PEAK_US_PER_MFMA = 1e6 / (128 * 1980.0)


def _tiles() -> int:
    return (len(_C.exact_model()) - GLOBAL_FEATURES - SKINNY - COPY - GEMV) // PER_TILE


def fit(probs: dict, clock_mhz: float = 1980.0) -> list[float]:
    """Parameters minimising the squared relative error of every candidate's estimate: >= 0,
    and an SM's FMAs no faster than its peak (128 FMAs a clock at `clock_mhz`); a feature no
    candidate has keeps this GPU's parameter (gpu_model)."""
    import numpy as np
    from scipy.optimize import lsq_linear

    x = np.array([f for p in probs.values() for _, f, _ in p["candidates"]])
    y = np.array([us for p in probs.values() for _, _, us in p["candidates"]])
    lower = np.zeros(x.shape[1])
    for t in range(_tiles()):  # microseconds per million FMAs on one SM, at least the peak's
        lower[GLOBAL_FEATURES + PER_TILE * t + 1] = _PEAK_US_PER_MFMA * 1980.0 / clock_mhz
    used = np.abs(x).sum(axis=0) > 0
    params = np.array(gpu_model())
    sol = lsq_linear(x[:, used] / y[:, None], np.ones(len(y)), bounds=(lower[used], np.inf)).x
    params[used] = sol
    return params.tolist()


def gpu_model(device=None) -> list[float]:
    """The exact model's parameters as auto prices plans on `device` (a CUDA device; None: the
    current one): its table's `model exact` line where the table auto reads for it carries one,
    else the shipped fit scaled to the GPU's SM clock and DRAM (scaled_exact_model,
    csrc/auto/exact_model.h; from torch's device properties, which read the attributes auto
    reads: one missing leaves its part as fitted, as auto does with an attribute of 0);
    without a GPU, the shipped fit. The partial fits hold the parameters they do not fit at
    these, so that one refit after another keeps the first."""
    import torch

    from . import _tables

    if not torch.cuda.is_available():
        return _C.exact_model()
    d = torch.cuda.current_device() if device is None else device
    table = _tables.find(_C, torch.cuda.get_device_name(d))
    params = table_model(table) if table is not None else None
    return params if params is not None else scaled_model(d)


def table_model(path) -> list[float] | None:
    """The parameters of the table file's `model exact` line of this build's feature layout, or
    None where it has none."""
    from pathlib import Path

    from . import _tables

    line = _tables.line_of(Path(path).read_text(), "model", "exact", _C.exact_model_layout())
    return None if line is None else [float(x) for x in line.split()[3:]]


def device_clocks(device) -> tuple[int, int, int]:
    """CUDA `device`'s SM clock and DRAM clock (kHz) and bus width (bits), the attributes auto
    reads, from torch's device properties; one missing is 0 (unknown: auto leaves its part of
    a model as fitted)."""
    import torch

    p = torch.cuda.get_device_properties(device)
    return tuple(getattr(p, a, 0) or 0 for a in ("clock_rate", "memory_clock_rate", "memory_bus_width"))


def scaled_model(device) -> list[float]:
    """The shipped fit scaled to CUDA `device`'s SM clock and DRAM, as auto scales it there."""
    return _C.exact_model(*device_clocks(device))


def _nnls_small(x, y):
    """argmin ||x p - y|| over p >= 0 for a few columns: the least-squares solution on each
    subset of the columns, the best of those with no negative entry (exact where the columns
    are few; numpy alone)."""
    import itertools

    import numpy as np

    cols = x.shape[1]
    best, best_res = np.zeros(cols), float(np.sum(y * y))
    for r in range(1, cols + 1):
        for subset in itertools.combinations(range(cols), r):
            sol, *_ = np.linalg.lstsq(x[:, subset], y, rcond=None)
            if np.any(sol < 0):
                continue
            res = float(np.sum((x[:, subset] @ sol - y) ** 2))
            if res < best_res:
                best, best_res = np.zeros(cols), res
                best[list(subset)] = sol
    return best


def fit_gemv(probs: dict, params: list[float] | None = None) -> list[float]:
    """The GEMV kernel's parameters alone fitted to its measured candidates (least squares of
    the relative error, >= 0), every other parameter held; its rates per byte of B and of
    streaming excess held at the skinny kernels', which stream B from the same memory: the GEMV
    candidates' shapes are few, and their largest B too few to pin the rate down
    (docs/auto.md). First the parameters its builds share, on the candidates of the builds of
    up to 4 rows; then the 5-8-row build's own rates per byte of B and per step in series, on
    its candidates, the shared ones held."""
    import numpy as np

    params = np.array(params if params is not None else gpu_model(), dtype=float)
    if not any(plan.kernel == "gemv" for p in probs.values() for plan, _, _ in p["candidates"]):
        return params.tolist()
    g0, s0 = len(params) - GEMV, len(params) - GEMV - COPY - SKINNY
    params[g0 + 1] = params[s0 + 1]  # the skinny kernels' B bytes over SMs used
    params[g0 + 7] = params[s0 + 8]  # and their streaming excess's
    rows8 = lambda plan: plan.kernel == "gemv" and plan.mt > 4  # noqa: E731
    params = _fit_columns(probs, params, [g0, g0 + 2, g0 + 3, g0 + 4],
                          lambda plan, f: plan.kernel == "gemv" and not rows8(plan))
    return _fit_columns(probs, params, [g0 + 5, g0 + 6], lambda plan, f: rows8(plan)).tolist()


def _fit_columns(probs: dict, params, cols, takes, lower=None):
    """`params` (a numpy vector, changed in place) with the columns `cols` alone fitted to the
    measured candidates `takes(plan, features)` admits (least squares of the relative error,
    >= 0, numpy alone: _nnls_small; with `lower`, each column's bound, scipy's lsq_linear, for
    more columns than _nnls_small's subsets take), every other parameter held."""
    import numpy as np

    cols = np.asarray(cols)
    x, y = [], []
    for p in probs.values():
        for plan, f, us in p["candidates"]:
            f = np.array(f, dtype=float)
            if takes(plan, f[cols]):
                held = float(f @ params - f[cols] @ params[cols])
                x.append(f[cols] / us)
                y.append((us - held) / us)
    if x:
        x, y = np.array(x), np.array(y)
        used = np.abs(x).sum(axis=0) > 0
        if lower is None:
            params[cols[used]] = _nnls_small(x[:, used], y)
        else:
            from scipy.optimize import lsq_linear

            params[cols[used]] = lsq_linear(x[:, used], y, bounds=(np.asarray(lower)[used], np.inf)).x
    return params


def fit_kmajor(probs: dict, params: list[float] | None = None) -> list[float]:
    """CUTLASS's tiles' costs per K-major element of A and of B copied into shared memory
    alone fitted to the measured candidates of CUTLASS's kernel on the operands as they lie
    (least squares of the relative error, >= 0), every other parameter held: the part of the
    model that the shared-memory layout of a K-major operand sets (csrc/auto/cutlass_simt.cuh)."""
    import numpy as np

    params = np.array(params if params is not None else gpu_model(), dtype=float)
    # Every tile's K-major columns; the rows of CUTLASS's plans leave gemmtiles' own tiles' at zero.
    cols = [GLOBAL_FEATURES + PER_TILE * t + i for t in range(_tiles()) for i in (2, 3)]
    return _fit_columns(probs, params, cols, lambda plan, f: plan.kernel == "cutlass" and f.any()).tolist()


def tile_index(mt: int, nw: int, warps: int) -> int:
    """The index of CUTLASS's tile of mt x nw on `warps` warps in the parameter vector's tiles
    (cutlass_tile_at, csrc/auto/plan.h; the model's tiles start with CUTLASS's)."""
    try:
        return _C.cutlass_tiles().index((mt, nw, warps))
    except ValueError:
        raise ValueError(f"exact_fit: no CUTLASS tile of {mt} x {nw} on {warps} warps is built") from None


def fit_tile(probs: dict, tile: int, params: list[float] | None = None) -> list[float]:
    """One CUTLASS tile's five parameters (index `tile`, tile_index) alone fitted to the measured
    candidates of CUTLASS's kernel on that tile, the operands as they lie (least squares of the
    relative error, >= 0), every other parameter held: a tile added to the candidates, or
    rebuilt, priced without refitting the others."""
    import numpy as np

    params = np.array(params if params is not None else gpu_model(), dtype=float)
    cols = [GLOBAL_FEATURES + PER_TILE * tile + i for i in range(PER_TILE)]
    return _fit_columns(probs, params, cols, lambda plan, f: plan.kernel == "cutlass" and f[0] > 0).tolist()


def fit_own(probs: dict, params: list[float] | None = None) -> list[float]:
    """gemmtiles' own tiles' parameters (the split tiles' and the pipelined tile's five each,
    and the split tiles' edge costs) alone fitted to their measured candidates (least squares of
    the relative error, >= 0), every other parameter held: fit on samples that hold products of
    tile-multiple sizes and aligned operands (random:N:SEED:aligned) beside the plain one, whose
    odd sizes make nearly every split tile an edge-block one."""
    import numpy as np

    params = np.array(params if params is not None else gpu_model(), dtype=float)
    own0 = len(_C.cutlass_tiles())
    cols = [GLOBAL_FEATURES - 2, GLOBAL_FEATURES - 1]
    cols += [GLOBAL_FEATURES + PER_TILE * t + i for t in range(own0, _tiles()) for i in range(PER_TILE)]
    lower = [_PEAK_US_PER_MFMA if (c - GLOBAL_FEATURES) % PER_TILE == 1 and c >= GLOBAL_FEATURES else 0.0
             for c in cols]
    return _fit_columns(probs, params, cols, lambda plan, f: plan.kernel == "split_tile", lower).tolist()


def fit_skinny(probs: dict, params: list[float] | None = None) -> list[float]:
    """The skinny kernels' parameters alone fitted to their measured candidates (least squares
    of the relative error, >= 0), their streaming excess's rate and every other parameter held
    but the GEMV kernel's shared rate per byte of B, which follows the skinny kernels' (fit_gemv
    holds it there; its 5-8-row build's own rate does not): the part of the model that products
    of up to 16 rows weigh against CUTLASS's tiles."""
    import numpy as np

    params = np.array(params if params is not None else gpu_model(), dtype=float)
    s0 = len(params) - GEMV - COPY - SKINNY
    # The streaming excess's rate (the last) is held: the GEMV's single-float builds share it, at
    # shares larger than the skinny kernels' (stream_excess in csrc/auto/plan.h).
    params = _fit_columns(probs, params, range(s0, s0 + SKINNY - 1), lambda plan, f: plan.kernel.startswith("skinny"))
    params[len(params) - GEMV + 1] = params[s0 + 1]
    return params.tolist()


def check(probs: dict, params: list[float]) -> dict:
    """The geomean speed against cuBLAS of the candidate the parameters pick (by rank_us) and of
    the best measured one, and the median relative error of the estimates."""
    picked, best, errs = [], [], []
    for p in probs.values():
        est = [sum(a * b for a, b in zip(f, params)) for _, f, _ in p["candidates"]]
        rank = [rank_us(plan, e) for (plan, _, _), e in zip(p["candidates"], est)]
        times = [us for _, _, us in p["candidates"]]
        picked.append(p["cublas"] / times[min(range(len(rank)), key=rank.__getitem__)])
        best.append(p["cublas"] / min(times))
        errs += [abs(math.log(max(e, 1e-9) / t)) for e, t in zip(est, times)]
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    errs.sort()
    return {"shapes": len(picked), "picked": geo(picked), "best": geo(best), "median_error": errs[len(errs) // 2]}


def model_line(params: list[float], digits: int = 6) -> str:
    """The tuned table's line that carries these parameters (csrc/auto/table.cpp), each to
    `digits` significant digits (17: every digit, for _C.auto_plan's `table` to plan by exactly
    these parameters, gpu_model's say, and by no per-shape entry)."""
    return f"model exact {_C.exact_model_layout()} " + " ".join("0" if x <= 0 else f"{x:.{digits}g}" for x in params)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m gemmtiles.exact_fit", description=__doc__.splitlines()[0])
    p.add_argument("train", nargs="+", help="candidates CSVs of the training sample (several: their shapes together)")
    p.add_argument("--check", help="candidates CSV of a sample drawn with another seed")
    p.add_argument("--holdout", action="store_true",
                   help="fit on every other shape of the training sample and check on the rest")
    p.add_argument("--sms", type=int, default=132)
    part_of = p.add_mutually_exclusive_group()
    part_of.add_argument("--gemv", action="store_true",
                         help="fit the GEMV kernel's parameters alone (fit_gemv), the others held")
    part_of.add_argument("--kmajor", action="store_true",
                         help="fit CUTLASS's tiles' K-major copy costs alone (fit_kmajor), the others held")
    part_of.add_argument("--skinny", action="store_true",
                         help="fit the skinny kernels' parameters alone (fit_skinny), the others held")
    part_of.add_argument("--tile", metavar="RxCxW",
                         help="fit one CUTLASS tile's parameters alone (fit_tile), rows x columns x warps, "
                              "the others held")
    part_of.add_argument("--own", action="store_true",
                         help="fit gemmtiles' own tiles' parameters alone (fit_own), the others held")
    p.add_argument("--table-out", metavar="FILE",
                   help="also write the fitted parameters' table line (model_line) to FILE, a table of that "
                        "line alone")
    args = p.parse_args(argv)
    rows = defaultdict(dict)
    for path in args.train:  # a shape in several files: the candidates of each
        for key, times in load(path).items():
            rows[key].update(times)
    train = problems(rows, args.sms)

    def done(params) -> int:
        print("params:", ", ".join(f"{x:.6g}" for x in params))
        if args.table_out:
            with open(args.table_out, "w") as f:
                f.write(model_line(params) + "\n")
            print("wrote", args.table_out)
        return 0

    if args.gemv or args.kmajor or args.skinny or args.tile or args.own:
        if args.tile:
            tile = tile_index(*(int(x) for x in args.tile.split("x")))
            part = lambda probs: fit_tile(probs, tile)  # noqa: E731
        else:
            part = fit_gemv if args.gemv else fit_kmajor if args.kmajor else fit_own if args.own else fit_skinny
        keys = sorted(train)
        for name, fit_on, rest in (("A", keys[::2], keys[1::2]), ("B", keys[1::2], keys[::2])):
            params = part({k: train[k] for k in fit_on})
            print(f"fitted on half {name}, the other half:", check({k: train[k] for k in rest}, params))
        params = part(train)
        print("this GPU's model (gpu_model):", check(train, gpu_model()))
        print("fitted, training sample:", check(train, params))
        return done(params)
    if args.holdout:
        keys = sorted(train)
        rest = {k: train[k] for k in keys[1::2]}
        train = {k: train[k] for k in keys[::2]}
        print("fitted, held-out half:", check(rest, fit(train)))
    params = fit(train)
    print("this GPU's model (gpu_model):", check(train, gpu_model()))
    print("fitted, training sample:", check(train, params))
    if args.check:
        print("fitted, check sample:", check(problems(load(args.check), args.sms), params))
    return done(params)


if __name__ == "__main__":
    raise SystemExit(main())
