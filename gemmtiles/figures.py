"""The README's headline figures: ``python -m gemmtiles.figures``.

``docs/figures.json`` holds each headline figure as a bench run measured it, with the command
that measures it again. This module prints the table README.md shows (tests/test_docs.py
keeps the two equal) and, with ``--ingest``, takes a bench run's outputs into the file:
``random.json`` (``--shapes random:...``), ``model.json`` (``--model``) and ``bench.csv``
(the ladder's rows at 4096^3)::

    python -m gemmtiles.bench --shapes random:120:2 --tiers auto --out run
    python -m gemmtiles.figures --ingest run/random.json   # then paste the table it prints
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from typing import Optional

FIGURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "figures.json")
LADDER_SHAPE = "4096x4096x4096"


def _value(row: dict) -> str:
    d = row["data"]
    if row["kind"] == "random":
        return f"{d['geomean']:.2f}x {row['against']} (geomean; 10th pct {d['p10']:.2f}x, min {d['min']:.2f}x)"
    if row["kind"] == "model":
        return f"{d['speed']:.2f}x {row['against']} ({d['gemmtiles_ms']:.1f} against {d['torch_ms']:.1f} ms)"
    if row["kind"] == "ladder":
        return f"{d['vs_cublas']:.2f}x {row['against']} ({d['tflops']:.1f} TFLOP/s)"
    raise ValueError(f"docs/figures.json: unknown kind {row['kind']!r}")


def load(path: str = FIGURES) -> dict:
    with open(path) as f:
        return json.load(f)


def markdown_table(figures: Optional[dict] = None) -> str:
    """The headline figures as README.md shows them."""
    figures = load() if figures is None else figures
    lines = ["| what | measured |", "|---|---|"]
    for row in figures["rows"]:
        lines.append(f"| {row['figure']} | {_value(row)} |")
    lines.append("")
    lines.append(f"{figures['device']}, {figures['date']}. `python -m gemmtiles.figures` prints this table and "
                 "each row's bench command.")
    return "\n".join(lines)


def commands(figures: Optional[dict] = None) -> str:
    """Each headline figure's bench command."""
    figures = load() if figures is None else figures
    return "\n".join(f"{row['figure']}:\n    {row['command']}" for row in figures["rows"])


def _upsert(figures: dict, key: str, kind: str, data: dict) -> bool:
    for row in figures["rows"]:
        if row["key"] == key:
            row["kind"], row["data"] = kind, data
            return True
    return False


def ingest(figures: dict, path: str) -> list[str]:
    """Takes the figures a bench output holds into `figures` (rows whose key it names; keys
    the file names that the table lacks are left out) and returns the keys updated."""
    done = []
    name = os.path.basename(path)
    if name == "random.json":
        with open(path) as f:
            run = json.load(f)
        for ref, tiers in run["stats"].items():
            for tier, groups in tiers.items():
                key = f"random:{run['precision']}:{run.get('fp32_precision', 'none')}:{tier}:{ref}"
                if _upsert(figures, key, "random", groups["all"]):
                    done.append(key)
    elif name == "model.json":
        with open(path) as f:
            run = json.load(f)
        for r in run["rows"]:
            key = f"model:{run['precision']}:{run['fp32_precision']}:{r['scenario']}"
            if _upsert(figures, key, "model", {k: r[k] for k in ("speed", "torch_ms", "gemmtiles_ms")}):
                done.append(key)
    elif name.endswith(".csv"):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["shape"] == LADDER_SHAPE and r["vs_cublas"]:
                    key = f"ladder:{r['tier']}:{LADDER_SHAPE}"
                    data = {"vs_cublas": float(r["vs_cublas"]), "tflops": float(r["tflops"])}
                    if _upsert(figures, key, "ladder", data):
                        done.append(key)
    else:
        raise ValueError(f"--ingest {path!r}: expected a bench run's random.json, model.json or bench.csv")
    return done


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gemmtiles.figures", description=__doc__.split("\n\n")[0])
    p.add_argument("--ingest", nargs="*", default=[], metavar="FILE",
                   help="bench outputs (random.json, model.json, bench.csv) to take into docs/figures.json")
    p.add_argument("--figures", default=FIGURES, help="the figures file (default: docs/figures.json)")
    args = p.parse_args(argv)
    figures = load(args.figures)
    for path in args.ingest:
        try:
            print(f"{path}: {', '.join(ingest(figures, path)) or 'no figure of the table'}")
        except (OSError, ValueError, KeyError) as e:
            p.exit(2, f"{p.prog}: error: --ingest {path}: {e}\n")
    if args.ingest:
        with open(args.figures, "w") as f:
            json.dump(figures, f, indent=1)
            f.write("\n")
    print(markdown_table(figures))
    print()
    print(commands(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
