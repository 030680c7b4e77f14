"""Shared fixtures: a clean environment, and a fresh schema on each real engine per test.

Engines: ``sqlite`` (a file in the test's tmp dir), ``postgresql`` (PostgreSQL on
127.0.0.1:5432, a new schema per test), ``mariadb`` (MariaDB on 127.0.0.1:3306, a new database
per test) and ``mysql8`` (the same MariaDB server driven through the MySQL 8 templates with
``?dialect=mysql``, so the MySQL 8 code paths run live). When a server is down the tests that
need it are skipped with the reason, unless QADMIN_REQUIRE_SERVERS=1 (set by scripts/test and
CI), where they fail instead.

For the whole session each live server also has UNRELATED transactions open elsewhere (see
``unrelated_transactions``): no test may rely on a quiet server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from qadmin.engines import Engine

PG_ADMIN = os.environ.get("QADMIN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
MY_HOST = os.environ.get("QADMIN_TEST_MYSQL_HOST", "127.0.0.1")
MSSQL_DSN = os.environ.get("QADMIN_TEST_MSSQL_DSN")
ENGINES = ("sqlite", "postgresql", "mariadb", "mysql8", "mssql")


UNRELATED_DB = "qadmin_unrelated"


@dataclass
class Unrelated:
    """The sessions ``unrelated_transactions`` keeps open: PostgreSQL backend pid, MariaDB
    connection ids (a reader and a locking reader)."""

    pg_pid: int | None = None
    my_threads: tuple[int, ...] = ()


def _open_pg_unrelated(stack: ExitStack) -> int | None:
    """A connection to another database, in a transaction with a transaction id and a write."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    try:
        conn = psycopg.connect(make_conninfo(PG_ADMIN, dbname="postgres"), connect_timeout=5)
    except psycopg.OperationalError:
        return None
    stack.callback(conn.close)
    conn.autocommit = True
    with suppress(psycopg.errors.UniqueViolation):  # another session created it just now
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {UNRELATED_DB} (id bigserial PRIMARY KEY, at timestamptz)"
        )
    conn.autocommit = False
    conn.execute("SELECT pg_current_xact_id()")
    conn.execute(f"INSERT INTO {UNRELATED_DB} (at) VALUES (now())")
    stack.callback(conn.rollback)
    return int(conn.info.backend_pid)


