"""Per-call cost at 64x64, where a GEMM is dispatch- and launch-bound: gemmtiles.sgemm against
torch.mm and gemmtiles.nn.Linear against torch.nn.Linear (forward, and forward + backward),
each pair in one group. ``python -m gemmtiles.bench --overhead`` prints the same as ratios."""

from __future__ import annotations

import pytest
import torch

from gemmtiles.bench import overhead_cases

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
CASES = overhead_cases(DEVICE)


@pytest.mark.parametrize("impl", ["gemmtiles", "torch"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_overhead(benchmark, case, impl):
    name, ours, theirs = CASES[case]
    benchmark.group = name
    # Back-to-back calls as in eager code; the GPU is not synchronised per call.
    benchmark(ours if impl == "gemmtiles" else theirs)
