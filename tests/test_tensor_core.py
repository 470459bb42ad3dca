"""The tensor-core tiers' promises, against a float64 reference on the GPU: tf32x3 within 2x
cuBLAS fp32's error and tf32 within 2x cuBLAS TF32's, on random inputs and on inputs whose
rows and columns span eight orders of magnitude; auto under "high" within 2x cuBLAS TF32's
error; and clear errors where the tiers cannot run (which tier auto runs under each setting:
tests/test_precision.py).

The fuzz and correctness suites run both tiers on every shape and layout with the tolerance
of their precision (gemmtiles.testing); this file checks the error *ratios* the tiers promise.
"""

import pytest
import torch

import gemmtiles
from gemmtiles import _ops, bench
from gemmtiles._ops import _C
from gemmtiles._tiers import BY_NAME
from gemmtiles.bench import cublas_matmul
from gemmtiles.exact_fit import _flags
from gemmtiles.testing import (CUDA, TF32_FORCED_ROUTES, accuracy_operands, assert_gemm_close, kernels_run,
                               log_normal_operands, relative_error)


def _unavailable(tier):
    if not CUDA:
        return "needs a CUDA GPU"
    return _ops.unavailable_on_gpu(BY_NAME[tier])


def needs(tier):
    return pytest.mark.skipif(_unavailable(tier) is not None, reason=f"{tier}: {_unavailable(tier)}")


SHAPES = [(256, 256, 256, "NN"), (777, 513, 1029, "NN"), (512, 384, 11008, "NN"),
          (1024, 1024, 4096, "NT")]


@pytest.mark.parametrize("tier,reference", [
    pytest.param("tf32x3", "cuBLAS fp32", marks=needs("tf32x3")),
    pytest.param("tf32", "cuBLAS TF32", marks=needs("tf32")),
])
@pytest.mark.parametrize("wide", [False, True], ids=["randn", "wide"])
@pytest.mark.parametrize("m,n,k,layout", SHAPES)
def test_error_within_2x_its_cublas_reference(tier, reference, m, n, k, layout, wide):
    """tf32x3 against cuBLAS fp32, tf32 against cuBLAS TF32."""
    a, b = accuracy_operands(m, n, k, wide, seed=m + n + k, layout=layout)
    ours = relative_error(gemmtiles.sgemm(a, b, tier=tier), a, b)
    theirs = relative_error(cublas_matmul(a, b, tf32=reference == "cuBLAS TF32"), a, b)
    assert ours <= 2 * theirs, f"{tier} error {ours:.3g} vs {reference} {theirs:.3g}"


def _ulp(x: float) -> float:
    """One float32 ulp at x (> 0): the gap to the next float32 up."""
    t = torch.tensor(x, dtype=torch.float32)
    return (torch.nextafter(t, torch.tensor(float("inf"))) - t).item()


def _depth_cases():
    for k in [1, 2, 3, 7, 16, 32, 33, 40, 64, 100, 1000, 4097, 16384]:
        for layout in ["NN", "NT"]:
            for wide in [False, True]:
                yield pytest.param(k, layout, wide, id=f"{k}-{layout}-{'wide' if wide else 'randn'}")


@needs("tf32x3")
@pytest.mark.parametrize("k,layout,wide", list(_depth_cases()))
def test_tf32x3_error_at_every_depth(k, layout, wide):
    """tf32x3's largest error against float64 at most 2x cuBLAS fp32's plus one float32 ulp of
    the largest |C|, K from 1 to 16384, on normal inputs and on rows and columns scaled by
    exp(2 N(0, 1))."""
    m, n = (33, 65) if k < 4097 else (64, 48)
    a, b = log_normal_operands(m, n, k, wide, seed=k + wide, layout=layout)
    exact = a.double() @ b.double()
    ours = (gemmtiles.sgemm(a, b, tier="tf32x3").double() - exact).abs().max().item()
    theirs = (cublas_matmul(a, b, tf32=False).double() - exact).abs().max().item()
    bound = 2 * theirs + _ulp(exact.abs().max().item())
    assert ours <= bound, f"tf32x3 max error {ours:.3g} against cuBLAS fp32's {theirs:.3g} (bound {bound:.3g})"


@needs("tf32x3")
@pytest.mark.parametrize("k", [3, 32, 33])
def test_tf32x3_runs_the_tensor_cores_from_one_k_slice_deep(k):
    """Up to one K slice (32) tf32x3 runs the exact fp32 thread_tile kernel (the tensor cores
    would sum its hi·hi products in a single truncating pass there); deeper, the split and the
    tensor cores."""
    a, b = torch.randn(100, k, device="cuda"), torch.randn(k, 60, device="cuda")
    out = []
    names = kernels_run(lambda: out.append(gemmtiles.sgemm(a, b, tier="tf32x3")))
    assert_gemm_close(out[0], a, b)
    on_tensor_cores = any("cutlass" in name for name in names)
    assert on_tensor_cores == (k > 32), names
    assert any("thread_tile" in name for name in names) == (k <= 32), names


