"""A whole model: a random-init Llama-style model from `transformers` (config below, fp32,
no download) on stock torch against the same model with every Linear replaced by gemmtiles'
(default tier), TF32 off. Scenarios: a training step at batch 4x512, prefill 1x1024, and a
one-token forward at batch 1 and 8 (the Linear shapes of decoding). Skips without a GPU or
without `transformers`."""

from __future__ import annotations

import copy

import pytest
import torch

from gemmtiles.bench import MODEL_CONFIG as CONFIG
from gemmtiles.bench import MODEL_SCENARIOS as SCENARIOS
from gemmtiles.nn import replace_linear
from gemmtiles.testing import CUDA, synchronized

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def models():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    stock = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIG)).cuda().float()
    ours = replace_linear(copy.deepcopy(stock))
    return {"torch": stock, "gemmtiles": ours}


@pytest.mark.parametrize("impl", ["torch", "gemmtiles"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_model(benchmark, models, scenario, impl):
    batch, tokens, train = SCENARIOS[scenario]
    model = models[impl]
    ids = torch.randint(0, CONFIG["vocab_size"], (batch, tokens), device="cuda",
                        generator=torch.Generator("cuda").manual_seed(1))

    if train:
        model.train()

        def step():
            model.zero_grad(set_to_none=True)
            model(input_ids=ids, labels=ids).loss.backward()
    else:
        model.eval()

        def step():
            with torch.no_grad():
                model(input_ids=ids, use_cache=False)

    benchmark.group = f"llama {scenario}"
    benchmark.pedantic(synchronized(step), rounds=10, warmup_rounds=3)
