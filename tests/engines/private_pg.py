"""A PostgreSQL server of the test's own, for the few properties that only hold while nothing
holds PostgreSQL's cleanup horizon back.

The shared server always has an unrelated transaction open (conftest's
``unrelated_transactions``), and a running transaction id anywhere on a server is in every
snapshot, so no backend can prune row versions newer than it: a ring's slot updates then pile
up instead of being reused. That is the production condition the other tests run under; this
server is where "once nothing old is open, the ring does not grow" can be checked at all.
It is started from the same PostgreSQL binaries (initdb + pg_ctl, as the postgres user when the
tests run as root), on a free loopback port, and stopped at the end of the module.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as the postgres user then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


@pytest.fixture(scope="module")
def quiet_pg() -> Iterator[str]:
    """The DSN of a private PostgreSQL server with nothing else on it."""
    bindir = _bindir()
    if bindir is None:
        if os.environ.get("QADMIN_REQUIRE_SERVERS") == "1":
            pytest.fail("no PostgreSQL binaries (initdb) for a private server")
        pytest.skip("no PostgreSQL binaries (initdb) for a private server")
    # Not under pytest's tmp folder: that is private to root, and the server runs as postgres.
    root = Path(tempfile.mkdtemp(prefix="qadmin-quiet-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        root.chmod(0o755)
    port = _free_port()
    subprocess.run(
        _as_owner([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(root / "log")]
    subprocess.run(_as_owner([*pg_ctl, "-o", options, "start"]), check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_owner([*pg_ctl, "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