@needs("tf32x3")
def test_tf32x3_is_more_accurate_than_tf32():
    a, b = accuracy_operands(512, 512, 4096, False, seed=1)
    assert relative_error(gemmtiles.sgemm(a, b, tier="tf32x3"), a, b) * 50 < \
        relative_error(gemmtiles.sgemm(a, b, tier="tf32"), a, b)


@needs("tf32")
@pytest.mark.parametrize("m,n,k,layout", SHAPES)
def test_auto_under_high_within_2x_cublas_tf32(m, n, k, layout):
    """Under "high" auto runs tf32 or the exact kernels (tests/test_precision.py says which):
    either way within 2x the error of stock torch under "high" (cuBLAS TF32)."""
    a, b = accuracy_operands(m, n, k, True, seed=m + k, layout=layout)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        ours = relative_error(gemmtiles.sgemm(a, b), a, b)
    finally:
        torch.set_float32_matmul_precision(previous)
    assert ours <= 2 * relative_error(cublas_matmul(a, b, tf32=True), a, b)


def _tf32_kernels(a, b, c=None, beta=0.0, alpha=1.0, tier="tf32"):
    """The kernels (memsets aside) of one tf32 call (or `tier`'s), whose product is checked."""
    out = []
    names = kernels_run(lambda: out.append(gemmtiles.sgemm(a, b, tier=tier, c=c, alpha=alpha, beta=beta)))
    assert_gemm_close(out[0], a, b, c, alpha, beta, precision=tier)
    return [name for name in names if "Memset" not in name]


def _unaligned_zeros(m, n):
    """An m x n matrix of zeros whose rows start 4 bytes off a 16-byte line."""
    return torch.zeros(m * n + 1, device="cuda")[1:].view(m, n)


def _tf32_gemm_kernel(m, n, k):
    a, b = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda").t()
    names = _tf32_kernels(a, b)
    gemms = [name for name in names if "cutlass" in name]
    assert len(gemms) == 1, names
    return gemms[0]


@needs("tf32")
def test_tf32_runs_the_tile_its_model_picks():
    """csrc/auto/plan.h's tf32_tiling: 128 x 128 tiles on 1024 x 2048 x 2048 (64 tiles of
    128 x 256, under half a wave, against 128 of 128 x 128 in one; test_tensor_core_model.py
    has the counts), 128 x 256 on 2048^3 and 4096^3; clusters along M and output through TMA
    on all three, so the tile alone tells the kernels apart."""
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the tile counts are an H100 SXM's (132 SMs)")
    small, large = _tf32_gemm_kernel(1024, 2048, 2048), _tf32_gemm_kernel(2048, 2048, 2048)
    assert small != large
    assert _tf32_gemm_kernel(4096, 4096, 4096) == large


@needs("tf32")
@pytest.mark.parametrize("m,n,k", [(128, 4096, 4096), (997, 1028, 3000), (3, 4, 4)])
def test_tf32_reads_an_n_major_b_in_place_where_its_model_says(m, n, k):
    """x @ W with W row-major (NN): where tf32_b_route (csrc/auto/plan.h) finds it cheaper than
    packing W (by 15% or more in its model on these shapes), one kernel runs and no pack,
    the one that takes B^T into registers or Ampere's (not the kernel that x @ W^T runs),
    and the product is right (C^T's column-major output is C)."""
    a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    nn, nt = _tf32_kernels(a, b), _tf32_kernels(a, b.t().contiguous().t())
    assert len(nn) == 1 and len(nt) == 1 and nn != nt, (nn, nt)
    # A batch against one W (3-D activations) folds into one product; a B per entry too runs.
    x = torch.randn(2, m, k, device="cuda")
    assert_gemm_close(gemmtiles.sgemm(x, b, tier="tf32"), x, b.expand(2, k, n), precision="tf32")
    bs = torch.randn(2, k, n, device="cuda")
    assert_gemm_close(gemmtiles.sgemm(x, bs, tier="tf32"), x, bs, precision="tf32")


