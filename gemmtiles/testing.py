"""Helpers shared by the tests, the benchmarks and the scripts: tier parametrisation from the
tier table, operands in every layout, the accuracy rule (error against a float64 reference,
compared with fp32 torch.matmul's own error on the same inputs), problems past the fuzz
suite's sizes, and a small transformer block. Needs pytest (the ``test`` extra)."""

from __future__ import annotations

import math
import random

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import gemmtiles
from . import _ops
from ._tiers import BY_NAME, TIERS

__all__ = ["CUDA", "DEVICE", "Block", "FUZZ_BATCH_MODES", "FUZZ_C_KINDS", "FUZZ_SCALARS", "LARGE_MODES",
           "assert_gemm_close", "check_large_problem", "check_tier", "fuzz_batches", "fuzz_c", "kernels_run",
           "large_problem", "needs_cuda", "operand", "reference", "run", "synchronized", "tier_params", "tolerance",
           "accuracy_operands", "relative_error"]

CUDA = torch.cuda.is_available()
DEVICE = "cuda" if CUDA else "cpu"  # where the benchmarks run


needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")


def _capability_mark(tier):
    if not CUDA:
        return []
    why = _ops.unavailable_on_gpu(tier)
    return [pytest.mark.skipif(why is not None, reason=f"{tier.name}: {why}")]


def tier_params(devices=("cpu", "cuda")):
    """pytest params (tier, device) for every tier on every device it runs on; CUDA ones skip
    without a GPU or where the GPU is older than the tier needs."""
    params = []
    for t in TIERS:
        for d in t.devices:
            if d not in devices:
                continue
            marks = [needs_cuda] + _capability_mark(t) if d == "cuda" else []
            params.append(pytest.param(t.name, d, id=f"{t.name}-{d}", marks=marks))
    return params


