"""Lock incidents created for real in other sessions: a table held in ACCESS EXCLUSIVE mode,
and the pile-up a DBA opens inspect for (an ALTER TABLE waiting behind an open transaction,
readers queued behind the ALTER). Every session here is the test's own; each is ended (the
ALTER and the readers cancelled, the holder rolled back) when the block leaves."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pymysql

from tests.conftest import MY_HOST, PG_ADMIN, Target

WAIT_LIMIT_S = 60  # the ALTER and readers' own lock timeout: far longer than any test needs
MDL_WAIT = "Waiting for table metadata lock"


@dataclass
class Pileup:
    """Who holds the table, who waits: the server's own session ids, as text."""

    holder: str
    alter: str
    readers: list[str] = field(default_factory=list)

    @property
    def waiters(self) -> list[str]:
        return [self.alter, *self.readers]


def connect(target: Target, in_database: bool = True) -> Any:
    """A raw autocommit connection of the test's own to the target's server (MariaDB: with
    the test's database as default database, or with none)."""
    if target.label == "postgresql":
        conn = psycopg.connect(PG_ADMIN, autocommit=True)
        conn.execute(f"SET lock_timeout = '{WAIT_LIMIT_S}s'")
        return conn
    conn = pymysql.connect(
        host=MY_HOST,
        user="root",
        password="",
        database=target.schema if in_database else None,
        autocommit=True,
    )
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION lock_wait_timeout = {WAIT_LIMIT_S}")
        cur.execute(f"SET SESSION innodb_lock_wait_timeout = {WAIT_LIMIT_S}")
    return conn


def execute(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall()) if cur.description else []


def session_id(conn: Any) -> str:
    if isinstance(conn, psycopg.Connection):
        return str(conn.info.backend_pid)
    return str(conn.thread_id())


def until(probe: Callable[[], Any], timeout_s: float = 15.0, every_s: float = 0.05) -> Any:
    """Poll until probe() is truthy; lock views show a wait a moment after it starts."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = probe()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(every_s)


# MariaDB refills INNODB_TRX only when nobody has read it for 0.1 s: a poll every 0.05 s kept
# it as it was at the first read, before the waiter began to wait (the failure matrix's
# row-lock cell failed so, 1 run in 3 under load). Polls of waiting_sessions wait longer.
WAIT_POLL_S = 0.25


def waiting_sessions(target: Target, observer: Any) -> set[str]:
    """Session ids the server shows waiting for a lock (PostgreSQL: any heavyweight lock;
    MariaDB: a table metadata lock or an InnoDB row lock)."""
    if target.label == "postgresql":
        sql = "SELECT pid::text FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    else:
        sql = (
            "SELECT CAST(ID AS CHAR) FROM information_schema.PROCESSLIST "
            f"WHERE STATE = '{MDL_WAIT}' UNION ALL "
            "SELECT CAST(trx_mysql_thread_id AS CHAR) FROM information_schema.INNODB_TRX "
            "WHERE trx_state = 'LOCK WAIT'"
        )
    return {str(r[0]) for r in execute(observer, sql)}


@contextmanager
def table_locked(target: Target, qualified: str) -> Iterator[str]:
    """PostgreSQL: another session holds LOCK TABLE ... IN ACCESS EXCLUSIVE MODE."""
    conn = connect(target)
    try:
        execute(conn, "BEGIN")
        execute(conn, f"LOCK TABLE {qualified} IN ACCESS EXCLUSIVE MODE")
        yield session_id(conn)
    finally:
        execute(conn, "ROLLBACK")
        conn.close()


def _cancel(target: Target, observer: Any, session: str) -> None:
    if target.label == "postgresql":
        execute(observer, f"SELECT pg_cancel_backend({int(session)})")
    else:
        execute(observer, f"KILL QUERY {int(session)}")


def _blocked(conn: Any, sql: str, done: list[BaseException | None]) -> None:
    try:
        execute(conn, sql)
        done.append(None)
    except (psycopg.Error, pymysql.Error) as exc:
        done.append(exc)


@contextmanager
def waiting(target: Target, statements: list[str]) -> Iterator[list[str]]:
    """Each statement run in a new session of the test's own, in order, each seen waiting for
    a lock before the next starts; yields their session ids. On leaving, each is cancelled in
    order (the first is usually the ALTER, so the table is not changed) and closed."""
    observer = connect(target)
    sessions, threads = [], []
    try:
        for sql in statements:
            conn = connect(target)
            sessions.append(conn)
            done: list[BaseException | None] = []
            thread = threading.Thread(target=_blocked, args=(conn, sql, done), daemon=True)
            thread.start()
            threads.append(thread)
            me = session_id(conn)
            assert until(
                lambda me=me: me in waiting_sessions(target, observer), every_s=WAIT_POLL_S
            ), f"{sql!r} never waited for the lock"
        yield [session_id(c) for c in sessions]
    finally:
        for conn, thread in zip(sessions, threads, strict=True):
            _cancel(target, observer, session_id(conn))
            thread.join(timeout=30)
        for conn in [*sessions, observer]:
            conn.close()


@contextmanager
def pileup(target: Target, qualified: str, readers: int = 1) -> Iterator[Pileup]:
    """A transaction that read the table stays open; an ALTER TABLE waits behind it (for an
    ACCESS EXCLUSIVE lock, or MariaDB's exclusive metadata lock), and ``readers`` SELECTs
    queue behind the ALTER. On leaving, the ALTER and the readers are cancelled (so the table
    is not changed), then the holder rolls back."""
    holder = connect(target)
    execute(holder, "BEGIN" if target.label == "postgresql" else "START TRANSACTION")
    execute(holder, f"SELECT count(*) FROM {qualified}")
    alter_sql = f"ALTER TABLE {qualified} ADD COLUMN incident_probe INT"
    statements = [alter_sql] + [f"SELECT count(*) FROM {qualified}"] * readers
    try:
        with waiting(target, statements) as ids:
            yield Pileup(session_id(holder), ids[0], ids[1:])
    finally:
        with suppress(psycopg.Error, pymysql.Error):
            execute(holder, "ROLLBACK")
        holder.close()
