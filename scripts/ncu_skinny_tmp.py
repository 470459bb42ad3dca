import torch, gemmtiles
from gemmtiles import _C
torch.set_float32_matmul_precision("highest")
dev = "cuda"
def run(m, n, k, plan=None):
    a = torch.randn(m, k, device=dev); b = torch.randn(k, n, device=dev)
    if plan: _C.force_auto_plan(*plan)
    for _ in range(3): gemmtiles.sgemm(a, b, tier="auto")
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"ours {m}x{n}x{k} {plan}")
    gemmtiles.sgemm(a, b, tier="auto"); torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    _C.force_auto_plan()
    torch.matmul(a, b); torch.cuda.synchronize()
run(1, 12460, 180, ("skinny_nmajor", 4, 1, 4, 8, 32))
run(1, 12460, 180, ("skinny_nmajor", 4, 1, 1, 6, 32))
run(4, 384, 136, ("skinny_nmajor", 4, 1, 4, 9, 16))
