"""pytest-benchmark suites: ``pytest benchmarks --benchmark-only``.

Each benchmark is one call synchronised inside the timed function, grouped by shape, with
cuBLAS (torch.matmul, TF32 off) in the same group. GPU suites skip without a GPU; on the CPU
the CPU tiers run against torch.matmul on small shapes. Shared helpers: gemmtiles.testing."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _no_tf32():
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
