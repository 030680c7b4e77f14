"""Nothing hangs: a server that accepts TCP and never answers (a silent listener on loopback)
fails every engine's connection within the connect timeout, with one line naming host:port."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from tests.helpers import run_qadmin


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


def timed_qadmin(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """qadmin in its own process, and how long it took (the timeouts' tests print it)."""
    started = time.monotonic()
    result = run_qadmin(*args, text=True)
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
    ping, took = timed_qadmin("ping", "--dsn", dsn, "--connect-timeout", "3")
    assert ping.returncode == 6, ping.stderr
    assert took < 30
    lines = ping.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{silent_port}" in lines[0], ping.stderr
    assert "Silent-pw1" not in ping.stderr
    check, took = timed_qadmin("check", "q", "--dsn", dsn, "--connect-timeout", "3")
    assert took < 30
    # check speaks the Nagios convention: 3 UNKNOWN, the reason on its one line.
    assert check.returncode == 3 and f"127.0.0.1:{silent_port}" in check.stdout, check
    assert "Silent-pw1" not in check.stdout + check.stderr


def test_the_default_connect_timeout_is_five_seconds(silent_port):
    result, took = timed_qadmin("ping", "--dsn", f"mysql://root@127.0.0.1:{silent_port}/test")
    assert result.returncode == 6 and "within 5 s" in result.stderr
    assert 4 < took < 30


def test_a_mariadb_session_that_vanishes_mid_transaction_lets_go_of_its_locks(my_database):
    """The server, not only the client, gives up on a qadmin session idle in a transaction."""
    import pymysql

    from qadmin.engines import Timeouts, open_engine

    engine = open_engine(
        f"mysql://root@127.0.0.1:3306/{my_database}", timeouts=Timeouts(statement_ms=2000)
    )
    assert engine.query("SELECT @@idle_transaction_timeout AS t")[0]["t"] == 60
    engine.run(["SET SESSION idle_transaction_timeout = 1"])  # the same setting, made short
    engine.run(["CREATE TABLE held (id INT PRIMARY KEY) ENGINE=InnoDB"])
    cursor = engine.conn.cursor()
    cursor.execute("INSERT INTO held (id) VALUES (1)")  # a lock, in an open transaction
    time.sleep(3)
    other = pymysql.connect(host="127.0.0.1", user="root", database=my_database)
    with other.cursor() as cur:
        cur.execute("SET SESSION innodb_lock_wait_timeout = 2")
        cur.execute("INSERT INTO held (id) VALUES (1)")  # no wait: the holder is gone
    other.commit()
    other.close()


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


class Relay:
    """A TCP relay to a real server that can fall silent: after ``mute()`` it still accepts
    and reads but forwards nothing, like a server that hangs after the login."""

    def __init__(self, port: int) -> None:
        self.target = ("127.0.0.1", port)
        self.muted = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client = self.listener.accept()[0]
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(65536)
                if not data:
                    return
                if not self.muted.is_set():
                    dst.sendall(data)
            except OSError:
                return

    def mute(self) -> None:
        self.muted.set()

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


@pytest.mark.parametrize("label", ["mariadb", "postgresql"])
def test_a_server_that_falls_silent_after_login_is_given_up_on(label, request):
    """Reads after login are bounded too: lock + statement timeout + 10 s, then exit 6."""
    from qadmin.engines import Timeouts, open_engine
    from qadmin.errors import ConnectionFailed

    relay = Relay(3306 if label == "mariadb" else 5432)
    try:
        if label == "mariadb":
            database = request.getfixturevalue("my_database")
            dsn, schema = f"mysql://root@127.0.0.1:{relay.port}/{database}", None
        else:
            dsn = f"postgresql://postgres@127.0.0.1:{relay.port}/test"
            schema = request.getfixturevalue("pg_schema")
        engine = open_engine(dsn, schema, Timeouts(lock_ms=1000, statement_ms=1000))
        assert engine.server_version()
        relay.mute()
        started = time.monotonic()
        with pytest.raises(ConnectionFailed, match=f"127.0.0.1:{relay.port} within 12 s"):
            engine.server_version()
        assert 11 < time.monotonic() - started < 30
        engine.close()
    finally:
        relay.close()


def test_postgresql_read_timeout_outlasts_the_statement_timeout(pg_schema):
    """The server's statement_timeout stops a long statement first (exit 8, said why)."""
    from qadmin.engines import Timeouts, open_engine
    from qadmin.errors import LockTimeout

    engine = open_engine(
        "postgresql://postgres@127.0.0.1:5432/test",
        pg_schema,
        Timeouts(lock_ms=1000, statement_ms=2000),
    )
    with pytest.raises(LockTimeout, match="statement cancelled after 2000 ms"):
        engine.query("SELECT pg_sleep(2.5) AS s")
    assert engine.query("SELECT 1 AS one") == [{"one": 1}]
    engine.close()


def test_postgresql_keeps_the_users_own_session_options(pg_schema, monkeypatch):
    """A DSN's options= (or PGOPTIONS) reach the session beside qadmin's timeouts: a library
    installed in its own schema needs its search_path for its types and functions."""
    from qadmin.engines import Timeouts, open_engine

    timeouts = Timeouts(lock_ms=1000, statement_ms=2000)
    dsn = "postgresql://postgres@127.0.0.1:5432/test?options=-csearch_path%3Dlib_schema"
    engine = open_engine(dsn, pg_schema, timeouts)
    got = engine.query(
        "SELECT current_setting('search_path') AS p, current_setting('lock_timeout') AS l"
    )
    assert got == [{"p": "lib_schema", "l": "1s"}]
    engine.close()
    monkeypatch.setenv("PGOPTIONS", "-c search_path=from_env -c lock_timeout=9s")
    engine = open_engine("postgresql://postgres@127.0.0.1:5432/test", pg_schema, timeouts)
    got = engine.query(
        "SELECT current_setting('search_path') AS p, current_setting('lock_timeout') AS l"
    )
    assert got == [{"p": "from_env", "l": "1s"}]  # qadmin's timeout still wins
    engine.close()


def test_a_scrape_connects_within_its_own_time(silent_port):
    """A scrape of --scrape-timeout 2 against a server that never answers waited the whole
    5 s connect timeout (a served scrape overran Prometheus's): the connect timeout is cut to
    the scrape's time."""
    pytest.importorskip("prometheus_client")
    dsn = f"mysql://root@127.0.0.1:{silent_port}/test"
    result, _ = timed_qadmin("metrics", "--dsn", dsn, "--scrape-timeout", "2")
    assert result.returncode == 6, result.stderr
    assert "within 2 s" in result.stderr, result.stderr
    up = next(x for x in result.stdout.splitlines() if x.startswith("qadmin_up"))
    assert up.endswith(" 0.0"), up
