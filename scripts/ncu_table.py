"""Prints the Nsight Compute CSV of scripts/profile_ladder.sh as one table: a row per metric,
a column per kernel launch (the tiers in ladder order, then cuBLAS).

    python scripts/ncu_table.py ncu.csv
"""

from __future__ import annotations

import csv
import sys


def main(path: str) -> int:
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if "Metric Name" in r)
    head = rows[start]
    kernel, launch = head.index("Kernel Name"), head.index("ID")
    metric, value = head.index("Metric Name"), head.index("Metric Value")
    table: dict[tuple[str, str], dict[str, str]] = {}
    for r in rows[start + 1:]:
        if len(r) <= value:
            continue
        name = r[kernel].split("(")[0].split("<")[0].replace("void ", "").replace("gemmtiles::", "")
        table.setdefault((r[launch], name.removesuffix("_kernel")[:14]), {})[r[metric]] = r[value]
    columns = list(table)
    print(f"{'metric':<48}", *(f"{name:>14}" for _, name in columns))
    for m in table[columns[0]]:
        print(f"{m[-48:]:<48}", *(f"{table[c].get(m, ''):>14}" for c in columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
