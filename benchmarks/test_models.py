"""A whole model: a random-init Llama-style model from `transformers` (fp32, no download;
its config and steps are gemmtiles.bench's MODEL_CONFIG, model_pair and model_step) on stock
torch against the same model with every Linear replaced by gemmtiles' (default tier), TF32
off. Scenarios: a training step at batch 4x512, prefill 1x1024, and a
one-token forward at batch 1 and 8 (the Linear shapes of decoding). Skips without a GPU or
without `transformers`."""

from __future__ import annotations

import pytest
import torch

from gemmtiles.bench import MODEL_SCENARIOS as SCENARIOS
from gemmtiles.bench import model_pair, model_step
from gemmtiles.testing import CUDA, synchronized

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def models():
    torch.backends.cuda.matmul.allow_tf32 = False
    return model_pair()


@pytest.mark.parametrize("impl", ["torch", "gemmtiles"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_model(benchmark, models, scenario, impl):
    benchmark.group = f"llama {scenario}"
    benchmark.pedantic(synchronized(model_step(models[impl], scenario)), rounds=10, warmup_rounds=3)
