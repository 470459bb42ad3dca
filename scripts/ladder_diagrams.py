"""Draws one diagram per rung of the CUDA ladder (csrc/ladder/01_naive.cuh .. 09_warptile.cuh):
the C matrix with the block tile and what one block, warp and thread own, the strips of A and
B the block reads, and the shared-memory buffers where the rung has them, labelled with the
tile sizes the extension launches (csrc/ladder/configs.h).

    python scripts/ladder_diagrams.py [OUT_DIR]

writes OUT_DIR/01_naive.png .. 09_warptile.png (default: docs/img/ladder under the repository
root) and prints the files it wrote: 8 x 4.5 inches at 100 dpi, saved with a tight box (820 x
470 pixels while every label stays on the canvas). The same input gives the same bytes. Needs
matplotlib only (no torch, no gemmtiles). The tile sizes are written out below; when
csrc/ladder/configs.h is present, the script first checks them against it and stops if they
differ, so a diagram never shows a configuration the extension no longer launches. A, B and C
themselves are drawn to no scale, and the K axis is drawn schematically; the tiles' labels give
their sizes. The layout is placed by hand: a label that leaves the canvas or overlaps another is
reported on stderr.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
from types import SimpleNamespace

import matplotlib
import matplotlib.text

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402
from matplotlib.path import Path  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS_H = ROOT / "csrc" / "ladder" / "configs.h"
WARP = 32  # kWarpSize on NVIDIA (csrc/ladder/platform.cuh)

# The configurations of csrc/ladder/configs.h, and which tier launches which
# (csrc/ladder/dispatch.cu, csrc/ladder/warptile.cu).
NAIVE = dict(BM=32, BN=8)  # Naive = NaiveConfig<32, 8>
COALESCED = dict(BM=256 // WARP, BN=WARP)  # Coalesced = CoalescedConfig<256 / kWarpSize, kWarpSize>
SMEM = dict(TILE=16)  # Smem = SmemConfig<16>
UNROLL = dict(BM=64, BN=64, BK=8, TM=8, TN=1)  # Unroll = TileConfig<Shape<64, 64, 8>, Shape<8, 1>>
TILES128 = dict(BM=128, BN=128, BK=8, TM=8, TN=8)  # Tiles128: thread_tile, vectorized, bank_free
TILES128_TWO = dict(TILES128, MIN_BLOCKS=2)  # Tiles128TwoBlocks: double_buffer
WARPTILE_LARGE = dict(BM=128, BN=256, BK=8, WM=64 * WARP // 32, WN=64, TM=8, TN=4, WNITER=2)
WARPTILE_SMALL = dict(BM=128, BN=128, BK=8, WM=64 * WARP // 32, WN=32, TM=4, TN=4, WNITER=2, MIN_BLOCKS=2)

# Each configuration's template arguments in the order configs.h writes them.
EXPECTED = {
    "Naive": [NAIVE["BM"], NAIVE["BN"]],
    "Coalesced": [COALESCED["BM"], COALESCED["BN"]],
    "Smem": [SMEM["TILE"]],
    "Unroll": [UNROLL[k] for k in ("BM", "BN", "BK", "TM", "TN")],
    "Tiles128": [TILES128[k] for k in ("BM", "BN", "BK", "TM", "TN")],
    "Tiles128TwoBlocks": [TILES128_TWO[k] for k in ("BM", "BN", "BK", "TM", "TN", "MIN_BLOCKS")],
    "WarptileLarge": [WARPTILE_LARGE[k] for k in ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "WNITER")],
    "WarptileSmall": [WARPTILE_SMALL[k] for k in ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "WNITER",
                                                  "MIN_BLOCKS")],
}


def _int_expr(expr: str, consts: dict[str, int]) -> int:
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(consts[m.group(0)]), expr.strip())
    if not re.fullmatch(r"[\d\s+\-*/()]+", expr):
        raise ValueError(f"not an integer expression: {expr!r}")
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}))  # digits and operators only


def configs_h_arguments(text: str) -> dict[str, list[int]]:
    """The integer template arguments of each `using Name = ...;` in configs.h, flattened,
    with kWarpSize = 32 and the file's own constexpr ints substituted."""
    text = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.S)
    consts = {"kWarpSize": WARP}
    for name, expr in re.findall(r"constexpr\s+int\s+(\w+)\s*=\s*([^;]+);", text):
        consts[name] = _int_expr(expr, consts)
    out = {}
    for name, body in re.findall(r"using\s+(\w+)\s*=\s*([^;]+);", text):
        body = re.sub(r"\b\w+\s*<", "<", body).replace("<", ",").replace(">", ",")
        out[name] = [_int_expr(arg, consts) for arg in body.split(",") if arg.strip()]
    return out


def check_configs() -> None:
    if not CONFIGS_H.is_file():
        return
    found = configs_h_arguments(CONFIGS_H.read_text())
    bad = {name: (want, found.get(name)) for name, want in EXPECTED.items() if found.get(name) != want}
    if bad:
        lines = [f"  {name}: drawn {want}, configs.h {got}" for name, (want, got) in bad.items()]
        sys.exit("scripts/ladder_diagrams.py: the tile sizes differ from csrc/ladder/configs.h;\n"
                 + "\n".join(lines) + "\nupdate the sizes at the top of the script (and check the drawings)")


# ---------------------------------------------------------------------------------------------
# Drawing primitives. One axes fills the 8 x 4.5 inch figure, 160 x 90 units (5 px a unit at
# 100 dpi), y pointing down as matrix rows do.

W, H = 160, 90
GREY, LIGHT = "#777777", "#dddddd"
A_FILL, A_DARK, A_EDGE = "#c6dbef", "#6baed6", "#2171b5"
B_FILL, B_DARK, B_EDGE = "#fdd0a2", "#fd8d3c", "#d94801"
C_FILL, C_EDGE = "#c7e9c0", "#238b45"
WARP_FILL, WARP_EDGE = "#dadaeb", "#6a51a3"
THREAD = "#e41a1c"
SMEM_FILL = "#f2f2f2"
FS = 7.5  # notes and labels, points


def new_figure(title: str):
    fig = plt.figure(figsize=(8, 4.5), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, W)
    ax.set_ylim(H, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.text(W / 2, 1.6, title, ha="center", va="top", fontsize=11, weight="bold")
    return fig, ax


def rect(ax, x, y, w, h, fc="none", ec="black", lw=0.8, hatch=None, z=2, ls="-"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, linewidth=lw, hatch=hatch,
                           zorder=z, linestyle=ls))


def line(ax, xs, ys, color=GREY, lw=0.6, ls="-", z=3):
    ax.plot(xs, ys, color=color, linewidth=lw, linestyle=ls, zorder=z, solid_capstyle="butt")


def text(ax, x, y, s, size=FS, ha="left", va="top", color="black", weight="normal", box=False, z=8):
    bbox = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none") if box else None
    ax.text(x, y, s, fontsize=size, ha=ha, va=va, color=color, weight=weight, bbox=bbox, zorder=z)