def kernels_run(fn):
    """The names of the CUDA kernels fn() ran, from torch's profiler; skips the test where the
    profiler sees none (CUPTI held by another tool, as under compute-sanitizer)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not names:
        pytest.skip("the profiler sees no kernels in this process")
    return names


def operand(rows, cols, device, layout="row", pad=0, offset=0, batch=None, generator=None):
    """A float32 (rows, cols) operand, or (batch, rows, cols), stored as asked:
    layout "row" (unit column stride) or "col" (unit row stride); `pad` extra elements per
    leading dimension (a slice of a wider matrix); `offset` elements before the first one
    (offsets 1-3 misalign the pointer for float4)."""
    lead, inner = (rows, cols) if layout == "row" else (cols, rows)
    ld = inner + pad
    per = lead * ld
    nb = 1 if batch is None else batch
    storage = torch.randn(offset + nb * per, generator=generator).to(device)
    full = storage[offset:].view(nb, lead, ld)[:, :, :inner]
    t = full if layout == "row" else full.transpose(1, 2)
    return t[0] if batch is None else t


def reference(a, b, c=None, alpha=1.0, beta=0.0, on="cpu"):
    """alpha a b + beta c in float64, computed on device `on`."""
    out = alpha * torch.matmul(a.double().to(on), b.double().to(on))
    if c is not None and beta != 0:
        out = out + beta * c.double().to(on)
    return out


# Unit roundoff of the inputs' rounding, by the tier table's precision.
# tf32: 10 mantissa bits, and the tensor cores may truncate rather than round (2^-10);
# tf32x3: hi + lo keeps 21-22 bits of each operand and drops lo*lo (2^-21).
_EPS = {"fp32": torch.finfo(torch.float32).eps, "tf32": 2.0**-10, "tf32x3": 2.0**-21}


def assert_gemm_close(out, a, b, c=None, alpha=1.0, beta=0.0, precision="fp32", on="cpu"):
    """out must be within 4x fp32 torch.matmul's worst error against the float64 reference,
    plus an elementwise bound that grows with sqrt(K): 2 * sqrt(K) * eps * (|alpha| |a||b| +
    |beta| |c|), eps being the unit roundoff of `precision` (a key of the tier table's
    PRECISIONS). A lost or doubled term, a wrong index or an unwritten element is far outside
    it; summation order is not. The reference, the bound and fp32 torch.matmul's result are
    computed on device `on`: the CPU, or the GPU for products too large for the CPU's float64
    (there call it under torch's "highest" float32 matmul precision, so that torch.matmul's
    result is fp32's)."""
    ref = reference(a, b, c, alpha, beta, on)
    assert out.dtype == torch.float32
    assert tuple(out.shape) == tuple(ref.shape), (out.shape, ref.shape)
    k = a.shape[-1]
    eps = _EPS[precision]
    mag = abs(alpha) * torch.matmul(a.double().abs().to(on), b.double().abs().to(on))
    if c is not None and beta != 0:
        mag = mag + abs(beta) * c.double().abs().to(on)
    torch_out = alpha * torch.matmul(a.to(on), b.to(on))
    if c is not None and beta != 0:
        torch_out = torch_out + beta * c.to(on)
    torch_err = (torch_out.double() - ref).abs().max().item() if ref.numel() else 0.0
    tol = 4 * torch_err + 2 * max(k, 1) ** 0.5 * eps * mag + 1e-30
    err = (out.double().to(on) - ref).abs()
    assert torch.isfinite(out).all(), "non-finite values in the output"
    bad = err > tol
    if bad.any():
        idx = bad.nonzero()[0].tolist()
        raise AssertionError(
            f"{int(bad.sum())} of {out.numel()} elements off; first at {idx}: "
            f"got {out.cpu()[tuple(idx)].item()}, want {ref[tuple(idx)].item()}, tol {tol[tuple(idx)].item():.3g}"
        )


# What the fuzzers (tests/test_fuzz.py, large_problem) draw besides sizes and strides: alpha
# and beta; how a batch is given (none, both sides, one side, or A's batch of 1 broadcast
# against B's), weighted to none; and c's kind.
FUZZ_SCALARS = [0.0, 1.0, -1.0, 0.5, -2.75, 1e-3, 3.0]
FUZZ_BATCH_MODES = [None, None, None, "both", "a", "b", "a1"]
FUZZ_C_KINDS = [None, "full", "row", "col"]


# Each of tf32's routes as gemmtiles._C.force_tf32_route takes them, (kernel, tile_n, splits):
# the narrow kernel on its three widths, tf32's own on its two tiles, the transposing kernel
# and Ampere's on one and three splits (tests/test_tensor_core.py, scripts/sanitize_cases.py).
TF32_FORCED_ROUTES = [("narrow", 32, 0), ("narrow", 64, 0), ("narrow", 128, 0), ("own", 128, 0), ("own", 256, 0),
                      ("transposing", 0, 0), ("ampere", 0, 1), ("ampere", 0, 3)]


def fuzz_batches(mode, size):
    """(A's batch, B's batch) for a FUZZ_BATCH_MODES mode of `size` entries (None: no batch)."""
    return {None: (None, None), "both": (size, size), "a": (size, None), "b": (None, size), "a1": (1, size)}[mode]


def fuzz_c(kind, m, n, device, generator=None):
    """c of a FUZZ_C_KINDS kind for an m x n output: None, full, a bias row of n or a column
    of m; from `generator` (a CPU one) where given, else drawn on `device`."""
    if kind is None:
        return None
    shape = {"full": (m, n), "row": (n,), "col": (m, 1)}[kind]
    if generator is None:
        return torch.randn(shape, device=device)
    return torch.randn(shape, generator=generator).to(device)


# Problems past tests/test_fuzz.py's sizes of 300, where auto's tensor-core routes and the
# exact kernels' split and stream-K plans run (scripts/fuzz_large.py, test_fuzz_large_sizes).
# Each mode: (tier, torch's float32 matmul precision for the call, the accuracy rule's precision).
LARGE_MODES = [("auto", "high", "tf32"), ("auto", "highest", "fp32"), ("tf32", "highest", "tf32"),
               ("tf32x3", "highest", "tf32x3")]
LARGE_MAX_MACS = 2**34
LARGE_MAX_FLOATS = 10**8


def large_problem(rng: random.Random) -> dict:
    """A problem drawn with `rng`: M log-uniform in [1, 2048], N in [8, 8192], K in [8, 16384],
    or half the time M in [8, 2048], N in [256, 8192], K in [256, 16384] (at most
    LARGE_MAX_MACS multiply-adds and LARGE_MAX_FLOATS floats of operands and output); half of
    them rounded down to multiples of 4 (at least 4); each operand row- or column-major, for 40%
    of the problems with no pad and no offset, for the others with leading dimensions padded by
    0-5 and storage offsets of 0-4 floats; a batch of 2-3 on both sides, on one, or broadcast
    from a batch of 1, or none; c absent, full, a bias row or a column; alpha and beta from
    test_fuzz.py's list."""
    def log_uniform(lo, hi):
        return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))

    while True:
        if rng.random() < 0.5:
            m, n, k = log_uniform(1, 2048), log_uniform(8, 8192), log_uniform(8, 16384)
        else:
            m, n, k = log_uniform(8, 2048), log_uniform(256, 8192), log_uniform(256, 16384)
        if rng.random() < 0.5:
            m, n, k = (max(4, x // 4 * 4) for x in (m, n, k))
        batch = rng.choice(FUZZ_BATCH_MODES)
        size = rng.randint(2, 3)
        entries = 1 if batch is None else size
        if m * n * k * entries <= LARGE_MAX_MACS and (m * k + k * n + m * n) * entries <= LARGE_MAX_FLOATS:
            break
    aligned = rng.random() < 0.4

    def spec():
        return dict(layout=rng.choice(["row", "col"]), pad=0 if aligned else rng.choice([0, 0, 1, 3, 4, 5]),
                    offset=0 if aligned else rng.choice([0, 0, 1, 2, 3, 4]))

    a_batch, b_batch = fuzz_batches(batch, size)
    return dict(m=m, n=n, k=k, a=spec(), b=spec(), a_batch=a_batch, b_batch=b_batch,
                c=rng.choice(FUZZ_C_KINDS), alpha=rng.choice(FUZZ_SCALARS), beta=rng.choice(FUZZ_SCALARS))


def check_large_problem(p: dict, tier: str, setting: str, precision: str, generator: torch.Generator) -> None:
    """Runs large_problem's `p` on `tier` under torch's float32 matmul precision `setting`, on
    operands drawn from `generator`, and checks it with assert_gemm_close's bound for
    `precision`, its reference on the GPU. Torch's precision is restored after."""
    m, n, k = p["m"], p["n"], p["k"]
    a = operand(m, k, "cuda", batch=p["a_batch"], generator=generator, **p["a"])
    b = operand(k, n, "cuda", batch=p["b_batch"], generator=generator, **p["b"])
    c = fuzz_c(p["c"], m, n, "cuda", generator)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(setting)
        out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=p["alpha"], beta=p["beta"])
        torch.set_float32_matmul_precision("highest")  # the reference's fp32 torch.matmul
        assert_gemm_close(out, a, b, c, p["alpha"], p["beta"], precision=precision, on="cuda")
    finally:
        torch.set_float32_matmul_precision(before)


def tolerance(tier, rtol, atol):
    """torch.testing.assert_close tolerances for a result of `tier`: those given (set for fp32
    arithmetic) unless the tier's precision is coarser (tf32: 10 mantissa bits)."""
    if BY_NAME[tier].precision == "tf32":
        return {"rtol": max(rtol, 2e-2), "atol": max(atol, 2e-2)}
    return {"rtol": rtol, "atol": atol}


def _seeded_operands(m, n, k, seed, scale, layout, device):
    """a (m x k) and b (k x n) from a seeded float64 normal draw, rows and columns of both
    scaled by scale(size, generator) unless it is None, rounded to float32; layout NT: b
    column-major (nn.Linear's W^T)."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g, dtype=torch.float64)
    b = torch.randn(k, n, generator=g, dtype=torch.float64)
    if scale is not None:
        a = a * scale(m, g)[:, None] * scale(k, g)[None, :]
        b = b * scale(k, g)[:, None] * scale(n, g)[None, :]
    a, b = a.float().to(device), b.float().to(device)
    return a, (b.T.contiguous().T if layout == "NT" else b)


def accuracy_operands(m, n, k, wide, seed, layout="NN", device="cuda"):
    """a (m x k) and b (k x n) from a seeded float64 normal draw, rounded to float32; wide:
    rows and columns of both scaled by 10^[-4, 4] (products span 1e-16 .. 1e16); layout NT:
    b column-major (nn.Linear's W^T)."""
    def scale(size, g):
        return 10.0 ** (torch.rand(size, generator=g, dtype=torch.float64) * 8 - 4)
    return _seeded_operands(m, n, k, seed, scale if wide else None, layout, device)


def log_normal_operands(m, n, k, wide, seed, layout="NN", device="cuda"):
    """As accuracy_operands, wide meaning rows and columns scaled by exp(2 N(0, 1)): the
    precision issue's rule for tf32x3's error (tests/test_tensor_core.py)."""
    def scale(size, g):
        return torch.exp(2 * torch.randn(size, generator=g, dtype=torch.float64))
    return _seeded_operands(m, n, k, seed, scale if wide else None, layout, device)


def relative_error(out, a, b):
    """Mean over elements of |out - exact| / (|a| @ |b|) against a float64 product: each
    element's error against the size of its own terms, so that small and large elements
    count alike."""
    exact = a.double() @ b.double()
    mag = a.double().abs() @ b.double().abs()
    return ((out.double() - exact).abs() / mag).mean().item()


def run(tier, a, b, c=None, alpha=1.0, beta=0.0):
    out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=alpha, beta=beta)
    if out.is_cuda:
        torch.cuda.synchronize()
    return out


def check_tier(tier, a, b, c=None, alpha=1.0, beta=0.0):
    """Runs `tier` and checks its output with the tolerance of the tier's precision."""
    out = run(tier, a, b, c, alpha, beta)
    assert_gemm_close(out, a, b, c, alpha, beta, precision=BY_NAME[tier].precision)
    return out


def synchronized(fn):
    """fn, followed by a GPU synchronisation where there is a GPU (for timing one call)."""
    if CUDA:
        def run_synced():
            out = fn()
            torch.cuda.synchronize()
            return out
        return run_synced
    return fn


class Block(nn.Module):
    """A pre-norm transformer block: self-attention and a GELU MLP."""

    def __init__(self, d: int = 32, heads: int = 4, hidden: int = 96):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.head = nn.Linear(d, 1, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return self.head(x).squeeze(-1)
