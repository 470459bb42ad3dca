"""Property-based fuzzing of every tier against float64 (hypothesis).

Random M, N, K weighted to 0, 1, primes and tile edges; row- and column-major operands,
slices with a leading dimension larger than the size, storage offsets that misalign the
pointer by 1-3 floats; batches with broadcasting; alpha and beta including 0, negative and
non-integral; c absent, full, a bias row or a column.

Profiles (``--hypothesis-profile=NAME``): ``ci`` (default, 200 examples a tier), ``gpu``
(500 a tier). Examples are derandomized (a fixed seed per test); a failure prints its
falsifying example and a ``@reproduce_failure`` line to replay it, and
``--hypothesis-seed=N`` explores another seed.

Past those sizes, test_fuzz_large_sizes runs the first 12 problems of
scripts/fuzz_large.py's seed 64 (gemmtiles.testing.large_problem: up to 2048 x 8192 x 16384)
on `auto` under torch's "high" and "highest", `tf32` and `tf32x3`, on a GPU; the script runs
as many as a time budget allows.
"""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import gemmtiles
from gemmtiles._tiers import BY_NAME
from gemmtiles.testing import (FUZZ_BATCH_MODES, FUZZ_C_KINDS, FUZZ_SCALARS, LARGE_MAX_FLOATS, LARGE_MAX_MACS,
                               LARGE_MODES, assert_gemm_close, check_large_problem, fuzz_batches, fuzz_c,
                               large_problem, operand, tier_params)

EDGES = [0, 1, 2, 3, 4, 5, 7, 8, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 131, 255, 256, 257]
dims = st.one_of(st.sampled_from(EDGES), st.integers(0, 300))
scalars = st.sampled_from(FUZZ_SCALARS)


@st.composite
def problems(draw):
    m, n, k = draw(dims), draw(dims), draw(dims)
    batch = draw(st.sampled_from(FUZZ_BATCH_MODES))
    bsz = draw(st.integers(1, 3))
    spec = lambda: dict(layout=draw(st.sampled_from(["row", "col"])), pad=draw(st.sampled_from([0, 0, 1, 3, 5])),
                        offset=draw(st.sampled_from([0, 0, 1, 2, 3])))
    a_spec, b_spec = spec(), spec()
    a_batch, b_batch = fuzz_batches(batch, bsz)
    c_kind = draw(st.sampled_from(FUZZ_C_KINDS))
    return m, n, k, a_spec, b_spec, a_batch, b_batch, c_kind, draw(scalars), draw(scalars)


@pytest.mark.parametrize("tier,device", tier_params())
def test_fuzz(tier, device):
    @given(problems())
    def check(problem):
        m, n, k, a_spec, b_spec, a_batch, b_batch, c_kind, alpha, beta = problem
        a = operand(m, k, device, batch=a_batch, **a_spec)
        b = operand(k, n, device, batch=b_batch, **b_spec)
        c = fuzz_c(c_kind, m, n, device)
        out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=alpha, beta=beta)
        assert_gemm_close(out, a, b, c, alpha, beta, precision=BY_NAME[tier].precision)

    check()


def test_large_problems_keep_their_bounds():
    """large_problem's draws stay within their size limits and reach every kind it names."""
    rng = random.Random(1)
    draws = [large_problem(rng) for _ in range(2000)]
    for p in draws:
        entries = max(p["a_batch"] or 1, p["b_batch"] or 1)
        assert 1 <= p["m"] <= 2048 and 4 <= p["n"] <= 8192 and 4 <= p["k"] <= 16384, p
        assert p["m"] * p["n"] * p["k"] * entries <= LARGE_MAX_MACS, p
        assert (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]) * entries <= LARGE_MAX_FLOATS, p
    assert any(p["m"] * p["n"] * p["k"] > 2**31 for p in draws)  # past 2^31 multiply-adds
    assert any(p["m"] <= 16 for p in draws) and any(p["m"] > 1024 for p in draws)
    assert any(p["a"]["offset"] % 4 for p in draws) and any(p["b"]["pad"] % 4 for p in draws)
    assert {p["a"]["layout"] for p in draws} == {"row", "col"}
    assert {(p["a_batch"], p["b_batch"]) for p in draws} >= {(None, None), (1, 2), (2, None), (None, 3), (3, 3)}
    assert {p["c"] for p in draws} == {None, "full", "row", "col"}


def _large_params():
    marks = {p.values[0]: p.marks for p in tier_params(devices=("cuda",))}
    return [pytest.param(tier, setting, precision, id=f"{tier}-{setting}", marks=marks[tier])
            for tier, setting, precision in LARGE_MODES]


@pytest.mark.parametrize("tier,setting,precision", _large_params())
def test_fuzz_large_sizes(tier, setting, precision):
    """The first problems of scripts/fuzz_large.py's seed 64, on every mode it runs."""
    rng, gen = random.Random(64), torch.Generator().manual_seed(64)
    for _ in range(12):
        check_large_problem(large_problem(rng), tier, setting, precision, gen)
