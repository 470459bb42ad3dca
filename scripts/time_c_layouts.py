"""tf32 and tf32x3 with c in the layouts they read along its own strides, against no c and a
full c, and stock torch (TF32 allowed) adding the same c (baddbmm / addmm): a batch of NT
products with an (m, n) mask shared by its entries, and one NT product whose c's rows are those
of an (m, n + 4) tensor. CUDA graphs of 10 calls, the median of 5 interleaved rounds,
microseconds a call.

    python scripts/time_c_layouts.py
"""

from __future__ import annotations

import torch

import gemmtiles

CASES = [("bmm", 32, 512, 512, 64), ("bmm", 16, 1024, 1024, 128), ("bmm", 8, 2048, 2048, 64),
         ("mm", 1, 2048, 4096, 4096), ("mm", 1, 512, 5504, 2048)]


def graph_of(fn):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10):
            fn()
    return g


def time_us(g, replays=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay()
    start.record()
    for _ in range(replays):
        g.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / (10 * replays)


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True
    for kind, batch, m, n, k in CASES:
        if kind == "bmm":
            a = torch.randn(batch, m, k, device="cuda")
            b = torch.randn(batch, n, k, device="cuda").mT
            mask = torch.randn(m, n, device="cuda")
            full = mask.expand(batch, m, n).contiguous()
            cs = {"none": None, "full": full, "mask": mask}
            fns = {"stock_full": lambda: torch.baddbmm(full, a, b), "stock_mask": lambda: torch.baddbmm(mask, a, b)}
        else:
            a = torch.randn(m, k, device="cuda")
            b = torch.randn(n, k, device="cuda").t()
            full = torch.randn(m, n, device="cuda")
            wide = torch.randn(m, n + 4, device="cuda")[:, :n]
            cs = {"none": None, "full": full, "wide": wide}
            fns = {"stock_full": lambda: torch.addmm(full, a, b), "stock_wide": lambda: torch.addmm(wide, a, b)}
        for tier in ("tf32", "tf32x3"):
            for name, c in cs.items():
                fns[f"{tier}_{name}"] = lambda t=tier, c=c: gemmtiles.sgemm(a, b, tier=t, c=c,
                                                                           beta=0.0 if c is None else 1.0)
        graphs = {name: graph_of(fn) for name, fn in fns.items()}
        times = {name: [] for name in graphs}
        for _ in range(5):
            for name, g in graphs.items():
                times[name].append(time_us(g))
        line = " ".join(f"{name}={sorted(t)[2]:.1f}" for name, t in times.items())
        print(f"{kind} {batch}x{m}x{n}x{k} NT {line}", flush=True)
        del graphs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