def _open_my_unrelated(stack: ExitStack) -> tuple[int, ...]:
    """Two connections to another database: one that only read, one that locked a row.

    No open writer: InnoDB cannot tell which tables a transaction wrote, so an open write
    anywhere on the server rightly holds every MariaDB/MySQL watermark (docs/kinds.md,
    Watermarks)."""
    import pymysql

    try:
        admin = _mysql_admin()
    except pymysql.Error:
        return ()
    with admin, admin.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{UNRELATED_DB}`")
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS `{UNRELATED_DB}`.held "
            "(id BIGINT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6)) ENGINE=InnoDB"
        )
        cur.execute(f"INSERT INTO `{UNRELATED_DB}`.held (at) VALUES (NOW(6))")
        mine = int(cur.lastrowid)
    stack.callback(_forget_held_row, mine)  # runs last, after the locking reader rolled back
    statements = (
        ["START TRANSACTION", "SELECT count(*) FROM held"],
        ["START TRANSACTION", f"SELECT id FROM held WHERE id = {mine} FOR UPDATE"],
    )
    threads = []
    for batch in statements:
        conn = pymysql.connect(
            host=MY_HOST, user="root", password="", database=UNRELATED_DB, connect_timeout=5
        )
        stack.callback(conn.close)
        with conn.cursor() as cur:
            for sql in batch:
                cur.execute(sql)
                cur.fetchall()
        stack.callback(conn.rollback)
        threads.append(int(conn.thread_id()))
    return tuple(threads)


def _forget_held_row(row_id: int) -> None:
    with _mysql_admin() as admin, admin.cursor() as cur:
        cur.execute(f"DELETE FROM `{UNRELATED_DB}`.held WHERE id = %s", (row_id,))


# The longest tests, started first so that no worker is left running one at the end while
# the others idle (each pattern's position is its rank; the rest keep their order after them).
LONGEST_FIRST = (
    "tests/pipeline/test_spark_cluster.py",
    "tests/pipeline/test_spark.py",
    "tests/engines/test_read_only.py",
    "tests/engines/test_resize_convert.py::test_resized_up_and_down_under_load",
    "tests/engines/test_concurrency.py",
    "tests/engines/test_torture.py",
    "tests/libraries/",
    "tests/engines/test_resize_convert.py",
    "tests/conformance/",
)


def _rank(item: pytest.Item) -> int:
    for rank, prefix in enumerate(LONGEST_FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(LONGEST_FIRST)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist: the longest first (a stable sort, so every worker collects the same
    order, as xdist requires), and a check that ``--dist loadgroup`` took: xdist's own hook
    (run before this one) puts each ``xdist_group`` test's group in its node id, which is how
    the scheduler keeps the group on one worker. Should a pytest or xdist release stop that,
    fail rather than start a Spark JVM (and a cluster) on every worker."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    items.sort(key=_rank)
    if not config.getoption("loadgroup", default=False):
        return
    lost = [i.nodeid for i in items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(
            f"--dist loadgroup did not group {lost[0]} (and {len(lost) - 1} more): this "
            "pytest/pytest-xdist pair does not support it (see pyproject's pytest pin)"
        )


@pytest.fixture(scope="session", autouse=True)
def interruptible_children() -> None:
    """Started from a shell's background job, pytest inherits SIGINT ignored, and so would
    every qadmin it starts: Ctrl-C tests would then see the signal ignored. Python's own
    handler here makes the children start with SIGINT at its default again."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def unrelated_transactions() -> Iterator[Unrelated]:
    """Long transactions in other databases, open for the whole session, as on a production
    server: PostgreSQL, one with a transaction id and a write; MariaDB, one that read and one
    that locked a row. They touch nothing the tests create, so test schemas still drop."""
    with ExitStack() as stack:
        yield Unrelated(_open_pg_unrelated(stack), _open_my_unrelated(stack))


@dataclass(frozen=True)
class Target:
    """Where one test's queues live: a DSN, a schema, and the engine label for messages."""

    label: str
    dsn: str
    schema: str | None

    def cli_args(self) -> list[str]:
        args = ["--dsn", self.dsn]
        if self.schema and self.label in ("postgresql", "mssql"):
            args += ["--schema", self.schema]
        return args

    def engine(self) -> Engine:
        from qadmin.engines import open_engine

        return open_engine(self.dsn, self.engine_schema)

    @property
    def engine_schema(self) -> str | None:
        """The --schema to pass: MySQL takes its database from the DSN, SQLite has one."""
        return self.schema if self.label in ("postgresql", "mssql") else None


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's environment must not leak in: no QADMIN_* and a private config dir."""
    for key in list(os.environ):
        if key.startswith("QADMIN_") and key not in (
            "QADMIN_TEST_PG",
            "QADMIN_TEST_MYSQL_HOST",
            "QADMIN_TEST_MSSQL_DSN",
            "QADMIN_REQUIRE_SERVERS",
            "QADMIN_TEST_MESSAGES",
        ):
            monkeypatch.delenv(key)
    from qadmin import secrets

    secrets.forget_all()
    for key in ("NO_COLOR", "FORCE_COLOR", "COLUMNS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("QADMIN_HOME", str(tmp_path / "home"))


def _unavailable(label: str, exc: Exception) -> None:
    reason = f"{label} server not reachable: {exc}"
    if os.environ.get("QADMIN_REQUIRE_SERVERS") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _schema_name() -> str:
    return "qt_" + uuid.uuid4().hex[:12]


@pytest.fixture
def pg_schema() -> Iterator[str]:
    import psycopg

    name = _schema_name()
    try:
        conn = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        _unavailable("PostgreSQL", exc)
    with conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
        yield name
        conn.execute(f'DROP SCHEMA "{name}" CASCADE')


@pytest.fixture
def pg_own_database() -> Iterator[str]:
    """A fresh PostgreSQL database; yields its DSN. VACUUM's horizon counts only the snapshots
    and transactions of the same database, so a test that needs dead rows really removed gets
    that even while transactions that took snapshots are open in ``test``; but each snapshot
    taken here treats a transaction id open anywhere (``unrelated_transactions`` keeps one) as
    running, so while a session here holds one, that other transaction holds the horizon."""
    import psycopg

    name = _schema_name()
    try:
        conn = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        _unavailable("PostgreSQL", exc)
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        yield urlsplit(PG_ADMIN)._replace(path=f"/{name}").geturl()
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def _mysql_admin() -> Any:
    import pymysql

    return pymysql.connect(
        host=MY_HOST, user="root", password="", autocommit=True, connect_timeout=5
    )


@pytest.fixture
def my_database() -> Iterator[str]:
    import pymysql

    name = _schema_name()
    try:
        conn = _mysql_admin()
    except pymysql.Error as exc:
        _unavailable("MariaDB", exc)
    with conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
        yield name
        # As PostgreSQL's WITH (FORCE): a session the test left open in a transaction holds a
        # metadata lock, and the drop (with the server's default lock_wait_timeout of a year)
        # would stall this worker and every information_schema read behind it.
        cur.execute(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = %s AND ID <> CONNECTION_ID()",
            [name],
        )
        for (session,) in cur.fetchall():
            with contextlib.suppress(pymysql.Error):
                cur.execute(f"KILL {int(session)}")
        cur.execute("SET SESSION lock_wait_timeout = 300")
        cur.execute(f"DROP DATABASE `{name}`")


@pytest.fixture
def mssql_schema() -> Iterator[str]:
    if not MSSQL_DSN:
        pytest.skip(
            "QADMIN_TEST_MSSQL_DSN is not set: the SQL Server behaviour suite needs a "
            "live server (statements are still checked by the T-SQL gate)"
        )
    from qadmin.engines import open_engine

    name = _schema_name()
    admin = open_engine(MSSQL_DSN)
    admin.run([f"CREATE SCHEMA [{name}]"])
    yield name
    drops = admin.query(
        "SELECT CASE o.type WHEN 'P' THEN 'PROCEDURE' WHEN 'SO' THEN 'SEQUENCE' "
        "ELSE 'TABLE' END AS what, o.name AS name FROM sys.objects AS o "
        "WHERE o.schema_id = SCHEMA_ID(:schema) AND o.type IN ('P', 'SO', 'U')",
        {"schema": name},
    )
    for row in drops:
        admin.run([f"DROP {row['what']} [{name}].[{row['name']}]"])
    admin.run([f"DROP SCHEMA [{name}]"])
    admin.close()


def make_target(label: str, request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if label == "sqlite":
        return Target("sqlite", f"sqlite:///{tmp_path / 'queues.db'}", None)
    if label == "postgresql":
        schema = request.getfixturevalue("pg_schema")
        return Target("postgresql", PG_ADMIN, schema)
    if label == "mssql":
        return Target("mssql", MSSQL_DSN or "", request.getfixturevalue("mssql_schema"))
    database = request.getfixturevalue("my_database")
    dsn = f"mysql://root@{MY_HOST}:3306/{database}"
    if label == "mysql8":
        dsn += "?dialect=mysql"
    return Target(label, dsn, database)


@pytest.fixture(params=ENGINES)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    """A fresh, empty place for queues on each engine."""
    return make_target(request.param, request, tmp_path)
