"""Draws the tiling of each rung of the CUDA ladder (csrc/ladder/01..09) as a PNG.

    python scripts/ladder_diagrams.py [OUT_DIR]      # default: docs/img/ladder

Each diagram shows, to scale within a panel, the output C with the part one block computes and
the part of it one warp and one thread own, the slices of A and B the block reads per step of
K, and the shared-memory buffers where the rung has them. The tile sizes are those of
csrc/ladder/configs.h (a 32-lane warp). Needs matplotlib alone.
"""

from __future__ import annotations

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

BLOCK, WARP, THREAD, A_COL, B_COL, SMEM = "#dbe9f6", "#f4b183", "#c00000", "#c5e0b4", "#ffe699", "#d9d2e9"

# name: idea, block tile (BM, BN), K step (BK), what a thread owns (rows, cols), what a warp
# owns (rows, cols), shared memory: None, "plain", "transposed", "padded", "double".
RUNGS = {
    "01_naive": ("one thread per element of C, straight from global memory", (32, 8), 1, (1, 1), (32, 1), None,
                 "a warp: 32 rows of one column of C; each thread walks a row of A and a column of B"),
    "02_coalesced": ("a warp along a row: its loads of B and stores of C coalesce", (8, 32), 1, (1, 1), (1, 32), None,
                     "a warp: 32 consecutive columns of one row; B's row segment is one 128-byte line"),
    "03_smem": ("16 x 16 tiles of A and B staged in shared memory", (16, 16), 16, (1, 1), (2, 16), "plain",
                "each element staged once serves 16 outputs; two barriers per K tile"),
    "04_unroll": ("8 outputs per thread: one shared B load feeds 8 FMAs", (64, 64), 8, (8, 1), (64, 4), "plain",
                  "a thread: a strip of 8 rows in one column, 8 accumulators"),
    "05_thread_tile": ("a 2-D tile of outputs per thread, outer products from registers", (128, 128), 8, (8, 8),
                       (32, 64), "plain", "a thread: 8 x 8 outputs from 8 + 8 registers per k"),
    "06_vectorized": ("float4 global loads, A transposed in shared memory, float4 shared reads", (128, 128), 8,
                      (8, 8), (32, 64), "transposed", "As[k][m]: a thread's 8 rows of A are two float4 reads"),
    "07_bank_free": ("padded A tile and split fragments: no bank conflicts", (128, 128), 8, (8, 8), (32, 64),
                     "padded", "row pitch 128 + 4; a thread's fragments two float4 groups 64 apart"),
    "08_double_buffer": ("two shared buffers: the next K slice loads while this one is computed", (128, 128), 8,
                         (8, 8), (32, 64), "double", "slice s + 1 into registers, then into the other buffer"),
    "09_warptile": ("block -> warp -> thread: 128 x 256 block, 64 x 64 warps, 16 x 8 per lane", (128, 256), 8,
                    (16, 8), (64, 64), "double", "a lane: 2 x 2 sub-tiles of 8 x 4 inside its warp's 64 x 64"),
}


def _box(ax, x, y, w, h, color, label=None, edge="black", lw=1.0, fs=8, alpha=1.0):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, linewidth=lw, alpha=alpha))
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fs)


