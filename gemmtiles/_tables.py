"""Where the `auto` tier finds its tuned tables (``python -m gemmtiles.tune`` writes them):
the user's cache first, then the tables shipped with the package. The C++ side reads a
device's table on its first `auto` call (csrc/auto/table.h); nothing here runs per call."""

from __future__ import annotations

import os
from pathlib import Path

SHIPPED = Path(__file__).with_name("tables")


def user_dir() -> Path:
    """$GEMMTILES_CACHE/auto, else $XDG_CACHE_HOME/gemmtiles/auto, else ~/.cache/gemmtiles/auto."""
    if os.environ.get("GEMMTILES_CACHE"):
        return Path(os.environ["GEMMTILES_CACHE"]) / "auto"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gemmtiles" / "auto"


def dirs() -> list[str]:
    """The directories searched, in order; $GEMMTILES_AUTO_TABLES=0 turns tables off."""
    if os.environ.get("GEMMTILES_AUTO_TABLES") == "0":
        return []
    return [str(user_dir()), str(SHIPPED)]


def install(c_module) -> None:
    c_module.set_auto_table_dirs(dirs())


def find(c_module, gpu_name: str):
    """The table file `auto` reads for a GPU of this name, or None (the heuristic)."""
    for d in dirs():
        path = Path(d) / c_module.auto_table_file(gpu_name)
        if path.is_file():
            return path
    return None


def line_of(text: str, *head: str):
    """The first line of a table's text whose words begin with `head`, its comment dropped and
    stripped, or None."""
    for line in text.splitlines():
        kept = line.split("#")[0]
        if kept.split()[:len(head)] == list(head):
            return kept.strip()
    return None
