"""A tensor-parallel MLP on several GPUs of one host: 4096 -> 11008 -> 4096 (GELU), 2048
tokens, column-parallel up and row-parallel down (parallelize_module), forward + backward,
with gemmtiles' Linear (default tier) against stock nn.Linear, TF32 off. Prints the median
step time of each and the ratio.

    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 benchmarks/tp_mlp.py
"""

from __future__ import annotations

import copy
import os
import statistics

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

from gemmtiles.nn import replace_linear

D, HIDDEN, TOKENS = 4096, 11008, 2048


def step_ms(model, x, repeats=20, warmup=5):
    times = []
    for i in range(warmup + repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        model(x).sum().backward()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    torch.backends.cuda.matmul.allow_tf32 = False
    mesh = init_device_mesh("cuda", (world,))
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(D, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, D)).cuda()
    ours = replace_linear(copy.deepcopy(stock))
    plan = {"0": ColwiseParallel(), "2": RowwiseParallel()}
    parallelize_module(stock, mesh, plan)
    parallelize_module(ours, mesh, plan)
    x = torch.randn(TOKENS, D, device="cuda", requires_grad=True)
    ms_stock, ms_ours = step_ms(stock, x), step_ms(ours, x)
    if rank == 0:
        name = torch.cuda.get_device_name()
        print(f"TP MLP {D}->{HIDDEN}->{D}, {TOKENS} tokens, fwd+bwd on {world}x {name}: "
              f"stock {ms_stock:.3f} ms, gemmtiles {ms_ours:.3f} ms, speed {ms_stock / ms_ours:.3f}x stock")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
