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
