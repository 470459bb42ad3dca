"""The command-line tools: a misuse gets one line saying why and exit status 2; info tells
what this build is."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest
import torch

import gemmtiles
from gemmtiles import bench, info, tune

MISUSE = [
    ["--shapes", "nonsense"],
    ["--shapes", "0x4x4x4"],
    ["--shapes", "3x4"],
    ["--shapes", "4x4x4:XY"],
    ["--shapes", "2x4x4x4:TN"],
    ["--tiers", "fastest"],
    ["--warmup", "-1"],
    ["--out", "/proc/gemmtiles-cannot-be-here"],
]
if not torch.cuda.is_available():
    MISUSE += [["--shapes", "odd"], ["--shapes", "transformer"], ["--shapes", "linear"], ["--shapes", "model"],
               ["--device", "cuda"], ["--model"]]


TUNE_MISUSE = [["--device", "cpu"], ["--shapes", "3x4"], ["--device", "cuda:99"], ["--shapes", "0x4096x4096"],
               ["--shapes", "8x4096x4096:TN"]]
if not torch.cuda.is_available():
    TUNE_MISUSE = [[]]  # nothing to tune without a GPU
TUNE_MISUSE += [["--budget", "0"], ["--budget", "nan"], ["--metric", "host"]]


@pytest.mark.parametrize(
    "tool,argv",
    [(bench, argv) for argv in MISUSE] + [(tune, argv) for argv in TUNE_MISUSE],
    ids=lambda x: " ".join(x) if isinstance(x, list) else x.__name__.rsplit(".", 1)[-1],
)
def test_misuse_is_one_line_and_status_2(tool, argv, capsys):
    with pytest.raises(SystemExit) as e:
        tool.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    prog = f"python -m {tool.__name__}: error: "
    assert err.count("\n") == 1 and err.startswith(prog), err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("metric", ["gpu", "wall"])
def test_tune_writes_a_table_auto_reads(tmp_path, capsys, metric):
    out = tmp_path / "table.txt"
    assert tune.main(["--shapes", "20x300x500,20x300x500:NT", "--out", str(out), "--repeats", "3",
                      "--budget", "0.02", "--metric", metric]) == 0
    text = out.read_text()
    # The shape's entry, or, where auto's own plan beat every entry, a comment in its place.
    assert text.startswith("# gemmtiles auto table for ") and ("\nNT 20 320 512 " in text or "# NT 20 320 512: " in text)
    assert ("# timed with --metric wall" in text) == (metric == "wall")
    from gemmtiles._ops import _C

    device = torch.cuda.current_device()
    try:
        _C.set_auto_table(device, text, str(out))  # parses as auto reads it, or raises
    finally:
        _C.set_auto_table(device, None)


def test_bench_takes_a_batched_shape(tmp_path, capsys):
    shape = bench.shape_set("3x5x7x9:NT", "cpu")[0]
    assert (shape.batch, shape.m, shape.n, shape.k, shape.layout, shape.label) == (3, 5, 7, 9, "NT", "3x5x7x9 NT")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert bench.main(["--shapes", "2x17x9x5", "--tiers", "naive", "--device", device, "--budget", "0.01",
                       "--out", str(tmp_path)]) == 0
    assert "2x17x9x5" in capsys.readouterr().out


def test_bench_takes_sets_and_shapes_together():
    # as docs/ladder.md runs it: --shapes small,batched
    small, batched = bench.shape_set("small", "cuda"), bench.shape_set("batched", "cuda")
    assert bench.shape_set("small,batched", "cuda") == small + batched
    assert bench.shape_set("squares,3x5x7:NT", "cpu")[-1].label == "3x5x7 NT"
    with pytest.raises(ValueError, match="sized for a GPU"):
        bench.shape_set("squares,small", "cpu")


def test_bench_cold_l2_needs_a_gpu(capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--cold-l2", "--device", "cpu", "--shapes", "8x8x8", "--tiers", "naive"])
    assert e.value.code == 2 and "--cold-l2" in capsys.readouterr().err
    with pytest.raises(ValueError, match="cold_l2"):
        bench._timer(torch.device("cpu"), lambda: None, 0, 1, 0.01, cold_l2=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bench_cold_l2_times_from_dram(tmp_path, capsys):
    assert bench.main(["--cold-l2", "--shapes", "8x2048x2048:NT", "--tiers", "auto", "--budget", "0.02",
                       "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "--cold-l2" in out and "8x2048x2048 NT" in out


def test_bench_takes_a_tn_shape(tmp_path, capsys):
    # TN: A column-major (the weight gradient x^T @ grad), timed and checked against float64.
    assert bench.shape_set("5x7x9:TN", "cpu")[0].label == "5x7x9 TN"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert bench.main(["--shapes", "17x9x5:TN", "--tiers", "naive", "--device", device, "--budget", "0.01",
                       "--out", str(tmp_path)]) == 0
    assert "17x9x5 TN" in capsys.readouterr().out
    rows = (tmp_path / "bench.csv").read_text().splitlines()
    assert any(",naive," in row and "TN" in row for row in rows), rows


def test_bench_model_set_is_the_models_linears():
    shapes = bench.shape_set("model", "cuda")
    c = bench.MODEL_CONFIG
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    assert {(s.k, s.n) for s in shapes if s.layout == "NT"} == {(h, h), (h, i), (i, h), (h, v)}
    assert {s.m for s in shapes if s.layout == "NT"} == {2048, 1024, 1, 8}
    train = [s for s in shapes if s.group == "model-train-4x512"]
    assert len(train) == 12 and {s.group for s in shapes} == {"model-" + k for k in bench.MODEL_SCENARIOS}
    # each Linear (in, out) of a training step: forward, grad_x and grad_W (out x in)
    for fwd in (s for s in train if s.layout == "NT"):
        assert bench.Shape(fwd.m, fwd.k, fwd.n, "NN", group=fwd.group) in train
        assert bench.Shape(fwd.n, fwd.k, fwd.m, "TN", group=fwd.group) in train


def test_bench_runs_a_small_shape(tmp_path, capsys):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert bench.main(["--shapes", "17x9x5", "--tiers", "naive", "--device", device, "--budget", "0.01",
                       "--out", str(tmp_path)]) == 0
    assert "17x9x5" in capsys.readouterr().out
    assert (tmp_path / "bench.csv").exists()



def test_bench_bias_adds_a_row_on_both_sides(tmp_path, capsys):
    # nn.Linear's product, NT, NN on a batch sharing B, TN; every side's error against float64
    # with the bias. linear_product's every branch (a batch folded as F.linear folds it, one that
    # does not lie in one block, a batch of products) against float64.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert bench.main(["--shapes", "17x9x5:NT,2x5x7x3,9x4x5:TN", "--tiers", "naive", "--device", device,
                       "--budget", "0.01", "--bias", "--out", str(tmp_path)]) == 0
    assert "--bias" in capsys.readouterr().out
    with open(tmp_path / "bench.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len({r["shape"] for r in rows}) == 3 and {r["tier"] for r in rows} >= {"naive"}
    # A side that left the bias out would be off by it (a bias of N(0, 1) against products of
    # a few terms).
    assert all(float(r["rel_err"]) < 1e-5 for r in rows), rows
    a, b = torch.randn(4, 3, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64)
    c = torch.randn(5, dtype=torch.float64)
    for x, y in ((a, b), (a.expand(2, 4, 3).contiguous(), b), (a.expand(2, 4, 3).mT.contiguous().mT, b),
                 (a.expand(2, 4, 3), b.expand(2, 3, 5))):
        torch.testing.assert_close(bench.linear_product(x, y, c), x @ y + c)
    with pytest.raises(SystemExit):
        bench.main(["--bias", "--overhead"])


def test_bench_no_table_turns_autos_tables_off_first(monkeypatch, tmp_path, capsys):
    from gemmtiles._ops import _C

    calls = []
    monkeypatch.setattr(_C, "set_auto_table_dirs", lambda dirs: calls.append(list(dirs)))
    assert bench.main(["--shapes", "17x9x5", "--tiers", "naive", "--device", "cpu", "--budget", "0.01",
                       "--out", str(tmp_path), "--no-table"]) == 0
    assert calls == [[]]

def test_bench_overhead_mode_runs(monkeypatch, capsys):
    # Fewer calls than the real measurement: this checks the mode runs, not its figures.
    real = bench.measure_overhead
    monkeypatch.setattr(bench, "measure_overhead", lambda device: real(device, calls=5, rounds=1))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert bench.main(["--overhead", "--device", device]) == 0
    out = capsys.readouterr().out
    assert "sgemm vs torch.mm" in out and "Linear fwd+bwd" in out


def test_interleaved_turns_the_order_round_by_round():
    log, now = [], [0.0]

    def step(name, seconds):
        def call():
            log.append(name)
            now[0] += seconds
        return call

    steps = {"torch": step("torch", 2.0), "gemmtiles": step("gemmtiles", 3.0)}
    syncs = []
    t = bench.interleaved(steps, rounds=4, warmup=2, sync=lambda: syncs.append(len(log)), clock=lambda: now[0])
    # Warm-up calls first (untimed), then rounds whose order turns: A B, B A, A B, B A.
    assert log[:4] == ["torch", "torch", "gemmtiles", "gemmtiles"]
    assert log[4:] == ["torch", "gemmtiles", "gemmtiles", "torch"] * 2
    assert t == {"torch": [2.0] * 4, "gemmtiles": [3.0] * 4}
    assert len(syncs) == 2 * 8  # before and after every timed call
    assert syncs[:2] == [4, 5]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bench_model_mode_runs(monkeypatch, capsys):
    pytest.importorskip("transformers")
    # The two decode scenarios and two rounds: this checks the mode runs, not its figures.
    real = bench.measure_models
    monkeypatch.setattr(bench, "measure_models",
                        lambda rounds, warmup, **kw: real(rounds, warmup, ["decode-b1", "decode-b8"], **kw))
    assert bench.main(["--model", "--repeats", "2", "--warmup", "1", "--precision", "high",
                       "--fp32-precision", "tf32x3"]) == 0
    out = capsys.readouterr().out
    assert "decode-b1" in out and "decode-b8" in out and "gemmtiles" in out
    assert "torch's precision 'high', gemmtiles' 'tf32x3'" in out
    assert torch.get_float32_matmul_precision() == "highest"  # restored


def test_random_sample_is_the_distribution_asked_for():
    shapes = bench.random_shapes(300, seed=5)
    assert shapes == bench.random_shapes(300, seed=5) and shapes != bench.random_shapes(300, seed=6)
    assert bench.shape_set("random:300:5", "cuda") == shapes
    assert len(bench.shape_set("random", "cuda")) == bench.RANDOM_DEFAULT_N
    assert all(1 <= s.m <= 8192 and 128 <= s.n <= 16384 and 128 <= s.k <= 16384 for s in shapes)
    assert all(s.macs <= bench.RANDOM_MAX_MACS for s in shapes)
    assert {s.layout for s in shapes} == set(bench.LAYOUTS)
    batched = [s for s in shapes if s.bmm]
    assert batched and all(2 <= s.batch <= 64 for s in batched)
    assert all(s.batch == 1 for s in shapes if not s.bmm)
    # Log-uniform: about as many rows in [1, 90] as in [91, 8192].
    assert 0.35 < sum(s.m <= 90 for s in shapes) / len(shapes) < 0.65
    # The aligned sample: the same draws, rounded up (a decode step's 1-8 rows kept).
    aligned = bench.shape_set("random:300:5:aligned", "cuda")
    kept = [(s, a) for s, a in zip(shapes, aligned) if (s.layout, s.bmm, s.batch) == (a.layout, a.bmm, a.batch)]
    assert len(kept) >= len(aligned) * 0.9  # a draw past the cap after rounding is drawn again
    assert all(a.n % bench.RANDOM_ALIGN_NK == 0 and a.k % bench.RANDOM_ALIGN_NK == 0 for a in aligned)
    assert all(a.m <= bench.RANDOM_ALIGN_M or a.m % bench.RANDOM_ALIGN_M == 0 for a in aligned)
    assert all(a.macs <= bench.RANDOM_MAX_MACS for a in aligned)
    a0, s0 = aligned[0], shapes[0]
    assert (a0.n - s0.n) in range(bench.RANDOM_ALIGN_NK) and (a0.k - s0.k) in range(bench.RANDOM_ALIGN_NK)
    assert any(a.m <= bench.RANDOM_ALIGN_M and a.m % 2 for a in aligned)  # odd few-row products stay
    assert all(a.group == "random:5:aligned" for a in aligned)
    for bad in ("random:0", "random:x", "random:5:y", "random:1:2:3", "random:1:2:aligned:4", "random:1:2:Aligned"):
        with pytest.raises(ValueError, match="random"):
            bench.shape_set(bad, "cuda")
    with pytest.raises(ValueError, match="sized for a GPU"):
        bench.shape_set("random", "cpu")


def test_summary_reports_the_ratio_distribution():
    shapes = bench.random_shapes(40, seed=1)
    rows = []
    for i, s in enumerate(shapes):
        for tier, ratio in (("cublas", 1.0), ("auto", 0.5 + (i % 5) / 4)):
            rows.append(bench.Row(s.label, s.group, tier, 1.0, 1.0, None, ratio, None, None, 3, 1e-7, 1.0,
                                  s.macs, s.m, s.layout, s.bmm))
    stats = bench.summary([r for r in rows if r.tier != "cublas"], "cublas")["auto"]
    ratios = [0.5 + (i % 5) / 4 for i in range(40)]
    assert stats["all"]["n"] == 40 and stats["all"]["min"] == 0.5
    assert abs(stats["all"]["median"] - sorted(ratios)[19] / 2 - sorted(ratios)[20] / 2) < 1e-12
    assert stats["all"]["p5"] <= stats["all"]["p10"] <= stats["all"]["median"] <= stats["all"]["geomean"] * 2
    assert sum(stats[k]["n"] for k in ("NN", "NT", "TN", "bmm")) == 40
    assert sum(stats[k]["n"] for k in ("M 1-16", "M 17-256", "M 257+")) == 40
    text = bench.summary_table({"auto": stats}, "cublas")
    assert "geomean" in text and "M 17-256" in text


def test_bench_times_the_tf32_reference_beside_tf32_tiers():
    assert bench._reference_names(["warptile"], torch.device("cuda")) == ["cublas"]
    assert bench._reference_names(["tf32x3"], torch.device("cuda")) == ["cublas"]
    assert bench._reference_names(["tf32", "auto"], torch.device("cuda")) == ["cublas", bench.TF32_REF]
    assert bench._reference_names(["blocked"], torch.device("cpu")) == ["torch"]


def test_info_tells_the_build(capsys):
    c = info.config()
    assert c["gemmtiles"] == gemmtiles.__version__ and c["torch"] == torch.__version__
    assert c["built with"]["torch"] == torch.__version__
    assert set(c["kernels built"]["cpu"]) == {"naive", "reorder", "blocked"}
    assert c["runs here"]["cpu"] == gemmtiles.tiers("cpu")
    assert ("cuda" in c["runs here"]) == torch.cuda.is_available()
    built_cuda = bool(c["kernels built"]["cuda"])
    assert built_cuda == c["built with"]["CUDA kernels"]
    assert gemmtiles.__version__.endswith("+cpu") != built_cuda
    out = subprocess.run([sys.executable, "-m", "gemmtiles.info"], capture_output=True, text=True, check=True).stdout
    assert f"gemmtiles {gemmtiles.__version__} on torch {torch.__version__}" in out
    assert "runs here on cpu: naive, reorder, blocked" in out


def test_import_under_another_torch_is_a_clear_error(tmp_path):
    """A build records the torch it was compiled against; importing it under another torch
    names both and the rebuild command (simulated by a build record of another version)."""
    import gemmtiles._build_info as b

    code = (
        "import sys, types, torch\n"
        f"sys.modules['gemmtiles._build_info'] = types.SimpleNamespace(TORCH_VERSION='1.0.0', **{{k: v for k, v in {dict((k, getattr(b, k)) for k in dir(b) if k.isupper())!r}.items() if k != 'TORCH_VERSION'}})\n"
        "import gemmtiles\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode != 0
    assert "ImportError: gemmtiles was built against torch 1.0.0, but torch " + torch.__version__ in r.stderr
    assert "pip install --no-build-isolation -e ." in r.stderr


def test_tune_wall_metric_times_calls_back_to_back(monkeypatch):
    # A fake clock that a call advances by 1 ms, and no GPU to wait for: runs of back-to-back
    # calls, each run's time over its calls, the median of WALL_RUNS runs.
    clock = [0.0]
    calls = []

    def call():
        calls.append(None)
        clock[0] += 1e-3

    monkeypatch.setattr(tune.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(tune.torch.cuda, "synchronize", lambda device=None: None)
    assert tune._wall_timer(torch.device("cuda"), call, budget_s=0.5) == pytest.approx(1.0)
    n = int(0.5 / tune.WALL_RUNS / 1e-3)  # calls a run, from the first call's time and the budget
    assert len(calls) == 2 + tune.WALL_RUNS * n


def test_tune_shape_names_a_metric_it_lacks():
    with pytest.raises(ValueError, match=r"metric: expected one of gpu, wall, got 'host'"):
        tune.tune_shape(bench.Shape(1, 1, 1), torch.device("cpu"), metric="host")


def test_bench_passes_keep_each_sides_least_median(monkeypatch):
    # Three passes over cuBLAS and the tier in turn: each keeps the least of its medians and
    # counts every run; the tiers and references alternate, pass by pass.
    order, medians = [], {"cublas": iter([5.0, 2.0, 4.0]), "naive": iter([3.0, 6.0, 1.0])}

    def timer(device, fn, warmup, repeats, budget_s, cold_l2=False):
        # bench.run's reference binds (a, b, c) as defaults; a tier's function binds its name fourth
        name = "cublas" if len(fn.__defaults__) < 4 else fn.__defaults__[3]
        order.append(name)
        return next(medians[name]), 4

    monkeypatch.setattr(bench, "_timer", timer)
    monkeypatch.setattr(bench, "_reference_names", lambda tiers, device, precision="highest": ["cublas"])
    rows = bench.run(["naive"], bench.shape_set("17x9x5", "cpu"), torch.device("cpu"), 1, 3, 0.01,
                     progress=False, passes=3)
    assert order == ["cublas", "naive"] * 3
    got = {r.tier: (r.ms, r.runs) for r in rows}
    assert got == {"cublas": (2.0, 12), "naive": (1.0, 12)}
    assert rows[1].vs_cublas == pytest.approx(2.0)
    with pytest.raises(ValueError, match="passes"):
        bench.run(["naive"], bench.shape_set("17x9x5", "cpu"), torch.device("cpu"), 1, 3, 0.01, progress=False,
                  passes=0)


def test_bench_times_a_setting_against_highest_in_the_same_passes(monkeypatch):
    # --against-highest: each tier also runs under torch's "highest" and gemmtiles' "none", as
    # TIER@highest, timed in turn with the others, and the tier's rows carry its speed over that.
    seen, order = [], []
    medians = {"torch": iter([5.0, 5.0]), "naive@highest": iter([4.0, 3.0]), "naive": iter([2.0, 6.0])}

    def timer(device, fn, warmup, repeats, budget_s, cold_l2=False):
        fn()
        name = "torch" if len(fn.__defaults__) < 4 else fn.__defaults__[3]
        name = name if name == "torch" or seen[-1][1] == "high" else name + "@highest"
        order.append(name)
        return next(medians[name]), 4

    def sgemm(a, b, tier, c=None, beta=0.0):
        seen.append((tier, torch.get_float32_matmul_precision()))
        return a @ b

    monkeypatch.setattr(bench, "_timer", timer)
    monkeypatch.setattr(bench, "sgemm", sgemm)
    rows = bench.run(["naive"], bench.shape_set("17x9x5", "cpu"), torch.device("cpu"), 1, 3, 0.01,
                     progress=False, passes=2, precision="high", against_highest=True)
    assert order == ["torch", "naive@highest", "naive"] * 2
    got = {r.tier: r for r in rows}
    assert set(got) == {"torch", "naive@highest", "naive"}
    assert got["naive"].vs_highest == pytest.approx(3.0 / 2.0)  # each side's least median
    assert got["naive@highest"].vs_highest is None and got["naive@highest"].vs_previous is None
    assert ("naive", "highest") in seen and ("naive", "high") in seen
    with pytest.raises(ValueError, match="against_highest"):
        bench.run(["naive"], bench.shape_set("17x9x5", "cpu"), torch.device("cpu"), 1, 3, 0.01, progress=False,
                  against_highest=True)


def test_bench_reports_a_random_samples_shapes_slower_than_under_highest(monkeypatch, tmp_path, capsys):
    # The summary of --against-highest on a random sample: the distribution of each shape's
    # speed over its own under "highest", and the shapes more than 3% slower, named.
    def run(tiers, shapes, device, *args, **kwargs):
        assert kwargs["against_highest"] and kwargs["precision"] == "high"
        rows = []
        for i, ratio in enumerate([1.5, 1.0, 0.95, 0.5]):
            label = f"{i + 2}x64x64"
            rows.append(bench.Row(label, "random:4:1", "torch", 1.0, 1.0, None, 1.0, None, None, 3, 1e-7, 1.0,
                                  macs=4096 * (i + 2), m=i + 2))
            rows.append(bench.Row(label, "random:4:1", "naive", 1.0, 1.0, None, 1.0, None, None, 3, 1e-7, 1.0,
                                  macs=4096 * (i + 2), m=i + 2, vs_highest=ratio))
        return rows

    monkeypatch.setattr(bench, "run", run)
    monkeypatch.setattr(bench, "shape_set", lambda spec, device: [bench.Shape(2, 64, 64, "NN", group="random:4:1")])
    assert bench.main(["--device", "cpu", "--shapes", "17x9x5", "--tiers", "naive", "--precision", "high",
                       "--against-highest", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "speed against itself under 'highest'" in out
    assert "naive: 2 of 4 shapes more than 3% slower than under 'highest': 5x64x64 0.500x, 4x64x64 0.950x" in out


def test_bench_against_highest_needs_another_setting(capsys):
    for argv in (["--against-highest"], ["--against-highest", "--precision", "high", "--model"]):
        with pytest.raises(SystemExit):
            bench.main(["--device", "cpu", "--shapes", "17x9x5", *argv])
        assert "--against-highest" in capsys.readouterr().err
