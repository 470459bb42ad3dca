"""``python -m gemmtiles.tune``: measures the `auto` tier's candidate kernels on this GPU and
writes the GPU's tuned table, which `auto` reads on its next start.

For each shape and layout (NN; NT = nn.Linear's x @ W^T) it times, through the `auto` op itself:
warptile, the split-K tiles (32, 64 and 128 rows, and the pipelined 128 x 128 tile where the
operands allow it) at 1-48 splits of K, and for up to 16 rows the skinny kernels on each of
their widths at several split counts, for NN A copied M-major first where the operands allow
it and no CUTLASS kernel runs (`transposed`), and from 1024 rows and columns CUTLASS's SIMT
SGEMM (`cutlass`) where the build has it, and for NT from 256 rows and columns the same with
stream-K scheduling (`streamk`); checks that each gives the heuristic's answer (within fp32
tolerance); and keeps the fastest, unless auto's own plan ran
faster than every entry (its plan may be one no entry names, such as CUTLASS's smaller tiles
and their splits): that shape then gets no entry, only a comment. The table (csrc/auto/plan.h
describes its format) is keyed by shape buckets (quarter powers of two), so a measured 32 x
11008 x 4096 also serves 32 x 11000 x 4000. `auto` never tunes inside a call: without a table
entry for a shape it plans by its cost model where CUTLASS's kernels run, else by its heuristic.

    python -m gemmtiles.tune                       # the bench's shapes, to the user's cache
    python -m gemmtiles.tune --shapes 24x5504x2048,24x2048x5504:NT --out table.txt
    python -m gemmtiles.tune --shapes 1x2048x2048:NT --metric wall   # a host-bound loop's shapes
    python -m gemmtiles.tune --fit-tensor-cores    # the tensor-core model, fitted to this GPU

`--fit-tensor-cores` times auto (exact), `tf32` and `tf32x3` on shapes drawn at random with a
training seed (`--fit-shapes`), fits the model behind auto's tensor-core choice
(gemmtiles.tensor_core_model), reports its rule on a sample drawn with another seed
(`--check-shapes`), and writes the model's line into the table; with it alone, the table holds
no per-shape entries. A table written without it keeps the model line of the table auto reads
now (the shipped H100 table has one).

By default a candidate's time is the GPU's time for its kernels alone. `--metric wall` times
calls issued back to back instead (the host's dispatch of each included, the GPU synchronised
once per run): the cost that counts where a loop is bound by the host's launch rate, as eager
decoding of a small model is, and where a plan of two launches (K split, then the slices
added) can cost more than its kernels save.
"""

from __future__ import annotations

import datetime
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

import torch

from . import _ops, _tables, exact_fit
from . import tensor_core_model as tcm
from . import tiers
from ._ops import _C
from .bench import TRANSFORMER_KN, Shape, _Parser, _timer, back_to_back, cublas_matmul, shape_set
from .precision import fp32_precision

__all__ = ["default_shapes", "candidates", "heuristic_plan", "tuned_shape", "tune_shape", "table_line", "main"]

SPLITS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48)
SKINNY_SPLITS = (1, 2, 4, 8, 16, 24, 32, 48, 64)
TUNED_M = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


def default_shapes() -> list[Shape]:
    """The bench's small-M and transformer weights, M from 1 to 2048, NN and NT."""
    return [Shape(m, n, k, layout) for (k, n) in TRANSFORMER_KN for m in TUNED_M for layout in ("NN", "NT")]


