"""Where a model's GPU time goes, stock torch against gemmtiles: the Llama-style model of
benchmarks/test_models.py, one scenario at a time under torch.profiler.

    python scripts/profile_model.py [scenario ...]   (default: every scenario)

Per scenario and implementation: the step's wall time, the GPU's busy time, and that time
split into matrix products (gemmtiles' kernels, or cuBLAS's) and everything else; then the
products by operator and input shapes (GPU time summed over the profiled steps), so a
slower product can be told from a slower rest of the model."""

from __future__ import annotations

import re
import sys
import time
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from gemmtiles.bench import MODEL_SCENARIOS, model_pair, model_step

STEPS = 3
PRODUCT_OPS = re.compile(r"^(gemmtiles::|aten::(mm|addmm|bmm|baddbmm)$)")


def kernel_group(name: str) -> str:
    if "gemmtiles::" in name:
        return "gemmtiles"
    if re.search(r"gemm|xmma|cutlass|cublas", name, re.IGNORECASE):
        return "cublas"
    return "other"


def report(scenario: str, impl: str, model) -> None:
    step = model_step(model, scenario)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / 5 * 1e6
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
    kernels = defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels[e.name] += e.device_time / STEPS
    groups = defaultdict(float)
    for name, t in kernels.items():
        groups[kernel_group(name)] += t
    busy = sum(groups.values())
    print(f"\n## {scenario} / {impl}: wall {wall:.0f} us per step, GPU busy {busy:.0f} us "
          + " ".join(f"{g} {t:.0f}" for g, t in sorted(groups.items())))
    for name, t in sorted(kernels.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {t:9.1f} us  {kernel_group(name):9s} {name[:110]}")
    print("  products by operator and shapes (GPU us, host us per step (the op and what it calls), calls per step):")
    rows = []
    for ev in prof.key_averages(group_by_input_shape=True):
        if PRODUCT_OPS.match(ev.key):
            rows.append((ev.device_time_total / STEPS, ev.cpu_time_total / STEPS, ev.count // STEPS, ev.key,
                         ev.input_shapes))
    for t, host, n, key, shapes in sorted(rows, key=lambda r: -r[0]):
        print(f"  {t:9.1f} us {host:8.1f} us  x{n:<3d} {key:22s} {str(shapes)[:100]}")


def main(argv: list[str]) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    models = model_pair()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for scenario in argv or list(MODEL_SCENARIOS):
        for impl, model in models.items():
            report(scenario, impl, model)


if __name__ == "__main__":
    main(sys.argv[1:])