@needs("tf32")
@pytest.mark.parametrize("k", [4, 32, 36, 64, 96, 100, 4100])
def test_tf32_transposing_kernel_at_every_slice_count(k):
    """The transposing kernel's mainloop (prefetched_a_mainloop.cuh) copies B^T's next K slice
    into one of two sets of registers while the slice before runs: one, two, three and many
    slices of 32 (odd and even counts end in either set; at K = 4100 blocks share tiles'
    slices, stream-K), a partial last slice, a c with beta, a batch of B's."""
    m, n = 1024, 1028
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert _C.tf32_route(m, n, k, 1, False, True, sms)[0] == "transposing"
    a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    names = _tf32_kernels(a, b, torch.randn(m, n, device="cuda"), 0.5)
    assert len(names) == 1 and "pack" not in names[0], names
    x, bs = torch.randn(2, m, k, device="cuda"), torch.randn(2, k, n, device="cuda")
    assert_gemm_close(gemmtiles.sgemm(x, bs, tier="tf32"), x, bs, precision="tf32")


@needs("tf32")
@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_tf32_runs_the_narrow_kernel_on_few_rows(layout):
    """Up to 128 rows (tf32_narrow, csrc/auto/plan.h) tf32 computes C^T on the narrow kernel:
    one launch, B as it is. For an N-major B (NN) one tile up to 64 rows and a wider one past
    them; for a K-major one (NT) the tile of fewest k steps, here one from 1 row to 128 (and
    to 256 on an H100 SXM's 132 SMs). tf32's own kernel at 4096 rows. A B it cannot read (rows
    off 16 bytes: W^T's of K = 511) is packed K-major and runs the narrow kernel too. Right on
    odd rows and columns, with alpha, beta and C, and for a batch sharing B."""
    k = 512

    def weight(n, k=k):
        b = torch.randn(k, n, device="cuda")
        return b if layout == "NN" else b.t().contiguous().t()

    def kernels_of(m):
        a = torch.randn(m, k, device="cuda")
        if layout == "NT":
            return _tf32_kernels(a, weight(1024))
        # x @ W runs Ampere's kernel where its model says (test_tf32_runs_ampere_kernel_where_
        # its_model_says); a c whose rows it cannot take keeps the wgmma kernels.
        return _tf32_kernels(a, weight(1024), _unaligned_zeros(m, 1024), 1.0)

    rows = (1, 64, 65, 128, 256, 4096)
    kernels = {m: kernels_of(m) for m in rows}
    narrow = [kernels[m] for m in (1, 64, 65, 128)]
    assert all(len(names) == 1 for names in narrow), kernels
    assert kernels[1] == kernels[64] and kernels[65] == kernels[128]
    assert (kernels[65] == kernels[64]) == (layout == "NT")
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:  # an H100 SXM's tile counts
        assert (kernels[256] == kernels[1]) == (layout == "NT"), kernels
    assert not any(name in names for name in kernels[4096] for names in narrow), kernels
    # K = 511: A's rows, of 511 floats, are packed (K padded to 512). W^T's are too (NT), then
    # the narrow kernel of a K-major B runs; W's rows, of 1024 floats, are read in place (NN).
    packed = _tf32_kernels(torch.randn(64, 511, device="cuda"), weight(1024, 511))
    if layout == "NT":
        kmajor = _tf32_kernels(torch.randn(64, k, device="cuda"), torch.randn(1024, k, device="cuda").t())
        assert len(packed) == 3 and packed[2] == kmajor[0], (packed, kmajor)
    else:
        assert len(packed) == 2 and packed[1] == kernels[64][0], (packed, kernels[64])
    for m in (1, 3, 17, 64, 65, 127, 128, 300):
        for n, kk in ((1024, k), (1001, k) if layout == "NT" else (1004, k), (1001, 509)):
            a, b = torch.randn(m, kk, device="cuda"), weight(n, kk)
            c = torch.randn(m, n, device="cuda")
            out = gemmtiles.sgemm(a, b, tier="tf32", c=c, alpha=0.5, beta=-2.0)
            assert_gemm_close(out, a, b, c, 0.5, -2.0, precision="tf32")
            if layout == "NN":  # the same c in rows Ampere's kernel cannot take: the wgmma kernels
                cu = _unaligned_zeros(m, n).copy_(c)
                out = gemmtiles.sgemm(a, b, tier="tf32", c=cu, alpha=0.5, beta=-2.0)
                assert_gemm_close(out, a, b, c, 0.5, -2.0, precision="tf32")
    x, b = torch.randn(3, 40, k, device="cuda"), weight(1024)
    assert_gemm_close(gemmtiles.sgemm(x, b, tier="tf32"), x, b.expand(3, k, 1024), precision="tf32")


def _is_ampere(name):
    """Ampere's TF32 kernel among a tf32 call's kernels: the one of CUTLASS 2's kernel template
    (the wgmma kernels are CUTLASS 3's cutlass::device_kernel; the profiler shortens names)."""
    return "cutlass::Kernel2<" in name


