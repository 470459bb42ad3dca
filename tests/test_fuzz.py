"""Property-based fuzzing of every tier against float64 (hypothesis).

Random M, N, K weighted to 0, 1, primes and tile edges; row- and column-major operands,
slices with a leading dimension larger than the size, storage offsets that misalign the
pointer by 1-3 floats; batches with broadcasting; alpha and beta including 0, negative and
non-integral; c absent, full, a bias row or a column.

Profiles (``--hypothesis-profile=NAME``): ``ci`` (default, 200 examples a tier), ``gpu``
(500 a tier). Examples are derandomized (a fixed seed per test); a failure prints its
falsifying example and a ``@reproduce_failure`` line to replay it, and
``--hypothesis-seed=N`` explores another seed.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import gemmtiles
from gemmtiles._tiers import BY_NAME
from gemmtiles.testing import assert_gemm_close, operand, tier_params

EDGES = [0, 1, 2, 3, 4, 5, 7, 8, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 131, 255, 256, 257]
dims = st.one_of(st.sampled_from(EDGES), st.integers(0, 300))
scalars = st.sampled_from([0.0, 1.0, -1.0, 0.5, -2.75, 1e-3, 3.0])


@st.composite
def problems(draw):
    m, n, k = draw(dims), draw(dims), draw(dims)
    batch = draw(st.sampled_from([None, None, None, "both", "a", "b", "a1"]))
    bsz = draw(st.integers(1, 3))
    spec = lambda: dict(layout=draw(st.sampled_from(["row", "col"])), pad=draw(st.sampled_from([0, 0, 1, 3, 5])),
                        offset=draw(st.sampled_from([0, 0, 1, 2, 3])))
    a_spec, b_spec = spec(), spec()
    a_batch = {None: None, "both": bsz, "a": bsz, "b": None, "a1": 1}[batch]
    b_batch = {None: None, "both": bsz, "a": None, "b": bsz, "a1": bsz}[batch]
    c_kind = draw(st.sampled_from([None, "full", "row", "col"]))
    return m, n, k, a_spec, b_spec, a_batch, b_batch, c_kind, draw(scalars), draw(scalars)


@pytest.mark.parametrize("tier,device", tier_params())
def test_fuzz(tier, device):
    @given(problems())
    def check(problem):
        m, n, k, a_spec, b_spec, a_batch, b_batch, c_kind, alpha, beta = problem
        a = operand(m, k, device, batch=a_batch, **a_spec)
        b = operand(k, n, device, batch=b_batch, **b_spec)
        c = {None: None, "full": lambda: torch.randn(m, n, device=device),
             "row": lambda: torch.randn(n, device=device),
             "col": lambda: torch.randn(m, 1, device=device)}[c_kind]
        c = c() if c is not None else None
        out = gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=alpha, beta=beta)
        assert_gemm_close(out, a, b, c, alpha, beta, precision=BY_NAME[tier].precision)

    check()