def notes(ax, x, y, rows, size=FS, dy=3.0):
    """rows: strings, or (string, colour) pairs; one a line."""
    for i, row in enumerate(rows):
        s, color = (row, "black") if isinstance(row, str) else row
        text(ax, x, y + i * dy, s, size=size, color=color)


def arrow(ax, *points, color="black", lw=0.9, style="-|>", ms=7, z=7):
    """An arrow along the polyline through points (x, y)."""
    codes = [Path.MOVETO] + [Path.LINETO] * (len(points) - 1)
    ax.add_patch(FancyArrowPatch(path=Path(points, codes), arrowstyle=style, mutation_scale=ms,
                                 color=color, linewidth=lw, zorder=z, shrinkA=0, shrinkB=0))


def grid(ax, x, y, w, h, nx, ny, color=LIGHT, lw=0.4, z=3):
    for i in range(1, nx):
        line(ax, [x + i * w / nx] * 2, [y, y + h], color=color, lw=lw, z=z)
    for j in range(1, ny):
        line(ax, [x, x + w], [y + j * h / ny] * 2, color=color, lw=lw, z=z)


def zoom_lines(ax, src, dst):
    """Dashed lines from the right corners of rectangle src to the left corners of dst."""
    (sx, sy, sw, sh), (dx, dy, dw, dh) = src, dst
    line(ax, [sx + sw, dx], [sy, dy], color=GREY, lw=0.5, ls=(0, (3, 3)), z=1)
    line(ax, [sx + sw, dx], [sy + sh, dy + dh], color=GREY, lw=0.5, ls=(0, (3, 3)), z=1)


# ---------------------------------------------------------------------------------------------
# The left part of every diagram: A (M x K), B (K x N) and C (M x N), C cut into block tiles,
# one block tile with the strips of A and B it reads, and its current K slice of each. The
# panel right of x = 66 is the rung's own.

AX, AY, AW, AH = 2, 31, 14, 56
BX, BY, BW, BH = 19, 10, 44, 17
CX, CY, CW, CH = 19, 31, 44, 56
GAP_Y = 29.0  # between B and C: where arrows from A's slice run to the right


def gemm_panel(ax, bm, bn, scale, block=(1, 1), bk=None, ksw=2.5, kslices=(1,), strips=True):
    bw, bh = bn * scale, bm * scale
    bx, by = CX + block[0] * bw, CY + block[1] * bh
    for x, y, w, h in ((AX, AY, AW, AH), (BX, BY, BW, BH), (CX, CY, CW, CH)):
        rect(ax, x, y, w, h, fc="white", ec=GREY, lw=1.0, z=1)
    text(ax, AX + 0.8, AY + AH - 0.8, "A (M x K)", size=8, va="bottom", color=GREY)
    text(ax, BX + BW - 0.8, BY + BH - 0.8, "B (K x N)", size=8, ha="right", va="bottom", color=GREY)
    text(ax, CX + CW - 0.8, CY + CH - 0.8, "C (M x N)", size=8, ha="right", va="bottom", color=GREY)
    x = CX + bw  # C cut into block tiles
    while x < CX + CW - 1e-6:
        line(ax, [x, x], [CY, CY + CH], color=LIGHT, z=1.5)
        x += bw
    y = CY + bh
    while y < CY + CH - 1e-6:
        line(ax, [CX, CX + CW], [y, y], color=LIGHT, z=1.5)
        y += bh
    if strips:
        rect(ax, AX, by, AW, bh, fc=A_FILL, ec=A_EDGE, lw=0.8)
        rect(ax, bx, BY, bw, BH, fc=B_FILL, ec=B_EDGE, lw=0.8)
    rect(ax, bx, by, bw, bh, fc=C_FILL, ec=C_EDGE, lw=1.2)
    text(ax, bx + bw / 2, by - 0.4, f"BN = {bn}", ha="center", va="bottom", box=True, color=C_EDGE)
    text(ax, bx - 0.5, by + bh / 2, f"BM = {bm}", ha="right", va="center", box=True, color=C_EDGE)
    g = SimpleNamespace(bx=bx, by=by, bw=bw, bh=bh, scale=scale, ksw=ksw, aslice={}, bslice={})
    if bk is not None:
        i = 1
        while AX + i * ksw < AX + AW - 0.1:  # the K slices the block steps through
            line(ax, [AX + i * ksw] * 2, [by, by + bh], color=A_EDGE, lw=0.4)
            line(ax, [bx, bx + bw], [BY + i * ksw] * 2, color=B_EDGE, lw=0.4)
            i += 1
        for j, i in enumerate(kslices):  # the first drawn solid, any next one hatched
            fa, fb, hatch = (A_DARK, B_DARK, None) if j == 0 else (A_FILL, B_FILL, "////")
            rect(ax, AX + i * ksw, by, ksw, bh, fc=fa, ec=A_EDGE, lw=1.0, hatch=hatch, z=2.5)
            rect(ax, bx, BY + i * ksw, bw, ksw, fc=fb, ec=B_EDGE, lw=1.0, hatch=hatch, z=2.5)
            g.aslice[i] = (AX + i * ksw, by, ksw, bh)
            g.bslice[i] = (bx, BY + i * ksw, bw, ksw)
        i = kslices[0]
        text(ax, AX + (i + 0.5) * ksw, by - 0.4, f"BK = {bk}", ha="left", va="bottom", box=True,
             color=A_EDGE)
        text(ax, BX - 0.5, BY + (i + 0.5) * ksw, f"BK = {bk}", ha="right", va="center", color=B_EDGE)
        arrow(ax, (AX + 0.5, by + bh + 1.2), (AX + AW - 0.5, by + bh + 1.2), color=A_EDGE, lw=0.7, ms=6)
        text(ax, AX + AW / 2, by + bh + 1.7, "k0 += BK", size=6.5, ha="center", color=A_EDGE)
    return g


def route_a(ax, g, i, *points, color=A_EDGE):
    """Arrow from A's K slice i up to GAP_Y, then through points."""
    x0 = g.aslice[i][0] + g.ksw / 2
    arrow(ax, (x0, g.by), (x0, GAP_Y), *points, color=color)


def route_b(ax, g, i, *points, color=B_EDGE):
    """Arrow from the right end of B's K slice i through points (a first point with y None
    keeps the slice's height)."""
    x, y, w, h = g.bslice[i]
    pts = [(px, y + h / 2 if py is None else py) for px, py in points]
    arrow(ax, (x + w, y + h / 2), *pts, color=color)


def thread_square(ax, x, y, w, h):
    rect(ax, x, y, w, h, fc=THREAD, ec=THREAD, lw=0.5, z=5)


# ---------------------------------------------------------------------------------------------
# The rungs.


