"""SQL Server's connection path on loopback: pyodbc + FreeTDS against a refused port and a
local TDS endpoint (pysqlbridge, which answers logins and @@VERSION like SQL Server).

pysqlbridge does not run queue DML, so the queue behaviour suite runs on SQL Server only when
QADMIN_TEST_MSSQL_DSN names one (tests/engines/test_mssql_live.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from qadmin.dsn import odbc_value
from tests.helpers import run

# The characters an ODBC string or a URL treats specially: the login only succeeds when the
# connection string escapes the password right. (FreeTDS up to 1.3 cannot take a password
# that needs braces and holds a "}": see qadmin.dsn.odbc_value.)
BRIDGE_PW = "r}ght{pw=1@/ x"


def _freetds_ready() -> None:
    try:
        import pyodbc
    except ImportError as exc:
        reason = f"pyodbc cannot load ({exc}); apt-get install libodbc2 tdsodbc"
    else:
        if "FreeTDS" in pyodbc.drivers():
            return
        reason = "the FreeTDS ODBC driver is not registered; apt-get install tdsodbc"
    if os.environ.get("QADMIN_REQUIRE_SERVERS") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def tds_endpoint(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[int]:
    _freetds_ready()
    pytest.importorskip("pysqlbridge")
    (tmp_path / "t.json").write_text('[{"id": 1}]')
    (tmp_path / "bridge.json").write_text(
        json.dumps(
            {
                "tables": [{"name": "t", "json": str(tmp_path / "t.json")}],
                "logins": [{"user": "reader", "password": "${env:BRIDGE_PW}"}],
            }
        )
    )
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysqlbridge.server",
            "--config",
            str(tmp_path / "bridge.json"),
            "--port",
            str(port),
        ],
        env=dict(os.environ, BRIDGE_PW=getattr(request, "param", BRIDGE_PW)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("pysqlbridge did not start")
    yield port
    proc.kill()
    proc.wait()


def test_refused_port_fails_fast_with_a_clear_line():
    _freetds_ready()
    # A refused port is answered at once: the run must not sit out a connect timeout (set far
    # above any load's slowness, so a busy machine does not fail it).
    started = time.monotonic()
    result = run(
        "ping",
        "--connect-timeout",
        "120",
        "--dsn",
        "mssql://sa:Secr3t-pw@127.0.0.1:1/master?driver=FreeTDS",
    )
    assert result.exit_code == 6
    assert time.monotonic() - started < 60
    assert "cannot connect to 127.0.0.1:1" in result.stderr
    assert "Secr3t-pw" not in result.stderr


def test_wrong_password_is_a_login_failure(tds_endpoint):
    dsn = f"mssql://reader:wrong-pw-2@127.0.0.1:{tds_endpoint}/master?driver=FreeTDS"
    result = run("ping", "--dsn", dsn)
    assert result.exit_code == 6
    assert result.stderr.strip() == (
        f"qadmin: error: mssql: login failed for user 'reader' at 127.0.0.1:{tds_endpoint}"
    )


def test_login_and_server_version(tds_endpoint):
    dsn = f"mssql://reader:{BRIDGE_PW}@127.0.0.1:{tds_endpoint}/master?driver=FreeTDS"
    result = run("ping", "--dsn", dsn, "--format", "json")
    assert result.exit_code == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["engine"] == "mssql" and "SQL Server" in info["server_version"]


@pytest.mark.parametrize(
    ("tds_endpoint", "password"), [("{se;mi=pw@/ x", "{se;mi=pw@/ x")], indirect=["tds_endpoint"]
)
def test_a_password_that_needs_braces_logs_in(tds_endpoint, password):
    dsn = f"mssql://reader:{password}@127.0.0.1:{tds_endpoint}/master?driver=FreeTDS"
    assert run("ping", "--dsn", dsn).exit_code == 0


def test_raw_odbc_string_gets_the_application_name(tds_endpoint):
    odbc = (
        f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT={tds_endpoint};UID=reader;"
        f"PWD={odbc_value(BRIDGE_PW, freetds=True)};DATABASE=master"
    )
    result = run("ping", "--dsn", odbc, "--format", "json")
    assert result.exit_code == 0, result.stderr


def test_connection_string_is_built_with_app_name_and_braced_password():
    from qadmin.engines import open_engine

    engine = open_engine("mssql://sa:p%3Bw@db1:1444/app?driver=FreeTDS")
    text = engine.connection_string()
    assert "APP=qadmin" in text and "PWD={p;w}" in text and "PORT=1444" in text
    msodbc = open_engine("mssql://sa:pw@db1/app").connection_string(
        ["ODBC Driver 18 for SQL Server"]
    )
    assert "SERVER=db1,1433" in msodbc


def test_a_server_that_falls_silent_after_login_is_cut_off_by_the_query_timeout(tds_endpoint):
    """SQL Server has no server-side statement limit: the ODBC query timeout is the read
    timeout, and FreeTDS honours it (a hung server costs the statement timeout, not forever)."""
    from qadmin.engines import Timeouts, open_engine
    from qadmin.errors import LockTimeout
    from tests.cli.test_timeouts import Relay

    relay = Relay(tds_endpoint)
    try:
        engine = open_engine(
            f"mssql://reader:{BRIDGE_PW}@127.0.0.1:{relay.port}/master?driver=FreeTDS",
            timeouts=Timeouts(lock_ms=1000, statement_ms=2000),
        )
        assert "SQL Server" in engine.server_version()
        relay.mute()
        started = time.monotonic()
        with pytest.raises(LockTimeout, match="statement stopped after 2000 ms"):
            engine.server_version()
        assert time.monotonic() - started < 15
        engine.close()
    finally:
        relay.close()
