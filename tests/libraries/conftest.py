"""Running real job-queue libraries next to qadmin: their workers as subprocesses (all killed in
teardown), the trouble a DBA meets (a worker SIGKILLed mid-job, a held snapshot, a row lock),
and qadmin's CLI read back as JSON.

The Node.js libraries (pg-boss, graphile-worker) are installed from npm into ``.cache/npm``
(outside git) at the versions tests/libraries/node/package-lock.json pins.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import file_lock

REPO = Path(__file__).resolve().parents[2]
NODE_DIR = Path(__file__).resolve().parent / "node"
NPM_CACHE = REPO / ".cache" / "npm"


@dataclass
class Processes:
    """Subprocesses a test starts, each in its own process group, all killed at teardown."""

    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            args,
            cwd=REPO,
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.started.append(proc)
        return proc

    def python(self, module: str, *args: str, env: dict[str, str] | None = None) -> Any:
        return self.start([sys.executable, "-m", module, *args], env)

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker and all it started: no clean shutdown, as an OOM kill."""
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def kill_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture
def processes() -> Iterator[Processes]:
    procs = Processes()
    try:
        yield procs
    finally:
        procs.kill_all()


@pytest.fixture
def block_file(tmp_path: Path) -> Path:
    """While this file exists the libraries' ``sleepy`` job keeps running; removing it lets a
    requeued copy finish at once."""
    path = tmp_path / "block"
    path.touch()
    return path


def _node_packages_load() -> bool:
    """Whether node can load both packages from the cache (a stamp alone cannot tell: an
    install cut short, or racing another npm on the shared download cache, leaves files out)."""
    probe = "require('pg-boss'); require('graphile-worker')"
    found = subprocess.run(["node", "-e", probe], cwd=NPM_CACHE, capture_output=True)
    return found.returncode == 0


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """pg-boss and graphile-worker at their pinned versions, installed once into .cache/npm."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail("Node.js and npm are needed for the pg-boss and graphile-worker tests")
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    with file_lock(REPO / ".cache" / "npm.lock"):  # parallel workers: the first one installs
        return _install_node_modules()


def _install_node_modules() -> Path:
    lock = NODE_DIR / "package-lock.json"
    stamp = NPM_CACHE / "installed-lock.json"
    for _ in range(2):
        if stamp.exists() and stamp.read_bytes() == lock.read_bytes() and _node_packages_load():
            return NPM_CACHE / "node_modules"
        stamp.unlink(missing_ok=True)
        shutil.copy(NODE_DIR / "package.json", NPM_CACHE / "package.json")
        shutil.copy(lock, NPM_CACHE / "package-lock.json")
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(NPM_CACHE)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        shutil.copy(lock, stamp)
    pytest.fail("npm ci installed pg-boss and graphile-worker, but node cannot load them")


# Oban for Python (PyPI ``oban``) needs Python 3.12: where the test interpreter is older, its
# app runs under a 3.12 virtualenv built once in .cache (outside git) with this requirement.
OBAN_REQUIREMENT = "oban>=0.7,<0.8"  # pyproject.toml's test extra pins the same
OBAN_VENV = REPO / ".cache" / "oban-py312"


def _python312() -> str | None:
    """A Python 3.12 or later that runs (pyenv's shims exist for versions not selected)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [str(p) for p in sorted(pyenv.glob("3.1[2-9]*/bin/python"))]
    candidates += [found for name in ("python3.12", "python3.13") if (found := shutil.which(name))]
    for candidate in candidates:
        probe = [candidate, "-c", "import sys; assert sys.version_info >= (3, 12)"]
        if subprocess.run(probe, capture_output=True).returncode == 0:
            return candidate
    return None


@pytest.fixture(scope="session")
def oban_python() -> str:
    """An interpreter that imports Oban for Python: this one on 3.12 or later (the test
    extra installs it there), else .cache/oban-py312, built once from a Python 3.12."""
    if sys.version_info >= (3, 12):
        return sys.executable
    with file_lock(REPO / ".cache" / "oban-py312.lock"):  # parallel workers: the first builds
        return _oban_venv()


def _oban_venv() -> str:
    python = OBAN_VENV / "bin" / "python"
    stamp = OBAN_VENV / "installed-requirement.txt"
    probe = [str(python), "-c", "import oban, psycopg"]
    installed = stamp.exists() and stamp.read_text() == OBAN_REQUIREMENT
    if installed and subprocess.run(probe, capture_output=True).returncode == 0:
        return str(python)
    base = _python312()
    if base is None:
        pytest.fail("Oban for Python needs a Python 3.12 or later (python3.12, or pyenv's)")
    stamp.unlink(missing_ok=True)
    subprocess.run([base, "-m", "venv", "--clear", str(OBAN_VENV)], check=True, timeout=300)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", OBAN_REQUIREMENT, "psycopg[binary]"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    stamp.write_text(OBAN_REQUIREMENT)
    return str(python)
