"""Draws how tf32x3 turns one fp32 product into one TF32 product over 3K
(docs/img/tensor_core/tf32x3.png).

    python scripts/tf32x3_diagram.py [OUT.png]

The pack pass writes A' = [A_lo | A_hi | A_hi] (M x 3K) and B'^T = [B_hi | B_lo | B_hi]
(N x 3K), K-major, so that one K-major TF32 GEMM of A' and B' sums A_lo B_hi + A_hi B_lo +
A_hi B_hi (csrc/tensor_core/wgmma_sm90a.cu); the two correction sections run unpromoted and
the hi·hi section is promoted in chunks (chunked_promotion.cuh). Needs matplotlib alone.
"""

from __future__ import annotations

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

LO, HI = "#c6dbef", "#fd8d3c"


def main(argv: list[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = argv[0] if argv else os.path.join(root, "docs", "img", "tensor_core", "tf32x3.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.set_aspect("equal")
    ax.axis("off")
    k = 3.0

    def strip(x0, y0, h, parts, label):
        for i, (name, color) in enumerate(parts):
            ax.add_patch(Rectangle((x0 + i * k, y0), k, h, facecolor=color, edgecolor="black"))
            ax.text(x0 + i * k + k / 2, y0 + h / 2, name, ha="center", va="center", fontsize=10)
            ax.text(x0 + i * k + k / 2, y0 - 0.15, f"section {i + 1}: K", ha="center", va="top", fontsize=7,
                    color="grey")
        ax.text(x0 + 1.5 * k, y0 + h + 0.3, label, ha="center", va="bottom", fontsize=10)

    strip(0, 3, 4, [("A_lo", LO), ("A_hi", HI), ("A_hi", HI)], "A' (M x 3K), K-major")
    strip(12, 3, 2.5, [("B_hi", HI), ("B_lo", LO), ("B_hi", HI)], "B'^T (N x 3K), K-major")
    ax.text(0, 1.5, "x = hi + lo:  hi = tf32(x),  lo = tf32(x - hi)   (the pack pass, one read of each operand)",
            fontsize=9)
    ax.text(0, 0.6, "one TF32 GEMM over 3K:  A_lo B_hi  +  A_hi B_lo  (unpromoted)  +  A_hi B_hi  "
                    "(promoted in chunks);  A_lo B_lo, below fp32's rounding, is dropped", fontsize=9)
    ax.set_xlim(-0.5, 22)
    ax.set_ylim(0, 8.6)
    fig.suptitle("tf32x3: fp32-class accuracy from TF32 tensor cores", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=90, metadata={"Software": None})
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