def draw(stem: str, out_dir: str) -> str:
    idea, (bm, bn), bk, (tm, tn), (wm, wn), smem, note = RUNGS[stem]
    fig, (ax_c, ax_ab, ax_s) = plt.subplots(1, 3, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.2, 1.2, 1.0]})
    for ax in (ax_c, ax_ab, ax_s):
        ax.set_aspect("equal")
        ax.axis("off")
    # C: the block tile (to scale), a warp's part and a thread's part.
    _box(ax_c, 0, 0, bn, bm, BLOCK)
    ax_c.text(bn / 2, bm + bm * 0.04, f"block tile of C: BM = {bm} x BN = {bn}", ha="center", va="bottom", fontsize=9)
    _box(ax_c, 0, bm - wm, wn, wm, WARP, alpha=0.9)
    if stem == "09_warptile":  # the lane's four 8 x 4 sub-tiles inside its warp's tile, the 8 warps
        for i in range(2):
            for j in range(2):
                _box(ax_c, j * 32, bm - 8 - i * 32, 4, 8, THREAD)
        for w in range(8):
            r, c = divmod(w, 4)
            ax_c.add_patch(Rectangle((c * 64, bm - (r + 1) * 64), 64, 64, fill=False, edgecolor="grey", lw=0.8))
        thread_label = "a lane: 2 x 2 sub-tiles of 8 x 4"
    else:
        _box(ax_c, 0, bm - tm, tn, tm, THREAD)
        thread_label = f"a thread: {tm} x {tn}"
    arrow = dict(arrowstyle="->", lw=0.8)
    ax_c.annotate(f"a warp: {wm} x {wn}", xy=(wn, bm - wm / 2), xytext=(bn * 1.08, bm * 0.75), fontsize=8,
                  va="center", arrowprops=arrow)
    ax_c.annotate(thread_label, xy=(tn / 2, bm - tm / 2), xytext=(bn * 1.08, bm * 0.3), fontsize=8,
                  va="center", color=THREAD, arrowprops=dict(arrow, color=THREAD))
    ax_c.set_xlim(-4, bn * 2.1)
    ax_c.set_ylim(-bm * 0.15, bm * 1.15)
    # A and B: the slices the block reads for one step of K.
    s = max(bm, bn)
    kw = max(bk, 1) * (s / 64)  # K drawn wider than to scale, so that BK = 1 is visible
    _box(ax_ab, 0, s - bm, kw, bm, A_COL)
    ax_ab.text(kw / 2, s - bm - s * 0.05, f"A: {bm} x {bk}", ha="center", va="top", fontsize=8)
    _box(ax_ab, kw + s * 0.15, s - kw, bn, kw, B_COL)
    ax_ab.text(kw + s * 0.15 + bn / 2, s - kw - s * 0.05, f"B: {bk} x {bn}", ha="center", va="top", fontsize=8)
    ax_ab.text(0, s + s * 0.05, "read per step of K" if bk > 1 else "read per k (no reuse)", fontsize=9)
    ax_ab.set_xlim(-4, kw + s * 0.2 + bn)
    ax_ab.set_ylim(-s * 0.35, s * 1.2)
    # Shared memory.
    if smem is None:
        ax_s.text(0.5, 0.5, "no shared memory:\nevery operand from global memory", ha="center", va="center",
                  fontsize=9, transform=ax_s.transAxes)
    else:
        buffers = 2 if smem == "double" else 1
        pad = 4 if smem in ("padded", "double") and stem != "03_smem" and stem != "04_unroll" else 0
        a_shape = (bk, bm) if smem != "plain" else (bm, bk)
        h = 1.0 / (buffers * 2 + 1)
        for b in range(buffers):
            y = 1 - (b * 2 + 1) * h
            lab = f"As[{'k][m' if smem != 'plain' else 'm][k'}]" + (f" + {pad} pad" if pad else "") + \
                (f"  buffer {b}" if buffers > 1 else "")
            ax_s.add_patch(Rectangle((0.05, y), 0.8, h * 0.8, transform=ax_s.transAxes, facecolor=SMEM, edgecolor="k"))
            if pad:
                ax_s.add_patch(Rectangle((0.85, y), 0.05, h * 0.8, transform=ax_s.transAxes, facecolor="white",
                                         edgecolor="k", hatch="//"))
            ax_s.text(0.45, y + h * 0.4, f"{lab}  ({a_shape[0]} x {a_shape[1]})", transform=ax_s.transAxes,
                      ha="center", va="center", fontsize=8)
            y2 = y - h * 0.95
            ax_s.add_patch(Rectangle((0.05, y2), 0.8, h * 0.8, transform=ax_s.transAxes, facecolor=SMEM,
                                     edgecolor="k", alpha=0.6))
            ax_s.text(0.45, y2 + h * 0.4, f"Bs[k][n]  ({bk} x {bn})" + (f"  buffer {b}" if buffers > 1 else ""),
                      transform=ax_s.transAxes, ha="center", va="center", fontsize=8)
        ax_s.text(0.5, 0.02, "shared memory", transform=ax_s.transAxes, ha="center", fontsize=9)
    n = int(stem[:2])
    fig.suptitle(f"{n}. {stem[3:]}: {idea}", fontsize=11)
    fig.text(0.5, 0.03, note, ha="center", fontsize=9, style="italic")
    fig.tight_layout(rect=(0, 0.06, 1, 0.93))
    path = os.path.join(out_dir, f"{stem}.png")
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = argv[0] if argv else os.path.join(root, "docs", "img", "ladder")
    os.makedirs(out_dir, exist_ok=True)
    for stem in RUNGS:
        print(draw(stem, out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
