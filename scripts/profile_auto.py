"""Small-M products through the auto tier, for ncu: `ncu --kernel-name regex:skinny ...
python scripts/profile_auto.py [M N K layout ...]`. Two calls per shape (warm-up, profiled)."""

import sys

import torch

import gemmtiles

args = sys.argv[1:] or ["1", "4096", "4096", "NN", "8", "4096", "4096", "NT"]
for i in range(0, len(args), 4):
    m, n, k, layout = int(args[i]), int(args[i + 1]), int(args[i + 2]), args[i + 3]
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(n, k, device="cuda").T if layout == "NT" else torch.randn(k, n, device="cuda")
    for _ in range(2):
        gemmtiles.sgemm(a, b, tier="auto")
    torch.cuda.synchronize()
