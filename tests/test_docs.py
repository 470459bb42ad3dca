"""The docs say what the code does: README's tier table is the tier table, its headline
figures are docs/figures.json's, the ladder's chapter has a section and a diagram per rung,
links resolve, and no comment in the sources quotes a run's timing."""

from __future__ import annotations

import pathlib
import re

import pytest

from gemmtiles import figures
from gemmtiles._tiers import TIERS, markdown_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_tier_table_is_the_tier_table():
    assert markdown_table() in README, "README.md's tier table differs from gemmtiles/_tiers.py:\n" + markdown_table()


def test_readme_figures_are_the_figures_file():
    table = figures.markdown_table()
    inside = re.search(r"<!-- figures: python -m gemmtiles.figures -->\n(.*?)\n<!-- /figures -->", README, re.S)
    assert inside, "README.md has no figures block"
    assert inside.group(1) == table, "README.md's figures differ from `python -m gemmtiles.figures`:\n" + table


def test_figures_file_names_a_command_and_a_value_per_row():
    data = figures.load()
    assert data["rows"] and data["device"] and data["date"]
    for row in data["rows"]:
        assert row["command"].startswith("python -m gemmtiles.bench"), row
        assert row["data"], f"{row['key']}: no measurement"
        figures.markdown_table({**data, "rows": [row]})  # every kind renders


def test_readme_says_what_it_is_in_few_words():
    before = README[:README.index("<!-- ci-commands")]
    before = re.sub(r"<!--.*?-->", "", before)
    words = [w for w in before.split() if re.search(r"[A-Za-z0-9]", w)]
    assert len(words) <= 250, f"{len(words)} words before the two commands"


def test_csrc_is_laid_out_by_part():
    assert sorted(p.name for p in (ROOT / "csrc").iterdir() if p.is_dir()) == \
        ["auto", "core", "cpu", "ladder", "tensor_core"]
    assert not [p for p in (ROOT / "csrc").iterdir() if p.is_file()]


def test_ladder_doc_has_a_section_and_a_diagram_per_rung():
    doc = (ROOT / "docs" / "ladder.md").read_text()
    rungs = sorted(p.stem for p in (ROOT / "csrc" / "ladder").glob("0*_*.cuh"))
    assert len(rungs) == 9
    sections = re.findall(r"^## (\d)\. (\w+) — .*?(?=^## |\Z)", doc, re.S | re.M)
    assert [f"0{n}_{name}" for n, name in sections] == rungs
    for n, name in sections:
        body = doc.split(f"## {n}. {name} — ", 1)[1].split("\n## ", 1)[0]
        image = re.search(r"!\[[^\]]*\]\((img/ladder/[^)]+\.png)\)", body)
        assert image and (ROOT / "docs" / image.group(1)).is_file(), f"rung {name}: no diagram"
        assert "```cuda" in body, f"rung {name}: no excerpt of its kernel"
        assert name in {t.name for t in TIERS}


# A comment that quotes a time: "42 us", "1.4 µs", "2.8 ms".
TIMING = re.compile(r"\b\d+(\.\d+)?\s?(us|µs|ms)\b|µs")


def _comments(text: str) -> list[str]:
    out = re.findall(r"//[^\n]*", text)
    out += re.findall(r"/\*.*?\*/", text, re.S)
    return out


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*")
                                        if p.suffix in (".h", ".cuh", ".cu", ".cpp")))
def test_no_comment_quotes_a_timing(path):
    bad = [c for c in _comments((ROOT / path).read_text()) if TIMING.search(c)]
    assert not bad, f"{path}: comments quote timings (they belong in docs/): {bad[:3]}"


def _markdown_files():
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] + sorted((ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("doc", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (doc.parent / target.split("#")[0]).exists():
            missing.append(target)
    assert not missing, f"{doc.relative_to(ROOT)}: links to nothing: {missing}"


def test_readme_example_runs_on_the_cpu():
    """README's Use example, run on the CPU tiers at small sizes: its API is the package's."""
    code = re.search(r"```python\n(import torch, gemmtiles.*?)```", README, re.S).group(1)
    for old, new in [('device="cuda"', 'device="cpu"'), (".cuda()", ""), ('"bank_free"', '"reorder"'),
                     ('"warptile"', '"naive"'), ('tiers("cuda")', 'tiers("cpu")'),
                     ("torch.ops.gemmtiles.warptile", "torch.ops.gemmtiles.naive"),
                     ("4096", "96"), ("1024", "40"), ("2048", "56")]:
        assert old in code, f"README's example no longer has {old!r}: update this test's substitutions"
        code = code.replace(old, new)
    exec(compile(code, "README.md", "exec"), {})
