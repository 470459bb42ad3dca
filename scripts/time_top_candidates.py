"""Times cuBLAS, auto's own plan and the candidates the cost model ranks first, each forced
through the auto op, on products given as MxNxK[:LAYOUT] (default: products whose plans ran
far from their estimates in a run of the random sample); every shape twice, in two passes, so
that a slow run of one pass shows against the other.

    python scripts/time_top_candidates.py [--top 6] [70x508x5247:NT ...]
"""
from __future__ import annotations

import argparse

import torch

import gemmtiles
from gemmtiles import bench
from gemmtiles._ops import _C
from gemmtiles.bench import Shape
from gemmtiles.exact_fit import candidates, gpu_model, rank_us

DEFAULT = ["70x508x5247:NT", "33x1062x14196:NT", "100x2146x164:NT", "169x431x1094:NT", "1024x2048x2048:NT",
           "2048x2048x2048:NN"]


def parse(text: str) -> Shape:
    dims, _, layout = text.partition(":")
    m, n, k = (int(x) for x in dims.split("x"))
    return Shape(m, n, k, layout or "NN")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("shapes", nargs="*", default=DEFAULT)
    p.add_argument("--top", type=int, default=6, help="candidates timed, by the model's rank")
    args = p.parse_args()
    dev = torch.device("cuda")
    torch.set_float32_matmul_precision("highest")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    model = gpu_model()  # the estimates auto weighs on this GPU
    g = torch.Generator().manual_seed(0)
    time_us = lambda fn: bench._timer(dev, fn, 3, 10, 0.2)[0] * 1e3  # noqa: E731
    for _ in range(2):
        for s in map(parse, args.shapes):
            a, b = bench.operands(s, g, dev)
            a_k, b_k = a.stride(-1) == 1, b.stride(-1) != 1
            a_vec = (s.k if a_k else s.m) % 4 == 0
            b_vec = (s.k if b_k else s.n) % 4 == 0
            ranked = sorted(candidates(s.m, s.n, s.k, 1, a_k, b_k, b_vec, sms, a_vec, model),
                            key=lambda c: rank_us(*c))
            line = [f"cublas {time_us(lambda: torch.matmul(a, b)):.1f}",
                    f"auto {time_us(lambda: gemmtiles.sgemm(a, b, tier='auto')):.1f}"]
            for plan, est in ranked[:args.top]:
                _C.force_auto_plan(*plan)
                try:
                    us = time_us(lambda: gemmtiles.sgemm(a, b, tier="auto"))
                    refused = _C.forced_plan_refused()
                finally:
                    _C.force_auto_plan()
                got = "refused" if refused else f"got {us:.1f}"
                line.append(f"{plan.kernel} {plan.mt}x{plan.nw} s{plan.splits} est {est:.1f} {got}")
            print(f"{s.m}x{s.n}x{s.k} {s.layout} " + " | ".join(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
