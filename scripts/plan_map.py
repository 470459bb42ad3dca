"""Draws which kernel auto plans where (docs/img/auto/plan-map.png), from the plan itself.

    python scripts/plan_map.py [OUT.png]

For contiguous operands on a GPU of 132 SMs (the H100), with CUTLASS's kernels built, no tuned
table and exact fp32 (torch's "highest"): one panel per layout (NN: x @ W; NT: x @ W^T; TN:
a weight gradient), M on one axis and N = K on the other, each cell coloured by the kernel
gemmtiles._C.auto_plan names (a column-major A that the plan leaves on warptile is copied
K-major first and the split tiles run it: auto.cu's launch_a_kmajor). A fourth panel shows where, under "high", the tensor-core model
picks tf32 for NT. Needs the built extension (any build: the plan is plain C++) and matplotlib.
"""

from __future__ import annotations

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

from gemmtiles._ops import _C  # noqa: E402

SMS = 132
KERNELS = ["gemv", "skinny_kmajor", "skinny_nmajor", "cutlass 32 x 32", "cutlass 32 x 32, 2 warps",
           "cutlass 32 x 128", "cutlass 128 x 32", "cutlass 64 x 64", "cutlass 64 x 64, 4 warps", "cutlass 128 x 128",
           "cutlass large", "copied, cutlass", "own split tiles", "tf32"]
COLORS = ["#c51b8a", "#fde0dd", "#fa9fb5", "#deebf7", "#bdbdbd", "#c6dbef", "#bcbddc", "#9ecae1", "#6a51a3", "#3182bd",
          "#08519c", "#74c476", "#ffffb2", "#fd8d3c"]
M = np.unique(np.round(np.logspace(0, 13, 53, base=2)).astype(int))       # 1 .. 8192
NK = np.unique(np.round(np.logspace(7, 14, 29, base=2)).astype(int))       # 128 .. 16384


def kernel(m: int, nk: int, layout: str, tensor_cores: str = "none") -> str:
    plan = _C.auto_plan(int(m), int(nk), int(nk), 1, layout[1] == "T", True, SMS, layout[0] == "N", None, True,
                        True, tensor_cores=tensor_cores)
    if plan.kernel.endswith("_copied"):
        return "copied, cutlass"
    if plan.kernel == "cutlass":
        if plan.mt * plan.nw == 128 * 256:
            return "cutlass large"
        tile = (plan.mt, plan.nw, plan.w)
        builds = {(32, 32, 2): ", 2 warps", (64, 64, 4): ", 4 warps"}
        return f"cutlass {plan.mt} x {plan.nw}" + builds.get(tile, "")
    if plan.kernel == "split_tile":
        return "own split tiles"
    return plan.kernel


def main(argv: list[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = argv[0] if argv else os.path.join(root, "docs", "img", "auto", "plan-map.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    panels = [("NN", "none"), ("NT", "none"), ("TN", "none"), ("NT", "tf32")]
    fig, axes = plt.subplots(1, 4, figsize=(15, 4.4), sharey=True)
    cmap = ListedColormap(COLORS)
    for ax, (layout, tc) in zip(axes, panels):
        grid = np.array([[KERNELS.index(kernel(m, nk, layout, tc)) for nk in NK] for m in M])
        ax.pcolormesh(NK, M, grid, cmap=cmap, vmin=-0.5, vmax=len(KERNELS) - 0.5, shading="nearest")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("N = K")
        ax.set_title(f"{layout}" + (' under "high"' if tc != "none" else ""))
    axes[0].set_ylabel("M (rows)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS]
    fig.legend(handles, KERNELS, loc="lower center", ncol=(len(KERNELS) + 1) // 2, fontsize=7)
    fig.suptitle("the kernel auto plans (132 SMs, contiguous operands, no tuned table)", fontsize=11)
    fig.tight_layout(rect=(0, 0.12, 1, 0.95))
    fig.savefig(out, dpi=80, metadata={"Software": None})
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