def heuristic_plan(shape: Shape, sms: Optional[int] = None) -> Optional[tuple[str, int, int]]:
    """The heuristic's plan for `shape` (contiguous operands) as a table entry's (kernel, rows,
    splits), rows being a tile's rows or, for skinny, the columns of B a block takes (None for
    a swapped plan, out^T = B^T A^T, which no entry names: auto's own plan runs it): a
    candidate too, since its split counts need not be in SPLITS."""
    if sms is None:
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    # The layout and alignment auto sees of the contiguous operands (prepare_gemm's strides).
    a_kmajor, b_kmajor, a_vec, b_vec = exact_fit._flags(shape.layout, shape.m, shape.n, shape.k)
    # The cost model as auto prices plans on this GPU (exact_fit.gpu_model), no per-shape entry.
    model = exact_fit.model_line(exact_fit.gpu_model(), digits=17) if torch.cuda.is_available() else None
    kernel, rows, nw, w, splits, _, swapped = _C.auto_plan(shape.m, shape.n, shape.k, 1, b_kmajor, b_vec, sms,
                                                           a_kmajor, model, a_vec, _cutlass_here())
    if swapped:
        return None
    if kernel == "cutlass":
        return CUTLASS
    if kernel == "cutlass_streamk":
        return STREAMK
    if not _cutlass_here() and _C.transpose_a_first(shape.m, shape.n, shape.k, 1, a_kmajor, b_kmajor, b_vec):
        return TRANSPOSED
    if kernel.startswith("skinny"):  # named by its block's columns, which tell its widths apart
        return ("skinny", _C.skinny_cols(kernel, rows, nw, w), splits)
    if kernel == "gemv":  # named by its block's columns
        return ("gemv", nw, 1)
    if kernel == "split_tile":
        return ("pipelined" if (rows, nw) == (128, 128) else "split_tile", rows, splits)
    return ("warptile", 0, 1)


# NN with A copied M-major first, then the heuristic's plan of that product (transpose_a_first
# in csrc/auto/plan.h): a candidate where the operands allow it and no CUTLASS kernel runs (the
# cost model plans there, pricing copies of its own).
TRANSPOSED = ("transposed", 0, 1)
# CUTLASS's SIMT kernel (csrc/auto/cutlass_simt.h), where the build has it: a candidate from
# CUTLASS_MIN rows and columns, where a tile of 128 x 256 leaves the GPU less than idle.
CUTLASS = ("cutlass", 0, 1)
CUTLASS_MIN = 1024
# The same kernel with stream-K scheduling, for NT alone (cutlass_streamk_plan): a candidate
# from STREAMK_MIN rows and columns and STREAMK_MIN_K deep, where a block's share of the k
# iterations outweighs the partial tiles it adds.
STREAMK = ("streamk", 0, 1)
STREAMK_MIN = 256
STREAMK_MIN_K = 256


def _cutlass_here() -> bool:
    """Whether auto can run CUTLASS's SIMT kernels on the current device: built, and sm_80+."""
    return _C.cutlass_kernels() and torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)


def _can_transpose(m: int, n: int, k: int) -> bool:
    # Asked with a table that names it for the shape: what is left are the operands' bounds.
    return _C.transpose_a_first(m, n, k, 1, True, False, n % 4 == 0, _entry(Shape(m, n, k), *TRANSPOSED))


# The most splits a table entry may name (csrc/auto/plan.h).
MAX_TABLE_SPLITS = _C.max_table_splits()


