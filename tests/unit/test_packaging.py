"""The wheel carries the SQL and completion files that live at the top of the repository, and
the repository carries nothing it ignores."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_wheel_contains_every_sql_file_and_the_completions(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(tmp_path.glob("qadmin-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (REPO / "sql").rglob("*.sql"):
        assert f"qadmin/sql/{path.relative_to(REPO / 'sql').as_posix()}" in names
    for shell in ("bash", "zsh", "fish"):
        assert f"qadmin/completions/qadmin.{shell}" in names
    # Spark's quiet log configuration travels inside the package
    assert "qadmin/pipeline/log4j2.properties" in names


def test_no_tracked_file_lies_under_an_ignored_path():
    """Vendored packages (.cache/npm's node_modules) and build output stay out of git."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--ignored", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert listed == []


def test_every_module_has_a_place_in_the_layers():
    """A package or module the layers contract does not name is held to no direction: each
    one directly under src/qadmin is named in pyproject's layers (the package itself aside)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in config["contracts"] if c["id"] == "layers"]
    named = {name.strip() for layer in layers for name in layer.split(":")}
    source = REPO / "src" / "qadmin"
    found = {
        f"qadmin.{p.stem}"
        for p in source.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert sorted(found - named) == []
