"""The ladder compiles for AMD GPUs: scripts/hip_check.sh builds every tier the tier table
marks for HIP from the same .cuh sources for gfx908 (MI100), with hipcc, where hipcc is
installed (CI installs it)."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from gemmtiles._tiers import TIERS

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="needs hipcc (apt-get install hipcc libamdhip64-dev rocm-device-libs)")
def test_every_ladder_tier_compiles_for_gfx908():
    r = subprocess.run([str(ROOT / "scripts" / "hip_check.sh"), "gfx908"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if line.split()[1:2] == ["gfx908"]]
    hip_tiers = {t.name for t in TIERS if "cuda" in t.devices and t.hip}
    assert {row[0] for row in rows} == hip_tiers
    assert len(hip_tiers) == 9  # naive ... warptile
    for row in rows:
        vgprs, occupancy = int(row[2]), int(row[8])
        assert 0 < vgprs <= 512 and occupancy >= 1, row