def candidates(m: int, k: int, extra: Optional[tuple[str, int, int]] = None,
               layout: str = "NN", n: Optional[int] = None) -> list[tuple[str, int, int]]:
    """(kernel, rows, splits) that `auto` can run for m rows, depth k and n columns (None: not
    known, so no pipelined tile, and B's rows taken as not 16-byte aligned) of contiguous operands in
    `layout`, and `extra` (the heuristic's plan) where it is not among them and a table entry
    can name it; rows is a tile's rows, or for skinny and gemv the columns of B a block takes."""
    out = [("warptile", 0, 1)]
    # The operands are contiguous, so B's lines are 16-byte aligned wherever their length
    # allows: W^T's always (as auto takes them), a row-major B's where n % 4 == 0.
    b_kmajor = layout == "NT"
    b_vec = b_kmajor or (n is not None and n % 4 == 0)
    if m <= 2048:
        rows = [r for r, most in ((32, 256), (64, 512), (128, 2048)) if m <= most]
        out += [("split_tile", r, s) for r in rows for s in SPLITS if s <= max(1, k // 64)]
        # The pipelined tile where it takes the operands.
        if n is not None and _C.async_tile_ok(m, n, True, True, b_kmajor, b_vec):
            out += [("pipelined", 128, s) for s in SPLITS if s <= max(1, k // 64)]
    # The rows auto's skinny kernels take (skinny_max_m in csrc/auto/plan.h), on each of their
    # widths (a block's columns of B: skinny_cols).
    if m <= _C.skinny_max_m(b_kmajor):
        out += [("skinny", cols, s) for cols in _C.skinny_widths(m, b_kmajor, b_vec)
                for s in SKINNY_SPLITS if s <= max(1, k // 32)]
    # The GEMV kernel (up to 8 rows, W^T), on each of its blocks' widths (gemv_columns) that
    # its build for m rows has for W^T's lines (16-byte aligned where k % 4 == 0).
    out += [("gemv", cols, 1) for cols in _C.gemv_columns(m, b_kmajor, k % 4 == 0)]
    if layout == "NN" and n is not None and not _cutlass_here() and _can_transpose(m, n, k):
        out.append(TRANSPOSED)
    if n is not None and min(m, n) >= CUTLASS_MIN and _cutlass_here():
        out.append(CUTLASS)
    if b_kmajor and n is not None and min(m, n) >= STREAMK_MIN and k >= STREAMK_MIN_K and _cutlass_here():
        out.append(STREAMK)
    if extra is not None and extra not in out and extra[2] <= MAX_TABLE_SPLITS:
        out.append(extra)
    return out


def _entry(shape: Shape, kernel: str, rows: int, splits: int) -> str:
    keys = (_C.auto_bucket(x) for x in (shape.m, shape.n, shape.k))
    return f"{shape.layout} {' '.join(map(str, keys))} {kernel} {rows} {splits}"


def _operands(shape: Shape, device: torch.device):
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(shape.m, shape.k, device=device, generator=g)
    if shape.layout == "NT":
        b = torch.randn(shape.n, shape.k, device=device, generator=g).t()
    else:
        b = torch.randn(shape.k, shape.n, device=device, generator=g)
    return a, b


def tuned_shape(shape: Shape, cutlass: Optional[bool] = None) -> Shape:
    """The problem whose plan the table decides for `shape`: auto runs a batch against one
    shared B as batch * M rows, and where its heuristic plans (no CUTLASS kernel runs here:
    `cutlass` False; None: _cutlass_here()) the last 1-8 columns of a large output apart
    (csrc/auto/auto.cu), so its plan is the rest's."""
    if shape.batch > 1:
        shape = Shape(shape.batch * shape.m, shape.n, shape.k, shape.layout, shape.group)
    if cutlass is None:
        cutlass = _cutlass_here()
    if cutlass:
        return shape
    r = _C.peeled_columns(shape.m, shape.n, 1)
    return Shape(shape.m, shape.n - r, shape.k, shape.layout, shape.group) if r else shape


WALL_RUNS = 5


def _wall_timer(device: torch.device, fn, budget_s: float) -> float:
    """Median milliseconds per call of fn() issued back to back, the host's dispatch included:
    WALL_RUNS runs (bench.back_to_back) of as many calls as the budget allows after one
    call's time."""
    fn()
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize(device)
    first = time.perf_counter() - t0
    n = max(10, min(2000, int(budget_s / WALL_RUNS / max(first, 1e-6))))
    return statistics.median(back_to_back(device, fn, n, WALL_RUNS)) * 1e3


METRICS = ("gpu", "wall")


def tune_shape(shape: Shape, device: torch.device, warmup: int = 3, repeats: int = 25,
               budget_s: float = 0.2, metric: str = "gpu") -> dict:
    """Times every candidate for one shape (see tuned_shape) on `device`, whose table is
    replaced meanwhile and forgotten afterwards, with fp32 matmul precision "highest" (the
    table is for the exact kernels). metric: "gpu", the GPU's time for the kernels alone, or
    "wall", the time per call of calls issued back to back (see the module's help). Returns
    {"heuristic_ms", "cublas_ms", "best": (kernel, rows, splits, ms), "entry": the table
    line}, each time by `metric`."""
    if metric not in METRICS:
        raise ValueError(f"gemmtiles.tune: metric: expected one of {', '.join(METRICS)}, got {metric!r}")
    if min(shape.m, shape.n, shape.k) < 1:
        raise ValueError(f"gemmtiles.tune: {shape.label}: every size must be >= 1")
    shape = tuned_shape(shape)
    index = device.index if device.index is not None else torch.cuda.current_device()
    a, b = _operands(shape, device)
    auto = torch.ops.gemmtiles.auto.default
    timing = dict(warmup=warmup, repeats=repeats, budget_s=budget_s)

    def timed(fn) -> float:
        if metric == "wall":
            return _wall_timer(device, fn, budget_s)
        return _timer(device, fn, **timing)[0]
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        _C.set_auto_table(index, "", "gemmtiles.tune: the heuristic")
        expected = auto(a, b)
        # cuBLAS first: a process's first timings of auto, before cuBLAS has run, read 12-16%
        # faster than later ones (docs/ladder.md, --cold-l2), which would flatter the heuristic.
        cublas_ms = timed(lambda: cublas_matmul(a, b, tf32=False))
        heuristic_ms = timed(lambda: auto(a, b))
        tol = 2e-6 * (a.abs() @ b.abs()).max().item() * max(1, shape.k) ** 0.5
        best = None
        for kernel, rows, splits in candidates(shape.m, shape.k, heuristic_plan(shape), shape.layout, shape.n):
            entry = _entry(shape, kernel, rows, splits)
            _C.set_auto_table(index, entry, "gemmtiles.tune: a candidate")
            out = auto(a, b)
            if not (out - expected).abs().max().item() <= tol:
                raise RuntimeError(f"gemmtiles.tune: {entry} gave a wrong product for {shape.label}")
            ms = timed(lambda: auto(a, b))
            if best is None or ms < best[3]:
                best = (kernel, rows, splits, ms)
    finally:
        _C.set_auto_table(index, None)
        torch.set_float32_matmul_precision(precision)
    return {"heuristic_ms": heuristic_ms, "cublas_ms": cublas_ms, "best": best,
            "entry": _entry(shape, *best[:3])}


def _own_plan_won(result: dict) -> bool:
    """Whether auto's own plan (the heuristic) ran at least as fast as every entry tune_shape
    timed: then the shape gets no entry (table_line)."""
    return result["heuristic_ms"] <= result["best"][3]


def table_line(shape: Shape, result: dict, metric: str = "gpu") -> str:
    """The table's line for `shape` from tune_shape's `result`: its best entry, with its times
    as a comment; or, where auto's own plan (the heuristic) ran at least as fast as every
    entry, a comment alone, so that auto keeps its own plan for the shape's bucket rather than
    one an entry can name."""
    kernel, rows, splits, ms = result["best"]
    tuned = tuned_shape(shape)
    note = "" if tuned == shape else f" (its first {tuned.n} columns)"
    per = " a call back to back" if metric == "wall" else ""
    times = f"{ms * 1e3:.1f} us{per}, cuBLAS {result['cublas_ms'] * 1e3:.1f} us"
    if _own_plan_won(result):
        return (f"# {result['entry'].rsplit(' ', 3)[0]}: no entry, auto's own plan "
                f"{result['heuristic_ms'] * 1e3:.1f} us{per} against the best entry's ({kernel} {rows} {splits}) "
                f"{times}   # {shape.label}{note}")
    return result["entry"] + f"   # {shape.label}{note}: {times}"


def fit_tensor_cores(device: torch.device, fit_shapes: list[Shape], check_shapes: list[Shape],
                     budget_s: float = 0.05) -> str:
    """Times auto (exact), tf32 and tf32x3 on `fit_shapes`, fits the tensor-core model, prints
    its rule's check on both samples, and returns the table's model line."""
    from . import bench

    sms = torch.cuda.get_device_properties(device).multi_processor_count
    timed_tiers = ["auto", "tf32", "tf32x3"]

    def timed(shapes):
        with fp32_precision("ieee"):  # the model's exact side: auto on its exact kernels
            return tcm.samples_from_rows(bench.run(timed_tiers, shapes, device, warmup=2, repeats=10, budget_s=budget_s,
                                                   progress=False))

    train = timed(fit_shapes)
    params = tcm.fit(train, sms)
    floor = tcm.gpu_floor_bytes_per_us(device)
    print("tensor-core model: " + ", ".join(f"{k} {v:.4g}" for k, v in params.items()))
    for label, data in (("fit", train), ("check", timed(check_shapes))):
        for tier in ("tf32", "tf32x3"):
            r = tcm.check(data, params, tier, sms, floor_bytes_per_us=floor)
            print(f"  {label:<5} {tier:<7} chosen on {r['chosen']}/{r['shapes']}, more than 3% slower than the exact "
                  f"kernels on {r['slower']}, {r['speedup']:.2f}x over them (the oracle {r['oracle']:.2f}x)")
    return tcm.model_line(params) + f"   # fitted on {len(fit_shapes)} random shapes"


def fit_exact(device: torch.device, fit_shapes: list[Shape], check_shapes: list[Shape], where: Path) -> str:
    """Times every exact-kernel candidate on both samples (CSV files left in `where`), fits
    auto's cost model on the first and reports it on the second; its table line."""
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    clock = (getattr(torch.cuda.get_device_properties(device), "clock_rate", 0) or 1_980_000) / 1e3
    data = {}
    for name, sample in (("fit", fit_shapes), ("check", check_shapes)):
        path = where / f"exact-candidates-{name}.csv"
        print(f"timing every candidate of {len(sample)} shapes ({name}) into {path}", flush=True)
        exact_fit.measure(sample, path, device)
        data[name] = exact_fit.problems(exact_fit.load(str(path)), sms)
    params = exact_fit.fit(data["fit"], clock)
    for name in ("fit", "check"):
        r = exact_fit.check(data[name], params)
        print(f"{name}: {r['shapes']} shapes; the model's pick {r['picked']:.3f}x cuBLAS (geomean), the best "
              f"candidate {r['best']:.3f}x; median estimate error {r['median_error']:.1%}")
    return exact_fit.model_line(params) + "   # python -m gemmtiles.tune --fit-exact"


def main(argv: Optional[list[str]] = None) -> int:
    p = _Parser(prog="python -m gemmtiles.tune", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda", help="the CUDA device to tune (default: the current one)")
    p.add_argument("--shapes", default=None,
                   help="MxNxK[:NT],... or a bench set (small, transformer, ...); default: M 1-2048 "
                        "against the bench's transformer weights, NN and NT")
    p.add_argument("--out", default=None, help="the table file (default: the user's cache, where auto looks)")
    p.add_argument("--repeats", type=int, default=25)
    p.add_argument("--budget", type=float, default=0.2,
                   help="seconds of timing per candidate and shape (default 0.2)")
    p.add_argument("--metric", choices=METRICS, default="gpu",
                   help="gpu: the GPU's time for a call's kernels (default); wall: the time per call of "
                        "calls issued back to back, the host's dispatch included (--budget sets how many; "
                        "--repeats is for gpu)")
    p.add_argument("--fit-tensor-cores", action="store_true",
                   help="fit the tensor-core model on this GPU (random shapes, a training and a check seed) and "
                        "write it into the table; alone, without per-shape entries")
    p.add_argument("--fit-exact", action="store_true",
                   help="time every exact-kernel candidate on --fit-shapes, fit auto's cost model, check it on "
                        "--check-shapes, and write its line into the table")
    p.add_argument("--fit-shapes", default="random:120:1", help="the fit's sample (default random:120:1)")
    p.add_argument("--check-shapes", default="random:120:2", help="the check's sample (default random:120:2)")
    args = p.parse_args(argv)
    if not args.budget > 0:
        p.error(f"--budget: expected seconds > 0, got {args.budget}")
    if not torch.cuda.is_available():
        p.error("no CUDA GPU is visible here: tuning measures kernels on the GPU it tunes")
    device = torch.device(args.device)
    if device.type != "cuda":
        p.error(f"--device: expected a CUDA device, got {args.device!r}")
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    if device.index >= torch.cuda.device_count():
        p.error(f"--device: {args.device!r}: only {torch.cuda.device_count()} CUDA device(s) visible")
    try:
        fitting = args.fit_tensor_cores or args.fit_exact
        shapes = shape_set(args.shapes, "cuda") if args.shapes else [] if fitting else default_shapes()
        fit_shapes = shape_set(args.fit_shapes, "cuda") if fitting else []
        check_shapes = shape_set(args.check_shapes, "cuda") if fitting else []
    except ValueError as e:
        p.error(str(e))
    if args.fit_tensor_cores and "tf32" not in tiers(device):
        p.error("--fit-tensor-cores: the tensor-core tiers do not run on this GPU or build (python -m gemmtiles.info)")
    if any(min(s.m, s.n, s.k) < 1 for s in shapes):
        p.error("--shapes: every size must be >= 1 to tune")
    if any(s.layout not in ("NN", "NT") for s in shapes):
        p.error("--shapes: the tuner times NN and NT shapes; TN runs on the heuristic's plan")
    name = torch.cuda.get_device_name(device)
    out = Path(args.out) if args.out else _tables.user_dir() / _C.auto_table_file(name)
    torch.cuda.set_device(device)
    lines = [f"# gemmtiles auto table for {name} "
             f"({torch.cuda.get_device_properties(device).multi_processor_count} SMs), "
             f"written by python -m gemmtiles.tune on {datetime.date.today().isoformat()}",
             "# layout m n k kernel rows splits   (buckets of M, N, K; skinny's rows: columns of B a block; "
             "csrc/auto/plan.h)"]
    if args.metric == "wall":
        lines.insert(1, "# timed with --metric wall: the time per call of calls issued back to back")
    if args.fit_exact:
        lines.append(fit_exact(device, fit_shapes, check_shapes, out.parent if args.out else Path(".")))
    if args.fit_tensor_cores:
        lines.append(fit_tensor_cores(device, fit_shapes, check_shapes))
    else:
        current = _tables.find(_C, name)
        kept = tcm.model_line_of(current.read_text()) if current else None
        if kept:
            lines.append(kept + f"   # as in {current}")
    print(f"tuning auto on {name} ({device}): {len(shapes)} shapes")
    print(f"{'shape':22} {'cuBLAS us':>10} {'heuristic us':>13} {'tuned us':>9}  best")
    for shape in shapes:
        r = tune_shape(shape, device, repeats=args.repeats, budget_s=args.budget, metric=args.metric)
        kernel, rows, splits, ms = r["best"]
        best = "auto's own plan (no entry)" if _own_plan_won(r) else f"{kernel} {rows} {splits}"
        print(f"{shape.label:22} {r['cublas_ms'] * 1e3:10.1f} {r['heuristic_ms'] * 1e3:13.1f} {ms * 1e3:9.1f}  "
              f"{best}  ({r['cublas_ms'] / min(ms, r['heuristic_ms']):.2f}x cuBLAS)", flush=True)
        lines.append(table_line(shape, r, args.metric))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # Whole or not at all: a process starting meanwhile reads the old table or the new one.
        tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, out)
    except OSError as e:
        print(f"gemmtiles.tune: cannot write {out}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {out}" + ("" if args.out else " (auto reads it from the next process on)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