# Products on each of tf32's kernels: (m, n, k, layout, the route's kernel). x @ W of few rows
# with K off a multiple of 4, which Ampere's kernel does not take, runs the narrow kernel; NN's
# n off a multiple of 4 packs B and writes an output of unaligned rows, on the narrow kernel
# where K is shallow (its stores run along C's rows) and on tf32's own tiles where K is deep;
# the last writes its output through TMA.
TF32_ROUTES = [(7, 300, 200, "NT", "narrow"), (100, 1000, 515, "NT", "narrow"), (97, 1024, 261, "NN", "narrow"),
               (40, 520, 1002, "NN", "narrow"), (700, 2048, 200, "NN", "transposing"),
               (2000, 1030, 300, "NN", "narrow"), (3000, 1030, 4000, "NN", "own"), (1500, 2048, 256, "NT", "own")]


@needs("tf32")
@pytest.mark.parametrize("m,n,k,layout,kernel", TF32_ROUTES)
def test_tf32_reads_c_and_a_bias_row_on_each_kernel(m, n, k, layout, kernel):
    """The kernels that write their output from the accumulators (the narrow kernel, the one
    transposing an N-major B, tf32's own on unaligned rows) read c ahead of its use, a chunk of
    elements at a time; every kernel reads a c of unit column stride where it lies, along its
    own strides (through TMA where it writes so and c's rows are 16-byte aligned), with no pass
    copying it into the output first: right with alpha and beta on a full c, an unaligned one,
    a bias row, a (1, n) row, rows of a wider tensor, a 3-D input sharing B with a bias, a
    batch's shared mask and its rows per entry, and on every row and column at the tiles'
    edges; a c that cannot be read so (rows per entry of a batch folded into one product, a
    column-major c, an unaligned c through TMA) copied first, and right; tf32x3's bias likewise
    (through TMA, where its N needs no padding)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    b_vec = k % 4 == 0 if layout == "NT" else n % 4 == 0  # B's rows 16-byte aligned, read in place
    route = _C.tf32_route(m, n, k, 1, layout == "NT", b_vec, sms)[0]
    if sms == 132:  # the model's kernel for these products on an H100's or H200's SMs
        assert route == kernel
    # Which kernel reads c, and how, is asserted where the route is the one this case is for
    # (another GPU's SMs may route the product elsewhere); the values on every GPU.
    ours = route == kernel
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(n, k, device="cuda").t() if layout == "NT" else torch.randn(k, n, device="cuda")
    c = torch.randn(m, n, device="cuda")
    bias = torch.randn(n, device="cuda")
    for cc in (c, _unaligned_zeros(m, n).copy_(c), bias, bias.view(1, n)):
        out = gemmtiles.sgemm(a, b, tier="tf32", c=cc, alpha=0.75, beta=-1.5)
        assert_gemm_close(out, a, b, cc.expand(m, n), 0.75, -1.5, precision="tf32")
    # The bias is read where it lies: no pass fills the output with it first.
    names = _tf32_kernels(a, b, bias, 1.0)
    if ours:
        assert len([x for x in names if "cutlass" in x]) == 1, names
        assert not any(_is_ampere(x) for x in names), names
        assert not any("fill_kernel" in x for x in names), names
    # Any c of unit column stride is read along its own strides; through TMA (tf32's own kernel
    # on aligned output rows) only where its start and rows are 16-byte aligned.
    tma = kernel == "own" and n % 4 == 0
    wide = torch.randn(m, n + 4, device="cuda")[:, :n]
    for cc, copied in ((wide, False), (_unaligned_zeros(m, n).copy_(c), tma), (c.t().contiguous().t(), True)):
        names = _tf32_kernels(a, b, cc, -0.5)
        assert not ours or any("fill_kernel" in name for name in names) == copied, (cc.stride(), names)
    # nn.Linear's 3-D input: a batch sharing B, folded into rows, reading the bias row; a row
    # per entry is another c (its rows do not fold with the output's: copied into it).
    x = torch.randn(3, m, k, device="cuda")
    for cc in (bias, torch.randn(3, 1, n, device="cuda")):
        out = gemmtiles.sgemm(x, b, tier="tf32", c=cc, beta=1.0)
        assert_gemm_close(out, x, b.expand(3, k, n), cc.expand(3, m, n), 1.0, 1.0, precision="tf32")
    # One row per entry: the entries' rows fold into one product's rows, and their c's rows
    # (at c's batch stride) with them, read in place.
    x1, c1 = torch.randn(3, 1, k, device="cuda"), torch.randn(3, 2, n, device="cuda")[:, :1]
    for cc in (c1, bias.view(1, 1, n)):
        names = _tf32_kernels(x1, b, cc, 2.0, alpha=0.5)
        assert not any("fill_kernel" in name for name in names), (cc.stride(), names)
    # A batch of its own B's (baddbmm): a mask shared by every entry, and a row per entry, read
    # in place with a zero stride.
    bb = torch.stack([b, -b, 2 * b])
    for cc in (c, torch.randn(3, 1, n, device="cuda")):
        names = _tf32_kernels(x, bb, cc, -1.0, alpha=0.5)
        assert not any("fill_kernel" in name for name in names), (cc.shape, names)
    if not _unavailable("tf32x3"):
        names = _tf32_kernels(a, b, bias, -1.5, alpha=0.75, tier="tf32x3")
        assert any("fill_kernel" in x for x in names) == (n % 4 != 0), names


@needs("tf32")
def test_tf32_runs_ampere_kernel_where_its_model_says():
    """x @ W with W row-major (N-major) and few rows against a large W: Ampere's kernel
    (tf32_route "ampere", csrc/auto/plan.h), one launch, W read as it lies; right on odd and
    aligned rows, with alpha alone, with alpha, beta and c, and with a bias row. Where its launch
    cannot take the operands (a c of unaligned rows) the route chosen without it runs and is
    right. Not for x @ W^T nor a large square."""
    if not _C.cutlass_kernels():
        pytest.skip("Ampere's kernel is built with auto's CUTLASS kernels")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    k, n = 2048, 4096
    w = torch.randn(k, n, device="cuda")
    on_ampere = []
    for m in (1, 3, 17, 32, 64, 65, 128):
        kernel = _C.tf32_route(m, n, k, 1, False, True, sms)[0]
        a = torch.randn(m, k, device="cuda")
        names = _tf32_kernels(a, w)
        assert any(_is_ampere(x) for x in names) == (kernel == "ampere"), (m, kernel, names)
        if kernel == "ampere":
            assert len(names) == 1, names
            on_ampere.append(m)
        assert_gemm_close(gemmtiles.sgemm(a, w, tier="tf32", alpha=0.5), a, w, None, 0.5, precision="tf32")
        c = torch.randn(m, n, device="cuda")
        assert_gemm_close(gemmtiles.sgemm(a, w, tier="tf32", c=c, alpha=0.5, beta=-2.0), a, w, c, 0.5, -2.0,
                          precision="tf32")
        bias = torch.randn(n, device="cuda")
        assert_gemm_close(gemmtiles.sgemm(a, w, tier="tf32", c=bias, beta=1.0), a, w, bias.expand(m, n), 1.0, 1.0,
                          precision="tf32")
    if 32 not in on_ampere:
        assert sms != 132, on_ampere  # an H100 SXM's 132 SMs run 32 rows on it
        pytest.skip(f"32 rows do not run Ampere's kernel on {sms} SMs")
    a = torch.randn(32, k, device="cuda")
    # A c whose rows start 4 bytes off a 16-byte line: the wgmma kernels run.
    assert not any(_is_ampere(x) for x in _tf32_kernels(a, w, _unaligned_zeros(32, n).fill_(1.0), 1.0))
    assert not any(_is_ampere(x) for x in _tf32_kernels(a, w.t().contiguous().t()))
    assert not any(_is_ampere(x) for x in _tf32_kernels(torch.randn(2048, 2048, device="cuda"), w[:, :2048]))
    # Where Ampere's launch cannot take c, the route is the one chosen without it: a deep K
    # over few tiles runs its slices (both packs, the narrow kernel, the sum).
    m, n, k = 16, 128, 8192
    a, w, c = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda"), torch.randn(m, n, device="cuda")
    without = _C.tf32_route(m, n, k, 1, False, True, sms, False)[0]
    if sms == 132:
        assert (_C.tf32_route(m, n, k, 1, False, True, sms, True)[0], without) == ("ampere", "slices")
    cu = _unaligned_zeros(m, n).copy_(c)
    names = _tf32_kernels(a, w, cu, 1.0)
    assert not any(_is_ampere(x) for x in names), names
    assert (len(names) == 4) == (without == "slices"), (without, names)
    assert_gemm_close(gemmtiles.sgemm(a, w, tier="tf32", c=cu, alpha=0.5, beta=-2.0), a, w, c, 0.5, -2.0,
                      precision="tf32")


# Products of few deep tiles, whose tiles tf32's stream-K kernels share, on each of them (on
# 132 SMs): the narrow kernel of a K-major and of an N-major B, the transposing kernel (clusters
# of two) on 24 and on 48 tiles, and tf32's own 128 x 256 tiles; the last two past the kept
# workspace's 4 MB (a workspace of their own, zeroed).
SHARED_TF32_TILES = [(200, 512, 6000, "NT"), (64, 1536, 2999, "NN"), (1024, 768, 6000, "TN"), (1000, 1500, 2000, "TN"),
                     (1500, 1000, 3000, "NT")]


@needs("tf32")
def test_tf32_stream_k_launches_leave_their_locks_zero():
    """tf32's stream-K kernels add a shared tile's parts under locks that nothing zeroes
    between launches (stream_k_locks.cuh): each launch must leave them zero for the next.
    On CUTLASS's schedule and on 3 splits of every tile, twice, on the current stream and on
    another, each right and the same bits each time, no zeroing pass queued where the
    workspace is kept; then captured in a CUDA graph (a workspace of the launch's own) and
    replayed."""
    gen = torch.Generator().manual_seed(5)
    operands = [bench.operands(bench.Shape(m, n, k, layout), gen, torch.device("cuda")) for m, n, k, layout in
                SHARED_TF32_TILES]
    side = torch.cuda.Stream()
    first = {}
    try:
        for splits in (0, 3):
            _C.force_tf32_splits(splits)
            for stream in (torch.cuda.current_stream(), side):
                with torch.cuda.stream(stream):
                    for _ in range(2):
                        for i, (a, b) in enumerate(operands):
                            out = gemmtiles.sgemm(a, b, tier="tf32", alpha=0.75)
                            torch.cuda.current_stream().synchronize()
                            assert_gemm_close(out, a, b, None, 0.75, precision="tf32")
                            assert torch.equal(out, first.setdefault((splits, i), out)), SHARED_TF32_TILES[i]
        torch.cuda.synchronize()
        assert _C.stream_k_locks_left_set() == 0
        # Shared tiles on a kept workspace, on CUTLASS's schedule and on 3 splits: no memset.
        for splits in (0, 3):
            _C.force_tf32_splits(splits)
            for a, b in operands[:3]:
                names = kernels_run(lambda: gemmtiles.sgemm(a, b, tier="tf32"))
                assert not any("Memset" in name for name in names), (splits, names)
        a, b = operands[0]
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = gemmtiles.sgemm(a, b, tier="tf32", alpha=0.75)
        for _ in range(3):
            out.zero_()
            graph.replay()
            torch.cuda.synchronize()
            assert torch.equal(out, first[(3, 0)])
    finally:
        _C.force_tf32_splits(-1)
    assert _C.stream_k_locks_left_set() == 0


@needs("tf32")
@pytest.mark.parametrize("m,n,k,layout", [(21, 358, 6316, "NT"), (103, 469, 8531, "NN"), (5, 197, 5363, "TN"),
                                          (1, 1221, 9644, "NN")])
def test_tf32_sums_k_slices_where_its_model_says(m, n, k, layout):
    """Few tiles over a deep K (tf32_route "slices"): A's and B's K slices packed, the narrow
    kernel on every slice at once, their partial outputs added in order; four kernels, right
    with alpha, beta and c, a bias row, an A whose rows start off a 16-byte line, and the same
    bits every run."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a, b = bench.operands(bench.Shape(m, n, k, layout), torch.Generator().manual_seed(3), torch.device("cuda"))
    _, b_kmajor, _, b_vec = _flags(layout, m, n, k)
    route = _C.tf32_route(m, n, k, 1, b_kmajor, b_vec, sms)
    if sms == 132:  # an H100 SXM's counts
        assert route[0] == "slices", route
    if route[0] != "slices":
        pytest.skip(f"{m} x {n} x {k} does not run K slices on {sms} SMs")
    c = torch.randn(m, n, device="cuda")
    names = _tf32_kernels(a, b, c, -1.5)
    assert len(names) == 4 and "pack" in names[0] and "pack" in names[1] and "sum_slices" in names[3], names
    assert_gemm_close(gemmtiles.sgemm(a, b, tier="tf32", c=c, alpha=0.5, beta=2.0), a, b, c, 0.5, 2.0,
                      precision="tf32")
    bias = torch.randn(n, device="cuda")
    assert_gemm_close(gemmtiles.sgemm(a, b, tier="tf32", c=bias, beta=1.0), a, b, bias.expand(m, n), 1.0, 1.0,
                      precision="tf32")
    a_off = torch.randn(m, k + 1, device="cuda")[:, 1:]
    assert_gemm_close(gemmtiles.sgemm(a_off, b, tier="tf32"), a_off, b, precision="tf32")
    first = gemmtiles.sgemm(a, b, tier="tf32")
    for _ in range(2):
        assert torch.equal(gemmtiles.sgemm(a, b, tier="tf32"), first)


@needs("tf32")
@pytest.mark.parametrize("k", [1, 2, 3, 5, 31, 33, 63, 509, 1001, 4097])
def test_tf32_reads_aligned_lines_in_place_at_any_k(k):
    """TMA needs an operand's lines 16-byte aligned, not its extent along them: K off a multiple
    of 4 packs only an operand whose lines it leaves unaligned (A of K floats a row, past one
    row), and reads a row-major W (x @ W, N a multiple of 4) or slices of wider rows where they
    lie, the last K slice filled with zeros past K. Up to 128 rows W is read in place (the
    narrow kernel); past them, on the route its model reports (_C.tf32_route), but where K
    runs in slices summed apart (both operands packed slice by slice); right with alpha, beta
    and c, and for batches."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    n, ld = 1028, (k + 3) // 4 * 4 + 4
    for m in (1, 37, 128, 129, 600):
        a, w = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        c = torch.randn(m, n, device="cuda")
        route = _C.tf32_route(m, n, k, 1, False, True, sms)
        names = _tf32_kernels(a, w, c, -0.5)
        if route[0] == "slices":
            assert len(names) == 4 and "sum_slices" in names[3], (m, route, names)
        else:
            assert route[0] != "ampere" and (route[3] or m > 128), (m, route)
            assert len(names) == 1 + (m > 1) + (not route[3]), (m, route, names)
            assert (m > 1) <= ("pack" in names[0]), names
        # Slices of wider rows: A and W^T (K-major) read in place, one kernel.
        sa = torch.randn(m, ld, device="cuda")[:, :k]
        sw = torch.randn(n, ld, device="cuda")[:, :k].t()
        names = _tf32_kernels(sa, sw)
        if _C.tf32_route(m, n, k, 1, True, True, sms)[0] != "slices":
            assert len(names) == 1 and "pack" not in names[0], (m, names)
        out = gemmtiles.sgemm(sa, sw, tier="tf32", c=c, alpha=0.5, beta=2.0)
        assert_gemm_close(out, sa, sw, c, 0.5, 2.0, precision="tf32")
    x, ws = torch.randn(3, 200, k, device="cuda"), torch.randn(3, k, n, device="cuda")
    assert_gemm_close(gemmtiles.sgemm(x, ws, tier="tf32"), x, ws, precision="tf32")
    x, w = torch.randn(3, 40, k, device="cuda"), torch.randn(k, n, device="cuda")
    assert_gemm_close(gemmtiles.sgemm(x, w, tier="tf32"), x, w.expand(3, k, n), precision="tf32")


@needs("tf32")
@pytest.mark.parametrize("k", [509, 1021])
def test_tf32_reads_slices_in_place_at_odd_k_past_the_narrow_kernel(k):
    """Past the narrow kernel's rows and columns: slices of wider rows (their lines 16-byte
    aligned, K off a multiple of 4) are read where they lie, A and W^T by tf32's own kernel
    (the route its model gives them on an H100), x @ W on the route its model reports, a batch
    with a W per entry as it is, and a batch sharing W^T folded into one product of its rows."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    m, n, ld = 2048, 4100, (k + 3) // 4 * 4 + 4
    sa = torch.randn(m, ld, device="cuda")[:, :k]
    sw = torch.randn(n, ld, device="cuda")[:, :k].t()
    route = _C.tf32_route(m, n, k, 1, True, True, sms)
    if sms == 132:  # an H100 SXM's counts
        assert route[0] == "own", route
    names = _tf32_kernels(sa, sw)
    assert len(names) == 1 and "pack" not in names[0], (route, names)
    c = torch.randn(m, n, device="cuda")
    out = gemmtiles.sgemm(sa, sw, tier="tf32", c=c, alpha=0.5, beta=2.0)
    assert_gemm_close(out, sa, sw, c, 0.5, 2.0, precision="tf32")
    route = _C.tf32_route(m, n, k, 1, False, True, sms)
    names = _tf32_kernels(sa, torch.randn(k, n, device="cuda"))
    assert len(names) == 1 + (not route[3]) and ("pack" in names[0]) == (not route[3]), (route, names)
    xs = torch.randn(3, 700, ld, device="cuda")[..., :k]
    ws = torch.randn(3, n, ld, device="cuda")[..., :k].transpose(1, 2)
    for w in (ws, sw):
        names = _tf32_kernels(xs, w)
        assert len(names) == 1 and "pack" not in names[0], (w.shape, names)