def rung_naive(ax):
    bm, bn = NAIVE["BM"], NAIVE["BN"]
    g = gemm_panel(ax, bm, bn, scale=0.5, block=(3, 1))
    tx, ty = 5, 2  # the thread drawn: threadIdx.x runs down the rows, threadIdx.y along the columns
    s = g.scale
    rect(ax, g.bx + ty * s, g.by, s, g.bh, fc=WARP_FILL, ec=WARP_EDGE, lw=0.8, z=4)
    thread_square(ax, g.bx + ty * s, g.by + tx * s, s, s)
    ym, xn = g.by + (tx + 0.5) * s, g.bx + (ty + 0.5) * s
    line(ax, [AX, AX + AW], [ym, ym], color=THREAD, lw=1.6, z=5)
    line(ax, [xn, xn], [BY, BY + BH], color=THREAD, lw=1.6, z=5)
    text(ax, AX + AW / 2, ym + 0.8, "row m of A", size=7, ha="center", color=THREAD)
    text(ax, xn + 0.8, BY + 1, "column n of B", size=7, color=THREAD)
    text(ax, AX + AW / 2, g.by - 0.4, f"block's {bm} rows", size=7, ha="center", va="bottom", color=A_EDGE)

    c = 1.6  # the block tile, one cell per thread
    zx, zy = 80, 19
    zoom_lines(ax, (g.bx, g.by, g.bw, g.bh), (zx, zy, bn * c, bm * c))
    rect(ax, zx, zy, bn * c, bm * c, fc=C_FILL, ec=C_EDGE, lw=1.2)
    grid(ax, zx, zy, bn * c, bm * c, bn, bm, color="white", lw=0.5, z=3)
    rect(ax, zx + ty * c, zy, c, bm * c, fc=WARP_FILL, ec=WARP_EDGE, lw=1.2, z=4)
    thread_square(ax, zx + ty * c, zy + tx * c, c, c)
    for j in range(bn):
        text(ax, zx + (j + 0.5) * c, zy - 0.3, str(j), size=6.5, ha="center", va="bottom")
    for i in (0, 8, 16, 24, bm - 1):
        text(ax, zx - 0.5, zy + (i + 0.5) * c, str(i), size=6.5, ha="right", va="center")
    text(ax, zx + bn * c / 2, zy - 3.2, "threadIdx.y: column n", size=7, ha="center", va="bottom")
    text(ax, zx - 5, zy + bm * c / 2, "threadIdx.x:\nrow m", size=7, ha="right", va="center")
    right = zx + bn * c
    arrow(ax, (right + 5, zy + 22), (zx + (ty + 1) * c + 0.2, zy + 22), color=WARP_EDGE)
    text(ax, right + 5.5, zy + 22, f"a warp ({WARP} threads): {WARP} rows\nof one column", va="center",
         color=WARP_EDGE)
    arrow(ax, (right + 5, zy + (tx + 0.5) * c), (zx + (ty + 1) * c + 0.2, zy + (tx + 0.5) * c), color=THREAD)
    text(ax, right + 5.5, zy + (tx + 0.5) * c, f"thread (x, y) = ({tx}, {ty}): one C[m][n]", va="center",
         color=THREAD)

    notes(ax, 100, 52, [
        (f"block: BM = {bm} rows x BN = {bn} columns", C_EDGE),
        (f"  = {bm * bn} threads, dim3(BM, BN)", C_EDGE),
        "a thread: acc += A[m][k] * B[k][n] for all k,",
        "  every operand from global memory",
        ("per k, a warp's loads:", WARP_EDGE),
        ("  A[m][k]: 32 rows lda apart, 32 sectors", WARP_EDGE),
        ("  B[k][n]: one address, broadcast", WARP_EDGE),
        ("  and its stores of C scatter likewise", WARP_EDGE),
        (f"configs.h: Naive = NaiveConfig<{bm}, {bn}>", GREY),
    ])


def rung_coalesced(ax):
    bm, bn = COALESCED["BM"], COALESCED["BN"]
    g = gemm_panel(ax, bm, bn, scale=0.5, block=(1, 3))
    ty, tx = 2, 9  # threadIdx.x now runs along the columns
    s = g.scale
    rect(ax, g.bx, g.by + ty * s, g.bw, s, fc=WARP_FILL, ec=WARP_EDGE, lw=0.8, z=4)
    thread_square(ax, g.bx + tx * s, g.by + ty * s, s, s)
    ym, xn = g.by + (ty + 0.5) * s, g.bx + (tx + 0.5) * s
    line(ax, [AX, AX + AW], [ym, ym], color=THREAD, lw=1.6, z=5)
    line(ax, [xn, xn], [BY, BY + BH], color=THREAD, lw=1.6, z=5)
    text(ax, AX + AW / 2, ym + 1.2, "row m of A", size=7, ha="center", color=THREAD)
    text(ax, g.bx + g.bw + 0.8, BY + 1, f"block's\n{bn} columns", size=7, color=B_EDGE)
    text(ax, xn - 0.8, BY + 1, "column n", size=7, ha="right", color=THREAD)

    c = 2.2
    zx, zy = 76, 16
    zoom_lines(ax, (g.bx, g.by, g.bw, g.bh), (zx, zy, bn * c, bm * c))
    rect(ax, zx, zy, bn * c, bm * c, fc=C_FILL, ec=C_EDGE, lw=1.2)
    grid(ax, zx, zy, bn * c, bm * c, bn, bm, color="white", lw=0.5, z=3)
    rect(ax, zx, zy + ty * c, bn * c, c, fc=WARP_FILL, ec=WARP_EDGE, lw=1.2, z=4)
    thread_square(ax, zx + tx * c, zy + ty * c, c, c)
    for j in (0, 8, 16, 24, bn - 1):
        text(ax, zx + (j + 0.5) * c, zy - 0.3, str(j), size=6.5, ha="center", va="bottom")
    for i in range(bm):
        text(ax, zx - 0.5, zy + (i + 0.5) * c, str(i), size=6.5, ha="right", va="center")
    text(ax, zx + bn * c / 2, zy - 3.2, "threadIdx.x: column n", size=7, ha="center", va="bottom")
    text(ax, zx + bn * c + 1, zy + bm * c / 2, "threadIdx.y:\nrow m", size=7, va="center")
    bottom = zy + bm * c
    xt, xw = zx + (tx + 0.5) * c, zx + 52
    arrow(ax, (xt, bottom + 5), (xt, zy + (ty + 1) * c + 0.2), color=THREAD)
    text(ax, xt, bottom + 5.3, f"thread (x, y) = ({tx}, {ty}):\none C[m][n]", ha="center", color=THREAD)
    arrow(ax, (xw, bottom + 5), (xw, zy + (ty + 1) * c + 0.2), color=WARP_EDGE)
    text(ax, xw, bottom + 5.3, f"a warp: one row,\n{WARP} consecutive columns", ha="center", color=WARP_EDGE)

    notes(ax, 72, 54, [
        (f"block: BM = {bm} rows x BN = {bn} columns = {bm * bn} threads, dim3(BN, BM)", C_EDGE),
        "the same arithmetic and loads as naive; per k, a warp's loads:",
        ("  B[k][n .. n+31]: 128 contiguous bytes, one coalesced request", WARP_EDGE),
        ("  A[m][k]: one address, broadcast to the warp", WARP_EDGE),
        ("and its store of C is one contiguous 128-byte row segment", WARP_EDGE),
        "still two global loads per FMA",
        (f"configs.h: Coalesced = CoalescedConfig<256 / kWarpSize, kWarpSize>,", GREY),
        (f"  kWarpSize = {WARP} on NVIDIA", GREY),
    ])


