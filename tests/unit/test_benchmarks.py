"""Every benchmark script still starts: a renamed module or function fails here, not on the
day someone needs the figures (inspect_scaling.py had imported a module gone for weeks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name != "places.py")


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_script_starts(script):
    done = subprocess.run(
        [sys.executable, script, "--help"], cwd=BENCHMARKS, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
