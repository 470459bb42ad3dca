"""The ladder against cuBLAS: ``python -m gemmtiles.bench``.

Times every tier (or those named) on the benchmark shapes with CUDA events (warm-up, median
of repeats), next to ``torch.matmul`` with TF32 off (cuBLAS's fp32 GEMM) measured in the same
process on the same inputs. Prints a table, writes CSV and JSON, and plots TFLOP/s against
size. Without a GPU it runs the CPU tiers against torch.matmul on the CPU. ``--bias`` adds a
bias row to every product (nn.Linear's ``x @ W^T + b``), on both sides.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional

import torch

from . import sgemm
from . import tiers as available_tiers
from ._tiers import BY_NAME

SQUARES = [256, 512, 1024, 2048, 4096, 8192]
TRANSFORMER_KN = [(4096, 4096), (4096, 11008), (11008, 4096)]
TRANSFORMER_M = [1, 32, 128, 2048, 8192]
SMALL_M = [1, 8, 16, 32, 64, 128, 256, 512]
# The Llama-style model that benchmarks/test_models.py times (a `transformers` config), its
# scenarios as (batch, tokens, training), and its Linear layers as (in, out) for the
# `model` shape set.
MODEL_CONFIG = dict(hidden_size=2048, intermediate_size=5504, num_hidden_layers=4, num_attention_heads=16,
                    num_key_value_heads=16, vocab_size=32000, max_position_embeddings=2048)
MODEL_SCENARIOS = {"train-4x512": (4, 512, True), "prefill-1x1024": (1, 1024, False),
                   "decode-b1": (1, 1, False), "decode-b8": (8, 1, False)}
_H, _I, _V = MODEL_CONFIG["hidden_size"], MODEL_CONFIG["intermediate_size"], MODEL_CONFIG["vocab_size"]
MODEL_LINEARS = [(_H, _H), (_H, _I), (_I, _H), (_H, _V)]  # attention projections, gate/up, down, lm_head
GPU_SETS = ("squares", "odd", "transformer", "linear", "small", "batched", "model", "all", "random")
LAYOUTS = ("NN", "NT", "TN")


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int
    # NN; NT: nn.Linear's x @ W^T (B column-major); TN: its weight gradient grad^T @ x (A
    # column-major)
    layout: str = "NN"
    group: str = "custom"
    batch: int = 1  # > 1: a (batch, m, k) input against one shared B (a 3-D activation)
    # with batch > 1: a B of its own per batch entry (torch.bmm) instead of one shared B
    bmm: bool = False

    @property
    def label(self) -> str:
        dims = f"{self.m}x{self.n}x{self.k}" if self.batch == 1 else f"{self.batch}x{self.m}x{self.n}x{self.k}"
        return dims + ("" if self.layout == "NN" else f" {self.layout}") + (" bmm" if self.bmm else "")

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.n * self.k


# The random sample (``--shapes random[:N[:SEED]]``): M log-uniform in [1, 8192], N and K in
# [128, 16384], any integer; layouts NN, NT and TN alike; one product in RANDOM_BMM_SHARE a
# batch of 2-64 products with a B of their own (torch.bmm); at most RANDOM_MAX_MACS
# multiply-adds a product (a larger draw is drawn again). Tune on one seed, report on another.
# ``random:N:SEED:aligned`` rounds the same draws up to the sizes models use: N and K to a
# multiple of RANDOM_ALIGN_NK, M from 9 rows to a multiple of RANDOM_ALIGN_M (a decode step's
# 1-8 rows kept), so that a cost model tuned on it sees the aligned operands' fast paths.
RANDOM_M = (1, 8192)
RANDOM_NK = (128, 16384)
RANDOM_BATCH = (2, 64)
RANDOM_BMM_SHARE = 6
RANDOM_MAX_MACS = 2 ** 37
RANDOM_DEFAULT_N, RANDOM_DEFAULT_SEED = 120, 0
RANDOM_ALIGN_NK, RANDOM_ALIGN_M = 64, 8


def random_shapes(count: int = RANDOM_DEFAULT_N, seed: int = RANDOM_DEFAULT_SEED,
                  aligned: bool = False) -> list[Shape]:
    """`count` shapes of the random sample drawn with `seed` (the same list on every machine);
    `aligned`: the same draws rounded up to aligned sizes (RANDOM_ALIGN_NK, RANDOM_ALIGN_M)."""
    import math
    import random

    rng = random.Random(seed)

    def log_uniform(lo: int, hi: int) -> int:
        return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))

    def up(x: int, step: int) -> int:
        return -(-x // step) * step

    group = f"random:{seed}" + (":aligned" if aligned else "")
    shapes = []
    while len(shapes) < count:
        m, n, k = log_uniform(*RANDOM_M), log_uniform(*RANDOM_NK), log_uniform(*RANDOM_NK)
        layout = rng.choice(LAYOUTS)
        bmm = rng.randrange(RANDOM_BMM_SHARE) == 0
        batch = log_uniform(*RANDOM_BATCH) if bmm else 1
        if aligned:
            m = m if m <= RANDOM_ALIGN_M else up(m, RANDOM_ALIGN_M)
            n, k = up(n, RANDOM_ALIGN_NK), up(k, RANDOM_ALIGN_NK)
        shape = Shape(m, n, k, layout, group=group, batch=batch, bmm=bmm)
        if shape.macs <= RANDOM_MAX_MACS:
            shapes.append(shape)
    return shapes


def _random_spec(spec: str):
    """(count, seed, aligned) of a ``random[:N[:SEED[:aligned]]]`` spec, or None for any other
    spec."""
    head, *rest = spec.split(":")
    if head != "random":
        return None
    expected = f"--shapes {spec!r}: expected random[:N[:SEED[:aligned]]] with whole numbers N >= 1 and SEED"
    try:
        count = int(rest[0]) if rest else RANDOM_DEFAULT_N
        seed = int(rest[1]) if len(rest) > 1 else RANDOM_DEFAULT_SEED
    except ValueError:
        raise ValueError(expected) from None
    if len(rest) > 3 or (len(rest) == 3 and rest[2] != "aligned") or count < 1:
        raise ValueError(expected)
    return count, seed, len(rest) == 3


def shape_set(name: str, device_type: str) -> list[Shape]:
    if device_type == "cpu":
        sets = {"squares": [Shape(s, s, s, group="squares") for s in (64, 128, 256, 512)]}
        sets["all"] = sets["squares"]
    else:
        sets = {
            "squares": [Shape(s, s, s, group="squares") for s in SQUARES],
            "odd": [Shape(4095, 4097, 4093, group="odd")],
            "transformer": [Shape(m, n, k, group="transformer") for (k, n) in TRANSFORMER_KN for m in TRANSFORMER_M],
            "linear": [Shape(m, n, k, "NT", group="linear") for (k, n) in TRANSFORMER_KN for m in (2048, 8192)],
            "small": [Shape(m, n, k, layout, group="small") for (k, n) in TRANSFORMER_KN for m in SMALL_M
                      for layout in ("NN", "NT")],
            # 3-D activations against one weight: 8 sequences of 128 tokens, 4 of 8 tokens
            "batched": [Shape(128, 4096, 4096, "NT", group="batched", batch=8),
                        Shape(8, 4096, 4096, "NT", group="batched", batch=4)],
        }
        sets["model"] = model_shapes()
        sets["all"] = (sets["squares"] + sets["odd"] + sets["transformer"] + sets["linear"] + sets["small"]
                       + sets["batched"])
    shapes = []
    for spec in name.split(","):
        if spec in sets:  # a set, alone or among others: small, small,batched, small,8x4096x4096:NT
            shapes += sets[spec]
            continue
        rand = _random_spec(spec)
        if rand is not None and device_type == "cuda":
            shapes += random_shapes(*rand)
            continue
        if spec in GPU_SETS or rand is not None:
            raise ValueError(f"--shapes {spec}: this set is sized for a GPU; on the CPU use squares, all or MxNxK")
        dims, _, layout = spec.partition(":")
        try:
            sizes = [int(x) for x in dims.lower().split("x")]
            batch, (m, n, k) = (sizes[0], sizes[1:]) if len(sizes) == 4 else (1, sizes)
        except ValueError:
            raise ValueError(f"--shapes: {spec!r} is neither a shape set for {device_type} "
                             f"({', '.join(sets)}) nor [BATCHx]MxNxK[:NT|:TN]") from None
        if min(m, n, k) < 0 or batch < 1 or (layout or "NN") not in LAYOUTS:
            raise ValueError(f"--shapes: {spec!r}: sizes must be >= 0, the batch >= 1 and the layout "
                             f"NN, NT or TN")
        if batch > 1 and layout == "TN":
            raise ValueError(f"--shapes: {spec!r}: a batch runs against one shared B: NN or NT only")
        shapes.append(Shape(m, n, k, layout or "NN", batch=batch))
    return shapes


def model_shapes() -> list[Shape]:
    """Every product of the model's Linear layers, scenario by scenario: the forward
    x @ W^T (NT) of batch x tokens rows, and in training also grad_x = grad @ W (NN) and
    grad_W = grad^T @ x (TN: the weight's gradient in the weight's layout, out x in)."""
    shapes = []
    for scenario, (batch, tokens, training) in MODEL_SCENARIOS.items():
        group, t = "model-" + scenario, batch * tokens
        for k, n in MODEL_LINEARS:
            shapes.append(Shape(t, n, k, "NT", group=group))
            if training:
                shapes += [Shape(t, k, n, "NN", group=group), Shape(n, k, t, "TN", group=group)]
    return shapes


def model_pair() -> dict:
    """The benchmark model (MODEL_CONFIG, random init, seed 0, fp32 on CUDA) on stock torch,
    and a copy with every Linear replaced by gemmtiles': {"torch": ..., "gemmtiles": ...}.
    Needs `transformers`."""
    import copy

    import transformers

    from .nn import replace_linear

    torch.manual_seed(0)
    stock = transformers.LlamaForCausalLM(transformers.LlamaConfig(**MODEL_CONFIG)).cuda().float()
    return {"torch": stock, "gemmtiles": replace_linear(copy.deepcopy(stock))}


def model_step(model, scenario: str) -> Callable[[], None]:
    """One step of a MODEL_SCENARIOS scenario on `model`: a training step (forward, loss,
    backward) or a forward without gradients, on fixed random token ids."""
    batch, tokens, train = MODEL_SCENARIOS[scenario]
    ids = torch.randint(0, MODEL_CONFIG["vocab_size"], (batch, tokens), device="cuda",
                        generator=torch.Generator("cuda").manual_seed(1))
    model.train(train)
    if train:
        def step():
            model.zero_grad(set_to_none=True)
            model(input_ids=ids, labels=ids).loss.backward()
    else:
        def step():
            with torch.no_grad():
                model(input_ids=ids, use_cache=False)
    return step


def interleaved(steps: dict[str, Callable[[], None]], rounds: int, warmup: int = 3,
                sync: Optional[Callable[[], None]] = None,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, list[float]]:
    """Seconds per call of each of `steps`, their calls interleaved: after `warmup` untimed
    calls of each, every round times one call of each, the order turned by one step a round
    (A B, then B A, ...), so that a drift of the GPU's clock or temperature during the run
    weighs on every step alike, as it would not on steps timed one after the other. `sync`
    (a GPU synchronisation) runs before and after each timed call."""
    names = list(steps)
    for name in names:
        for _ in range(warmup):
            steps[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    sync = sync or (lambda: None)
    for r in range(rounds):
        turn = r % len(names)
        for name in names[turn:] + names[:turn]:
            sync()
            t0 = clock()
            steps[name]()
            sync()
            times[name].append(clock() - t0)
    return times


@dataclass
class ModelRow:
    scenario: str
    torch_ms: float      # median of the rounds
    gemmtiles_ms: float
    speed: float         # torch_ms / gemmtiles_ms: gemmtiles' speed as a share of stock torch's
    speed_q1: float      # quartiles of the rounds' own torch / gemmtiles ratios
    speed_q3: float


def measure_models(rounds: int, warmup: int, scenarios: Optional[list[str]] = None,
                   precision: str = "highest", fp32_precision: str = "none") -> list[ModelRow]:
    """The model benchmark (model_pair, model_step) with stock and gemmtiles steps
    interleaved (interleaved), per scenario, both under torch's fp32 matmul `precision`
    (torch.set_float32_matmul_precision; restored after), gemmtiles' steps under its own
    `fp32_precision` setting (gemmtiles.fp32_precision). Needs a GPU and `transformers`."""
    from .precision import fp32_precision as gemmtiles_precision

    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        models = model_pair()
        rows = []
        for scenario in scenarios or list(MODEL_SCENARIOS):
            steps = {"torch": model_step(models["torch"], scenario),
                     "gemmtiles": gemmtiles_precision(fp32_precision)(model_step(models["gemmtiles"], scenario))}
            t = interleaved(steps, rounds, warmup, sync=torch.cuda.synchronize)
            ratios = sorted(a / b for a, b in zip(t["torch"], t["gemmtiles"]))
            q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
            stock, ours = statistics.median(t["torch"]), statistics.median(t["gemmtiles"])
            rows.append(ModelRow(scenario, stock * 1e3, ours * 1e3, stock / ours, q1, q3))
        return rows
    finally:
        torch.set_float32_matmul_precision(previous)


def peak_tflops(device: torch.device, precision: str = "fp32") -> Optional[float]:
    """Peak of the pipe a tier's precision runs on, at 1.98 GHz on Hopper: fp32, the FMA
    pipe (SMs x 128 lanes x 2 flops; H100 SXM: 66.9 TFLOP/s); tf32, the tensor cores' dense
    TF32 rate (SMs x 2048 flops per clock; H100 SXM: 535); tf32x3 does three TF32 products
    per fp32 one, so a third of that."""
    if device.type != "cuda":
        return None
    props = torch.cuda.get_device_properties(device)
    if props.major != 9:
        return None
    per_clock = {"fp32": 128 * 2, "tf32": 2048, "tf32x3": 2048 / 3}[precision]
    return props.multi_processor_count * per_clock * 1.98e9 / 1e12


def _hold_cycles(device: torch.device, seconds: float = 2e-4) -> int:
    """GPU clock cycles that keep a stream busy for about `seconds` (the queueing lead)."""
    rate_khz = getattr(torch.cuda.get_device_properties(device), "clock_rate", 0) or 2_000_000
    return int(rate_khz * 1e3 * seconds)


def _l2_flush(device: torch.device) -> Callable[[], object]:
    """A read of twice the GPU's L2 in floats: afterwards no operand line is left in L2, and
    the lines left there hold clean data (nothing to write back during the next call)."""
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 64 << 20
    buf = torch.ones(2 * l2 // 4, device=device)
    return lambda: buf.sum()


def _timer(device: torch.device, fn: Callable[[], object], warmup: int, repeats: int, budget_s: float,
           cold_l2: bool = False):
    """Median milliseconds of fn() and how many runs it took; fewer runs for slow calls.

    On CUDA each run is timed by events around its kernels alone: the stream is first held
    busy for a moment (``torch.cuda._sleep``), so that the host has queued the start event,
    fn's launches and the end event before the GPU reaches them; otherwise an idle GPU would
    count the host's dispatch time between the events, which at tens of microseconds is a
    large and path-dependent share. cold_l2: before each run the L2 is filled with other
    data (untimed), so that operands come from DRAM, as a model's successive layers read
    weights the L2 does not hold; otherwise an operand smaller than L2 (a 2048 x 2048 weight
    is 16 MiB, the H100's L2 50 MB) is read from it on every repeat.
    """
    if cold_l2 and device.type != "cuda":
        raise ValueError("cold_l2: only a CUDA device has an L2 to flush")
    if device.type == "cuda":
        hold = _hold_cycles(device)
        flush = _l2_flush(device) if cold_l2 else None

        def once() -> float:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if flush is not None:
                flush()
            torch.cuda._sleep(hold)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
    else:
        def once() -> float:
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3

    fn()  # untimed: one-time costs (a library's first call, lazy module loads) stay out
    first = once()
    if first > budget_s * 1e3:
        return first, 1
    for _ in range(max(0, warmup - 1)):
        once()
    n = max(3, min(repeats, int(budget_s * 1e3 / max(first, 1e-3))))
    return statistics.median(once() for _ in range(n)), n


@dataclass
class Row:
    shape: str
    group: str
    tier: str
    ms: float
    tflops: float
    vs_previous: Optional[float]
    vs_cublas: Optional[float]
    vs_tf32: Optional[float]  # against cuBLAS TF32, for the TF32 tiers
    peak_share: Optional[float]
    runs: int  # timed runs behind ms, every pass's together (ms is the least pass's median)
    rel_err: Optional[float]  # ||out - fp64 product|| / ||fp64 product||
    b_gbps: float  # GB/s of B read once: the figure of merit when M is small
    macs: int = 0  # multiply-adds of the product (all its batch)
    m: int = 0     # rows of one product (the row bands of summary())
    layout: str = "NN"
    bmm: bool = False
    vs_highest: Optional[float] = None  # against the same tier under "highest" (run's against_highest)


HIGHEST = "@highest"  # the suffix of a tier's name timed under torch's "highest" and gemmtiles' "none"
TF32_REF = "cublas-tf32"  # torch.matmul with TF32 allowed: the reference of the tf32 tier


class _fp32_matmul_precision:
    """torch.set_float32_matmul_precision for a block, restored after."""

    def __init__(self, precision: str):
        self.precision = precision

    def __enter__(self):
        self.previous = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(self.precision)

    def __exit__(self, *exc):
        torch.set_float32_matmul_precision(self.previous)


def _reference_names(tiers: list[str], device: torch.device, precision: str = "highest") -> list[str]:
    if device.type != "cuda":
        return ["torch"]
    if precision != "highest" or any(BY_NAME[t].precision == "tf32" for t in tiers):
        return ["cublas", TF32_REF]
    return ["cublas"]


def cublas_matmul(a, b, tf32: bool, bias: Optional[torch.Tensor] = None):
    """torch.matmul (with a bias row, linear_product) with TF32 allowed (cuBLAS TF32) or not
    (cuBLAS fp32); the previous setting is restored."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        return linear_product(a, b, bias)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def linear_product(a, b, bias: Optional[torch.Tensor] = None):
    """a @ b, plus a bias row as stock torch adds nn.Linear's: in the product's epilogue
    (addmm; a batch of rows that lie in one block folded first, as F.linear folds them;
    baddbmm for a batch of products), else after it."""
    if bias is None:
        return torch.matmul(a, b)
    if a.dim() == 2 and b.dim() == 2:
        return torch.addmm(bias, a, b)
    if a.dim() == 3 and b.dim() == 3:
        return torch.baddbmm(bias, a, b)
    if b.dim() == 2 and a.is_contiguous():
        return torch.addmm(bias, a.flatten(0, -2), b).unflatten(0, a.shape[:-1])
    return torch.matmul(a, b).add_(bias)


def operands(shape: Shape, g: torch.Generator, device: torch.device):
    """A and B of `shape`, in its layout, drawn from `g` (on the CPU, then moved to `device`)."""
    if shape.layout == "TN":  # x^T of a weight gradient
        a = torch.randn(*((shape.batch,) if shape.bmm else ()), shape.k, shape.m, generator=g).to(device).mT
    else:
        a_size = (shape.m, shape.k) if shape.batch == 1 else (shape.batch, shape.m, shape.k)
        a = torch.randn(a_size, generator=g).to(device)
    b_batch = (shape.batch,) if shape.bmm else ()
    if shape.layout == "NT":
        b = torch.randn(*b_batch, shape.n, shape.k, generator=g).to(device).mT  # nn.Linear's W^T
    else:
        b = torch.randn(*b_batch, shape.k, shape.n, generator=g).to(device)
    return a, b


def run(tiers: list[str], shapes: list[Shape], device: torch.device, warmup: int, repeats: int,
        budget_s: float, progress: bool = True, cold_l2: bool = False, precision: str = "highest",
        fp32_precision: str = "none", passes: int = 1, against_highest: bool = False,
        bias: bool = False) -> list[Row]:
    """Every tier and reference on every shape. The tiers run under torch's fp32 matmul
    `precision` and gemmtiles' `fp32_precision` (what `auto` may then use); cuBLAS's references
    are fp32 (TF32 off) and, where a tier or the precision allows TF32, cuBLAS TF32.

    passes: each shape's tiers and references are timed this many times in turn (all of them
    once, then all again), and each keeps the least of its medians: a slow spell of the GPU
    that lasts a few milliseconds then falls on every side of one pass, not on one side of a
    ratio. The progress count is of the first pass (the later ones add no new result).

    against_highest: each tier is also timed under torch's "highest" and gemmtiles' "none" (as
    `<tier>@highest`, in the same passes), and its rows carry vs_highest, its speed over that:
    what a setting that permits other math gains or loses against the exact default.

    bias: every product adds a bias row of N (nn.Linear's product): the tiers as c with beta 1,
    cuBLAS as stock torch adds it (linear_product). The operands are those drawn without it."""
    if passes < 1:
        raise ValueError(f"passes must be >= 1, got {passes}")
    if against_highest and precision == "highest" and fp32_precision == "none":
        raise ValueError("against_highest: the tiers already run under 'highest' and 'none'; set precision "
                         "or fp32_precision to another value")
    from .precision import fp32_precision as ours

    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    refs = _reference_names(tiers, device, precision)
    ref_name = refs[0]
    if against_highest:
        refs = refs + [t + HIGHEST for t in tiers]
    rows: list[Row] = []
    total = len(shapes) * (len(tiers) + len(refs))
    done = 0
    g = torch.Generator(device="cpu").manual_seed(0)
    g_bias = torch.Generator(device="cpu").manual_seed(1)  # apart, so that a and b stay the same draws
    beta = 1.0 if bias else 0.0
    for shape in shapes:
        a, b = operands(shape, g, device)
        c = torch.randn(shape.n, generator=g_bias).to(device) if bias else None
        flops = 2.0 * shape.batch * shape.m * shape.n * shape.k
        exact = torch.matmul(a.double(), b.double())
        if c is not None:
            exact += c.double()
        exact_norm = exact.norm().item() or 1.0
        results, fns = {}, {}
        if progress and not sys.stderr.isatty():  # a log: one line per shape
            print(f"[{done + 1}/{total}] {shape.label}", file=sys.stderr, flush=True)
        for name in refs + tiers:
            done += 1
            if progress and sys.stderr.isatty():  # a terminal: one line, rewritten per tier
                print(f"\r[{done}/{total}] {shape.label:<24} {name:<14}", end="", file=sys.stderr, flush=True)
            if name == TF32_REF:
                fn = lambda a=a, b=b, c=c: cublas_matmul(a, b, tf32=True, bias=c)  # noqa: E731
            elif name == ref_name:
                fn = lambda a=a, b=b, c=c: linear_product(a, b, c)  # noqa: E731
            elif name.endswith(HIGHEST):
                def fn(a=a, b=b, c=c, name=name.removesuffix(HIGHEST)):
                    with _fp32_matmul_precision("highest"), ours("none"):
                        return sgemm(a, b, tier=name, c=c, beta=beta)
            else:
                def fn(a=a, b=b, c=c, name=name):
                    with _fp32_matmul_precision(precision), ours(fp32_precision):
                        return sgemm(a, b, tier=name, c=c, beta=beta)
            out = fn()
            err = (out.double() - exact).norm().item() / exact_norm
            del out
            ms, n = _timer(device, fn, warmup, repeats, budget_s, cold_l2)
            results[name] = (ms, n, err)
            fns[name] = fn
        for _ in range(passes - 1):
            for name, fn in fns.items():
                ms, n = _timer(device, fn, warmup, repeats, budget_s, cold_l2)
                best, runs, err = results[name]
                results[name] = (min(best, ms), runs + n, err)
        del fn, fns, exact
        ref_tflops = flops / results[ref_name][0] / 1e9
        tf32_tflops = flops / results[TF32_REF][0] / 1e9 if TF32_REF in results else None
        prev = None
        for name in refs + tiers:
            ms, n, err = results[name]
            tf = flops / ms / 1e9
            tier = name.removesuffix(HIGHEST)
            kind = "tf32" if name == TF32_REF else BY_NAME[tier].precision if tier in BY_NAME else "fp32"
            peak = peak_tflops(device, kind)
            rows.append(Row(
                shape=shape.label, group=shape.group, tier=name, ms=ms, tflops=tf,
                vs_previous=None if name in refs or prev is None else tf / prev,
                vs_cublas=tf / ref_tflops,
                vs_tf32=None if tf32_tflops is None or name in refs else tf / tf32_tflops,
                peak_share=None if peak is None else tf / peak,
                runs=n, rel_err=err, b_gbps=4.0 * shape.k * shape.n / ms / 1e6,
                macs=shape.macs, m=shape.m, layout=shape.layout, bmm=shape.bmm,
                vs_highest=results[name + HIGHEST][0] / ms if name + HIGHEST in results else None,
            ))
            if name not in refs:
                prev = tf
        del a, b, c
    if progress and sys.stderr.isatty():
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    return rows


def overhead_cases(device: torch.device, size: int = 64):
    """(name, gemmtiles call, torch call) pairs of the per-call cost at size x size: a GEMM
    this small is launch- and dispatch-bound, so the ratio is the overhead gemmtiles adds."""
    from .nn import Linear

    g = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=g).to(device)
    b = torch.randn(size, size, generator=g).to(device)
    stock = torch.nn.Linear(size, size, device=device)
    ours = Linear(size, size, device=device)
    ours.load_state_dict(stock.state_dict())
    x = torch.randn(size, size, generator=g).to(device).requires_grad_()

    def fwd_bwd(layer):
        def step():
            layer(x).sum().backward()
        return step

    def no_grad(fn):
        def call():
            with torch.no_grad():
                return fn()
        return call

    return [
        (f"sgemm vs torch.mm {size}x{size}", lambda: sgemm(a, b), lambda: torch.mm(a, b)),
        (f"Linear fwd {size}x{size} (no_grad)", no_grad(lambda: ours(x)), no_grad(lambda: stock(x))),
        (f"Linear fwd {size}x{size}", lambda: ours(x), lambda: stock(x)),
        (f"Linear fwd+bwd {size}x{size}", fwd_bwd(ours), fwd_bwd(stock)),
    ]


