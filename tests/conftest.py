"""Hypothesis profiles for the fuzz suite; shared helpers live in gemmtiles.testing."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Fuzzing profiles (tests/test_fuzz.py); --hypothesis-profile=gpu picks the larger one.
_fuzz = dict(deadline=None, derandomize=True, print_blob=True,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=200, **_fuzz)
settings.register_profile("gpu", max_examples=500, **_fuzz)
settings.load_profile("ci")