def rung_smem(ax):
    t = SMEM["TILE"]
    g = gemm_panel(ax, t, t, scale=0.75, bk=t, ksw=3.5)
    ty, tx = 5, 9
    s = g.scale
    thread_square(ax, g.bx + tx * s, g.by + ty * s, s, s)

    c = 1.3
    n = t * c
    ax_, ay_ = 72, 35  # As[m][k]
    bx_, by_ = 97, 10  # Bs[k][n]
    cx_, cy_ = 97, 35  # the block's tile of C, one thread per element
    route_a(ax, g, 1, (ax_ + n / 2, GAP_Y), (ax_ + n / 2, ay_ - 0.2))
    route_b(ax, g, 1, (bx_ - 0.2, None))
    rect(ax, ax_, ay_, n, n, fc=SMEM_FILL, ec=A_EDGE, lw=1.0)
    rect(ax, bx_, by_, n, n, fc=SMEM_FILL, ec=B_EDGE, lw=1.0)
    rect(ax, cx_, cy_, n, n, fc=C_FILL, ec=C_EDGE, lw=1.0)
    for x, y in ((ax_, ay_), (bx_, by_), (cx_, cy_)):
        grid(ax, x, y, n, n, t, t, color="#cfcfcf", lw=0.3)
    warp = (ty * t + tx) // WARP
    rows = WARP // t  # thread rows a warp covers
    rect(ax, cx_, cy_ + warp * rows * c, n, rows * c, fc=WARP_FILL, ec=WARP_EDGE, lw=0.8, z=4)
    thread_square(ax, cx_ + tx * c, cy_ + ty * c, c, c)
    rect(ax, ax_, ay_ + ty * c, n, c, fc="none", ec=THREAD, lw=1.4, z=5)  # row ty of As
    rect(ax, bx_ + tx * c, by_, c, n, fc="none", ec=THREAD, lw=1.4, z=5)  # column tx of Bs
    thread_square(ax, ax_ + tx * c, ay_ + ty * c, c, c)  # what the thread stages
    thread_square(ax, bx_ + tx * c, by_ + ty * c, c, c)
    text(ax, ax_ + n / 2, ay_ + n + 0.5, f"As[{t}][{t}]: As[m][k]", ha="center", color=A_EDGE)
    text(ax, bx_ + n + 1, by_ + n / 2, f"Bs[{t}][{t}]: Bs[k][n]", va="center", color=B_EDGE)
    xr = cx_ + n + 1
    text(ax, xr, cy_, f"C tile: {t} x {t} threads", color=C_EDGE)
    text(ax, xr, cy_ + warp * rows * c + c, f"warp {warp}: threads {warp * WARP}..{warp * WARP + WARP - 1}",
         va="center", color=WARP_EDGE)
    text(ax, xr, cy_ + n - 4, f"thread (ty, tx) = ({ty}, {tx})", color=THREAD)
    arrow(ax, (xr - 0.3, cy_ + n - 3.3), (cx_ + (tx + 1) * c + 0.2, cy_ + (ty + 0.5) * c), color=THREAD)

    notes(ax, 72, 61, [
        (f"TILE = {t}: a {t} x {t} block of threads per {t} x {t} tile of C", C_EDGE),
        "per K slice (k0 += TILE) thread (ty, tx) stages one element of each:",
        ("  As[ty][tx] = A[m][k0 + tx],  Bs[ty][tx] = B[k0 + ty][n]   (red squares)", THREAD),
        (f"__syncthreads(); acc += As[ty][k] * Bs[k][tx] for k < {t} (red outlines); __syncthreads()", THREAD),
        f"each element fetched from global memory serves {t} outputs instead of one;",
        "  the limit moves to shared memory: two shared loads per FMA",
        (f"shared: 2 x {t} x {t} floats = {2 * t * t * 4 // 1024} KB.   configs.h: Smem = SmemConfig<{t}>", GREY),
    ], size=7.2, dy=2.85)


def mini_gemm(ax, bm, bn, bk, e, kc, x0, y0, gap=2.5):
    """As (bm x bk) left of the C tile (bm x bn), Bs (bk x bn) above it: e units an element
    along m and n, kc along k. Returns the three origins."""
    a = (x0, y0 + bk * kc + gap)
    b = (x0 + bk * kc + gap, y0)
    c = (b[0], a[1])
    rect(ax, a[0], a[1], bk * kc, bm * e, fc=SMEM_FILL, ec=A_EDGE, lw=1.0)
    rect(ax, b[0], b[1], bn * e, bk * kc, fc=SMEM_FILL, ec=B_EDGE, lw=1.0)
    rect(ax, c[0], c[1], bn * e, bm * e, fc=C_FILL, ec=C_EDGE, lw=1.0)
    grid(ax, a[0], a[1], bk * kc, bm * e, bk, 1, color="#cfcfcf", lw=0.3)
    grid(ax, b[0], b[1], bn * e, bk * kc, 1, bk, color="#cfcfcf", lw=0.3)
    return a, b, c