def back_to_back(device: torch.device, fn: Callable[[], object], calls: int, runs: int) -> list[float]:
    """Seconds per call of fn() in each of `runs` runs of `calls` calls issued back to back, the
    host's dispatch included: a GPU is synchronised before each run and at its end."""
    per_call = []
    for _ in range(runs):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        per_call.append((time.perf_counter() - t0) / calls)
    return per_call


def measure_overhead(device: torch.device, calls: int = 2000, rounds: int = 5):
    """Wall time per call (microseconds, best of `rounds` runs of `calls` back-to-back calls,
    the GPU synchronised at the end of each run) of gemmtiles and torch on each case."""
    def per_call(fn) -> float:
        return min(back_to_back(device, fn, calls, rounds)) * 1e6

    results = []
    for name, ours, theirs in overhead_cases(device):
        for fn in (ours, theirs):
            for _ in range(50):
                fn()
        results.append((name, per_call(ours), per_call(theirs)))
    return results


def _fmt(x: Optional[float], spec: str) -> str:
    return "" if x is None else format(x, spec)


def table(rows: list[Row], device_name: str, ref_name: str) -> str:
    tf32 = any(r.vs_tf32 is not None for r in rows)
    head = (f"{'shape':<22} {'tier':<14} {'ms':>10} {'TFLOP/s':>9} {'B GB/s':>8} {'vs prev':>8} {'vs ' + ref_name:>10}"
            + (f" {'vs tf32':>8}" if tf32 else "") + f" {'peak':>6} {'rel err':>9}")
    lines = [f"gemmtiles.bench on {device_name}", head, "-" * len(head)]
    last = None
    for r in rows:
        if last is not None and r.shape != last:
            lines.append("")
        last = r.shape
        lines.append(
            f"{r.shape:<22} {r.tier:<14} {r.ms:>10.4f} {r.tflops:>9.3f} {r.b_gbps:>8.0f} {_fmt(r.vs_previous, '.2f'):>8}"
            f" {_fmt(r.vs_cublas, '.3f'):>10}" + (f" {_fmt(r.vs_tf32, '.3f'):>8}" if tf32 else "")
            + f" {_fmt(None if r.peak_share is None else 100 * r.peak_share, '.1f'):>6}"
            f" {_fmt(r.rel_err, '.1e'):>9}"
        )
    return "\n".join(lines)


