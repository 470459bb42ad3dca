"""The docs say what the code does: README's tier table is the tier table."""

from __future__ import annotations

import pathlib

from gemmtiles._tiers import markdown_table

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_readme_tier_table_is_the_tier_table():
    readme = (ROOT / "README.md").read_text()
    assert markdown_table() in readme, "README.md's tier table differs from gemmtiles/_tiers.py:\n" + markdown_table()