def rung_unroll(ax):
    bm, bn, bk, tm = (UNROLL[k] for k in ("BM", "BN", "BK", "TM"))
    threads = (bm // tm) * bn
    g = gemm_panel(ax, bm, bn, scale=14 / 64, bk=bk)
    e, kc = 0.55, 0.9
    a, b, c = mini_gemm(ax, bm, bn, bk, e, kc, 72, 10)
    route_a(ax, g, 1, (a[0] - 0.2, GAP_Y))
    route_b(ax, g, 1, (b[0] - 0.2, None))
    trow, tcol, k = 2, 20, 3
    for i in range(1, bm // tm):
        line(ax, [c[0], c[0] + bn * e], [c[1] + i * tm * e] * 2, color="white", lw=0.8, z=3)
    wx = c[0] + (tcol // WARP) * WARP * e
    rect(ax, wx, c[1] + trow * tm * e, WARP * e, tm * e, fc=WARP_FILL, ec=WARP_EDGE, lw=0.8, z=4)
    thread_square(ax, c[0] + tcol * e, c[1] + trow * tm * e, e, tm * e)
    rect(ax, a[0], a[1] + trow * tm * e, bk * kc, tm * e, ec=THREAD, lw=1.2, z=5)
    thread_square(ax, a[0] + k * kc, a[1] + trow * tm * e, kc, tm * e)
    thread_square(ax, b[0] + tcol * e, b[1] + k * kc, e, kc)
    text(ax, a[0] + bk * kc / 2, a[1] + bm * e + 0.5, f"As[{bm}][{bk}]", ha="center", color=A_EDGE)
    text(ax, b[0] + bn * e + 1, b[1] + bk * kc / 2, f"Bs[{bk}][{bn}]: bv = Bs[k][tcol]", va="center",
         color=B_EDGE)
    xr = c[0] + bn * e + 1
    text(ax, xr, c[1] + trow * tm * e + 0.3, f"warp: trow = {trow}, tcol = 0..{WARP - 1}", color=WARP_EDGE)
    text(ax, xr, c[1] + 16, f"thread (trow, tcol) = ({trow}, {tcol}):\nTM x TN = {tm} x 1 outputs",
         color=THREAD)
    arrow(ax, (xr - 0.3, c[1] + 17), (c[0] + (tcol + 1) * e + 0.3, c[1] + (trow + 0.6) * tm * e),
          color=THREAD)
    text(ax, xr, c[1] + bm * e - 7, f"C tile {bm} x {bn}:\n{bm // tm} rows of strips x {bn} columns",
         color=C_EDGE)

    notes(ax, 72, 61, [
        (f"{threads} threads = (BM / TM) x BN = {bm // tm} x {bn}; thread (trow, tcol) owns rows", C_EDGE),
        (f"  trow*{tm} .. trow*{tm} + {tm - 1} of column tcol (TM = {tm}, TN = 1)", THREAD),
        (f"per k: bv = Bs[k][tcol], one shared load, feeds {tm} FMAs; As[trow*{tm} + i][k]", THREAD),
        "  is one address for the whole warp (a broadcast)",
        f"shared loads per FMA: 2 -> 1 + 1/TM; {tm} independent accumulators",
        (f"shared: As[{bm}][{bk}] + Bs[{bk}][{bn}] = {(bm + bn) * bk * 4 // 1024} KB", GREY),
        (f"configs.h: Unroll = TileConfig<Shape<{bm}, {bn}, {bk}>, Shape<{tm}, 1>>", GREY),
    ])


def rung_thread_tile(ax):
    bm, bn, bk, tm, tn = (TILES128[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    threads = (bm // tm) * (bn // tn)
    g = gemm_panel(ax, bm, bn, scale=14 / 128, bk=bk)
    e, kc = 0.27, 0.9
    a, b, c = mini_gemm(ax, bm, bn, bk, e, kc, 72, 10)
    route_a(ax, g, 1, (a[0] - 0.2, GAP_Y))
    route_b(ax, g, 1, (b[0] - 0.2, None))
    grid(ax, c[0], c[1], bn * e, bm * e, bn // tn, bm // tm, color="white", lw=0.5)
    tr, tc, k = 5, 9, 3
    warp = (tr * (bn // tn) + tc) // WARP
    rows = WARP // (bn // tn)
    rect(ax, c[0], c[1] + warp * rows * tm * e, bn * e, rows * tm * e, fc=WARP_FILL, ec=WARP_EDGE, z=4)
    thread_square(ax, c[0] + tc * tn * e, c[1] + tr * tm * e, tn * e, tm * e)
    rect(ax, a[0], a[1] + tr * tm * e, bk * kc, tm * e, ec=THREAD, lw=1.0, z=5)
    thread_square(ax, a[0] + k * kc, a[1] + tr * tm * e, kc, tm * e)
    rect(ax, b[0] + tc * tn * e, b[1], tn * e, bk * kc, ec=THREAD, lw=1.0, z=5)
    thread_square(ax, b[0] + tc * tn * e, b[1] + k * kc, tn * e, kc)
    text(ax, a[0] + bk * kc / 2, a[1] + bm * e + 0.5, f"As[{bm}][{bk}]", ha="center", color=A_EDGE)
    text(ax, b[0] + bn * e + 1, b[1] + bk * kc / 2, f"Bs[{bk}][{bn}]", va="center", color=B_EDGE)
    xr = c[0] + bn * e + 1
    text(ax, xr, c[1] + warp * rows * tm * e + 0.3, f"warp {warp} (threads {warp * WARP}..{warp * WARP + 31})",
         color=WARP_EDGE)
    text(ax, xr, c[1] + 12, f"thread (tr, tc) = ({tr}, {tc}):\nTM x TN = {tm} x {tn} outputs", color=THREAD)
    arrow(ax, (xr - 0.3, c[1] + 13), (c[0] + (tc + 1) * tn * e + 0.3, c[1] + (tr + 0.5) * tm * e),
          color=THREAD)
    text(ax, xr, c[1] + bm * e - 7, f"C tile {bm} x {bn}:\n{bm // tm} x {bn // tn} threads", color=C_EDGE)

    notes(ax, 72, 61, [
        (f"{threads} threads, each a TM x TN = {tm} x {tn} tile of C", C_EDGE),
        (f"per k: ra[i] = As[tr*{tm} + i][k], rb[j] = Bs[k][tc*{tn} + j] (red), then", THREAD),
        (f"  acc[i][j] += ra[i] * rb[j]: {tm} + {tn} shared loads for {tm * tn} FMAs", THREAD),
        f"each element fetched from global memory serves {bm} outputs",
        f"cost: {tm * tn} accumulators + {tm + tn} operands a thread: registers cap occupancy",
        (f"shared: As[{bm}][{bk}] + Bs[{bk}][{bn}] = {(bm + bn) * bk * 4 // 1024} KB", GREY),
        (f"configs.h: Tiles128 = TileConfig<Shape<{bm}, {bn}, {bk}>, Shape<{tm}, {tn}>>", GREY),
    ])


def strip(ax, x, y, n, k, e, kc, edge, pad=0, label=None, fc=SMEM_FILL, hatch=None):
    """A shared-memory tile stored [k][n]: k rows of n floats (plus pad), e x kc units a float."""
    rect(ax, x, y, n * e, k * kc, fc=fc, ec=edge, lw=1.0, hatch=hatch)
    grid(ax, x, y, n * e, k * kc, 1, k, color="#cfcfcf", lw=0.3)
    if pad:
        rect(ax, x + n * e, y, pad * e, k * kc, fc="white", ec=GREY, lw=0.8, hatch="////")
    if label:
        text(ax, x, y - 0.3, label, va="bottom", color=edge)


def rung_vectorized(ax):
    bm, bn, bk, tm, tn = (TILES128[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    threads = (bm // tm) * (bn // tn)
    g = gemm_panel(ax, bm, bn, scale=14 / 128, bk=bk)
    e, kc = 0.55, 0.9
    sx, bsy, asy = 84, 12, 28
    strip(ax, sx, bsy, bn, bk, e, kc, B_EDGE, label=f"Bs[{bk}][{bn}]: Bs[k][n], as B is stored")
    strip(ax, sx, asy, bm, bk, e, kc, A_EDGE, label=f"As[{bk}][{bm}]: As[k][m], A transposed")
    route_b(ax, g, 1, (sx - 0.2, None))
    # A's float4: thread t loads A[r][k .. k+3], r = t / 2, k = 4 (t % 2), and stores it
    # transposed, down column r of As; B's float4 go into Bs as they are.
    t = 200
    r, k0 = t // 2, 4 * (t % 2)
    q = 1.6
    px, py = 70, 44
    rect(ax, px, py, 4 * q, q, fc=THREAD, ec="black", lw=0.8, z=4)
    rect(ax, px + 4 * q, py, 4 * q, q, fc="#fb9a99", ec="black", lw=0.8, z=4)
    grid(ax, px, py, bk * q, q, bk, 1, color="black", lw=0.3, z=4.5)
    text(ax, px + bk * q + 1, py + q / 2, f"A[{r}][0..7], a row of the A slice in global memory (row-major)",
         size=7, va="center", color=A_EDGE)
    route_a(ax, g, 1, (67, GAP_Y), (67, py + q / 2), (px - 0.2, py + q / 2))
    colx = sx + (r + 0.5) * e
    rect(ax, sx + r * e, asy, e, 4 * kc, fc=THREAD, ec="black", lw=0.6, z=5)
    rect(ax, sx + r * e, asy + 4 * kc, e, 4 * kc, fc="#fb9a99", ec="black", lw=0.6, z=5)
    arrow(ax, (px + 2 * q, py), (px + 2 * q, 41), (colx, 41), (colx, asy + bk * kc + 0.2), color=THREAD)
    text(ax, px + 2 * q + 1, 40.6, f"threads {t}, {t + 1}: a float4 each (LDG.128), stored as 4 scalars "
         f"down column {r}", size=6.8, va="bottom", color=THREAD)
    rect(ax, sx + 20 * e, bsy + 1 * kc, 4 * e, kc, fc=B_DARK, ec="black", lw=0.6, z=5)
    # The fragments thread (tr, tc) reads for one k, as float4.
    tr, tc, k = 5, 9, 5
    for i in range(tm // 4):
        rect(ax, sx + (tr * tm + 4 * i) * e, asy + k * kc, 4 * e, kc, fc="#ffff99", ec="black", lw=1.2, z=6)
    for j in range(tn // 4):
        rect(ax, sx + (tc * tn + 4 * j) * e, bsy + k * kc, 4 * e, kc, fc="#ffff99", ec="black", lw=1.2, z=6)

    notes(ax, 70, 50, [
        (f"per K slice each of the {threads} threads loads one float4 of A", THREAD),
        (f"  and one of B ({bm} x {bk} / 4 / {threads} = {bm * bk // 4 // threads} each); "
         "thread_tile: 4 + 4 scalar", THREAD),
        ("  B's float4 are stored as they are (orange)", B_EDGE),
        (f"per k, thread ({tr}, {tc}) reads As[k][{tr * tm}..{tr * tm + tm - 1}] and Bs[k][{tc * tn}.."
         f"{tc * tn + tn - 1}]", "black"),
        (f"  as {tm // 4} + {tn // 4} float4 (yellow; thread_tile: {tm} + {tn} scalar loads),", "black"),
        f"  then the same {tm} x {tn} outer product; C is stored as float4 too",
        (f"left over: As[k][m] and As[k+4][m] are {4 * bm} floats apart: one bank", GREY),
        ("  (2-way store conflicts); fragment reads 8 floats apart collide", GREY),
        (f"configs.h: Tiles128 (as thread_tile): {bm} x {bn} x {bk}, {tm} x {tn} a thread", GREY),
    ], size=7.2, dy=2.9)


def rung_bank_free(ax):
    bm, bn, bk, tm, tn = (TILES128[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    pad = 4
    gm, gn = bm // (tm // 4), bn // (tn // 4)
    g = gemm_panel(ax, bm, bn, scale=14 / 128, bk=bk)
    e, kc = 0.52, 1.0
    sx, bsy, asy = 72, 12, 29
    strip(ax, sx, bsy, bn, bk, e, kc, B_EDGE, label=f"Bs[{bk}][{bn}]: Bs[k][n], no padding")
    strip(ax, sx, asy, bm, bk, e, kc, A_EDGE, pad=pad,
          label=f"As[{bk}][{bm} + {pad}]: As[k][m], each row padded by {pad} floats")
    text(ax, sx + (bm + pad) * e + 0.6, asy + bk * kc / 2, f"pad\n{pad}", size=7, va="center", color=GREY)
    route_a(ax, g, 1, (68, GAP_Y), (68, asy + 3), (sx - 0.2, asy + 3))
    route_b(ax, g, 1, (sx - 0.2, None))
    tr, tc, k = 5, 9, 5
    # The 16 threads tc = 0..15 (one thread row of a warp) read a float4 each at n = tc*4.
    rect(ax, sx, bsy + k * kc, gn * e, kc, fc=WARP_FILL, ec=WARP_EDGE, lw=0.8, z=4)
    for gi in range(tm // 4):
        rect(ax, sx + (gi * gm + tr * 4) * e, asy + k * kc, 4 * e, kc, fc=THREAD, ec="black", lw=1.0, z=6)
    for gj in range(tn // 4):
        rect(ax, sx + (gj * gn + tc * 4) * e, bsy + k * kc, 4 * e, kc, fc=THREAD, ec="black", lw=1.0, z=6)
    text(ax, sx, bsy + bk * kc + 0.4, f"tc = 0 .. 15 read a float4 each: {gn} consecutive floats (purple)",
         size=7, color=WARP_EDGE)
    # The two halves of one row of A: As[k][m] and As[k+4][m], 4 * (BM + pad) floats apart.
    m = 48
    for kk in (0, 4):
        rect(ax, sx + m * e, asy + kk * kc, e, kc, fc=A_DARK, ec="black", lw=0.6, z=5)
    text(ax, sx + (m + 1) * e + 0.5, asy + bk * kc + 0.4, f"As[0][{m}], As[4][{m}]: 16 banks apart",
         size=7, color=A_EDGE)

    # The thread's C tile: 2 x 2 blocks of 4 x 4, half the block tile apart.
    q = 0.25
    cx, cy = 72, 48
    rect(ax, cx, cy, bn * q, bm * q, fc=C_FILL, ec=C_EDGE, lw=1.0)
    line(ax, [cx + gn * q] * 2, [cy, cy + bm * q], color=C_EDGE, lw=0.6, ls=(0, (2, 2)))
    line(ax, [cx, cx + bn * q], [cy + gm * q] * 2, color=C_EDGE, lw=0.6, ls=(0, (2, 2)))
    for gi in range(tm // 4):
        for gj in range(tn // 4):
            thread_square(ax, cx + (gj * gn + tc * 4) * q, cy + (gi * gm + tr * 4) * q, 4 * q, 4 * q)
    text(ax, cx, cy - 0.4, f"C tile {bm} x {bn}: thread ({tr}, {tc})", size=7, va="bottom", color=C_EDGE)
    text(ax, cx, cy + bm * q + 0.4, f"2 x 2 blocks of 4 x 4, {gm} apart", size=7, color=THREAD)

    notes(ax, 108, 49, [
        ("A's transposed stores: the two float4", A_EDGE),
        (f"halves of a row of A go to As[k][m] and", A_EDGE),
        (f"As[k+4][m], 4 x {bm + pad} = {4 * (bm + pad)} floats apart:", A_EDGE),
        (f"16 banks (pitch {bm}: the same bank)", A_EDGE),
        (f"fragments: a thread's {tn} columns are", THREAD),
        (f"2 float4 {gn} apart (its {tm} rows likewise),", THREAD),
        ("so a warp's 16 tc threads read 64", THREAD),
        ("consecutive floats: no replays", THREAD),
        (f"cost: {bk} x {pad} floats of padding", GREY),
        (f"configs.h: Tiles128 ({bm} x {bn} x {bk}, {tm} x {tn})", GREY),
    ], size=7, dy=2.75)


def rung_double_buffer(ax):
    cfg = TILES128_TWO
    bm, bn, bk, tm, tn = (cfg[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    pad = 4
    g = gemm_panel(ax, bm, bn, scale=14 / 128, bk=bk, kslices=(1, 2))
    text(ax, AX + 0.3, g.by + g.bh + 4.3, "solid: slice s\nhatched: s+1", size=6.5, color=A_EDGE)
    e, kc = 0.48, 0.75
    sx = 84
    ys = {"Bs[0]": 12, "Bs[1]": 19.5, "As[0]": 31, "As[1]": 38.5}
    for name, y in ys.items():
        is_a, cur = name.startswith("A"), name.endswith("[0]")
        fill = (A_DARK if is_a else B_DARK) if cur else "white"
        strip(ax, sx, y, bm if is_a else bn, bk, e, kc, A_EDGE if is_a else B_EDGE, pad=pad if is_a else 0,
              fc=fill, hatch=None if cur else "////")
        what = "cur: slice s, read by the FMAs" if cur else "cur ^ 1: slice s+1, stored after the FMAs"
        text(ax, sx + 1.5, y + bk * kc / 2, f"{name}  {what}", size=7, va="center", box=True)
    text(ax, sx, ys["Bs[0]"] - 0.3, f"Bs[2][{bk}][{bn}]", va="bottom", color=B_EDGE)
    text(ax, sx, ys["As[0]"] - 0.3, f"As[2][{bk}][{bm} + {pad}]", va="bottom", color=A_EDGE)
    xa = 79
    route_a(ax, g, 2, (xa, GAP_Y), (xa, ys["As[1]"] + 3), (sx - 0.2, ys["As[1]"] + 3))
    route_b(ax, g, 2, (75, None), (75, ys["Bs[1]"] + 3), (sx - 0.2, ys["Bs[1]"] + 3))

    tx0, ty0, span = 98, 53, 42  # one K slice in time
    text(ax, 70, ty0 - 3.4, "one K slice in time:", size=7.5, weight="bold")
    bars = [
        ("LDG slice s+1", 0.0, 0.62, "#bdbdbd", "global loads in flight"),
        ("FMAs on slice s", 0.04, 0.80, C_FILL, f"{bk} x {tm} x {tn} FMAs a thread"),
        ("STS slice s+1", 0.80, 0.91, A_FILL, "into buffer cur ^ 1"),
        ("__syncthreads", 0.91, 0.96, WARP_FILL, "then cur ^= 1"),
    ]
    for i, (name, t0, t1, fc, note) in enumerate(bars):
        y = ty0 + i * 3.1
        text(ax, tx0 - 0.8, y + 1.15, name, size=7, ha="right", va="center")
        rect(ax, tx0 + t0 * span, y, (t1 - t0) * span, 2.3, fc=fc, ec=GREY, lw=0.6)
        inside = (t1 - t0) * span > 20
        text(ax, tx0 + (t0 * span + 1 if inside else t1 * span + 1), y + 1.15, note, size=6.5, va="center")

    notes(ax, 70, 67.5, [
        "slice s+1 goes global -> registers while slice s is computed, and registers ->",
        "  the other buffer after it: one barrier a slice both publishes s+1 and retires s",
        "  (bank_free: load, store, barrier, compute, barrier)",
        (f"shared: 2 x {bk} x ({bm + pad} + {bn}) floats = {2 * bk * (bm + pad + bn) * 4:,} B; "
         f"MIN_BLOCKS = {cfg['MIN_BLOCKS']} keeps two blocks per SM", GREY),
        (f"configs.h: Tiles128TwoBlocks = TileConfig<Shape<{bm}, {bn}, {bk}>, Shape<{tm}, {tn}>,", GREY),
        (f"  /*MIN_BLOCKS=*/{cfg['MIN_BLOCKS']}>", GREY),
    ], size=7, dy=2.7)


def warptile_derived(cfg):
    d = dict(cfg)
    d["kWarps"] = (d["BM"] // d["WM"]) * (d["BN"] // d["WN"])
    d["kThreads"] = d["kWarps"] * WARP
    d["WMITER"] = d["WM"] * d["WN"] // (WARP * d["TM"] * d["TN"] * d["WNITER"])
    d["WSUBM"], d["WSUBN"] = d["WM"] // d["WMITER"], d["WN"] // d["WNITER"]
    d["kPitchA"], d["kPitchB"] = d["BM"] + 4, d["BN"] + 4
    d["kSmemBytes"] = 4 * 2 * d["BK"] * (d["kPitchA"] + d["kPitchB"])
    assert (d["WSUBM"] // d["TM"]) * (d["WSUBN"] // d["TN"]) == WARP
    return d


def rung_warptile(ax):
    d = warptile_derived(WARPTILE_LARGE)
    sm = warptile_derived(WARPTILE_SMALL)
    bm, bn, bk, wm, wn, tm, tn = (d[k] for k in ("BM", "BN", "BK", "WM", "WN", "TM", "TN"))
    wmi, wni, wsm, wsn = d["WMITER"], d["WNITER"], d["WSUBM"], d["WSUBN"]
    g = gemm_panel(ax, bm, bn, scale=20 / 256, bk=bk)
    s = g.scale
    wcols = bn // wn
    for i in range(1, wcols):
        line(ax, [g.bx + i * wn * s] * 2, [g.by, g.by + g.bh], color=WARP_EDGE, lw=0.6, z=4)
    for j in range(1, bm // wm):
        line(ax, [g.bx, g.bx + g.bw], [g.by + j * wm * s] * 2, color=WARP_EDGE, lw=0.6, z=4)
    warp = 5
    wx, wy = g.bx + (warp % wcols) * wn * s, g.by + (warp // wcols) * wm * s
    rect(ax, wx, wy, wn * s, wm * s, fc=WARP_FILL, ec=WARP_EDGE, lw=1.0, z=4.5)
    for w in range(d["kWarps"]):
        text(ax, g.bx + (w % wcols + 0.5) * wn * s, g.by + (w // wcols + 0.5) * wm * s, str(w), size=6.5,
             ha="center", va="center", color=WARP_EDGE)

    # The warp tile: WMITER x WNITER sub-tiles, in each one fragment per lane.
    z = 0.7
    zx, zy = 80, 14
    zoom_lines(ax, (wx, wy, wn * s, wm * s), (zx, zy, wn * z, wm * z))
    rect(ax, zx, zy, wn * z, wm * z, fc=WARP_FILL, ec=WARP_EDGE, lw=1.2)
    lanes_n = wsn // tn
    lane = 9
    for si in range(wmi):
        for sj in range(wni):
            ox, oy = zx + sj * wsn * z, zy + si * wsm * z
            grid(ax, ox, oy, wsn * z, wsm * z, wsn // tn, wsm // tm, color="white", lw=0.6)
            thread_square(ax, ox + (lane % lanes_n) * tn * z, oy + (lane // lanes_n) * tm * z, tn * z, tm * z)
            rect(ax, ox, oy, wsn * z, wsm * z, ec=WARP_EDGE, lw=1.4, z=6)
    for ln in range(WARP):  # lane numbers in every sub-tile's fragments
        for si in range(wmi):
            for sj in range(wni):
                text(ax, zx + sj * wsn * z + (ln % lanes_n + 0.5) * tn * z,
                     zy + si * wsm * z + (ln // lanes_n + 0.5) * tm * z, str(ln), size=5.5, ha="center",
                     va="center", color="white" if ln == lane else WARP_EDGE)
    text(ax, zx + wn * z / 2, zy - 0.4, f"warp {warp}: WM x WN = {wm} x {wn}", ha="center", va="bottom",
         color=WARP_EDGE)
    text(ax, zx + wsn * z / 2, zy + wm * z + 0.4, f"WSUBN = {wsn}", size=7, ha="center", color=WARP_EDGE)
    text(ax, zx - 0.5, zy + wsm * z / 2, f"WSUBM\n= {wsm}", size=7, ha="right", va="center", color=WARP_EDGE)
    text(ax, zx + (lanes_n + 0.5) * tn * z, zy + wm * z + 0.4, f"TN = {tn}", size=7, ha="center",
         color=THREAD)

    notes(ax, zx + wn * z + 2, 14, [
        (f"{d['kWarps']} warps of {WARP} lanes", C_EDGE),
        (f"= {d['kThreads']} threads a block", C_EDGE),
        (f"a warp: {wmi} x {wni} sub-tiles", WARP_EDGE),
        (f"(WMITER = {wmi}, WNITER = {wni})", WARP_EDGE),
        (f"of {wsm} x {wsn}, each {wsm // tm} x {lanes_n}", WARP_EDGE),
        ("fragments, one per lane", WARP_EDGE),
        (f"a lane: TM x TN = {tm} x {tn}", THREAD),
        ("in each sub-tile (lane 9 red):", THREAD),
        (f"{wmi * tm} x {wni * tn} = {wmi * tm * wni * tn} outputs;", THREAD),
        (f"per k {wmi * tm // 4} + {wni * tn // 4} LDS.128 for", THREAD),
        (f"{wmi * tm * wni * tn} FMAs (serpentine)", THREAD),
    ], size=7, dy=2.75)

    # Shared memory: two padded buffers of each operand, drawn to one scale in floats.
    e, kc = 0.2, 0.5
    sx, sy = 72, 66
    bxs = sx + (bm + 4) * e + 3
    for b in range(2):
        strip(ax, sx, sy + b * 4.6, bm, bk, e, kc, A_EDGE, pad=4, fc=A_DARK if b == 0 else SMEM_FILL)
        strip(ax, bxs, sy + b * 4.6, bn, bk, e, kc, B_EDGE, pad=4, fc=B_DARK if b == 0 else SMEM_FILL)
    text(ax, sx, sy - 0.3, f"As[2][{bk}][{bm} + 4]", size=7, va="bottom", color=A_EDGE)
    text(ax, bxs, sy - 0.3, f"Bs[2][{bk}][{bn} + 4]: B padded too; {d['kSmemBytes']:,} B in all",
         size=7, va="bottom", color=B_EDGE)
    route_a(ax, g, 1, (67, GAP_Y), (67, sy + 2), (sx - 0.2, sy + 2))

    notes(ax, 70, 76.3, [
        (f"configs.h: WarptileLarge = WarptileConfig<Shape<{bm}, {bn}, {bk}>, Shape<kWarpRows, {wn}>,", GREY),
        (f"  Shape<{tm}, {tn}>, /*WNITER=*/{wni}>, kWarpRows = {wm}; WMITER = {wm} * {wn} / ({WARP} * {tm} * "
         f"{tn} * {wni}) = {wmi}", GREY),
        (f"WarptileSmall, for too few large tiles: {sm['BM']} x {sm['BN']} x {sm['BK']}, warp {sm['WM']} x "
         f"{sm['WN']}, lane {sm['TM']} x {sm['TN']} (x {sm['WMITER']} x {sm['WNITER']}),", GREY),
        (f"  {sm['MIN_BLOCKS']} blocks per SM; csrc/ladder/warptile.cu picks one per problem", GREY),
    ], size=6.8, dy=2.6)


RUNGS = [
    ("01_naive", "01. naive: one thread per element of C, operands from global memory", rung_naive),
    ("02_coalesced", "02. coalesced: a warp along a row of C, so loads of B and stores of C coalesce",
     rung_coalesced),
    ("03_smem", f"03. smem: {SMEM['TILE']} x {SMEM['TILE']} tiles of A and B staged in shared memory",
     rung_smem),
    ("04_unroll", f"04. unroll: {UNROLL['TM']} outputs per thread, one shared load of B feeds "
     f"{UNROLL['TM']} FMAs", rung_unroll),
    ("05_thread_tile", f"05. thread_tile: {TILES128['TM']} x {TILES128['TN']} outputs per thread, "
     "outer products from registers", rung_thread_tile),
    ("06_vectorized", "06. vectorized: float4 loads, A transposed in shared memory", rung_vectorized),
    ("07_bank_free", "07. bank_free: padded A rows, split fragments: no bank conflicts", rung_bank_free),
    ("08_double_buffer", "08. double_buffer: the next K slice loads while this one is computed",
     rung_double_buffer),
    ("09_warptile", "09. warptile: block -> warp -> thread, "
     f"{warptile_derived(WARPTILE_LARGE)['WMITER'] * WARPTILE_LARGE['TM']} x "
     f"{WARPTILE_LARGE['WNITER'] * WARPTILE_LARGE['TN']} outputs per thread", rung_warptile),
]


def layout_problems(fig) -> list[str]:
    """Texts that leave the canvas or overlap another text (a check on the hand-placed layout)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.findobj(matplotlib.text.Text)
             if t.get_text().strip() and t.get_visible()]
    out = [f"outside the canvas: {s!r}" for s, b in boxes
           if b.x0 < canvas.x0 - 0.5 or b.y0 < canvas.y0 - 0.5 or b.x1 > canvas.x1 + 0.5 or b.y1 > canvas.y1 + 0.5]
    for i, (s1, b1) in enumerate(boxes):
        for s2, b2 in boxes[i + 1:]:
            if min(b1.x1, b2.x1) - max(b1.x0, b2.x0) > 1 and min(b1.y1, b2.y1) - max(b1.y0, b2.y0) > 1:
                out.append(f"overlap: {s1!r} / {s2!r}")
    return out


def main(argv: list[str] | None = None) -> list[pathlib.Path]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=pathlib.Path, default=ROOT / "docs" / "img" / "ladder",
                        help="output folder (default: docs/img/ladder under the repository root)")
    args = parser.parse_args(argv)
    check_configs()
    plt.rcParams.update({"font.family": "DejaVu Sans", "hatch.linewidth": 0.5, "svg.hashsalt": "ladder"})
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, title, draw in RUNGS:
        fig, ax = new_figure(title)
        draw(ax)
        for problem in layout_problems(fig):
            print(f"{stem}: {problem}", file=sys.stderr)
        path = args.out / f"{stem}.png"
        fig.savefig(path, dpi=100, metadata={"Software": None}, bbox_inches="tight", pad_inches=0.1)
        plt.close(fig)
        print(path)
        written.append(path)
    return written


if __name__ == "__main__":
    main()