def _pyplot():
    """matplotlib's pyplot on the Agg backend (files, no display), or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _save(fig, path: str, dpi: int) -> bool:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    _pyplot().close(fig)
    return True


def plot(rows: list[Row], path: str, device_name: str, ref_name: str) -> bool:
    plt = _pyplot()
    if plt is None:
        return False
    squares = [r for r in rows if r.group == "squares"]
    if not squares:
        return False
    fig, ax = plt.subplots(figsize=(9, 6))
    for tier in dict.fromkeys(r.tier for r in squares):
        pts = sorted((int(r.shape.split("x")[0]), r.tflops) for r in squares if r.tier == tier)
        style = dict(color="black", linestyle="--", linewidth=2) if tier == ref_name else dict(marker="o")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=tier, **style)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s (fp32)")
    ax.set_title(f"gemmtiles ladder vs {ref_name} on {device_name}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path, dpi=120)


ROW_BANDS = ((1, 16), (17, 256), (257, None))


def _quantile(xs: list[float], q: float) -> float:
    """The q-quantile of xs by linear interpolation between order statistics."""
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def ratio_stats(ratios: list[float]) -> dict:
    """The distribution of speed ratios: count, geometric mean, 5th and 10th percentile,
    median and minimum."""
    import math

    return {"n": len(ratios), "geomean": math.exp(sum(math.log(r) for r in ratios) / len(ratios)),
            "p5": _quantile(ratios, 0.05), "p10": _quantile(ratios, 0.10),
            "median": statistics.median(ratios), "min": min(ratios)}


def summary(rows: list[Row], ref_name: str, key: str = "vs_cublas") -> dict[str, dict[str, dict]]:
    """Per tier, the distribution of its speed ratio to the reference (ratio_stats; key: the
    Row field, vs_cublas or vs_tf32) over all shapes, by layout (batched products of their own
    B apart) and by row band."""
    out = {}
    for tier in dict.fromkeys(r.tier for r in rows if getattr(r, key)):
        mine = [r for r in rows if r.tier == tier and getattr(r, key)]
        groups = {"all": mine}
        for layout in LAYOUTS:
            groups[layout] = [r for r in mine if r.layout == layout and not r.bmm]
        groups["bmm"] = [r for r in mine if r.bmm]
        for lo, hi in ROW_BANDS:
            groups[f"M {lo}-{hi}" if hi else f"M {lo}+"] = [r for r in mine if r.m >= lo and (hi is None or r.m <= hi)]
        out[tier] = {name: ratio_stats([getattr(r, key) for r in g]) for name, g in groups.items() if g}
    return out


def summary_table(stats: dict[str, dict[str, dict]], ref_name: str) -> str:
    w = max([10] + [len(t) for t in stats])
    head = f"{'tier':<{w}} {'group':<10} {'n':>4} {'geomean':>8} {'p5':>6} {'p10':>6} {'median':>7} {'min':>6}"
    lines = [f"speed against {ref_name} (higher is faster)", head, "-" * len(head)]
    for tier, groups in stats.items():
        for name, st in groups.items():
            lines.append(f"{tier:<{w}} {name:<10} {st['n']:>4} {st['geomean']:>8.3f} {st['p5']:>6.3f} {st['p10']:>6.3f}"
                         f" {st['median']:>7.3f} {st['min']:>6.3f}")
    return "\n".join(lines)


def plot_ratios(rows: list[Row], path: str, device_name: str, ref_name: str) -> bool:
    """Each tier's speed ratio against the product's size, by layout, and beside it each side's
    error against float64."""
    plt = _pyplot()
    if plt is None:
        return False
    tiers = [t for t in dict.fromkeys(r.tier for r in rows) if t != ref_name]
    if not tiers:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    markers = {"NN": "o", "NT": "^", "TN": "s", "bmm": "x"}
    for tier in tiers:
        for kind, marker in markers.items():
            pts = [r for r in rows if r.tier == tier and (r.bmm if kind == "bmm" else r.layout == kind and not r.bmm)]
            if pts:
                axes[0].scatter([r.macs for r in pts], [r.vs_cublas for r in pts], marker=marker, s=18,
                                label=f"{tier} {kind}")
    axes[0].axhline(1.0, color="black", linewidth=1)
    axes[0].set(xscale="log", yscale="log", xlabel="multiply-adds", ylabel=f"speed / {ref_name}",
                title=f"speed against {ref_name} on {device_name}")
    for tier in [ref_name] + tiers:
        pts = [r for r in rows if r.tier == tier and r.rel_err]
        axes[1].scatter([r.macs for r in pts], [r.rel_err for r in pts], s=14, label=tier,
                        marker="_" if tier == ref_name else "o")
    axes[1].set(xscale="log", yscale="log", xlabel="multiply-adds", ylabel="||out - fp64|| / ||fp64||",
                title="error against float64")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path, dpi=110)


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors as one line (and exit status 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Optional[list[str]] = None) -> int:
    p = _Parser(prog="python -m gemmtiles.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tiers", default="all", help="comma-separated tier names, or 'all' (default)")
    p.add_argument("--shapes", default="all",
                   help="squares, odd, transformer, linear, small, batched, model, all (default), "
                        "random[:N[:SEED[:aligned]]] (N shapes drawn with SEED, summarised as a distribution; "
                        f"aligned: the same draws rounded up to multiples of {RANDOM_ALIGN_NK} columns and depth, "
                        f"{RANDOM_ALIGN_M} rows), or "
                        "[BATCHx]MxNxK[:NT|:TN],...")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--budget", type=float, default=1.0, help="seconds of timing per tier and shape (default 1)")
    p.add_argument("--passes", type=int, default=1,
                   help="time each shape's tiers and cuBLAS this many times in turn and keep each one's least "
                        "median (default 1): ratios then hold against the GPU's slow spells")
    p.add_argument("--out", default="bench-results", help="folder for CSV, JSON and the plot")
    p.add_argument("--cold-l2", action="store_true",
                   help="CUDA: fill the L2 with other data before each timed call, so that operands come "
                        "from DRAM (as a model's layers read their weights) even where they fit in L2")
    p.add_argument("--overhead", action="store_true",
                   help="per-call wall time of sgemm and nn.Linear against torch at 64x64 instead")
    p.add_argument("--precision", choices=["highest", "high", "medium"], default="highest",
                   help="torch.set_float32_matmul_precision for gemmtiles' calls and, with --model, for both "
                        "models; cuBLAS TF32 is then timed beside cuBLAS fp32 (default: highest)")
    p.add_argument("--fp32-precision", choices=["none", "ieee", "tf32", "tf32x3"], default="none",
                   help="gemmtiles' own precision setting (gemmtiles.fp32_precision) for its calls; with "
                        "--model, for the gemmtiles model's steps (default: none, follow torch)")
    p.add_argument("--against-highest", action="store_true",
                   help="time each tier under torch's 'highest' and gemmtiles' 'none' too, in the same passes "
                        "(as TIER@highest), and report each shape's speed over that: with --precision or "
                        "--fp32-precision set otherwise")
    p.add_argument("--model", action="store_true",
                   help="the model benchmark (benchmarks/test_models.py's model and scenarios) instead, stock "
                        "torch and gemmtiles steps interleaved, --repeats rounds after --warmup steps of each")
    p.add_argument("--bias", action="store_true",
                   help="every product adds a bias row of N, as nn.Linear's does: gemmtiles' tiers as c "
                        "(beta 1), cuBLAS as stock torch adds it (addmm, baddbmm)")
    p.add_argument("--no-table", action="store_true",
                   help="auto plans with no tuned table (its cost model alone, as on a GPU nobody tuned); "
                        "the same as GEMMTILES_AUTO_TABLES=0")
    args = p.parse_args(argv)

    if args.no_table:
        # Before any auto call: a device reads its table on its first one.
        from ._ops import _C
        _C.set_auto_table_dirs([])
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA GPU is visible here (torch.cuda.is_available() is False)")
    if args.device == "cuda" and not available_tiers("cuda"):
        p.error("--device cuda: this build of gemmtiles has no CUDA kernels (python -m gemmtiles.info)")
    if args.warmup < 0 or args.repeats < 1 or args.budget <= 0 or args.passes < 1:
        p.error("--warmup must be >= 0, --repeats >= 1, --budget > 0 and --passes >= 1")
    if args.against_highest and (args.model or (args.precision == "highest" and args.fp32_precision == "none")):
        p.error("--against-highest: compares products under another --precision or --fp32-precision with "
                "'highest'; set one of them, and leave out --model")
    if args.bias and (args.model or args.overhead):
        p.error("--bias: adds a bias row to the products of --shapes; leave out --model and --overhead")
    if args.cold_l2 and args.device != "cuda":
        p.error("--cold-l2: flushes a GPU's L2; it needs --device cuda")
    device = torch.device(args.device)
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    if args.model:
        if device.type != "cuda":
            p.error("--model: the model benchmark runs on a GPU; it needs --device cuda")
        try:
            import transformers  # noqa: F401
        except ImportError:
            p.error("--model: the model benchmark needs `transformers` (pip install transformers)")
        print(f"the model benchmark on {device_name}: stock torch against gemmtiles (default tier), "
              f"{args.repeats} interleaved rounds, median ms a step, torch's precision {args.precision!r}, "
              f"gemmtiles' {args.fp32_precision!r}")
        print(f"{'scenario':<16} {'torch':>9} {'gemmtiles':>10} {'speed':>6} {'rounds 25-75%':>14}")
        rows = measure_models(args.repeats, args.warmup, precision=args.precision,
                              fp32_precision=args.fp32_precision)
        for r in rows:
            print(f"{r.scenario:<16} {r.torch_ms:>9.2f} {r.gemmtiles_ms:>10.2f} {r.speed:>6.3f}"
                  f" {r.speed_q1:>6.3f}-{r.speed_q3:<6.3f}")
        try:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "model.json"), "w") as f:
                json.dump({"device": device_name, "torch": torch.__version__, "precision": args.precision,
                           "fp32_precision": args.fp32_precision, "rounds": args.repeats,
                           "rows": [asdict(r) for r in rows]}, f, indent=1)
        except OSError as e:
            p.error(f"--out: cannot write {args.out!r}: {e.strerror}")
        print(f"wrote {args.out}/model.json")
        return 0
    if args.overhead:
        print(f"gemmtiles per-call overhead on {device_name} (us per call, best of 5 x 2000 calls)")
        print(f"{'case':<34} {'gemmtiles':>10} {'torch':>8} {'ratio':>6}")
        for name, ours, theirs in measure_overhead(device):
            print(f"{name:<34} {ours:>10.2f} {theirs:>8.2f} {ours / theirs:>6.2f}")
        return 0
    available = available_tiers(device)
    tiers = available if args.tiers == "all" else args.tiers.split(",")
    for t in tiers:
        if t not in BY_NAME or t not in available:
            p.error(f"tier {t!r} does not run on {device.type} here; available: {', '.join(available)}")
    try:
        shapes = shape_set(args.shapes, device.type)
    except ValueError as e:
        p.error(str(e))
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        p.error(f"--out: cannot create {args.out!r}: {e.strerror}")
    ref_name = _reference_names(tiers, device)[0]

    rows = run(tiers, shapes, device, args.warmup, args.repeats, args.budget, cold_l2=args.cold_l2,
               precision=args.precision, fp32_precision=args.fp32_precision, passes=args.passes,
               against_highest=args.against_highest, bias=args.bias)
    if args.precision != "highest":
        print(f"(--precision {args.precision}: gemmtiles' calls under torch.set_float32_matmul_precision"
              f"({args.precision!r}))")
    if args.cold_l2:
        print("(--cold-l2: the L2 filled with other data before each timed call)")
    if args.bias:
        print("(--bias: every product adds a bias row, a @ b + bias)")
    print(table(rows, device_name, ref_name))
    with open(os.path.join(args.out, "bench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(asdict(rows[0]).keys()))
        w.writeheader()
        w.writerows(asdict(r) for r in rows)
    meta = {"device": device_name, "torch": torch.__version__, "reference": ref_name, "bias": args.bias,
            "peak_tflops": peak_tflops(device), "rows": [asdict(r) for r in rows]}
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(meta, f, indent=1)
    plotted = plot(rows, os.path.join(args.out, "bench.png"), device_name, ref_name)
    wrote = [f"{args.out}/bench.csv", f"{args.out}/bench.json"] + ([f"{args.out}/bench.png"] if plotted else [])
    if any(s.group.startswith("random:") for s in shapes):
        sample = [r for r in rows if r.group.startswith("random:")]
        stats = {ref_name: summary([r for r in sample if r.tier != ref_name], ref_name)}
        if any(r.vs_tf32 for r in sample):
            stats[TF32_REF] = summary(sample, TF32_REF, key="vs_tf32")
        if any(r.vs_highest for r in sample):
            stats["itself under 'highest'"] = summary(sample, "itself under 'highest'", key="vs_highest")
        for ref, st in stats.items():
            print("\n" + summary_table(st, ref))
        for tier in dict.fromkeys(r.tier for r in sample if r.vs_highest):
            mine = [r for r in sample if r.tier == tier and r.vs_highest]
            slower = sorted((r for r in mine if r.vs_highest < 1 / 1.03), key=lambda r: r.vs_highest)
            print(f"\n{tier}: {len(slower)} of {len(mine)} shapes more than 3% slower than under 'highest'"
                  + (": " + ", ".join(f"{r.shape} {r.vs_highest:.3f}x" for r in slower[:5]) if slower else ""))
        with open(os.path.join(args.out, "random.json"), "w") as f:
            json.dump({"device": device_name, "torch": torch.__version__, "shapes": args.shapes,
                       "precision": args.precision, "fp32_precision": args.fp32_precision, "bias": args.bias,
                       "stats": stats}, f, indent=1)
        wrote.append(f"{args.out}/random.json")
        if plot_ratios([r for r in rows if r.group.startswith("random:")], os.path.join(args.out, "random.png"),
                       device_name, ref_name):
            wrote.append(f"{args.out}/random.png")
    print("\nwrote " + ", ".join(wrote))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
