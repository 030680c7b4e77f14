"""Nothing hangs: a server that accepts TCP and never answers (a silent listener on loopback)
fails every engine's connection within the connect timeout, with one line naming host:port."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A listener that accepts every connection and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def qadmin(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "qadmin", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result, time.monotonic() - started


DSNS = {
    "mysql": "mysql://root:Silent-pw1@127.0.0.1:{port}/test",
    "mariadb": "mariadb://root:Silent-pw1@127.0.0.1:{port}/test",
    "postgresql": "postgresql://postgres:Silent-pw1@127.0.0.1:{port}/test",
    "mssql": "mssql://sa:Silent-pw1@127.0.0.1:{port}/master?driver=FreeTDS",
}


@pytest.mark.parametrize("engine", DSNS)
def test_a_silent_server_fails_ping_and_check_within_the_connect_timeout(engine, silent_port):
    if engine == "mssql":
        pytest.importorskip("pyodbc")
    dsn = DSNS[engine].format(port=silent_port)
    ping, took = qadmin("ping", "--dsn", dsn, "--connect-timeout", "3")
    assert ping.returncode == 6, ping.stderr
    assert took < 30
    lines = ping.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{silent_port}" in lines[0], ping.stderr
    assert "Silent-pw1" not in ping.stderr
    check, took = qadmin("check", "q", "--dsn", dsn, "--connect-timeout", "3")
    assert took < 30
    # check speaks the Nagios convention: 3 UNKNOWN, the reason on its one line.
    assert check.returncode == 3 and f"127.0.0.1:{silent_port}" in check.stdout, check
    assert "Silent-pw1" not in check.stdout + check.stderr


def test_the_default_connect_timeout_is_five_seconds(silent_port):
    result, took = qadmin("ping", "--dsn", f"mysql://root@127.0.0.1:{silent_port}/test")
    assert result.returncode == 6 and "within 5 s" in result.stderr
    assert 4 < took < 30


def test_mysql_read_timeout_outlasts_the_statement_timeout(my_database):
    """A statement as long as the statement timeout allows is stopped by the server (exit 8,
    'statement stopped'), not cut off by the client's read timeout (which would be exit 6)."""
    dsn = f"mysql://root@127.0.0.1:3306/{my_database}"
    from qadmin.engines import Timeouts, open_engine
    from qadmin.errors import LockTimeout

    engine = open_engine(dsn, timeouts=Timeouts(lock_ms=1000, statement_ms=2000))
    assert engine.timeouts.read_s > 3
    started = time.monotonic()
    with pytest.raises(LockTimeout, match="statement stopped"):
        engine.query("SELECT SLEEP(2.5) AS s FROM DUAL WHERE 1 = (SELECT 1)")
    assert time.monotonic() - started < engine.timeouts.read_s
    engine.close()
