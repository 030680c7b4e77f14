"""How an application calls an installed queue, one class per driver, in each calling mode.

Nothing here goes through qadmin's engines: PostgreSQL is psycopg 3 calling the functions
(``SELECT * FROM q_pop(10)``), MySQL/MariaDB is pymysql calling the procedures (``CALL
q_pop(10)``: one result set on MariaDB, one per message on MySQL 8, all read with
``nextset()``), SQLite is the stdlib sqlite3
running the statement sets of the queue's template (SQLite has no routines;
docs/reliability.md tells applications to run those statements, which is all qadmin itself
does). The only qadmin code a caller uses is the SQLite template renderer, the same text a
developer would copy.

Every call ends in one of three ways: it returned rows (and, in a transaction mode, the commit
went through), it raised ``Refused`` (the server answered with an error and the connection is
alive: the call must have had no effect), or it raised ``Lost`` (the connection died: the
outcome is unknown and the harness audits it as in doubt).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

Row = dict[str, Any]


class Refused(Exception):
    """The server refused the call with an error; the caller rolled back what was open."""


class Lost(Exception):
    """The connection is gone: whether the call (or its commit) took effect is unknown."""


class Stale(Refused):
    """SQLite only: the statement set no longer fits the table (the queue was converted)."""


@dataclass(frozen=True)
class Mode:
    """A calling mode: how transactions are driven, at which isolation level, what batch.

    ``commit``: ``autocommit`` (each call is its own transaction: the client default; on
    SQLite each statement of a set is), ``transaction`` (BEGIN / calls / COMMIT around each unit
    of work); SQLite: ``immediate`` (``BEGIN IMMEDIATE``, the calling contract) or
    ``deferred`` (plain ``BEGIN``, Python's sqlite3 habit). ``isolation``: None for the
    server's default (PostgreSQL READ COMMITTED, MariaDB REPEATABLE READ), else ``read
    committed`` / ``repeatable read``. ``batch``: pop count, and messages pushed per transaction
    in the transaction modes (there is no batch push routine, so an autocommit producer pushes
    one message per call).
    """

    commit: str
    isolation: str | None = None
    batch: int = 1

    @property
    def label(self) -> str:
        level = {None: "default", "read committed": "RC", "repeatable read": "RR"}
        text = self.commit if self.isolation is None else f"{self.commit}/{level[self.isolation]}"
        return f"{text}/x{self.batch}"

    @property
    def in_transaction(self) -> bool:
        return self.commit != "autocommit"


class Caller:
    """One application connection calling one queue's routines."""

    def __init__(self, mode: Mode, queue: str, claim: bool, pending: bool):
        self.mode, self.queue, self.claim, self.pending = mode, queue, claim, pending

    # driver-specific
    def _call(self, routine: str, args: Sequence[Any], sink: list[Row] | None = None) -> list[Row]:
        raise NotImplementedError

    def _execute(self, sql: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- what applications do --

    def begin(self) -> None:
        if self.mode.in_transaction:
            self._execute("START TRANSACTION" if self.is_mysql else "BEGIN")

    def commit(self) -> None:
        if self.mode.in_transaction:
            self._execute("COMMIT")

    def rollback(self) -> None:
        if self.mode.in_transaction:
            with contextlib.suppress(Refused):
                self._execute("ROLLBACK")

    is_mysql = False

    def push(self, payload: bytes) -> Row | None:
        """One push in the open transaction; None when a ring refused it as full."""
        args: list[Any] = [payload, None] if self.pending else [payload]
        rows = self._call("push", args)
        merged: Row = {}
        for row in rows:
            merged.update(row)
        return merged if merged.get("id") is not None else None

    def pop(self, count: int, worker: str, sink: list[Row]) -> None:
        """Pop up to ``count`` into ``sink`` as the rows arrive (a call that fails part-way
        leaves what it returned so far there, for the audit)."""
        args: list[Any] = [count, worker] if self.claim else [count]
        self._call("pop", args, sink)

    def ack(self, message_id: int) -> bool:
        return bool(self._call("ack", [message_id]))

    def fail(self, message_id: int, error: str, retry: bool) -> bool:
        return bool(self._call("fail", [message_id, error, retry]))


class PgCaller(Caller):
    def __init__(self, dsn: str, schema: str, mode: Mode, queue: str, claim: bool, pending: bool):
        import psycopg

        super().__init__(mode, queue, claim, pending)
        self.psycopg = psycopg
        options = f"-c search_path={schema} -c lock_timeout=10000 -c statement_timeout=60000"
        try:
            self.conn = psycopg.connect(dsn, autocommit=True, options=options, connect_timeout=10)
        except psycopg.Error as exc:
            raise Lost(str(exc)) from exc
        if mode.isolation:
            self._execute(
                f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
                f"{mode.isolation.upper()}"
            )

    def _wrap(self, exc: Exception) -> Exception:
        if self.conn.closed or self.conn.broken:
            return Lost(str(exc))
        self.rollback()
        return Refused(f"{getattr(exc, 'sqlstate', None)}: {str(exc).splitlines()[0]}")

    def _execute(self, sql: str) -> None:
        try:
            self.conn.execute(sql)  # type: ignore[arg-type]
        except self.psycopg.Error as exc:
            raise self._wrap(exc) from exc

    def _call(self, routine: str, args: Sequence[Any], sink: list[Row] | None = None) -> list[Row]:
        marks = ", ".join(["%s"] * len(args))
        sql = f"SELECT * FROM {self.queue}_{routine}({marks})"
        rows = sink if sink is not None else []
        try:
            cur = self.conn.execute(sql, list(args))  # type: ignore[arg-type]
            names = [c.name for c in cur.description or []]
            rows.extend(dict(zip(names, r, strict=True)) for r in cur.fetchall())
        except self.psycopg.Error as exc:
            raise self._wrap(exc) from exc
        return rows

    def close(self) -> None:
        self.conn.close()


class MyCaller(Caller):
    is_mysql = True
    # Client errors that mean the connection is gone (server gone away, lost, killed).
    GONE = frozenset({2006, 2013, 2055, 1927, 1053})

    def __init__(self, dsn: str, mode: Mode, queue: str, claim: bool, pending: bool):
        import pymysql

        super().__init__(mode, queue, claim, pending)
        self.pymysql = pymysql
        url = urlsplit(dsn)
        try:
            self.conn = pymysql.connect(
                host=url.hostname,
                port=url.port or 3306,
                user=url.username or "root",
                password=url.password or "",
                database=url.path.lstrip("/"),
                autocommit=True,
                connect_timeout=10,
                read_timeout=120,
            )
        except pymysql.Error as exc:
            raise Lost(str(exc)) from exc
        self._execute("SET SESSION innodb_lock_wait_timeout = 10")
        if mode.isolation:
            self._execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {mode.isolation.upper()}")

    def _wrap(self, exc: Exception) -> Exception:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        if (
            code in self.GONE
            or not self.conn.open
            or isinstance(exc, self.pymysql.err.InterfaceError)
        ):
            return Lost(str(exc))
        self.rollback()
        return Refused(f"{code}: {exc.args[1] if len(exc.args) > 1 else exc}")

    def _execute(self, sql: str) -> None:
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
        except self.pymysql.Error as exc:
            raise self._wrap(exc) from exc

    def _call(self, routine: str, args: Sequence[Any], sink: list[Row] | None = None) -> list[Row]:
        marks = ", ".join(["%s"] * len(args))
        rows = sink if sink is not None else []
        try:
            with self.conn.cursor() as cur:
                cur.execute(f"CALL {self.queue}_{routine}({marks})", list(args))
                while True:
                    if cur.description:
                        names = [c[0] for c in cur.description]
                        rows.extend(dict(zip(names, r, strict=True)) for r in cur.fetchall())
                    if not cur.nextset():
                        break
        except self.pymysql.Error as exc:
            raise self._wrap(exc) from exc
        return rows

    def close(self) -> None:
        with contextlib.suppress(self.pymysql.Error):
            self.conn.close()


class SqliteCaller(Caller):
    """Runs the statement sets of the queue's template, as docs/reliability.md tells SQLite
    apps to."""

    def __init__(self, dsn: str, mode: Mode, queue: str, claim: bool, pending: bool):
        super().__init__(mode, queue, claim, pending)
        self.dsn = dsn
        self.conn = sqlite3.connect(
            dsn.removeprefix("sqlite:///"), isolation_level=None, timeout=10
        )
        self.conn.execute("PRAGMA busy_timeout = 10000")
        self.reload()

    def reload(self) -> None:
        """Read the statement sets for the queue as it is now (after a convert, a ring's)."""
        from qadmin import catalog
        from qadmin.engines import open_engine

        engine = open_engine(self.dsn)
        try:
            spec = catalog.get(engine, self.queue)
            self.sets = {
                name: engine.hooks.section(spec, name)
                for name in ("push", "pop", "ack", "fail")
                if engine.hooks.template(spec).has(name)
            }
        finally:
            engine.close()

    def begin(self) -> None:
        if self.mode.in_transaction:
            self._execute("BEGIN IMMEDIATE" if self.mode.commit == "immediate" else "BEGIN")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def _wrap(self, exc: Exception) -> Exception:
        self.rollback()
        text = str(exc)
        if "no such column" in text or "no such table" in text:
            return Stale(text)
        return Refused(text)

    def _execute(self, sql: str) -> None:
        try:
            self.conn.execute(sql)
        except sqlite3.Error as exc:
            raise self._wrap(exc) from exc

    def _call(self, routine: str, args: Sequence[Any], sink: list[Row] | None = None) -> list[Row]:
        names = {
            "push": ["payload", "due_at"],
            "pop": ["count", "worker"],
            "ack": ["id"],
            "fail": ["id", "error", "retry"],
        }[routine]
        params = dict(zip(names, args, strict=False))
        rows = sink if sink is not None else []
        try:
            for statement in self.sets[routine]:
                cur = self.conn.execute(statement, params)
                if cur.description:
                    cols = [c[0] for c in cur.description]
                    rows.extend(dict(zip(cols, r, strict=True)) for r in cur.fetchall())
        except sqlite3.Error as exc:
            raise self._wrap(exc) from exc
        return rows

    def close(self) -> None:
        self.conn.close()


def connect(engine: str, dsn: str, schema: str | None, mode: Mode, queue: str, kind: str) -> Caller:
    claim, pending = kind == "claim", kind == "pending"
    if engine == "postgresql":
        return PgCaller(dsn, schema or "public", mode, queue, claim, pending)
    if engine == "sqlite":
        return SqliteCaller(dsn, mode, queue, claim, pending)
    return MyCaller(dsn.split("?")[0], mode, queue, claim, pending)