@needs("tf32")
@pytest.mark.parametrize("m,n,k", [(8192, 8192, 8192), (65536, 1024, 1024)])
def test_tf32_packs_an_n_major_b_where_its_model_says(m, n, k):
    """x @ W of many rows: the kernel that transposes W^T into registers, or where its model
    finds packing W K-major cheaper than its slower k steps (a tall product against a small
    W), the pack, then the kernel that x @ W^T runs."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    nn, nt = _tf32_kernels(a, b), _tf32_kernels(a, b.t().contiguous().t())
    route = _C.tf32_route(m, n, k, 1, False, True, sms)
    if sms == 132:  # an H100 SXM's counts
        assert route[0] == ("transposing" if m == 8192 else "own"), route
    if route[3]:
        assert len(nn) == 1 and "PrefetchedAMainloop" in nn[0] and nn != nt, (nn, nt)
    else:
        assert len(nn) == 2 and nn[1:] == nt and "pack" in nn[0], (nn, nt)


def test_force_tf32_route_checks_its_arguments():
    """The measurement switch names what it takes; a build without the sm_90a kernels says it
    has none."""
    for kwargs, match in [({"kernel": "wide"}, "kernel must be"), ({"kernel": "narrow", "tile_n": 96}, "tile_n 32, 64"),
                          ({"kernel": "narrow", "tile_n": 64, "splits": 2}, "no splits"),
                          ({"kernel": "own", "tile_n": 64}, "tile_n 128 or 256"),
                          ({"kernel": "ampere", "splits": 5}, "splits 1, 2, 3")]:
        with pytest.raises(ValueError, match=match):
            _C.force_tf32_route(**kwargs)
    if not _C.sm90a_kernels():
        with pytest.raises(RuntimeError, match="no sm_90a kernels"):
            _C.force_tf32_route("own", 128)
        assert _C.forced_tf32_route_refused() is False
        return
    _C.force_tf32_route("own", 128)
    _C.force_tf32_route()
    assert _C.forced_tf32_route_refused() is False


# (m, n, k, layout, the forced routes the launch cannot run): an N-major B it reads in place, a
# K-major one, and an N-major one of N off a multiple of 4 (packed K-major; Ampere's kernel and
# the transposing one need it as it lies).
FORCED_ROUTE_PROBLEMS = [(96, 1000, 516, "NN", set()), (96, 1000, 516, "NT", {"transposing", "ampere"}),
                         (50, 999, 515, "NN", {"transposing", "ampere"}), (300, 256, 1000, "TN", set())]


@needs("tf32")
@pytest.mark.parametrize("m,n,k,layout,refused", FORCED_ROUTE_PROBLEMS)
def test_tf32_forced_routes_run_right(m, n, k, layout, refused):
    """Every route force_tf32_route names gives tf32's answer where it runs the problem (Ampere's
    kernel seen in the profile), and says so where it cannot (the route's kernel then runs)."""
    a, b = bench.operands(bench.Shape(m, n, k, layout), torch.Generator().manual_seed(m + k), torch.device("cuda"))
    c = torch.randn(m, n, device="cuda")
    try:
        for kernel, tile_n, splits in TF32_FORCED_ROUTES:
            _C.force_tf32_route(kernel, tile_n, splits)
            names = kernels_run(lambda: gemmtiles.sgemm(a, b, c=c, alpha=0.5, beta=-1.5, tier="tf32"))
            out = gemmtiles.sgemm(a, b, c=c, alpha=0.5, beta=-1.5, tier="tf32")
            assert_gemm_close(out, a, b, c, 0.5, -1.5, precision="tf32")
            runs = kernel not in refused and (kernel != "ampere" or _C.cutlass_kernels())
            assert _C.forced_tf32_route_refused() is (not runs), (kernel, tile_n, splits)
            if kernel == "ampere":
                assert any("Kernel2" in name for name in names) is runs, names
    finally:
        _C.force_tf32_route()
    assert _C.forced_tf32_route_refused() is False


@needs("tf32x3")
@pytest.mark.parametrize("tier", ["tf32", "tf32x3"])
def test_bitwise_deterministic(tier):
    a, b = accuracy_operands(1000, 1000, 3000, False, seed=3)
    first = gemmtiles.sgemm(a, b, tier=tier)
    for _ in range(3):
        assert torch.equal(gemmtiles.sgemm(a, b, tier=tier), first)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("tier", ["tf32", "tf32x3"])
def test_unavailable_tier_says_what_it_needs(tier):
    if _unavailable(tier) is None:
        pytest.skip(f"{tier} runs on this GPU")
    a = torch.randn(64, 64, device="cuda")
    with pytest.raises(RuntimeError, match="sm_90a|compute capability 9.0"):
        gemmtiles.sgemm(a, a, tier=tier)
    assert tier not in gemmtiles.tiers("cuda")


def test_variants_on_cuda_without_a_gpu_does_not_raise():
    # A CUDA build on a machine without a GPU (CI): the tiers with requirements are left out.
    listed = gemmtiles.tiers("cuda")
    if not CUDA:
        assert "tf32" not in listed and "tf32x3" not in listed


def test_variants_list_tensor_core_tiers_only_where_they_run():
    for tier in ("tf32", "tf32x3"):
        listed = tier in gemmtiles.tiers("cuda") if CUDA else False
        assert listed == (_unavailable(tier) is None)
